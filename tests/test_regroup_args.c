/*
 * test_regroup_args.c -- the GPU regroup path's calls refuse NULL
 * objects and leave *out NULL, and so do the regrouper's (options checked
 * before the CUDA handle is used), with or without a GPU (and without nvcc,
 * runtime/gpu_regroup_none.c): no device is touched, so this runs
 * everywhere, unlike test_gpu_regroup.c.
 */
#include "tests/testutil.h"

static void test_bad_arguments(void **state)
{
    tmap_gpu_regroup *g = (tmap_gpu_regroup *)&g;
    tmap_error e = {0};
    assert_int_not_equal(tmap_gpu_regroup_create(NULL, 10, &g, &e), TMAP_OK);
    assert_null(g);
    tmap_gpu_regroup_free(NULL);
    assert_int_not_equal(tmap_gpu_regroup_sort(NULL, 1, 1, 0, 1, NULL, &e), TMAP_OK);
    assert_int_not_equal(tmap_gpu_regroup_cost(NULL, 1, NULL, &e), TMAP_OK);
    assert_int_not_equal(tmap_gpu_regroup_model(NULL, NULL, NULL, 1, 1, &e), TMAP_OK);
    assert_int_not_equal(tmap_gpu_regroup_run(NULL, 1, 1, 0, 1, NULL, &e), TMAP_OK);
    assert_int_not_equal(tmap_gpu_regroup_run_deal(NULL, 1, 256, 1, NULL, &e), TMAP_OK);
}

/* The regrouper and the deal: checked before any device is touched. */
static void test_regrouper_bad_arguments(void **state)
{
    static const tmap_thread_array arrays[4] = {{0, 4, 1, 1, 0}};
    tmap_regrouper *r = (tmap_regrouper *)&r;
    tmap_regrouper_opts o = {0};
    tmap_launch l = {{1, 1, 1}, {32, 1, 1}, 0, NULL, 0};
    tmap_error e;
    assert_int_equal(tmap_regrouper_create(NULL, &l, arrays, 4, &o, &r, &e), TMAP_ERR_INVALID);
    assert_null(r);
    tmap_cuda *c = (tmap_cuda *)&o; /* never used: the options are checked first */
    assert_int_equal(tmap_regrouper_create(c, &l, arrays, 4, &o, &r, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "key"));
    assert_int_equal(tmap_regrouper_begin(NULL, 1, NULL, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_regrouper_end(NULL, NULL, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_regrouper_chosen(NULL), -1);
    assert_int_equal(tmap_regrouper_ptr(NULL, 0), 0);
    tmap_regrouper_free(NULL);
    uint64_t x = 1;
    assert_int_not_equal(tmap_gpu_regroup_deal(NULL, x, 256, x + 1, NULL, &e), TMAP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_arguments),
                                       cmocka_unit_test(test_regrouper_bad_arguments)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

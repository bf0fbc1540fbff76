/*
 * test_regroup_args.c -- the GPU regroup path's calls refuse NULL
 * objects and leave *out NULL, with or without a GPU (and without nvcc,
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_arguments)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

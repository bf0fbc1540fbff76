/*
 * test_gpu_apply.c -- on a GPU: a regrouped launch by layout transform
 * gives outputs identical to the original launch's, for random permutations
 * and for arrays of one and of several elements per thread.  Skips cleanly
 * without a GPU.
 */
#include "tests/testutil.h"
#include "tests/testgpu.h"

/* Copies of the arrays after one launch, plain or by layout with perm. */
static void **launch(tmap_cuda *c, const char *rel, const uint32_t *perm)
{
    test_bound b;
    tmap_kernel *k;
    test_bound_open(c, rel, &b);
    TMAP_CHECK(tmap_kernel_load(c, b.ptx, b.entry, &k, err));
    if (!perm) {
        TMAP_CHECK(tmap_kernel_run(k, &b.l, err));
    } else {
        size_t n = tmap_launch_threads(&b.l), na;
        uint64_t dperm = test_upload_perm(c, perm, n);
        tmap_thread_array *arrays;
        TMAP_CHECK(tmap_manifest_thread_arrays(b.m, &arrays, &na, err));
        float ms[3];
        TMAP_CHECK(tmap_layout_launch(c, k, &b.l, dperm, arrays, na, ms, err));
        assert_true(ms[0] >= 0 && ms[1] >= 0 && ms[2] >= 0);
        free(arrays);
        tmap_cuda_free(c, dperm);
    }
    void **outs = test_bound_outputs(&b);
    tmap_kernel_free(k);
    test_bound_close(&b);
    return outs;
}

static void same_outputs(void **state, const char *rel, size_t threads)
{
    tmap_cuda *c = *state;
    void **want = launch(c, rel, NULL);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        uint32_t *perm = test_random_perm(threads, seed);
        test_outputs_equal(want, launch(c, rel, perm));
        free(perm);
    }
    test_outputs_free(want);
}

static int setup(void **state)
{
    *state = NULL;
    return 0;
}

static void loop_layout(void **state)
{
    *state = test_gpu_open();
    same_outputs(state, "tests/manifests/loop_small.json", 5120);
}

static void inout_layout(void **state)
{
    *state = test_gpu_open();
    same_outputs(state, "tests/manifests/switch_small.json", 4096);
}

static void vector_rows_layout(void **state)
{
    *state = test_gpu_open();
    same_outputs(state, "tests/manifests/vector_small.json", 2048);
}

static int teardown(void **state)
{
    tmap_cuda_close(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(loop_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(inout_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(vector_rows_layout, setup, teardown),
    };
    return test_gpu_main(tests, NULL, NULL);
}

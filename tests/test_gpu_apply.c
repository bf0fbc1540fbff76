/*
 * test_gpu_apply.c -- on a GPU: a regrouped launch by layout transform
 * gives outputs identical to the original launch's, for random permutations
 * and for arrays of one and of several elements per thread.  Skips cleanly
 * without a GPU.
 */
#include "tests/testutil.h"
#include "runtime/manifest.h"


/* Copies of the output arrays after one launch, plain or by layout. */
static void **launch(tmap_cuda *c, const char *rel, const uint32_t *perm)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", TMAP_SOURCE_DIR, rel);
    tmap_manifest *m;
    char *ptx, *entry;
    tmap_launch l;
    tmap_kernel *k;
    TMAP_CHECK(tmap_manifest_load(path, &m, err));
    TMAP_CHECK(tmap_manifest_ptx(m, NULL, &ptx, &entry, err));
    TMAP_CHECK(tmap_manifest_generate(m, 42, err));
    TMAP_CHECK(tmap_manifest_bind(m, c, &l, err));
    TMAP_CHECK(tmap_kernel_load(c, ptx, entry, &k, err));
    if (!perm) {
        TMAP_CHECK(tmap_kernel_run(k, &l, err));
    } else {
        size_t n = tmap_launch_threads(&l), na;
        uint64_t dperm;
        tmap_thread_array *arrays;
        TMAP_CHECK(tmap_cuda_alloc(c, n * 4, &dperm, err));
        TMAP_CHECK(tmap_cuda_upload(c, dperm, perm, n * 4, err));
        TMAP_CHECK(tmap_manifest_thread_arrays(m, &arrays, &na, err));
        float ms[3];
        TMAP_CHECK(tmap_layout_launch(c, k, &l, dperm, arrays, na, ms, err));
        assert_true(ms[0] >= 0 && ms[1] >= 0 && ms[2] >= 0);
        free(arrays);
        tmap_cuda_free(c, dperm);
    }
    void **outs = calloc(m->narrays + 1, sizeof *outs);
    for (size_t i = 0; i < m->narrays; i++) {
        tmap_array_view v;
        TMAP_CHECK(tmap_manifest_fetch(m, m->arrays[i].name, err));
        TMAP_CHECK(tmap_manifest_array(m, i, &v));
        outs[i] = malloc(v.count * v.elem_size + sizeof(size_t));
        *(size_t *)outs[i] = v.count * v.elem_size;
        memcpy((char *)outs[i] + sizeof(size_t), v.host, v.count * v.elem_size);
    }
    tmap_kernel_free(k);
    tmap_manifest_free(m);
    free(ptx);
    free(entry);
    return outs;
}

static void same_outputs(void **state, const char *rel, size_t threads)
{
    tmap_cuda *c = *state;
    void **want = launch(c, rel, NULL);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        uint32_t *perm = test_random_perm(threads, seed);
        void **got = launch(c, rel, perm);
        for (size_t i = 0; want[i]; i++) {
            size_t bytes = *(size_t *)want[i];
            assert_int_equal(bytes, *(size_t *)got[i]);
            assert_memory_equal((char *)want[i] + sizeof(size_t), (char *)got[i] + sizeof(size_t),
                                bytes);
            free(got[i]);
        }
        free(got);
        free(perm);
    }
    for (size_t i = 0; want[i]; i++)
        free(want[i]);
    free(want);
}

static int setup(void **state)
{
    *state = NULL;
    return 0;
}

static void loop_layout(void **state)
{
    *state = test_gpu_or_skip();
    same_outputs(state, "tests/manifests/loop_small.json", 5120);
}

static void inout_layout(void **state)
{
    *state = test_gpu_or_skip();
    same_outputs(state, "tests/manifests/switch_small.json", 4096);
}

static void vector_rows_layout(void **state)
{
    *state = test_gpu_or_skip();
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
    return cmocka_run_group_tests(tests, NULL, NULL);
}

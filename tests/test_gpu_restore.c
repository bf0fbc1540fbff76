/*
 * test_gpu_restore.c -- timed launches of a kernel that updates its input
 * (tests/kernels/count_launches.cu: c[t] counts the launches that saw it)
 * each start from the pristine input: tmap_manifest_time (the module
 * variable `stale` stays 0 through warm-up and timed launches, where plain
 * repeated launches set it), and tmap_evaluate's series for the original
 * and every regrouping by layout transform and by redirection (c is 1 after
 * the last launch, and no median is the slow path's), its SM model counting
 * SASS where the tools are found.  Skips without a GPU.
 */
#include "tests/testutil.h"
#include "tests/testgpu.h"
#include "threadmap/instrument.h"
#include "threadmap/pipeline.h"

#define MANIFEST "tests/manifests/count_launches.json"

/* Fails unless every c[t] on the GPU is 1: the last launch saw c = 0. */
static void counts_are_one(test_bound *b)
{
    TMAP_CHECK(tmap_manifest_fetch(b->m, "c", err));
    const int32_t *c = b->m->arrays[0].host;
    for (size_t t = 0; t < b->m->threads; t++)
        if (c[t] != 1)
            fail_msg("c[%zu] = %d after the last launch", t, c[t]);
}

static uint32_t read_stale(tmap_cuda *c, tmap_kernel *k)
{
    uint64_t p;
    uint32_t v = 0;
    TMAP_CHECK(tmap_kernel_global(k, "stale", &p, NULL, err));
    TMAP_CHECK(tmap_cuda_download(c, &v, p, sizeof v, err));
    TMAP_CHECK(tmap_cuda_zero(c, p, sizeof v, err));
    return v;
}

static void manifest_time_restores_inputs(void **state)
{
    tmap_cuda *c = test_gpu_open();
    test_bound b;
    tmap_kernel *k;
    float ms[5];
    test_bound_open(c, MANIFEST, &b);
    TMAP_CHECK(tmap_kernel_load(c, b.ptx, "count_launches_stale", &k, err));
    assert_int_equal(read_stale(c, k), 0);
    TMAP_CHECK(tmap_manifest_time(b.m, k, &b.l, 2, 5, ms, err));
    assert_int_equal(read_stale(c, k), 0);
    counts_are_one(&b);
    /* the test can tell: without restoring, the second launch is stale */
    TMAP_CHECK(tmap_kernel_time(k, &b.l, 0, 2, ms, err));
    assert_int_equal(read_stale(c, k), 1);
    tmap_kernel_free(k);
    test_bound_close(&b);
    tmap_cuda_close(c);
}

static void evaluate_restores_inputs(void **state)
{
    tmap_cuda *c = test_gpu_open();
    static const int mechanisms[] = {TMAP_MECH_LAYOUT, TMAP_MECH_REDIRECT};
    for (size_t i = 0; i < 2; i++) {
        test_bound b;
        tmap_eval e;
        tmap_eval_opts o = {.seed = 3, .warmup = 2, .reps = 5, .threshold = 0.05, .groupsize = 32,
                            .scope = -1, .mechanism = mechanisms[i], .measure_all = 1};
        test_bound_open(c, MANIFEST, &b);
        TMAP_CHECK(tmap_evaluate(c, b.m, &o, &e, err));
        /* the SM model's issue from SASS wherever ptxas and nvdisasm are found
         * (the pipeline passes the GPU's compute_XY: assembled as sm_XY) */
        char tool[1024];
        tmap_error none = {0};
        if (!tmap_sass_tool_find("ptxas", tool, sizeof tool, &none) &&
            !tmap_sass_tool_find("nvdisasm", tool, sizeof tool, &none))
            assert_int_equal(e.sm.issue_sass, 1);
        counts_are_one(&b);
        /* the slow path (c[t] > 0 on entry) takes milliseconds, the fast one microseconds */
        assert_true(e.original_ms < 0.1);
        for (size_t j = 0; j < e.plan.n; j++) {
            if (e.outputs_equal[j] < 0)
                continue;
            assert_int_equal(e.outputs_equal[j], 1);
            if (!(e.measured_ms[j] < 0.1))
                fail_msg("%s: %s median %.3f ms: a timed launch ran on its own output",
                         tmap_mechanism_name(e.mechanism), j ? tmap_algo_name(e.plan.cand[j].algo) : "original",
                         e.measured_ms[j]);
        }
        tmap_eval_free(&e);
        test_bound_close(&b);
    }
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(manifest_time_restores_inputs),
        cmocka_unit_test(evaluate_restores_inputs),
    };
    return test_gpu_main(tests, NULL, NULL);
}

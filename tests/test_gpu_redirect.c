/*
 * test_gpu_redirect.c -- on a GPU: a launch redirected by a random
 * permutation D gives outputs identical to the original launch (manifests
 * loop_small, switch_small, vector_small; kernels loop_kernel, branchy and
 * grid3d of analytic.ptx), and with the counter pass on top of the
 * redirection the BBV row of slot i equals the original BBV row of thread
 * D[i]: the redirection is exact.  Skips cleanly without a GPU.
 */
#include "tests/testutil.h"
#include "tests/testgpu.h"

enum { SEED = 20160 };

/* ------------------------------------------------------------ manifests */

/* Copies of every array after one launch: unmodified (redirect 0), or
 * redirected with the identity (redirect 1, __tmap_perm left 0), or by a
 * random permutation of seed `seed` (redirect 2). */
static void **manifest_launch(tmap_cuda *c, const char *rel, int redirect, uint64_t seed)
{
    test_bound b;
    tmap_kernel *k;
    test_bound_open(c, rel, &b);
    uint64_t dperm = 0;
    if (redirect) {
        TMAP_CHECK(tmap_redirect_load(c, b.ptx, b.entry, &k, err));
        if (redirect == 2) {
            size_t n = tmap_launch_threads(&b.l);
            uint32_t *perm = test_random_perm(n, seed);
            dperm = test_upload_perm(c, perm, n);
            free(perm);
            TMAP_CHECK(tmap_redirect_set(k, dperm, err));
        }
    } else {
        TMAP_CHECK(tmap_kernel_load(c, b.ptx, b.entry, &k, err));
    }
    TMAP_CHECK(tmap_kernel_run(k, &b.l, err));
    void **outs = test_bound_outputs(&b);
    if (dperm)
        tmap_cuda_free(c, dperm);
    tmap_kernel_free(k);
    test_bound_close(&b);
    return outs;
}

static void manifest_same_outputs(tmap_cuda *c, const char *rel)
{
    void **want = manifest_launch(c, rel, 0, 0);
    for (int mode = 1; mode <= 2; mode++)
        for (uint64_t seed = SEED; seed < SEED + (mode == 2 ? 2 : 1); seed++)
            test_outputs_equal(want, manifest_launch(c, rel, mode, seed));
    test_outputs_free(want);
}

/* ------------------------------------------------- analytic.ptx kernels */

typedef struct run_result {
    uint32_t *out; /* out[n] */
    tmap_bbv bbv;  /* per slot, when counted */
    char **names;  /* block names of the counted CFG */
} run_result;

typedef struct analytic_case {
    const char *kernel;
    tmap_launch shape;
    int has_input;
} analytic_case;

/* One launch of c->kernel on fresh buffers (in[t] = (t*37+5) % 240):
 * redirected by perm when perm != NULL, counted when `count`. */
static run_result analytic_run(tmap_cuda *cu, const char *ptx, const analytic_case *ac,
                               const uint32_t *perm, int count)
{
    size_t n = tmap_launch_threads(&ac->shape);
    run_result r = {calloc(n, 4), {0}, NULL};
    uint64_t dout = 0, din = 0, dperm = 0;
    TMAP_CHECK(tmap_cuda_alloc(cu, n * 4, &dout, err));
    TMAP_CHECK(tmap_cuda_zero(cu, dout, n * 4, err));
    if (ac->has_input) {
        uint32_t *in = malloc(n * 4);
        for (size_t t = 0; t < n; t++)
            in[t] = (uint32_t)((t * 37 + 5) % 240);
        TMAP_CHECK(tmap_cuda_alloc(cu, n * 4, &din, err));
        TMAP_CHECK(tmap_cuda_upload(cu, din, in, n * 4, err));
        free(in);
    }
    void *args[2] = {&dout, &din};
    tmap_launch l = ac->shape;
    l.args = args;
    l.nargs = ac->has_input ? 2 : 1;
    char *text = NULL;
    if (perm) {
        tmap_ptx_module *m = NULL;
        TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "analytic.ptx", &m, err));
        TMAP_CHECK(tmap_redirect_instrument(m, ac->kernel, err));
        TMAP_CHECK(tmap_ptx_print(m, &text, err));
        tmap_ptx_free(m);
        dperm = test_upload_perm(cu, perm, n);
    }
    const char *load = text ? text : ptx;
    tmap_kernel *k = NULL;
    tmap_counting *cnt = NULL;
    if (count) {
        TMAP_CHECK(tmap_counting_load(cu, load, ac->kernel, &l, 1, &cnt, err));
        k = tmap_counting_kernel(cnt);
    } else {
        TMAP_CHECK(tmap_kernel_load(cu, load, ac->kernel, &k, err));
    }
    if (perm)
        TMAP_CHECK(tmap_redirect_set(k, dperm, err));
    TMAP_CHECK(tmap_kernel_run(k, &l, err));
    TMAP_CHECK(tmap_cuda_download(cu, r.out, dout, n * 4, err));
    if (count) {
        const tmap_cfg *cfg = tmap_counting_cfg(cnt);
        TMAP_CHECK(tmap_counting_read(cnt, &r.bbv, err));
        r.names = calloc(cfg->nblocks + 1, sizeof *r.names);
        for (size_t b = 0; b < cfg->nblocks; b++)
            r.names[b] = strdup(cfg->blocks[b].name);
        tmap_counting_free(cnt);
    } else {
        tmap_kernel_free(k);
    }
    free(text);
    tmap_cuda_free(cu, dout);
    tmap_cuda_free(cu, din);
    tmap_cuda_free(cu, dperm);
    return r;
}

static void run_free(run_result *r)
{
    free(r->out);
    tmap_bbv_free(&r->bbv);
    for (size_t b = 0; r->names && r->names[b]; b++)
        free(r->names[b]);
    free(r->names);
}

static void analytic_exact(tmap_cuda *cu, const analytic_case *ac)
{
    char *ptx = test_read("tests/kernels/analytic.ptx");
    size_t n = tmap_launch_threads(&ac->shape);
    uint32_t *perm = test_random_perm(n, SEED);
    run_result plain = analytic_run(cu, ptx, ac, NULL, 0);
    run_result moved = analytic_run(cu, ptx, ac, perm, 0);
    assert_memory_equal(plain.out, moved.out, n * 4);

    run_result counted = analytic_run(cu, ptx, ac, NULL, 1);
    run_result both = analytic_run(cu, ptx, ac, perm, 1);
    assert_memory_equal(plain.out, counted.out, n * 4);
    assert_memory_equal(plain.out, both.out, n * 4);
    size_t nb = counted.bbv.nblocks;
    assert_int_equal(both.bbv.nblocks, nb);
    assert_int_equal(counted.bbv.nthreads, n);
    assert_int_equal(both.bbv.nthreads, n);
    for (size_t b = 0; b < nb; b++)
        assert_string_equal(counted.names[b], both.names[b]);
    size_t moved_rows = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *got = &both.bbv.counts[i * nb];
        const uint32_t *want = &counted.bbv.counts[(size_t)perm[i] * nb];
        if (memcmp(got, want, nb * 4))
            fail_msg("%s: BBV of slot %zu differs from that of thread %u", ac->kernel, i,
                     perm[i]);
        moved_rows += memcmp(got, &counted.bbv.counts[i * nb], nb * 4) != 0;
    }
    assert_true(moved_rows > 0); /* the permutation did move differing work */
    run_free(&plain);
    run_free(&moved);
    run_free(&counted);
    run_free(&both);
    free(perm);
    free(ptx);
}

/* ---------------------------------------------------------------- tests */

static int setup(void **state)
{
    *state = NULL;
    return 0;
}

static int teardown(void **state)
{
    tmap_cuda_close(*state);
    return 0;
}

static void loop_manifest(void **state)
{
    *state = test_gpu_open();
    manifest_same_outputs(*state, "tests/manifests/loop_small.json");
}

static void switch_manifest(void **state)
{
    *state = test_gpu_open();
    manifest_same_outputs(*state, "tests/manifests/switch_small.json");
}

static void vector_manifest(void **state)
{
    *state = test_gpu_open();
    manifest_same_outputs(*state, "tests/manifests/vector_small.json");
}

static void loop_kernel_exact(void **state)
{
    *state = test_gpu_open();
    analytic_case ac = {"loop_kernel", {{4, 1, 1}, {256, 1, 1}, 0, NULL, 0}, 1};
    analytic_exact(*state, &ac);
}

static void branchy_exact(void **state)
{
    *state = test_gpu_open();
    analytic_case ac = {"branchy", {{3, 1, 1}, {128, 1, 1}, 0, NULL, 0}, 1};
    analytic_exact(*state, &ac);
}

static void grid3d_exact(void **state)
{
    *state = test_gpu_open();
    analytic_case ac = {"grid3d", {{3, 2, 1}, {8, 4, 2}, 0, NULL, 0}, 0};
    analytic_exact(*state, &ac);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(loop_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(switch_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(vector_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(loop_kernel_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(branchy_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(grid3d_exact, setup, teardown),
    };
    return test_gpu_main(tests, NULL, NULL);
}

/*
 * test_gpu_bbv.c -- on a GPU: the counter pass gives exactly the analytic
 * per-thread block counts, sampling picks the right thread blocks, and the
 * instrumented kernels compute what the originals compute.  Skips cleanly
 * without a GPU.
 */
#include "tests/testutil.h"

typedef struct gpu {
    tmap_cuda *cuda;
    char *ptx;
} gpu;

static int setup(void **state)
{
    gpu *g = calloc(1, sizeof *g);
    g->ptx = test_read("tests/kernels/analytic.ptx");
    *state = g;
    return 0;
}

static int teardown(void **state)
{
    gpu *g = *state;
    tmap_cuda_close(g->cuda);
    free(g->ptx);
    free(g);
    return 0;
}

static tmap_cuda *gpu_of(void **state)
{
    gpu *g = *state;
    if (!g->cuda)
        g->cuda = test_gpu_open();
    return g->cuda;
}

static int column(const tmap_cfg *cfg, const char *name)
{
    for (size_t b = 0; b < cfg->nblocks; b++)
        if (!strcmp(cfg->blocks[b].name, name))
            return (int)b;
    fail_msg("no block named %s", name);
    return -1;
}

/* Runs `kernel` unmodified on fresh buffers and returns out[n]. */
static uint32_t *run_original(tmap_cuda *c, const char *ptx, const char *kernel,
                              const tmap_launch *shape, const uint32_t *in, size_t n)
{
    uint64_t dout = 0, din = 0;
    uint32_t *out = calloc(n, 4);
    TMAP_CHECK(tmap_cuda_alloc(c, n * 4, &dout, err));
    TMAP_CHECK(tmap_cuda_zero(c, dout, n * 4, err));
    void *args[2] = {&dout, &din};
    if (in) {
        TMAP_CHECK(tmap_cuda_alloc(c, n * 4, &din, err));
        TMAP_CHECK(tmap_cuda_upload(c, din, in, n * 4, err));
    }
    tmap_launch l = *shape;
    l.args = args;
    l.nargs = 2;
    tmap_kernel *k = NULL;
    TMAP_CHECK(tmap_kernel_load(c, ptx, kernel, &k, err));
    TMAP_CHECK(tmap_kernel_run(k, &l, err));
    TMAP_CHECK(tmap_cuda_download(c, out, dout, n * 4, err));
    tmap_kernel_free(k);
    tmap_cuda_free(c, dout);
    tmap_cuda_free(c, din);
    return out;
}

/* Profiles `kernel` and returns its out[n] too (the instrumented run's). */
static uint32_t *run_profiled(tmap_cuda *c, const char *ptx, const char *kernel,
                              const tmap_launch *shape, const uint32_t *in, size_t n,
                              uint32_t sample, tmap_profile *prof)
{
    uint64_t dout = 0, din = 0;
    uint32_t *out = calloc(n, 4);
    TMAP_CHECK(tmap_cuda_alloc(c, n * 4, &dout, err));
    TMAP_CHECK(tmap_cuda_zero(c, dout, n * 4, err));
    void *args[2] = {&dout, &din};
    if (in) {
        TMAP_CHECK(tmap_cuda_alloc(c, n * 4, &din, err));
        TMAP_CHECK(tmap_cuda_upload(c, din, in, n * 4, err));
    }
    tmap_launch l = *shape;
    l.args = args;
    l.nargs = 2;
    TMAP_CHECK(tmap_profile_run(c, ptx, kernel, &l, sample, prof, err));
    TMAP_CHECK(tmap_cuda_download(c, out, dout, n * 4, err));
    tmap_cuda_free(c, dout);
    tmap_cuda_free(c, din);
    return out;
}

static uint32_t at(const tmap_profile *p, size_t t, int b)
{
    return p->bbv.counts[t * p->bbv.nblocks + (size_t)b];
}

static void loop_counts_exact(void **state)
{
    tmap_cuda *c = gpu_of(state);
    const char *ptx = ((gpu *)*state)->ptx;
    enum { N = 4 * 256 };
    uint32_t n[N];
    for (size_t t = 0; t < N; t++)
        n[t] = (uint32_t)((t * 37) % 101); /* 0..100, zero included */
    tmap_launch shape = {{4, 1, 1}, {256, 1, 1}, 0, NULL, 0};
    tmap_profile p;
    uint32_t *got = run_profiled(c, ptx, "loop_kernel", &shape, n, N, 1, &p);
    uint32_t *want = run_original(c, ptx, "loop_kernel", &shape, n, N);
    assert_memory_equal(got, want, sizeof n);
    assert_int_equal(p.bbv.nthreads, N);
    int loop = column(p.cfg, "loop_kernel/LOOP"), done = column(p.cfg, "loop_kernel/DONE");
    for (size_t t = 0; t < N; t++) {
        assert_int_equal(at(&p, t, 0), 1);
        assert_int_equal(at(&p, t, loop), n[t]);
        assert_int_equal(at(&p, t, done), 1);
        uint32_t sum = 0;
        for (uint32_t k = 0; k < n[t]; k++)
            sum += k;
        assert_int_equal(got[t], sum);
    }
    assert_true(p.original.registers > 0);
    assert_true(p.instrumented.blocks_per_sm > 0);
    tmap_profile_free(&p);
    free(got);
    free(want);
}

static void branchy_counts_exact(void **state)
{
    tmap_cuda *c = gpu_of(state);
    const char *ptx = ((gpu *)*state)->ptx;
    enum { N = 3 * 128 };
    uint32_t v[N];
    for (size_t t = 0; t < N; t++)
        v[t] = (uint32_t)((t * 53 + 11) % 260);
    tmap_launch shape = {{3, 1, 1}, {128, 1, 1}, 0, NULL, 0};
    tmap_profile p;
    uint32_t *got = run_profiled(c, ptx, "branchy", &shape, v, N, 1, &p);
    uint32_t *want = run_original(c, ptx, "branchy", &shape, v, N);
    assert_memory_equal(got, want, sizeof v);
    int odd = column(p.cfg, "branchy/+2") /* ODD: no jump targets it */, even = column(p.cfg, "branchy/EVEN");
    int join = column(p.cfg, "branchy/JOIN"), c0 = column(p.cfg, "branchy/C0");
    int c1 = column(p.cfg, "branchy/C1"), c2 = column(p.cfg, "branchy/C2");
    int swend = column(p.cfg, "branchy/SWEND"), early = column(p.cfg, "branchy/EARLY");
    int twice = -1;
    for (size_t b = 0; b < p.cfg->nblocks; b++)
        if (!strncmp(p.cfg->blocks[b].name, "twice/", 6))
            twice = (int)b;
    assert_true(twice >= 0);
    for (size_t t = 0; t < N; t++) {
        int in = v[t] <= 200, m = (int)(v[t] % 3);
        assert_int_equal(at(&p, t, 0), 1);
        assert_int_equal(at(&p, t, early), !in);
        assert_int_equal(at(&p, t, odd), in && (v[t] & 1));
        assert_int_equal(at(&p, t, even), in && !(v[t] & 1));
        assert_int_equal(at(&p, t, join), in);
        assert_int_equal(at(&p, t, c0), in && m == 0);
        assert_int_equal(at(&p, t, c1), in && m == 1);
        assert_int_equal(at(&p, t, c2), in && m == 2);
        assert_int_equal(at(&p, t, swend), in);
        assert_int_equal(at(&p, t, twice), in && m == 1);
        uint32_t r = (v[t] & 1) ? 3 : 5;
        r = m == 0 ? r + 10 : m == 1 ? 2 * r : r + 30;
        assert_int_equal(got[t], in ? r : 7);
    }
    tmap_profile_free(&p);
    free(got);
    free(want);
}

/* grid3d: linear ids over a 2-D grid of 3-D blocks, a predicated exit, and
 * sampling of every third thread block. */
static void grid_and_sampling_exact(void **state)
{
    tmap_cuda *c = gpu_of(state);
    const char *ptx = ((gpu *)*state)->ptx;
    tmap_launch shape = {{3, 2, 1}, {8, 4, 2}, 0, NULL, 0};
    const size_t tpb = 64, N = 6 * tpb;
    for (uint32_t sample = 1; sample <= 3; sample += 2) {
        tmap_profile p;
        uint32_t *got = run_profiled(c, ptx, "grid3d", &shape, NULL, N, sample, &p);
        uint32_t *want = run_original(c, ptx, "grid3d", &shape, NULL, N);
        assert_memory_equal(got, want, N * 4);
        size_t ctas = (6 + sample - 1) / sample;
        assert_int_equal(p.bbv.nthreads, ctas * tpb);
        int body = column(p.cfg, "grid3d/BODY"), fin = column(p.cfg, "grid3d/FIN");
        for (size_t r = 0; r < p.bbv.nthreads; r++) {
            size_t lin = (r / tpb) * sample * tpb + r % tpb;
            int live = lin % 7 != 0;
            assert_int_equal(at(&p, r, 0), 1);
            assert_int_equal(at(&p, r, body), live ? lin % 5 : 0);
            assert_int_equal(at(&p, r, fin), live);
            assert_int_equal(got[lin], live ? lin % 5 : 99);
        }
        tmap_profile_free(&p);
        free(got);
        free(want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_counts_exact),
        cmocka_unit_test(branchy_counts_exact),
        cmocka_unit_test(grid_and_sampling_exact),
    };
    return test_gpu_main(tests, setup, teardown);
}

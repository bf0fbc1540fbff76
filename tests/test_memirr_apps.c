/*
 * test_memirr_apps.c -- the inputs and CPU references of bench_memirr_apps
 * (benchmarks/bench_memirr_apps.h): every layout that applies to each app
 * (tmap_memre_build, partial duplication at half included) gives the
 * original's per-thread outputs bit for bit;
 * the BFS run level by level through a layout reaches the queue BFS's
 * levels; the MD forces sum to zero (Newton's third law over symmetric
 * neighbour lists); CG converges on the power-law matrix; the locality
 * orders cut the sectors per request of the random inputs; the permuted
 * 3-D stencil (its shape, RCM with the threads following their rows, CG);
 * generation draws each item from its own stream.
 */
#include "tests/testutil.h"
#include "benchmarks/bench_memirr_apps.h"
#include "threadmap/instrument.h"

static tmap_memre_costs costs_of(const mi_app *a)
{
    return (tmap_memre_costs){.order = a->order, .permute_threads = a->permute_threads,
                              .share_block = 256, .smem_bytes = 48 * 1024,
                              .partial_fraction = 0.5};
}

static double sectors_per_request(const tmap_memref *r, const uint32_t *index,
                                  const uint32_t *perm, size_t nelems)
{
    tmap_memref q = *r;
    q.nelems = nelems;
    tmap_sector_counts s;
    TMAP_CHECK(tmap_sectors_count(&q, index, perm, &s, err));
    return tmap_sectors_per_request(&s);
}

/* Every layout that applies: the same per-thread outputs; returns how many
 * applied; *locality_spr: the locality order's sectors per request. */
static int layouts_keep_outputs(const mi_app *a, uint32_t step, double *locality_spr)
{
    size_t n = a->ref.nthreads, ob = mi_out_bytes(a);
    unsigned char *want = malloc(n * ob), *got = malloc(n * ob);
    assert_non_null(want), assert_non_null(got);
    assert_int_equal(mi_cpu_run(a, NULL, step, want), 0);
    tmap_memre_costs c = costs_of(a);
    int applied = 0;
    for (int k = TMAP_MEMRE_DUPLICATE; k < TMAP_MEMRE_KINDS; k++) {
        tmap_memre m;
        tmap_error e = {0};
        tmap_status st = tmap_memre_build((tmap_memre_kind)k, &a->ref, a->index, &c, &m, &e);
        if (st == TMAP_ERR_UNSUPPORTED || st == TMAP_ERR_INVALID)
            continue;
        TMAP_CHECK(st);
        applied++;
        memset(got, 0xa5, n * ob);
        assert_int_equal(mi_cpu_run(a, &m, step, got), 0);
        for (size_t t = 0; t < n; t++)
            if (memcmp(want + t * ob, got + t * ob, ob))
                fail_msg("%s: thread %zu differs", tmap_memre_kind_name((tmap_memre_kind)k), t);
        if (k == TMAP_MEMRE_LOCALITY)
            *locality_spr = sectors_per_request(&a->ref, m.index, m.perm, m.nout);
        tmap_memre_free(&m);
    }
    free(want), free(got);
    return applied;
}

static void md(void **state)
{
    mi_app a;
    assert_int_equal(mi_md_make(3000, 7, &a), 0);
    assert_int_equal(mi_app_order(&a), 0);
    assert_true(a.ref.per_thread >= 20 && a.ref.per_thread < 100); /* ~27 neighbours on average */
    double loc = 0, orig = sectors_per_request(&a.ref, a.index, NULL, a.ref.nelems);
    assert_int_equal(layouts_keep_outputs(&a, 0, &loc), 7); /* all but padding (k > 1) */
    /* Morton: 24.6 to 19.3 (the j-th neighbours of a warp's particles stay
     * spread: the lists are in cell-scan order, not relabeled) */
    assert_true(loc < 0.85 * orig);
    float *f = malloc(a.ref.nthreads * 12);
    assert_int_equal(mi_cpu_run(&a, NULL, 0, f), 0);
    double sum[3] = {0}, mag = 0;
    for (size_t t = 0; t < a.ref.nthreads; t++)
        for (int d = 0; d < 3; d++)
            sum[d] += f[3 * t + d], mag += fabs(f[3 * t + d]);
    assert_true(mag > 0);
    for (int d = 0; d < 3; d++) /* Newton's third law: neighbour lists are symmetric */
        assert_true(fabs(sum[d]) < 1e-4 * mag);
    free(f), mi_free(&a);
}

static void bfs(void **state)
{
    mi_app a;
    assert_int_equal(mi_bfs_make(10, 3, &a), 0);
    assert_int_equal(mi_app_order(&a), 0);
    assert_int_equal(a.ref.nthreads, 2 * 16 * 1024);
    uint32_t nv = a.nv, *want = malloc(nv * 4), *level = a.data;
    uint32_t depth = mi_bfs_reference(&a, want), reached = 0;
    assert_true(depth >= 2 && depth < 20);
    for (uint32_t v = 0; v < nv; v++)
        reached += want[v] != MI_NONE;
    assert_true(reached > nv / 4); /* the giant component */
    tmap_memre_costs c = costs_of(&a);
    tmap_memre m;
    TMAP_CHECK(tmap_memre_build(TMAP_MEMRE_SWAP, &a.ref, a.index, &c, &m, err));
    uint32_t *prop = malloc(a.ref.nthreads * 4);
    for (uint32_t v = 0; v < nv; v++)
        assert_int_equal(level[v], v == a.source ? 0 : MI_NONE);
    for (uint32_t step = 0; step < depth; step++) { /* the edge-parallel BFS through swapping */
        double loc = 0;
        if (step == 1)
            assert_int_equal(layouts_keep_outputs(&a, step, &loc), 8);
        assert_int_equal(mi_cpu_run(&a, &m, step, prop), 0);
        for (size_t e = 0; e < a.ref.nthreads; e++)
            if (prop[e] != MI_NONE && level[a.aux[e]] == MI_NONE)
                level[a.aux[e]] = prop[e];
    }
    for (uint32_t v = 0; v < nv; v++)
        assert_int_equal(level[v], want[v]);
    tmap_memre_free(&m), free(prop), free(want), mi_free(&a);
}

static void spmv_and_cg(void **state)
{
    mi_app a;
    assert_int_equal(mi_spmv_make(4000, 5, &a), 0);
    assert_int_equal(mi_app_order(&a), 0);
    size_t n = a.nv, nnz = a.ref.nthreads, longest = 0, *len = calloc(n, sizeof *len);
    for (size_t e = 0; e < nnz; e++) {
        assert_true(e == 0 || a.aux[e - 1] <= a.aux[e]); /* by row */
        longest = ++len[a.aux[e]] > longest ? len[a.aux[e]] : longest;
    }
    assert_true(longest > 10 * nnz / n); /* a heavy tail */
    double loc = 0, orig = sectors_per_request(&a.ref, a.index, NULL, n);
    assert_int_equal(layouts_keep_outputs(&a, 0, &loc), 8);
    assert_true(orig > 6); /* uniform columns: most lanes their own sector */
    double *x = malloc(n * 8);
    assert_true(mi_cg_cpu(&a, 100, x) < 1e-9); /* 1.7e-8 after 80 */
    free(x), free(len), mi_free(&a);
}

/* The permuted 7-point Laplacian: 7 entries in interior rows, symmetric,
 * rows sum to the boundary's missing neighbours; RCM restores locality;
 * CG converges; the layouts keep the products. */
static void stencil(void **state)
{
    mi_app a;
    assert_int_equal(mi_stencil_make(12, 9, &a), 0);
    assert_int_equal(mi_app_order(&a), 0);
    size_t n = a.nv, nnz = a.ref.nthreads;
    assert_int_equal(n, 12 * 12 * 12);
    assert_int_equal(nnz, n + 6 * 11 * 12 * 12); /* the diagonal + 2 per grid edge */
    double *rowsum = calloc(n, 8), *x = malloc(n * 8);
    for (size_t e = 0; e < nnz; e++) {
        assert_true(e == 0 || a.aux[e - 1] < a.aux[e] ||
                    (a.aux[e - 1] == a.aux[e] && a.index[e - 1] < a.index[e]));
        rowsum[a.aux[e]] += a.val[e];
    }
    size_t corner = 0;
    for (size_t r = 0; r < n; r++)
        corner += rowsum[r] == 3.0; /* three neighbours missing */
    assert_int_equal(corner, 8);
    double loc = 0, orig = sectors_per_request(&a.ref, a.index, NULL, n);
    assert_int_equal(layouts_keep_outputs(&a, 0, &loc), 8);
    /* relabeling x alone leaves the rows' random order: 28.1 to 24.9; with
     * the threads following their rows (the benchmark's locality), 9.4 */
    assert_true(orig > 20 && loc < orig);
    uint32_t *perm = malloc(nnz * 4);
    tmap_memre m;
    TMAP_CHECK(tmap_memre_relabel(&a.ref, a.index, a.order, 0, &m, err));
    assert_int_equal(mi_follow_rows(&a, a.order, perm), 0);
    TMAP_CHECK(tmap_perm_check(perm, nnz, "perm", err));
    double follow = sectors_per_request(&a.ref, m.index, perm, n);
    assert_true(follow < 0.4 * orig);
    tmap_memre_free(&m), free(perm);
    assert_true(mi_cg_cpu(&a, 200, x) < 1e-6);
    free(rowsum), free(x), mi_free(&a);
}

/* The same input for any number of generator threads: each particle's
 * position is its own stream's draws, whichever piece of mi_parallel made
 * it (70,000: above its threshold for one thread). */
static void md_generation_is_deterministic(void **state)
{
    mi_app a;
    assert_int_equal(mi_md_make(70000, 3, &a), 0);
    float side = cbrtf(70000 / 0.8f), *p = a.data;
    for (size_t t = 0; t < 70000; t += 997) {
        uint64_t s = mi_stream(3, t);
        for (int d = 0; d < 3; d++)
            assert_true(p[4 * t + d] == (float)mi_unif(&s) * side);
    }
    mi_free(&a);
}

/* The benchmark's GPU kernels compile (NVRTC runs without a GPU). */
static void kernels_compile(void **state)
{
    const char *fmad[] = {"--fmad=false"};
    tmap_compile_opts o = {.options = fmad, .noptions = 1};
    tmap_compiled c = {0};
    TMAP_CHECK(tmap_compile(mi_kernels_src, "memirr_apps.cu", &o, &c, err));
    const char *names[] = {"md_force", "bfs_step", "spmv_coo", "dot", "axpy"};
    for (size_t i = 0; i < 5; i++)
        assert_non_null(strstr(c.ptx, names[i]));
    tmap_compiled_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_compile),
        cmocka_unit_test(md),
        cmocka_unit_test(bfs),
        cmocka_unit_test(spmv_and_cg),
        cmocka_unit_test(stencil),
        cmocka_unit_test(md_generation_is_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * bench_memirr.c -- the memory transformations on the GPU, on SpMV in a
 * CG-like loop: the 3-D 7-point Laplacian of an N^3 grid (rows of 7
 * entries in row-major ELL, a missing neighbour as the row itself with 0)
 * under a seeded random symmetric permutation of its rows and columns; y =
 * A x reads x[col[t*7 + j]], the irregular reference.  For each layout of
 * x: the sectors per request of that reference (tmap_sectors_count_gpu,
 * with the launch's footprint against the L2), the SpMV kernel's time, the
 * time to rebuild the layout of x before every SpMV (x changes every
 * iteration of CG), and the one-time cost of computing the layout:
 *   original   -- the permuted matrix as is;
 *   rcm        -- the locality baseline: reverse Cuthill-McKee relabels
 *                 rows and columns (CPU), the whole solve in the new order:
 *                 nothing to rebuild per iteration;
 *   reorder    -- data reordering of x (built on the GPU), rows unchanged:
 *                 x' = x[from] gathered before each SpMV;
 *   duplicate  -- duplication of x (built on the GPU): 7 copies per row,
 *                 gathered before each SpMV;
 *   swap       -- job swapping (CPU; a row's category is the tuple of the
 *                 sectors of its 7 columns): the rows move once, x stays;
 *   hybrid     -- the hybrid (CPU): rows moved once, x' = x[from] gathered
 *                 before each SpMV.
 * Padding takes one access per thread and does not apply (k = 7).  Every
 * variant's y is checked equal to the original's.
 * Times are medians of --reps launches (CUDA events) after 3 warm-ups.
 * Usage: bench_memirr [--sizes 96,128,192] [--reps R] [--seed S]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

enum { K = 7 };

static const char spmv_src[] =
    "extern \"C\" __global__ void spmv_ell(const double *val, const unsigned *col,\n"
    "    const double *x, double *y, unsigned n) {\n"
    "  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (t >= n) return;\n"
    "  double acc = 0;\n"
    "  for (int j = 0; j < 7; j++) acc += val[(size_t)t * 7 + j] * x[col[(size_t)t * 7 + j]];\n"
    "  y[t] = acc;\n"
    "}\n";

typedef struct problem {
    uint32_t n;         /* rows */
    uint32_t *col;      /* [n * K]: the permuted matrix's columns */
    double *val;        /* [n * K] */
    double *x;          /* [n] */
} problem;

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* The Laplacian of an N^3 grid, grid point g relabeled lab[g] (random). */
static int make_problem(uint32_t side, uint64_t seed, problem *p)
{
    uint32_t n = side * side * side;
    uint32_t *lab = malloc((size_t)n * sizeof *lab);
    p->n = n;
    p->col = malloc((size_t)n * K * sizeof *p->col);
    p->val = malloc((size_t)n * K * sizeof *p->val);
    p->x = malloc((size_t)n * sizeof *p->x);
    if (!lab || !p->col || !p->val || !p->x)
        return free(lab), -1;
    for (uint32_t i = 0; i < n; i++)
        lab[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(next(&seed) % (i + 1)), t = lab[i];
        lab[i] = lab[j], lab[j] = t;
    }
    for (uint32_t g = 0; g < n; g++) {
        uint32_t x = g % side, y = g / side % side, z = g / side / side, r = lab[g];
        int64_t G = g, S = side, nb[K] = {G, x ? G - 1 : -1, x + 1 < side ? G + 1 : -1,
                                          y ? G - S : -1, y + 1 < side ? G + S : -1,
                                          z ? G - S * S : -1, z + 1 < side ? G + S * S : -1};
        for (int j = 0; j < K; j++) {
            p->col[(size_t)r * K + j] = nb[j] < 0 ? r : lab[nb[j]];
            p->val[(size_t)r * K + j] = j == 0 ? 6.0 : nb[j] < 0 ? 0.0 : -1.0;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        p->x[i] = (double)(next(&seed) % 1000000) / 1000.0;
    free(lab);
    return 0;
}

/* Row t of y = A x on the CPU. */
static double reference_row(const problem *p, uint32_t t)
{
    double acc = 0;
    for (int j = 0; j < K; j++)
        acc += p->val[(size_t)t * K + j] * p->x[p->col[(size_t)t * K + j]];
    return acc;
}

typedef struct gpu {
    tmap_cuda *c;
    tmap_kernel *k;
    tmap_timer *timer;
    int reps;
    uint64_t l2;
} gpu;

typedef struct variant {
    const char *name;
    const uint32_t *col;       /* host: the index the kernel reads (NULL: on the GPU) */
    uint64_t dcol;             /* device index (set when col is NULL) */
    const double *val;         /* host rows as the kernel reads them */
    const uint32_t *rows;      /* slot -> original row (NULL: the identity) */
    uint64_t from;             /* device from[] for the per-iteration gather (0: none) */
    size_t nout;               /* elements of x' */
    double build_ms;           /* one-time cost of computing the layout */
    const char *build_where;
} variant;

static uint64_t upload(gpu *g, const void *h, size_t bytes, tmap_error *e)
{
    uint64_t d = 0;
    if (tmap_cuda_alloc(g->c, bytes, &d, e) || tmap_cuda_upload(g->c, d, h, bytes, e))
        return 0;
    return d;
}

/* Median of reps gathers x' = x[from] (CUDA events). */
static float gather_ms(gpu *g, const variant *v, uint64_t dx, uint64_t dxp, tmap_error *e)
{
    float ms[64];
    int reps = g->reps < 64 ? g->reps : 64;
    for (int i = -3; i < reps; i++) {
        int ready = 0;
        if (tmap_timer_start(g->timer, NULL, e) ||
            tmap_gpu_memre_gather(v->from, v->nout, dx, 8, dxp, NULL, e) ||
            tmap_timer_stop(g->timer, NULL, e))
            return -1;
        while (!ready)
            if (tmap_timer_poll(g->timer, &ready, &ms[i < 0 ? 0 : i], e))
                return -1;
    }
    return bench_median(ms, reps);
}

/* Runs one variant: sectors, times, and y checked against the original's
 * (want[row], bitwise: the same kernel sums the same products in the same
 * order); *y_out (may be NULL) keeps y. */
static int run_variant(gpu *g, const problem *p, const variant *v, const double *want,
                       float base_iter, float *iter_out, double **y_out, tmap_error *e)
{
    size_t nk = (size_t)p->n * K;
    uint64_t dval = upload(g, v->val, nk * 8, e), dcol = v->col ? upload(g, v->col, nk * 4, e)
                                                                 : v->dcol;
    uint64_t dx = upload(g, p->x, (size_t)p->n * 8, e), dxp = 0, dy = 0;
    if (!dval || !dcol || !dx || tmap_cuda_alloc(g->c, (size_t)p->n * 8, &dy, e) ||
        (v->from && tmap_cuda_alloc(g->c, v->nout * 8, &dxp, e)))
        return -1;
    float gms = 0;
    if (v->from && (gms = gather_ms(g, v, dx, dxp, e)) < 0)
        return -1;
    uint64_t xin = v->from ? dxp : dx;
    unsigned n = p->n;
    void *args[] = {&dval, &dcol, &xin, &dy, &n};
    tmap_launch l = {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0, args, 5};
    float *ms = malloc((size_t)g->reps * sizeof *ms);
    tmap_memref r = {.nthreads = n, .per_thread = K, .elem_bytes = 8,
                     .nelems = v->from ? v->nout : n};
    tmap_sector_counts s;
    uint64_t l2 = 0;
    double *y = malloc((size_t)n * 8);
    if (!ms || !y || tmap_kernel_time(g->k, &l, 3, g->reps, ms, e) ||
        tmap_sectors_count_gpu(g->c, &r, dcol, 0, &s, &l2, e) ||
        tmap_cuda_download(g->c, y, dy, (size_t)n * 8, e))
        return free(ms), free(y), -1;
    g->l2 = l2;
    int same = 1;
    for (uint32_t slot = 0; slot < n; slot++) /* the original: within 1e-12 of the CPU's */
        same &= want ? y[slot] == want[v->rows ? v->rows[slot] : slot]
                     : fabs(y[slot] - reference_row(p, slot)) <= 1e-12 * (1 + fabs(y[slot]));
    float kms = bench_median(ms, g->reps), iter = kms + gms;
    *iter_out = iter;
    printf("  %-10s | %6.2f %6.2f %8.1f %-4s | %8.3f %8.3f %8.3f %6.2fx | %9.1f %-4s | %s\n",
           v->name, tmap_sectors_per_request(&s), (double)s.min_sectors / (double)s.requests,
           (double)s.footprint * 32 / 1048576.0, tmap_sectors_fit_l2(&s, &r, l2) ? "yes" : "no",
           kms, gms, iter, base_iter > 0 ? base_iter / iter : 1.0, v->build_ms, v->build_where,
           same ? "yes" : "NO");
    tmap_cuda_free(g->c, dval), tmap_cuda_free(g->c, dx), tmap_cuda_free(g->c, dxp);
    tmap_cuda_free(g->c, dy);
    if (v->col)
        tmap_cuda_free(g->c, dcol);
    free(ms);
    if (y_out)
        *y_out = y;
    else
        free(y);
    return same ? 0 : -1;
}

/* The rows of p moved to m's thread order (slot s holds row m->perm[s],
 * reading m->index), into col and val. */
static void move_rows(const problem *p, const tmap_memre *m, uint32_t *col, double *val)
{
    for (size_t s = 0; s < p->n; s++)
        for (int j = 0; j < K; j++)
            col[s * K + j] = m->index[(size_t)m->perm[s] * K + j],
            val[s * K + j] = p->val[(size_t)m->perm[s] * K + j];
}

/* The RCM variant: rows and x relabeled (threads follow), on the host. */
static int rcm_variant(const problem *p, variant *v, uint32_t **order_out, uint32_t **col_out,
                       double **val_out, tmap_error *e)
{
    size_t n = p->n;
    uint32_t *rowptr = malloc((n + 1) * sizeof *rowptr), *order = malloc(n * sizeof *order);
    uint32_t *col = malloc(n * K * sizeof *col);
    double *val = malloc(n * K * sizeof *val);
    if (!rowptr || !order || !col || !val)
        return free(rowptr), free(order), free(col), free(val), -1;
    for (size_t i = 0; i <= n; i++)
        rowptr[i] = (uint32_t)(i * K);
    double t0 = tmap_clock_seconds();
    tmap_memref r = {.nthreads = n, .per_thread = K, .elem_bytes = 8, .nelems = n};
    tmap_memre m = {0};
    if (tmap_memre_rcm(rowptr, p->col, n, order, e) ||
        tmap_memre_relabel(&r, p->col, order, 1, &m, e))
        return free(rowptr), free(order), free(col), free(val), -1;
    move_rows(p, &m, col, val); /* the rows moved with their threads, once */
    v->build_ms = (tmap_clock_seconds() - t0) * 1e3;
    tmap_memre_free(&m);
    free(rowptr);
    *order_out = order, *col_out = col, *val_out = val;
    return 0;
}

/* Job swapping or the hybrid (CPU): the rows move once; the hybrid's x'
 * is gathered before each SpMV. */
static int swap_variant(gpu *g, const problem *p, int hybrid, const double *want, float base,
                        tmap_error *e)
{
    size_t nk = (size_t)p->n * K;
    tmap_memref r = {.nthreads = p->n, .per_thread = K, .elem_bytes = 8, .nelems = p->n};
    tmap_memre m = {0};
    uint32_t *col = malloc(nk * sizeof *col);
    double *val = malloc(nk * sizeof *val);
    double t0 = tmap_clock_seconds();
    float iter;
    int rc = !col || !val ? -1 : 0;
    if (!rc && (hybrid ? tmap_memre_hybrid(&r, p->col, 0, &m, e)
                       : tmap_memre_swap(&r, p->col, 0, &m, e)))
        rc = -1;
    variant v = {hybrid ? "hybrid" : "swap", col, 0, val, NULL, 0, 0, 0, "CPU"};
    if (!rc) {
        move_rows(p, &m, col, val);
        v.rows = m.perm, v.nout = m.nout;
        v.build_ms = (tmap_clock_seconds() - t0) * 1e3;
        if (m.from && !(v.from = upload(g, m.from, m.nout * 4, e)))
            rc = -1;
    }
    rc = rc ? rc : run_variant(g, p, &v, want, base, &iter, NULL, e);
    tmap_cuda_free(g->c, v.from), tmap_memre_free(&m), free(col), free(val);
    return rc;
}

static int run_size(gpu *g, uint32_t side, uint64_t seed, tmap_error *e)
{
    problem p = {0};
    if (make_problem(side, seed, &p))
        return fprintf(stderr, "bench_memirr: out of memory\n"), -1;
    size_t n = p.n, nk = n * K;
    double *want = NULL, *xr = malloc(n * sizeof *xr);
    printf("\n%u^3 grid: %u rows, %zu entries; x %.1f MiB, matrix (ELL val + col) %.1f MiB\n",
           side, p.n, nk, n * 8 / 1048576.0, nk * 12 / 1048576.0);
    printf("  %-10s | %6s %6s %8s %-4s | %8s %8s %8s %7s | %9s %-4s | %s\n", "layout", "sec/rq",
           "min", "foot_MiB", "L2", "spmv_ms", "build_ms", "iter_ms", "speedup", "once_ms",
           "on", "same y");
    float base = 0, iter = 0;
    variant orig = {"original", p.col, 0, p.val, NULL, 0, 0, 0, "-"};
    int rc = xr ? run_variant(g, &p, &orig, NULL, 0, &base, &want, e) : -1;
    uint32_t *order = NULL, *rcol = NULL;
    double *rval = NULL;
    variant rcm = {"rcm", NULL, 0, NULL, NULL, 0, 0, 0, "CPU"};
    if (!rc && !(rc = rcm_variant(&p, &rcm, &order, &rcol, &rval, e))) {
        /* the solve runs in the new order: x relabeled once, y compared by row */
        problem q = p;
        q.x = xr;
        for (size_t i = 0; i < n; i++)
            xr[i] = p.x[order[i]];
        rcm.col = rcol, rcm.val = rval, rcm.rows = order;
        rc = run_variant(g, &q, &rcm, want, base, &iter, NULL, e);
    }
    uint64_t dcol = upload(g, p.col, nk * 4, e), from = 0, q = 0;
    for (int dup = 0; !rc && dup < 2; dup++) {
        size_t nout = dup ? nk : n;
        if (!dcol || tmap_cuda_alloc(g->c, nout * 4, &from, e) ||
            tmap_cuda_alloc(g->c, nk * 4, &q, e))
            return -1;
        double t0 = tmap_clock_seconds();
        tmap_status st = dup ? tmap_gpu_memre_duplicate(dcol, n, K, from, q, NULL, e)
                             : tmap_gpu_memre_reorder(dcol, n, K, n, from, q, e);
        float dummy;
        if (st || tmap_cuda_download(g->c, &dummy, q, 4, e)) /* waits for the build */
            return -1;
        variant v = {dup ? "duplicate" : "reorder", NULL, q, p.val, NULL, from, nout,
                     (tmap_clock_seconds() - t0) * 1e3, "GPU"};
        rc = run_variant(g, &p, &v, want, base, &iter, NULL, e);
        tmap_cuda_free(g->c, from), tmap_cuda_free(g->c, q);
    }
    tmap_cuda_free(g->c, dcol);
    for (int hybrid = 0; !rc && hybrid < 2; hybrid++)
        rc = swap_variant(g, &p, hybrid, want, base, e);
    free(p.col), free(p.val), free(p.x), free(want), free(xr), free(order), free(rcol), free(rval);
    return rc;
}

int main(int argc, char **argv)
{
    gpu g = {NULL, NULL, NULL, 21, 0};
    uint32_t sides[8] = {96, 128, 192}, nsides = 3;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g.reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsides = 0;
            for (char *s = strtok(argv[++i], ","); s && nsides < 8; s = strtok(NULL, ","))
                sides[nsides++] = (uint32_t)atoi(s);
        } else {
            fprintf(stderr, "usage: bench_memirr [--sizes 96,128,192] [--reps R] [--seed S]\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    for (uint32_t i = 0; i < nsides; i++)
        if (sides[i] < 2 || sides[i] > 1000)
            return fprintf(stderr, "bench_memirr: grid sides are in [2, 1000]\n"), 2;
    if (g.reps < 1)
        return fprintf(stderr, "bench_memirr: --reps must be positive\n"), 2;
    tmap_error e = {0};
    tmap_device_info d;
    tmap_compiled out = {0};
    if (tmap_cuda_open(0, &g.c, &e) || tmap_cuda_info(g.c, &d, &e) ||
        tmap_compile(spmv_src, "spmv_ell.cu", NULL, &out, &e) ||
        tmap_kernel_load(g.c, out.ptx, "spmv_ell", &g.k, &e) ||
        tmap_timer_create(g.c, &g.timer, &e))
        return bench_gpu_failed("bench_memirr", &e);
    bench_banner(stdout, &d, "# ");
    printf("# SpMV y = A x, the 7-point Laplacian of an N^3 grid under a random symmetric\n"
           "# permutation (seed %llu), row-major ELL, FP64; x[col[t*7 + j]] is the reference.\n"
           "# sec/rq: sectors per warp request of that reference; min: its packed minimum;\n"
           "# foot_MiB: distinct sectors of x touched; L2: the footprint fits in L2;\n"
           "# spmv_ms: the kernel; build_ms: x' = x[from] before each SpMV (x changes every CG\n"
           "# iteration); iter_ms: both; speedup: the original's iter_ms over this one's;\n"
           "# once_ms: computing the layout (once per matrix); medians of %d reps.\n",
           (unsigned long long)seed, g.reps);
    int rc = 0;
    for (uint32_t i = 0; !rc && i < nsides; i++)
        rc = run_size(&g, sides[i], seed + i, &e);
    if (rc == 0)
        printf("\n# L2: %llu MiB\n", (unsigned long long)(g.l2 >> 20));
    else
        fprintf(stderr, "bench_memirr: %s\n", e.message[0] ? e.message : "a result differs");
    tmap_timer_free(g.timer);
    tmap_kernel_free(g.k);
    tmap_compiled_free(&out);
    tmap_cuda_close(g.c);
    return rc ? 1 : 0;
}

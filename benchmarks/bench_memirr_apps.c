/*
 * bench_memirr_apps.c -- issue 19's other kernels on the GPU (inputs and CPU
 * references in bench_memirr_apps.h): MD forces over neighbour lists, BFS
 * on a Kronecker graph, SpMV on power-law rows, and CG on that matrix.  For
 * each input and each layout that applies (tmap_memre_build; the locality
 * order is Morton for MD, RCM otherwise): the sectors per request of the
 * irregular reference, the launch time (the gather of A' included: the
 * data changes between launches in all four), the CPU time of the build
 * and the time per launch with the build spread over `launches` launches
 * that reuse the layout; then partial duplication with zhang2011's adaptive
 * fraction (tmap_memfrac over real launches, each step the median of 3
 * runs), sharing on MD (md_force_shared; its sec/rq: the staged loads'
 * sectors per request of the reference), cuSPARSE's CSR SpMV (where linked);
 * then the model's proposal (tmap_memre_propose) and the measured choice
 * (tmap_memchooser over real launches).  Every
 * layout's output is checked against the CPU reference: MD bit for bit,
 * BFS levels exactly, SpMV and CG within rounding (atomics).
 * Times are medians of --reps runs (CUDA events) after one warm-up; a BFS
 * run is a whole search, a CG run the whole solve.
 * Usage: bench_memirr_apps [--md N,..] [--bfs SCALE,..] [--spmv N,..]
 *        [--cg-iters I] [--reps R] [--seed S]   (an empty list skips an app)
 * Exits 3 without a GPU.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/bench_memirr_apps.h"
#include "benchmarks/benchutil.h"
#include "common/base.h"

typedef struct gpu {
    tmap_cuda *c;
    tmap_kernel *md, *md_shared, *bfs, *spmv, *dot, *axpy;
    tmap_timer *timer;
    int reps;
} gpu;

/* A layout on the device (q the index; perm, from 0 when absent; ap: A').
 * Partial duplication: head > 0, A' is A in place (its buffer has room:
 * with_room) and the copies after it, from[head..nout).  Sharing: start
 * (the blocks' lists in from), and `under`, the layout whose A' the
 * blocks stage from (q, from index into it). */
typedef struct dev_layout {
    uint64_t q, perm, from, ap, start;
    size_t nout, head;
    unsigned smem;
    const struct dev_layout *under;
    double build_ms;
} dev_layout;

/* The app's own device arrays: A, aux, val, out (md: forces; bfs: the
 * levels, which are A; spmv: y). */
typedef struct dev_app {
    uint64_t a, aux, val, out;
    uint32_t depth;      /* bfs: levels to run */
    uint64_t level0;     /* bfs: the start levels (device) */
    int cg_iters;        /* cg: a run is the solve */
    uint64_t x, r, p, ap, scalar;
} dev_app;

static uint64_t up(gpu *g, const void *h, size_t bytes, tmap_error *e)
{
    uint64_t d = 0;
    if (tmap_cuda_alloc(g->c, bytes ? bytes : 4, &d, e) || tmap_cuda_upload(g->c, d, h, bytes, e))
        return 0;
    return d;
}

static void layout_free(gpu *g, dev_layout *d)
{
    tmap_cuda_free(g->c, d->q), tmap_cuda_free(g->c, d->perm), tmap_cuda_free(g->c, d->from);
    tmap_cuda_free(g->c, d->ap), tmap_cuda_free(g->c, d->start);
    memset(d, 0, sizeof *d);
}

/* m NULL: the original. */
static int layout_up(gpu *g, const mi_app *a, const tmap_memre *m, dev_layout *d, tmap_error *e)
{
    size_t n = a->ref.nthreads * a->ref.per_thread;
    d->q = up(g, m ? m->index : a->index, n * 4, e);
    if (!d->q || (m && m->perm && !(d->perm = up(g, m->perm, a->ref.nthreads * 4, e))) ||
        (m && m->from && !(d->from = up(g, m->from, m->nout * 4, e))) ||
        (m && m->from && tmap_cuda_alloc(g->c, m->nout * a->ref.elem_bytes, &d->ap, e)))
        return -1;
    d->nout = m ? m->nout : a->ref.nelems;
    return 0;
}

static tmap_launch grid(void **args, size_t nargs, size_t n)
{
    return (tmap_launch){{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0, args, nargs};
}

/* x' = x[from] when the layout moves data; the array the kernel reads.
 * Partial duplication gathers only its copies, into x's room after A. */
static int gathered(const dev_layout *d, uint64_t x, size_t eb, uint64_t *read, tmap_error *e)
{
    if (d->head) {
        *read = x;
        return d->nout > d->head && tmap_gpu_memre_gather(d->from + d->head * 4, d->nout - d->head,
                                                          x, eb, x + d->head * eb, NULL, e) ? -1 : 0;
    }
    *read = d->from ? d->ap : x;
    return d->from && tmap_gpu_memre_gather(d->from, d->nout, x, eb, d->ap, NULL, e) ? -1 : 0;
}

/* The bytes of the array the kernel reads through P, with room for partial
 * duplication's copies after A (A rounded up to a sector, a copy per access). */
static size_t with_room(const mi_app *a)
{
    size_t eb = a->ref.elem_bytes, seg = eb < 32 ? 32 / eb : 1;
    return ((a->ref.nelems + seg - 1) / seg * seg + a->ref.nthreads * a->ref.per_thread) * eb;
}

/* An upload of bytes into a buffer of `room` bytes (0 on failure). */
static uint64_t up_room(gpu *g, const void *h, size_t bytes, size_t room, tmap_error *e)
{
    uint64_t d = 0;
    if (tmap_cuda_alloc(g->c, room, &d, e) || (h && tmap_cuda_upload(g->c, d, h, bytes, e)))
        return tmap_cuda_free(g->c, d), 0;
    return d;
}

/* One SpMV y = A x through the layout (x: device, y zeroed here). */
static int spmv(gpu *g, const mi_app *a, const dev_layout *d, uint64_t x, uint64_t row,
                uint64_t val, uint64_t y, tmap_error *e)
{
    uint64_t xr;
    unsigned n = (unsigned)a->ref.nthreads;
    void *args[] = {&xr, (void *)&d->q, (void *)&d->perm, &row, &val, &y, &n};
    tmap_launch l = grid(args, 7, n);
    return tmap_cuda_zero(g->c, y, (size_t)a->nv * 8, e) || gathered(d, x, 8, &xr, e) ||
                   tmap_kernel_enqueue(g->spmv, &l, NULL, e)
               ? -1 : 0;
}

static int dot(gpu *g, uint64_t x, uint64_t y, unsigned n, uint64_t out, double *v, tmap_error *e)
{
    void *args[] = {&x, &y, &out, &n};
    tmap_launch l = {{264, 1, 1}, {256, 1, 1}, 0, args, 4};
    return tmap_cuda_zero(g->c, out, 8, e) || tmap_kernel_enqueue(g->dot, &l, NULL, e) ||
                   tmap_cuda_download(g->c, v, out, 8, e)
               ? -1 : 0;
}

static int axpy(gpu *g, uint64_t y, uint64_t x, double alpha, double beta, unsigned n,
                tmap_error *e)
{
    void *args[] = {&y, &x, &alpha, &beta, &n};
    tmap_launch l = grid(args, 5, n);
    return tmap_kernel_enqueue(g->axpy, &l, NULL, e) ? -1 : 0;
}

/* CG as mi_cg_cpu, the SpMV through the layout; x in da->x. */
static int cg(gpu *g, const mi_app *a, const dev_layout *d, dev_app *da, tmap_error *e)
{
    unsigned n = a->nv;
    double rr, pap;
    if (tmap_cuda_zero(g->c, da->x, (size_t)n * 8, e) ||
        tmap_cuda_copy(g->c, da->r, da->a, (size_t)n * 8, e) ||
        tmap_cuda_copy(g->c, da->p, da->a, (size_t)n * 8, e) ||
        dot(g, da->r, da->r, n, da->scalar, &rr, e))
        return -1;
    for (int it = 0; it < da->cg_iters && rr > 0; it++) {
        double rr2;
        if (spmv(g, a, d, da->p, da->aux, da->val, da->ap, e) ||
            dot(g, da->p, da->ap, n, da->scalar, &pap, e) ||
            axpy(g, da->x, da->p, rr / pap, 1, n, e) || axpy(g, da->r, da->ap, -rr / pap, 1, n, e) ||
            dot(g, da->r, da->r, n, da->scalar, &rr2, e) || axpy(g, da->p, da->r, 1, rr2 / rr, n, e))
            return -1;
        rr = rr2;
    }
    return 0;
}

/* One run of the app through layout d (enqueued; cg waits for its dots). */
static int run_once(gpu *g, const mi_app *a, const dev_layout *d, dev_app *da, tmap_error *e)
{
    unsigned n = (unsigned)a->ref.nthreads, k = (unsigned)a->ref.per_thread;
    uint64_t ar;
    if (da->cg_iters)
        return cg(g, a, d, da, e);
    if (a->kind == MI_SPMV)
        return spmv(g, a, d, da->a, da->aux, da->val, da->out, e);
    if (a->kind == MI_MD && d->start) { /* sharing: A' of `under`, staged by blocks */
        void *args[] = {&ar, (void *)&d->from, (void *)&d->start, (void *)&d->q,
                        (void *)&d->perm, &da->a, &da->out, &n, &k};
        tmap_launch l = grid(args, 9, n);
        l.shared_bytes = d->smem;
        return gathered(d->under, da->a, 16, &ar, e) ||
                       tmap_kernel_enqueue(g->md_shared, &l, NULL, e) ? -1 : 0;
    }
    if (a->kind == MI_MD) {
        void *args[] = {&ar, (void *)&d->q, (void *)&d->perm, &da->a, &da->out, &n, &k};
        tmap_launch l = grid(args, 7, n);
        return gathered(d, da->a, 16, &ar, e) || tmap_kernel_enqueue(g->md, &l, NULL, e) ? -1 : 0;
    }
    if (tmap_cuda_copy(g->c, da->a, da->level0, (size_t)a->nv * 4, e))
        return -1;
    for (unsigned step = 0; step < da->depth; step++) {
        void *args[] = {&ar, (void *)&d->q, (void *)&d->perm, &da->aux, &da->a, &n, &step};
        tmap_launch l = grid(args, 7, n);
        if (gathered(d, da->a, 4, &ar, e) || tmap_kernel_enqueue(g->bfs, &l, NULL, e))
            return -1;
    }
    return 0;
}

static float timed_run(gpu *g, const mi_app *a, const dev_layout *d, dev_app *da, tmap_error *e)
{
    float ms = -1;
    if (tmap_timer_start(g->timer, NULL, e) || run_once(g, a, d, da, e) ||
        tmap_timer_stop(g->timer, NULL, e) || tmap_timer_wait(g->timer, &ms, e))
        return -1;
    return ms;
}

/* What a run must give: md's forces and bfs's levels exactly (`exact`,
 * bytes at `from`), spmv's y within 1e-12 of each row's sum of |terms|,
 * CG's x a residual within 10x the CPU's. */
typedef struct reference {
    const void *exact;
    size_t bytes;
    uint64_t from;
    const double *y, *yscale;
    double cg_res;
} reference;

static int output_ok(gpu *g, const mi_app *a, const dev_app *da, const reference *ref,
                     tmap_error *e)
{
    size_t nv = a->nv;
    double *got = malloc(ref->exact ? ref->bytes : nv * 8), *r = malloc(nv * 8);
    int ok = got && r && !tmap_cuda_download(g->c, got, ref->exact ? ref->from : da->cg_iters ?
                                             da->x : da->out, ref->exact ? ref->bytes : nv * 8, e);
    if (ok && ref->exact)
        ok = !memcmp(got, ref->exact, ref->bytes);
    else if (ok && da->cg_iters) {
        mi_spmv_cpu(a, got, r);
        const double *b = a->data;
        double rr = 0, bb = 0;
        for (size_t i = 0; i < nv; i++)
            rr += (b[i] - r[i]) * (b[i] - r[i]), bb += b[i] * b[i];
        ok = sqrt(rr / bb) <= 10 * ref->cg_res + 1e-12;
    } else {
        for (size_t i = 0; ok && i < nv; i++)
            ok = fabs(got[i] - ref->y[i]) <= 1e-12 * ref->yscale[i];
    }
    free(got), free(r);
    return ok;
}

/* Kernel launches in a run: a BFS's levels, a CG solve's SpMVs, else 1. */
static double per_run(const mi_app *a, const dev_app *da)
{
    return da->cg_iters ? (double)da->cg_iters : a->kind == MI_BFS ? (double)da->depth : 1;
}

/* Launches that reuse one layout: the runs that do (md: a neighbour list's
 * lifetime, 20 steps; bfs: Graph500's 64 searches; spmv: 100; cg: the
 * solve) times per_run. */
static double reuse(const mi_app *a, const dev_app *da)
{
    double runs = da->cg_iters ? 1 : a->kind == MI_MD ? 20 : a->kind == MI_BFS ? 64 : 100;
    return runs * per_run(a, da);
}

static double spr(const tmap_memref *r, const tmap_memre *m, const uint32_t *index)
{
    tmap_memref q = *r;
    tmap_sector_counts s = {0};
    tmap_error e = {0};
    q.nelems = m ? m->nout : r->nelems;
    tmap_sectors_count(&q, m ? m->index : index, m ? m->perm : NULL, &s, &e);
    return tmap_sectors_per_request(&s);
}

/* One row: d's median run over --reps (after a warm-up), its output
 * checked; *amort: the run with the build spread over `launches`.
 * Returns -1 on a CUDA error, else 1 when the output matched, 0 if not. */
static int measure(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                   const dev_layout *d, const char *name, double spr, double launches,
                   float *ms, double *amort, float ms0, tmap_error *e)
{
    float *rep = malloc((size_t)g->reps * sizeof *rep);
    if (!rep || timed_run(g, a, d, da, e) < 0)
        return free(rep), -1;
    for (int r = 0; r < g->reps; r++)
        if ((rep[r] = timed_run(g, a, d, da, e)) < 0)
            return free(rep), -1;
    *ms = bench_median(rep, g->reps);
    free(rep);
    int same = output_ok(g, a, da, ref, e);
    *amort = *ms + d->build_ms * per_run(a, da) / launches;
    printf("  %-9s | %6.2f | %9.3f %9.1f %9.3f | %6.2fx | %s\n", name, spr, *ms, d->build_ms,
           *amort, (ms0 ? ms0 : *ms) / *amort, same ? "yes" : "NO");
    return same;
}

/* Sectors per request of the reference through a device layout. */
static double spr_gpu(gpu *g, const tmap_memref *r, const dev_layout *d, tmap_error *e)
{
    tmap_memref q = *r;
    tmap_sector_counts s = {0};
    q.nelems = d->nout;
    return tmap_sectors_count_gpu(g->c, &q, d->q, d->perm, &s, NULL, e) ? -1
                                                                         : tmap_sectors_per_request(&s);
}

/* The kernel's launches with A' gathered, one run: the transform (the
 * gathers, timed alone) and the rest, per launch. */
static int split_run(gpu *g, const mi_app *a, const dev_layout *d, dev_app *da, float *kernel,
                     float *transform, tmap_error *e)
{
    float all = timed_run(g, a, d, da, e), gather = 0;
    uint64_t ar;
    if (all < 0 || (d->from && (tmap_timer_start(g->timer, NULL, e) ||
                                gathered(d, da->a, a->ref.elem_bytes, &ar, e) ||
                                tmap_timer_stop(g->timer, NULL, e) ||
                                tmap_timer_wait(g->timer, &gather, e))))
        return -1;
    *transform = gather, *kernel = (float)(all / per_run(a, da)) - gather;
    return 0;
}

/* Builds partial duplication at fraction r on the GPU into p (sized for
 * r = 1); its time is p->build_ms. */
static int partial_build(gpu *g, const mi_app *a, uint64_t index, double r, dev_layout *p,
                         tmap_error *e)
{
    double t0 = tmap_clock_seconds();
    size_t eb = a->ref.elem_bytes, seg = eb < 32 ? 32 / eb : 1;
    if (tmap_gpu_memre_partial(index, a->ref.nthreads, a->ref.per_thread, a->ref.nelems, eb, r,
                               p->from, p->q, &p->nout, e))
        return -1;
    p->head = (a->ref.nelems + seg - 1) / seg * seg;
    p->build_ms = 1e3 * (tmap_clock_seconds() - t0);
    return 0;
}

/* zhang2011's adaptive fraction over real launches (tmap_memfrac, serial:
 * the copies are gathered before each launch), then the fixed fraction's
 * row.  orig: the original layout (its q is P on the device). */
static int bench_partial(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                         const dev_layout *orig, double launches, float ms0, float *ms,
                         double *amort, tmap_error *e)
{
    size_t n = a->ref.nthreads * a->ref.per_thread, slots = with_room(a) / a->ref.elem_bytes;
    dev_layout p = {0};
    tmap_memfrac *f = NULL;
    int rc = tmap_cuda_alloc(g->c, n * 4, &p.q, e) || tmap_cuda_alloc(g->c, slots * 4, &p.from, e) ||
                     tmap_memfrac_create(0, 0, 0, &f, e)
                 ? -1 : 0;
    double built = -1;
    int launches_run = 0;
    printf("  adaptive fraction (zhang2011 Fig. 8, serial), per launch:");
    while (!rc && !tmap_memfrac_done(f) && launches_run++ < 60) {
        double r = tmap_memfrac_next(f);
        float kernel, transform, kv[3], tv[3];
        if (r > 0 && r != built && !(rc = partial_build(g, a, orig->q, r, &p, e)))
            built = r;
        for (int i = 0; !rc && i < 3; i++) /* a step: medians of 3 (one is noise at 0.3 ms) */
            rc = split_run(g, a, r > 0 ? &p : orig, da, &kv[i], &tv[i], e);
        kernel = bench_median(kv, 3), transform = bench_median(tv, 3);
        if (!rc)
            printf(" r %.1f %.4f+%.4f ms;", r, kernel, transform), tmap_memfrac_record(f, kernel, transform);
    }
    double r = rc ? 0 : tmap_memfrac_next(f);
    if (!rc)
        printf("\n  -> %s (%d steps of 3 runs)\n", tmap_memfrac_why(f), launches_run);
    if (!rc && r > 0 && r != built)
        rc = partial_build(g, a, orig->q, r, &p, e);
    if (!rc && r > 0) {
        char name[32];
        snprintf(name, sizeof name, "partial%.1f", r);
        double s = spr_gpu(g, &a->ref, &p, e);
        rc = s < 0 ? -1 : measure(g, a, da, ref, &p, name, s, launches, ms, amort, ms0, e);
        rc = rc < 0 ? -1 : rc ? 0 : 1;
    } else if (!rc)
        *ms = ms0, *amort = ms0;
    tmap_memfrac_free(f), layout_free(g, &p);
    return rc;
}

/* Sharing (MD): the blocks of the locality layout `loc` stage their
 * working sets of its A' in shared memory (48 KiB at most); skipped,
 * said so, where a block's does not fit. */
static int bench_share(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                       const dev_layout *loc, double launches, float ms0, float *ms,
                       double *amort, tmap_error *e)
{
    size_t n = a->ref.nthreads, m = n * a->ref.per_thread, nb = (n + 255) / 256;
    dev_layout d = {.under = loc};
    uint32_t *start = malloc((nb + 1) * 4), *from = malloc(m * 4);
    double t0 = tmap_clock_seconds();
    int rc = !start || !from || tmap_cuda_alloc(g->c, m * 4, &d.q, e) ||
                     tmap_cuda_alloc(g->c, m * 4, &d.from, e) ||
                     tmap_cuda_alloc(g->c, (nb + 1) * 4, &d.start, e) ||
                     tmap_gpu_memre_share(loc->q, loc->perm, n, a->ref.per_thread, 256, d.from,
                                          d.q, d.start, &d.nout, e) ||
                     tmap_cuda_download(g->c, start, d.start, (nb + 1) * 4, e) ||
                     tmap_cuda_download(g->c, from, d.from, d.nout * 4, e)
                 ? -1 : 0;
    d.build_ms = loc->build_ms + 1e3 * (tmap_clock_seconds() - t0);
    size_t most = 0;
    for (size_t b = 0; !rc && b < nb; b++)
        most = start[b + 1] - start[b] > most ? start[b + 1] - start[b] : most;
    tmap_sector_counts st = {0};
    tmap_memre lists = {from, d.nout, NULL, NULL};
    tmap_memref r = a->ref;
    r.write = 0;
    if (!rc && (rc = tmap_memre_share_sectors(&r, &lists, start, 256, &st, e) ? -1 : 0) == 0)
        printf("  sharing: blocks of 256 stage %zu elements (%.1f per block, at most %zu): %llu "
               "staged requests, %.2f sectors each; %llu sectors against the reference's "
               "%zu requests\n", d.nout, (double)d.nout / nb, most,
               (unsigned long long)st.requests, tmap_sectors_per_request(&st),
               (unsigned long long)st.sectors, (n + 31) / 32 * a->ref.per_thread);
    if (!rc && most * a->ref.elem_bytes > 48 * 1024) {
        printf("  sharing: a block's working set (%zu elements) exceeds 48 KiB: not run\n", most);
        *ms = ms0, *amort = ms0;
    } else if (!rc) {
        d.smem = (unsigned)(most * a->ref.elem_bytes);
        if (loc->perm && !(rc = tmap_cuda_alloc(g->c, n * 4, &d.perm, e) ? -1 : 0))
            rc = tmap_cuda_copy(g->c, d.perm, loc->perm, n * 4, e) ? -1 : 0;
        /* sec/rq: the staged loads' sectors per request of the reference */
        double s = (double)st.sectors / (double)((n + 31) / 32 * a->ref.per_thread);
        rc = rc ? rc : measure(g, a, da, ref, &d, "share", s, launches, ms, amort, ms0, e);
        rc = rc < 0 ? -1 : rc ? 0 : 1;
    }
    layout_free(g, &d), free(start), free(from);
    return rc;
}

#ifdef TMAP_HAVE_CUSPARSE
#include <cusparse.h>

/* cuSPARSE's CSR SpMV on the same matrix (rows sorted: the COO's rows give
 * the row pointers), y checked as the others: the reference time. */
static int bench_cusparse(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                          float ms0, tmap_error *e)
{
    size_t nnz = a->ref.nthreads, nv = a->nv;
    int32_t *rowptr = calloc(nv + 1, 4);
    uint64_t drow = 0, dcol = 0, buf = 0;
    cusparseHandle_t h = NULL;
    cusparseSpMatDescr_t mat = NULL;
    cusparseDnVecDescr_t x = NULL, y = NULL;
    size_t bytes = 0;
    double one = 1, zero = 0;
    for (size_t i = 0; rowptr && i < nnz; i++)
        rowptr[a->aux[i] + 1]++;
    for (size_t r = 0; rowptr && r < nv; r++)
        rowptr[r + 1] += rowptr[r];
    int rc = !rowptr || !(drow = up(g, rowptr, (nv + 1) * 4, e)) ||
             !(dcol = up(g, a->index, nnz * 4, e));
    rc = rc || cusparseCreate(&h) ||
         cusparseCreateCsr(&mat, (int64_t)nv, (int64_t)nv, (int64_t)nnz, (void *)drow,
                           (void *)dcol, (void *)da->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                           CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F) ||
         cusparseCreateDnVec(&x, (int64_t)nv, (void *)da->a, CUDA_R_64F) ||
         cusparseCreateDnVec(&y, (int64_t)nv, (void *)da->out, CUDA_R_64F) ||
         cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, x, &zero, y,
                                 CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes) ||
         tmap_cuda_alloc(g->c, bytes ? bytes : 4, &buf, e);
    float *rep = rc ? NULL : malloc((size_t)(g->reps + 1) * sizeof *rep);
    for (int i = 0; rep && i <= g->reps && !rc; i++) /* the first a warm-up */
        rc = tmap_timer_start(g->timer, NULL, e) ||
             cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, x, &zero, y,
                          CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, (void *)buf) ||
             tmap_timer_stop(g->timer, NULL, e) || tmap_timer_wait(g->timer, &rep[i], e);
    if (!rc && rep) {
        float ms = bench_median(rep + 1, g->reps);
        int same = output_ok(g, a, da, ref, e);
        printf("  cusparse  |    --- | %9.3f       ---       --- | %6.2fx | %s  (CSR SpMV, "
               "the original order: the reference)\n", ms, ms0 / ms, same ? "yes" : "NO");
        rc = !same;
    } else if (!rc || !e->message[0])
        tmap_fail(e, TMAP_ERR_CUDA, "cuSPARSE's SpMV failed (status or allocation)");
    cusparseDestroyDnVec(x), cusparseDestroyDnVec(y), cusparseDestroySpMat(mat);
    cusparseDestroy(h);
    tmap_cuda_free(g->c, drow), tmap_cuda_free(g->c, dcol), tmap_cuda_free(g->c, buf);
    free(rowptr), free(rep);
    return rc ? -1 : 0;
}
#endif

/* Measures every layout, then partial duplication with the adaptive
 * fraction and sharing (MD), then the model's proposal and the measured
 * choice among it; 0 when every output matched. */
static int bench_layouts(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                         tmap_error *e)
{
    tmap_memre_costs c = {.order = a->order, .permute_threads = a->permute_threads,
                          .launches = reuse(a, da), .data_changes = 1, .threshold = 0.03};
    dev_layout d[TMAP_MEMRE_KINDS] = {{0}};
    float ms[TMAP_MEMRE_KINDS] = {0};
    double amort[TMAP_MEMRE_KINDS] = {0};
    int have[TMAP_MEMRE_KINDS] = {0}, bad = 0, best = 0, rc = 0;
    printf("  %-9s | %6s | %9s %9s %9s | %7s | %s\n", "layout", "sec/rq", "run_ms", "build_ms",
           "amort_ms", "speedup", "same");
    for (int k = 0; k < TMAP_MEMRE_KINDS && !rc; k++) {
        tmap_memre m = {0};
        double t0 = tmap_clock_seconds();
        tmap_error be = {0};
        tmap_status st = k ? tmap_memre_build((tmap_memre_kind)k, &a->ref, a->index, &c, &m, &be)
                           : TMAP_OK;
        if (st == TMAP_ERR_UNSUPPORTED || st == TMAP_ERR_INVALID)
            continue;
        if (st)
            return *e = be, -1;
        d[k].build_ms = k ? 1e3 * (tmap_clock_seconds() - t0) : 0;
        c.build_ms[k] = d[k].build_ms; /* the proposal weighs the same build times */
        double s = spr(&a->ref, k ? &m : NULL, a->index);
        rc = layout_up(g, a, k ? &m : NULL, &d[k], e);
        int same = rc ? -1 : measure(g, a, da, ref, &d[k], tmap_memre_kind_name((tmap_memre_kind)k),
                                     s, c.launches, &ms[k], &amort[k], ms[0], e);
        rc = same < 0 ? -1 : 0, have[k] = !rc, bad |= same == 0;
        if (!rc && amort[k] < amort[best])
            best = k;
        tmap_memre_free(&m);
    }
    float pms = 0, sms = 0;
    double pam = 0, sam = 0;
    int pr = rc ? rc : bench_partial(g, a, da, ref, &d[0], c.launches, ms[0], &pms, &pam, e);
    int sr = pr < 0 || !have[TMAP_MEMRE_LOCALITY] || a->kind != MI_MD
                 ? 0 : bench_share(g, a, da, ref, &d[TMAP_MEMRE_LOCALITY], c.launches, ms[0],
                                   &sms, &sam, e);
    rc = pr < 0 || sr < 0 ? -1 : rc;
    bad |= pr > 0 || sr > 0;
#ifdef TMAP_HAVE_CUSPARSE
    if (!rc && a->kind == MI_SPMV && !da->cg_iters)
        rc = bench_cusparse(g, a, da, ref, ms[0], e);
#endif
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t n = 0;
    tmap_memchooser *ch = NULL;
    rc = rc || tmap_memre_propose(&a->ref, a->index, &c, v, &n, e) ||
                 tmap_memchooser_create(v, n, 3, c.threshold, c.launches, &ch, e) ? -1 : 0;
    printf("  model (%g launches per layout), per launch: ", c.launches);
    for (size_t i = 0; !rc && i < n; i++)
        printf("%s%s %.4f ms", i ? ", " : "", tmap_memre_kind_name(v[i].kind),
               v[i].total_ms / c.launches);
    while (!rc && tmap_memchooser_chosen(ch) < 0) {
        int timed, cand = tmap_memchooser_next(ch, &timed);
        float t = timed_run(g, a, &d[v[cand].kind], da, e);
        if (t < 0)
            rc = -1;
        else if (timed) /* per launch */
            tmap_memchooser_record(ch, cand, (float)(t / per_run(a, da)));
    }
    if (!rc) {
        const char *bn = tmap_memre_kind_name((tmap_memre_kind)best);
        double bt = amort[best];
        bn = pam && pam < bt ? (bt = pam, "partial") : bn;
        bn = sam && sam < bt ? (bt = sam, "share") : bn;
        printf("\n  measured choice: %s (%s); best measured: %s (of all rows: %s, %.3f ms)\n",
               tmap_memre_kind_name(v[tmap_memchooser_chosen(ch)].kind), tmap_memchooser_why(ch),
               tmap_memre_kind_name((tmap_memre_kind)best), bn, bt);
    }
    tmap_memchooser_free(ch), tmap_memre_choices_free(v, n);
    for (int k = 0; k < TMAP_MEMRE_KINDS; k++)
        if (have[k])
            layout_free(g, &d[k]);
    return rc ? -1 : bad ? (tmap_fail(e, TMAP_ERR_INVALID, "a layout's output differs"), -1) : 0;
}

static void release(gpu *g, dev_app *da)
{
    uint64_t *p[] = {&da->a, &da->aux, &da->val, &da->out, &da->x, &da->r, &da->p, &da->ap,
                     &da->scalar, &da->level0};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        tmap_cuda_free(g->c, *p[i]), *p[i] = 0;
}

/* "\n<what, printf-style>: threads, accesses, A against the L2". */
static void heading(const mi_app *a, const char *fmt, ...) TMAP_PRINTF(2, 3);
static void heading(const mi_app *a, const char *fmt, ...)
{
    size_t bytes = a->ref.nelems * a->ref.elem_bytes;
    va_list ap;
    va_start(ap, fmt);
    printf("\n");
    vprintf(fmt, ap);
    va_end(ap);
    printf(": %zu threads x %zu accesses; A %.1f MiB (%s L2 on an H100)\n", a->ref.nthreads,
           a->ref.per_thread, bytes / 1048576.0, bytes <= (50ull << 20) ? "fits" : "exceeds");
}

static int md_size(gpu *g, uint32_t n, uint64_t seed, tmap_error *e)
{
    mi_app a;
    dev_app da = {0};
    if (mi_md_make(n, seed, &a))
        return tmap_fail(e, TMAP_ERR_NOMEM, "md: out of memory"), -1;
    heading(&a, "md, %u particles", n);
    float *f = malloc((size_t)n * 12);
    reference ref = {f, (size_t)n * 12, 0, NULL, NULL, 0};
    int rc = !f || mi_cpu_run(&a, NULL, 0, f) ||
                     !(da.a = up_room(g, a.data, (size_t)n * 16, with_room(&a), e)) ||
                     tmap_cuda_alloc(g->c, (size_t)n * 12, &da.out, e)
                 ? -1 : 0;
    ref.from = da.out;
    rc = rc ? rc : bench_layouts(g, &a, &da, &ref, e);
    release(g, &da), free(f), mi_free(&a);
    return rc;
}

static int bfs_scale(gpu *g, unsigned scale, uint64_t seed, tmap_error *e)
{
    mi_app a;
    dev_app da = {0};
    if (mi_bfs_make(scale, seed, &a))
        return tmap_fail(e, TMAP_ERR_NOMEM, "bfs: out of memory"), -1;
    heading(&a, "bfs, Kronecker scale %u (%u vertices)", scale, a.nv);
    uint32_t *want = malloc((size_t)a.nv * 4);
    da.depth = want ? mi_bfs_reference(&a, want) : 0;
    reference ref = {want, (size_t)a.nv * 4, 0, NULL, NULL, 0};
    int rc = !da.depth || !(da.a = up_room(g, NULL, 0, with_room(&a), e)) ||
                     !(da.aux = up(g, a.aux, a.ref.nthreads * 4, e)) ||
                     !(da.level0 = up(g, a.data, (size_t)a.nv * 4, e))
                 ? -1 : 0;
    ref.from = da.a;
    printf("  %u levels from vertex %u\n", da.depth, a.source);
    rc = rc ? rc : bench_layouts(g, &a, &da, &ref, e);
    release(g, &da), free(want), mi_free(&a);
    return rc;
}

/* SpMV, then CG of cg_iters iterations on the same matrix. */
static int spmv_size(gpu *g, uint32_t n, int cg_iters, uint64_t seed, tmap_error *e)
{
    mi_app a;
    dev_app da = {0};
    if (mi_spmv_make(n, seed, &a))
        return tmap_fail(e, TMAP_ERR_NOMEM, "spmv: out of memory"), -1;
    heading(&a, "spmv, power-law rows, %u rows", n);
    double *y = malloc((size_t)n * 8), *scale = calloc(n, 8), *x = malloc((size_t)n * 8);
    const double *xa = a.data;
    int rc = y && scale && x ? 0 : -1;
    if (!rc) {
        mi_spmv_cpu(&a, a.data, y);
        for (size_t i = 0; i < a.ref.nthreads; i++)
            scale[a.aux[i]] += fabs(a.val[i] * xa[a.index[i]]);
    }
    reference ref = {NULL, 0, 0, y, scale, 0};
    size_t vb = (size_t)n * 8;
    rc = rc || !(da.a = up_room(g, a.data, vb, with_room(&a), e)) ||
                 !(da.aux = up(g, a.aux, a.ref.nthreads * 4, e)) ||
                 !(da.val = up(g, a.val, a.ref.nthreads * 8, e)) ||
                 tmap_cuda_alloc(g->c, vb, &da.out, e)
             ? -1 : 0;
    rc = rc ? rc : bench_layouts(g, &a, &da, &ref, e);
    if (!rc && cg_iters > 0) {
        ref.cg_res = mi_cg_cpu(&a, cg_iters, x);
        da.cg_iters = cg_iters;
        printf("\ncg, %d iterations on that matrix (a run: the solve; CPU residual %.2g)\n",
               cg_iters, ref.cg_res);
        rc = tmap_cuda_alloc(g->c, vb, &da.x, e) || tmap_cuda_alloc(g->c, vb, &da.r, e) ||
                     !(da.p = up_room(g, NULL, 0, with_room(&a), e)) ||
                     tmap_cuda_alloc(g->c, vb, &da.ap, e) ||
                     tmap_cuda_alloc(g->c, 8, &da.scalar, e)
                 ? -1 : bench_layouts(g, &a, &da, &ref, e);
    }
    release(g, &da), free(y), free(scale), free(x), mi_free(&a);
    return rc;
}

/* "1,2,3" into v (at most 8); returns the count. */
static int list(char *s, long *v)
{
    int n = 0;
    for (char *t = strtok(s, ","); t && n < 8; t = strtok(NULL, ","))
        v[n++] = atol(t);
    return n;
}

static int open_gpu(gpu *g, tmap_compiled *out, tmap_error *e)
{
    const char *fmad[] = {"--fmad=false"};
    tmap_compile_opts o = {.options = fmad, .noptions = 1};
    tmap_device_info d;
    if (tmap_cuda_open(0, &g->c, e) || tmap_cuda_info(g->c, &d, e) ||
        tmap_compile(mi_kernels_src, "memirr_apps.cu", &o, out, e) ||
        tmap_kernel_load(g->c, out->ptx, "md_force", &g->md, e) ||
        tmap_kernel_load(g->c, out->ptx, "md_force_shared", &g->md_shared, e) ||
        tmap_kernel_load(g->c, out->ptx, "bfs_step", &g->bfs, e) ||
        tmap_kernel_load(g->c, out->ptx, "spmv_coo", &g->spmv, e) ||
        tmap_kernel_load(g->c, out->ptx, "dot", &g->dot, e) ||
        tmap_kernel_load(g->c, out->ptx, "axpy", &g->axpy, e) ||
        tmap_timer_create(g->c, &g->timer, e))
        return -1;
    bench_banner(stdout, &d, "# ");
    return 0;
}

int main(int argc, char **argv)
{
    gpu g = {.reps = 11};
    long md[8] = {1000000}, bfs[8] = {20}, sp[8] = {1000000};
    int nmd = 1, nbfs = 1, nsp = 1, cg_iters = 50;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (i + 1 < argc && !strcmp(o, "--md"))
            nmd = list(argv[++i], md);
        else if (i + 1 < argc && !strcmp(o, "--bfs"))
            nbfs = list(argv[++i], bfs);
        else if (i + 1 < argc && !strcmp(o, "--spmv"))
            nsp = list(argv[++i], sp);
        else if (i + 1 < argc && !strcmp(o, "--cg-iters"))
            cg_iters = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(o, "--reps"))
            g.reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(o, "--seed"))
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_memirr_apps [--md N,..] [--bfs SCALE,..] [--spmv N,..] "
                            "[--cg-iters I] [--reps R] [--seed S]\n");
            return strcmp(o, "--help") ? 2 : 0;
        }
    }
    for (int i = 0; i < nbfs; i++)
        if (bfs[i] < 4 || bfs[i] > 26)
            return fprintf(stderr, "bench_memirr_apps: Kronecker scales are in [4, 26]\n"), 2;
    for (int i = 0; i < nmd + nsp; i++)
        if ((i < nmd ? md[i] : sp[i - nmd]) < 64 || (i < nmd ? md[i] : sp[i - nmd]) > 100000000)
            return fprintf(stderr, "bench_memirr_apps: sizes are in [64, 1e8]\n"), 2;
    if (g.reps < 1 || g.reps > 1000 || cg_iters < 0)
        return fprintf(stderr, "bench_memirr_apps: --reps in [1, 1000], --cg-iters >= 0\n"), 2;
    tmap_error e = {0};
    tmap_compiled out = {0};
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run cut short keeps its lines */
    int rc = open_gpu(&g, &out, &e);
    if (rc)
        return bench_gpu_failed("bench_memirr_apps", &e);
    printf("# issue 19's kernels (seed %llu), medians of %d runs; sec/rq: sectors per warp\n"
           "# request of the irregular reference; run_ms: one run, A' gathered before each\n"
           "# launch (the data changes between launches); build_ms: the layout on the CPU;\n"
           "# amort_ms: run_ms + build_ms over the runs that reuse the layout; speedup: the\n"
           "# original's run_ms over amort_ms; the model's and the chooser's times are per\n"
           "# kernel launch (bfs: per level, cg: per SpMV)\n", (unsigned long long)seed, g.reps);
    for (int i = 0; !rc && i < nmd; i++)
        rc = md_size(&g, (uint32_t)md[i], seed + (uint64_t)i, &e);
    for (int i = 0; !rc && i < nbfs; i++)
        rc = bfs_scale(&g, (unsigned)bfs[i], seed + (uint64_t)i, &e);
    for (int i = 0; !rc && i < nsp; i++)
        rc = spmv_size(&g, (uint32_t)sp[i], cg_iters, seed + (uint64_t)i, &e);
    if (rc)
        fprintf(stderr, "bench_memirr_apps: %s\n", e.message);
    tmap_timer_free(g.timer);
    tmap_kernel *k[] = {g.md, g.md_shared, g.bfs, g.spmv, g.dot, g.axpy};
    for (int i = 0; i < 6; i++)
        tmap_kernel_free(k[i]);
    tmap_compiled_free(&out);
    tmap_cuda_close(g.c);
    return rc ? 1 : 0;
}

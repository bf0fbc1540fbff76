/*
 * bench_memirr_apps.c -- issue 19's other kernels on the GPU (inputs and CPU
 * references in bench_memirr_apps.h): MD forces over neighbour lists, BFS
 * on a Kronecker graph, SpMV on power-law rows and on a randomly permuted
 * 3-D stencil, and CG on those matrices.  Each layout is built ONCE, on the
 * GPU where it has a GPU build (duplication, reordering, padding, swapping
 * as a sort, the locality order: Morton order or RCM with the threads
 * following their rows, and its relabeling; sharing, partial duplication,
 * and for SpMV and CG the symmetric renumbering, rows and columns together
 * with y and the CG vectors in the new order; build_ms by CUDA events), a
 * CPU part timed on the host and added (the hybrid, zhang2011's sequential
 * greedy, only up to --cpu-limit accesses, else skipped and said so).  For
 * each input and layout: the sectors per
 * request of the irregular reference and its thread blocks' distinct
 * sectors per request (blk/rq; both counted on the GPU), the launch time
 * (the gather of A' included: the data changes between launches in all),
 * the build and the time per launch with the build spread over the
 * launches that reuse the layout; then partial duplication with
 * zhang2011's adaptive fraction (tmap_memfrac over real launches, each step
 * the median of 3 runs; a fraction settled above 0 becomes the layout
 * "partial"), cuSPARSE's CSR SpMV (where linked); then the model's
 * predictions and proposal over the same built layouts (tmap_memre_score,
 * _rank: nothing rebuilt; the settled fraction kept in it, measured to pay
 * already) and the measured choice (tmap_memchooser over real launches),
 * and the targets.  Every layout's output is checked
 * against the CPU reference: MD bit for bit, BFS levels exactly, SpMV and
 * CG within rounding (atomics).  Times are medians of --reps runs (CUDA
 * events) after one warm-up; a BFS run is a whole search, a CG run the
 * whole solve.  MD's locality and sharing builds and every swapping
 * build run a second time, warm, each step between its own events, into
 * arrays of their own checked equal to the first's (where the time goes;
 * "again" lines), with a device copy of Q for the bandwidth a build's
 * floor divides by.
 * Usage: bench_memirr_apps [--md N,..] [--bfs SCALE,..] [--spmv N,..]
 *        [--stencil SIDE,..] [--cg-iters I] [--reps R] [--seed S]
 *        [--cpu-limit ACCESSES]   (an empty list skips an app)
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
    tmap_kernel *md, *md_shared, *bfs, *spmv, *dot, *axpy, *unpad, *csr_rows, *scatter;
    tmap_timer *timer;
    int reps;
    size_t cpu_limit; /* accesses up to which a CPU-only layout is built */
} gpu;

/* A layout on the device (q the index; perm, from 0 when absent; ap: A').
 * Partial duplication: head > 0, A' is A in place (its buffer has room:
 * with_room) and the copies after it, from[head..nout).  Sharing: start
 * (the blocks' lists in from), and `under`, the layout whose A' the
 * blocks stage from (q, from index into it). */
typedef struct dev_layout {
    uint64_t q, perm, from, ap, start;
    uint64_t aux, val; /* bfs, spmv: the per-thread arrays moved with the threads */
    uint64_t ybuf;     /* symmetric: a vector in the new numbering (y; CG's x) */
    int sym;           /* symmetric renumbering: rows (aux) in the new numbering too */
    size_t nout, head;
    unsigned smem;
    int borrowed_q; /* q is the original's (swapping: data does not move) */
    const struct dev_layout *under;
    double build_ms; /* the one-time cost: GPU (CUDA events) + CPU parts */
    double cpu_ms;   /* of which on the CPU */
    tmap_sector_counts counts; /* the reference's sectors (sharing: the staged loads') */
    double spr;      /* sectors per request of the reference */
    uint64_t gather; /* sectors of one gather of A' (reads and writes) */
    int built;
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
    if (!d->borrowed_q)
        tmap_cuda_free(g->c, d->q);
    tmap_cuda_free(g->c, d->perm), tmap_cuda_free(g->c, d->from);
    tmap_cuda_free(g->c, d->ap), tmap_cuda_free(g->c, d->start);
    tmap_cuda_free(g->c, d->aux), tmap_cuda_free(g->c, d->val);
    tmap_cuda_free(g->c, d->ybuf);
    memset(d, 0, sizeof *d);
}

/* The layout's own copy of a per-thread array, else the app's. */
static uint64_t own(uint64_t mine, uint64_t app) { return mine ? mine : app; }

/* A build's GPU part: CUDA events on the legacy stream around it (the
 * host's calls between them included); ev_stop adds its time to *ms. */
static int ev_start(gpu *g, tmap_error *e) { return tmap_timer_start(g->timer, NULL, e) ? -1 : 0; }

static int ev_stop(gpu *g, double *ms, tmap_error *e)
{
    float f = 0;
    if (tmap_timer_stop(g->timer, NULL, e) || tmap_timer_wait(g->timer, &f, e))
        return -1;
    *ms += f;
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

/* The SpMV kernel alone, y zeroed first: y += A x with x read through
 * d's q (xr: the array it reads) and rows `row`. */
static int spmv_kernel(gpu *g, const mi_app *a, const dev_layout *d, uint64_t xr, uint64_t row,
                       uint64_t val, uint64_t y, tmap_error *e)
{
    unsigned n = (unsigned)a->ref.nthreads;
    void *args[] = {&xr, (void *)&d->q, (void *)&d->perm, &row, &val, &y, &n};
    tmap_launch l = grid(args, 7, n);
    return tmap_cuda_zero(g->c, y, (size_t)a->nv * 8, e) ||
                   tmap_kernel_enqueue(g->spmv, &l, NULL, e) ? -1 : 0;
}

/* v (new numbering, d's order) back to y (the original): y[order[i]] = v[i]. */
static int scatter_back(gpu *g, const mi_app *a, const dev_layout *d, uint64_t v, uint64_t y,
                        tmap_error *e)
{
    unsigned n = a->nv;
    void *args[] = {&v, (void *)&d->from, &y, &n};
    tmap_launch l = grid(args, 4, n);
    return tmap_kernel_enqueue(g->scatter, &l, NULL, e) ? -1 : 0;
}

/* One SpMV y = A x through the layout (x: device, y zeroed here).  The
 * symmetric renumbering: x gathered into the new numbering (as every
 * layout that moves data), y computed there (d->ybuf) and scattered back
 * to the original numbering, both in the run. */
static int spmv(gpu *g, const mi_app *a, const dev_layout *d, uint64_t x, uint64_t row,
                uint64_t val, uint64_t y, tmap_error *e)
{
    uint64_t xr;
    if (gathered(d, x, 8, &xr, e))
        return -1;
    if (d->sym)
        return spmv_kernel(g, a, d, xr, row, val, d->ybuf, e) ||
                       scatter_back(g, a, d, d->ybuf, y, e) ? -1 : 0;
    return spmv_kernel(g, a, d, xr, row, val, y, e);
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

/* CG as mi_cg_cpu, the SpMV through the layout; x in da->x.  The
 * symmetric renumbering solves in the new numbering: b gathered in (r, p)
 * and x (in d->ybuf) scattered out once per solve, in the run; no
 * gather per SpMV. */
static int cg(gpu *g, const mi_app *a, const dev_layout *d, dev_app *da, tmap_error *e)
{
    unsigned n = a->nv;
    double rr, pap;
    uint64_t x = d->sym ? d->ybuf : da->x;
    if (tmap_cuda_zero(g->c, x, (size_t)n * 8, e) ||
        (d->sym ? tmap_gpu_memre_gather(d->from, n, da->a, 8, da->r, NULL, e) != TMAP_OK
                : tmap_cuda_copy(g->c, da->r, da->a, (size_t)n * 8, e) != TMAP_OK) ||
        tmap_cuda_copy(g->c, da->p, da->r, (size_t)n * 8, e) ||
        dot(g, da->r, da->r, n, da->scalar, &rr, e))
        return -1;
    for (int it = 0; it < da->cg_iters && rr > 0; it++) {
        double rr2;
        if ((d->sym ? spmv_kernel(g, a, d, da->p, d->aux, d->val, da->ap, e)
                    : spmv(g, a, d, da->p, own(d->aux, da->aux), own(d->val, da->val), da->ap,
                           e)) ||
            dot(g, da->p, da->ap, n, da->scalar, &pap, e) ||
            axpy(g, x, da->p, rr / pap, 1, n, e) || axpy(g, da->r, da->ap, -rr / pap, 1, n, e) ||
            dot(g, da->r, da->r, n, da->scalar, &rr2, e) || axpy(g, da->p, da->r, 1, rr2 / rr, n, e))
            return -1;
        rr = rr2;
    }
    return d->sym ? scatter_back(g, a, d, x, da->x, e) : 0;
}

/* One run of the app through layout d (enqueued; cg waits for its dots). */
static int run_once(gpu *g, const mi_app *a, const dev_layout *d, dev_app *da, tmap_error *e)
{
    unsigned n = (unsigned)a->ref.nthreads, k = (unsigned)a->ref.per_thread;
    uint64_t ar;
    if (da->cg_iters)
        return cg(g, a, d, da, e);
    if (a->kind == MI_SPMV)
        return spmv(g, a, d, da->a, own(d->aux, da->aux), own(d->val, da->val), da->out, e);
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
    uint64_t dst = own(d->aux, da->aux);
    for (unsigned step = 0; step < da->depth; step++) {
        void *args[] = {&ar, (void *)&d->q, (void *)&d->perm, &dst, &da->a, &n, &step};
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

/* The reference's sectors through d (on the GPU; sharing sets its own). */
static int layout_counts(gpu *g, const mi_app *a, dev_layout *d, tmap_error *e)
{
    tmap_memref q = a->ref;
    q.nelems = d->nout;
    if (tmap_sectors_count_gpu(g->c, &q, d->q, d->perm, &d->counts, NULL, e))
        return -1;
    d->spr = tmap_sectors_per_request(&d->counts);
    return 0;
}

/* One gather of A' in sectors: its reads (A[from[x]], padding read as
 * element 0, counted on the GPU) and its writes. */
static int gather_counts(gpu *g, const mi_app *a, dev_layout *d, tmap_error *e)
{
    uint64_t idx = 0, from = d->from + d->head * 4; /* partial: the copies alone */
    unsigned n = (unsigned)(d->nout - d->head);
    void *args[] = {&from, &n, &idx};
    d->gather = 0;
    if (!n)
        return 0;
    tmap_launch l = grid(args, 3, n);
    tmap_memref r = a->ref;
    r.nthreads = n, r.per_thread = 1, r.write = 0;
    tmap_sector_counts s = {0};
    int rc = tmap_cuda_alloc(g->c, (size_t)n * 4, &idx, e) ||
             tmap_kernel_enqueue(g->unpad, &l, NULL, e) ||
             tmap_sectors_count_gpu(g->c, &r, idx, 0, &s, NULL, e) ? -1 : 0;
    tmap_cuda_free(g->c, idx);
    d->gather = s.sectors + ((size_t)n * a->ref.elem_bytes + 31) / 32;
    return rc;
}

/* One row: d's median run over --reps (after a warm-up), its output
 * checked; *amort: the run with the build spread over `launches`.
 * Returns -1 on a CUDA error, else 1 when the output matched, 0 if not. */
static int measure(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                   const dev_layout *d, const char *name, double launches, float *ms,
                   double *amort, float ms0, tmap_error *e)
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
    double blk = (double)d->counts.block_sectors /
                 (double)((a->ref.nthreads + 31) / 32 * a->ref.per_thread);
    printf("  %-10s | %6.2f %6.2f | %9.3f %9.2f %8.1f %9.3f | %6.2fx | %s\n", name, d->spr, blk,
           *ms, d->build_ms, d->cpu_ms, *amort, (ms0 ? ms0 : *ms) / *amort, same ? "yes" : "NO");
    return same;
}

/* ---------------------------------------------------------- the builds */

/* Allocations of a layout's arrays (0 bytes: none). */
static int alloc_layout(gpu *g, dev_layout *d, size_t from, size_t q, size_t perm, tmap_error *e)
{
    return (from && tmap_cuda_alloc(g->c, from * 4, &d->from, e)) ||
                   (q && tmap_cuda_alloc(g->c, q * 4, &d->q, e)) ||
                   (perm && tmap_cuda_alloc(g->c, perm * 4, &d->perm, e))
               ? -1 : 0;
}

/* Padding (k = 1): the slots used come back through a device word. */
static int build_pad(gpu *g, const mi_app *a, const dev_layout *o, dev_layout *x, tmap_error *e)
{
    size_t n = a->ref.nthreads, eb = a->ref.elem_bytes, seg = eb < 32 ? 32 / eb : 1;
    uint64_t dn = 0;
    uint32_t nout = 0;
    int rc = alloc_layout(g, x, (n + 31) / 32 * (32 + seg), n, n, e) ||
             tmap_cuda_alloc(g->c, 4, &dn, e) || ev_start(g, e) ||
             tmap_gpu_memre_pad(o->q, n, a->ref.nelems, eb, 32, x->from, x->q, x->perm, dn, NULL,
                                e) ||
             ev_stop(g, &x->build_ms, e) || tmap_cuda_download(g->c, &nout, dn, 4, e) ? -1 : 0;
    tmap_cuda_free(g->c, dn);
    x->nout = nout;
    return rc;
}

/* The same device bytes at x and y (downloaded); -1 on a CUDA error. */
static int same_bytes(gpu *g, uint64_t x, uint64_t y, size_t bytes, tmap_error *e)
{
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    int rc = !a || !b || tmap_cuda_download(g->c, a, x, bytes, e) ||
             tmap_cuda_download(g->c, b, y, bytes, e) ? -1 : !memcmp(a, b, bytes);
    free(a), free(b);
    return rc;
}

/* md's locality build, where its time goes: the same steps again, each
 * between its own events, into arrays of their own, after the timed build
 * (its kernels loaded, its scratch's pool warm), and checked equal to the
 * build's arrays.  Says so; builds nothing that is used. */
static int locality_steps(gpu *g, const mi_app *a, const dev_app *da, const dev_layout *o,
                          const dev_layout *x, tmap_error *e)
{
    size_t n = a->ref.nthreads, ne = a->ref.nelems, k = a->ref.per_thread;
    dev_layout y = {0};
    double ms[4] = {0, 0, 0, 0};
    int rc = alloc_layout(g, &y, ne, n * k, n, e) || ev_start(g, e) ||
             tmap_gpu_memre_morton(da->a, 4, n, y.from, NULL, e) || ev_stop(g, &ms[0], e) ||
             ev_start(g, e) || tmap_gpu_memre_relabel(o->q, n, k, y.from, ne, y.q, NULL, e) ||
             ev_stop(g, &ms[1], e) || ev_start(g, e) ||
             tmap_cuda_copy(g->c, y.perm, y.from, n * 4, e) || ev_stop(g, &ms[2], e) ||
             ev_start(g, e) || tmap_gpu_memre_morton(da->a, 4, n, y.from, NULL, e) ||
             tmap_gpu_memre_relabel(o->q, n, k, y.from, ne, y.q, NULL, e) ||
             tmap_cuda_copy(g->c, y.perm, y.from, n * 4, e) || ev_stop(g, &ms[3], e) ? -1 : 0;
    int same = rc ? -1 : same_bytes(g, x->from, y.from, ne * 4, e);
    if (same == 1)
        same = same_bytes(g, x->q, y.q, n * k * 4, e);
    if (same == 1)
        same = same_bytes(g, x->perm, y.perm, n * 4, e);
    double copy_ms = 0; /* the bandwidth a floor divides by: a device copy of Q */
    if (same >= 0 && (ev_start(g, e) || tmap_cuda_copy(g->c, y.q, x->q, n * k * 4, e) ||
                      ev_stop(g, &copy_ms, e)))
        same = -1;
    layout_free(g, &y);
    if (same < 0)
        return -1;
    printf("  (locality build again, warm: Morton order %.3f ms, relabeling %zu accesses %.3f ms,"
           " perm copy %.3f ms; the three in one window %.3f ms; the first, timed build %.3f ms;"
           " the same arrays: %s; a device copy of Q, %.0f MB read and written, %.3f ms: "
           "%.0f GB/s)\n", ms[0], n * k, ms[1], ms[2], ms[3], x->build_ms, same ? "yes" : "NO",
           2e-6 * (double)(n * k * 4), copy_ms, 2e-6 * (double)(n * k * 4) / copy_ms);
    return 0;
}

/* Swapping's build, where its time goes: the same build again after the
 * timed one (its kernels loaded), whole between two events, then step by
 * step (tmap_gpu_memre_swap_steps: each step between its own events, waited
 * for), into perms of their own checked equal to the build's; beside each
 * step, its floor: the bytes it must read and write at the bandwidth of a
 * device copy of Q.  Says so; builds nothing that is used. */
static int swap_again(gpu *g, const mi_app *a, const dev_layout *o, const dev_layout *x,
                      tmap_error *e)
{
    size_t n = a->ref.nthreads, k = a->ref.per_thread, ne = a->ref.nelems;
    size_t eb = a->ref.elem_bytes;
    uint64_t p1 = 0, p2 = 0, qc = 0;
    double whole = 0, copy_ms = 0, sum = 0, floor_ms = 0;
    tmap_gpu_swap_steps st;
    int rc = tmap_cuda_alloc(g->c, n * 4, &p1, e) || tmap_cuda_alloc(g->c, n * 4, &p2, e) ||
             tmap_cuda_alloc(g->c, n * k * 4, &qc, e) || ev_start(g, e) ||
             tmap_gpu_memre_swap(o->q, n, k, ne, eb, 0, p1, e) || ev_stop(g, &whole, e) ||
             tmap_gpu_memre_swap_steps(o->q, n, k, ne, eb, 0, p2, &st, e) || ev_start(g, e) ||
             tmap_cuda_copy(g->c, qc, o->q, n * k * 4, e) || ev_stop(g, &copy_ms, e) ? -1 : 0;
    int same = rc ? -1 : same_bytes(g, x->perm, p1, n * 4, e);
    if (same == 1)
        same = same_bytes(g, x->perm, p2, n * 4, e);
    tmap_cuda_free(g->c, p1), tmap_cuda_free(g->c, p2), tmap_cuda_free(g->c, qc);
    if (same < 0)
        return -1;
    double gbs = 2e-6 * (double)(n * k * 4) / copy_ms; /* read + written, GB/s */
    static const char *names[TMAP_SWAP_STEPS] = {"alloc", "keys", "sort", "runs", "place",
                                                 "free"};
    printf("  (swap build again, warm: %.3f ms in one window; step by step, each waited for:",
           whole);
    for (int i = 0; i < TMAP_SWAP_STEPS; i++) {
        double f = st.bytes[i] / (gbs * 1e6);
        sum += st.ms[i], floor_ms += f;
        printf(" %s %.3f", names[i], st.ms[i]);
        if (st.bytes[i] > 0)
            printf(" (%.0f MB, floor %.3f)", st.bytes[i] * 1e-6, f);
        printf(i + 1 < TMAP_SWAP_STEPS ? "," : ";");
    }
    printf(" sum %.3f ms, floor %.3f ms (%u key word%s, %u radix passes, %zu categories); "
           "reading Q and writing the perm alone %.3f ms; a device copy of Q, %.0f MB read and "
           "written, %.3f ms: %.0f GB/s; the first, timed build %.3f ms; the same perm: %s)\n",
           sum, floor_ms, st.words, st.words == 1 ? "" : "s", st.passes, st.runs,
           (double)(n * k * 4 + n * 4) / (gbs * 1e6), 2e-6 * (double)(n * k * 4), copy_ms, gbs,
           x->build_ms, same ? "yes" : "NO");
    return 0;
}

/* The locality order, on the GPU: md's Morton order (threads follow their
 * particles); otherwise reverse Cuthill-McKee of the rows (the COO's rows
 * as a CSR; tmap_gpu_memre_rcm, tmap_memre_rcm's order) with the threads
 * following their rows (tmap_gpu_memre_follow, mi_follow_rows's order);
 * then the relabeling. */
static int build_locality(gpu *g, mi_app *a, dev_app *da, const dev_layout *o, dev_layout *x,
                          tmap_error *e)
{
    size_t n = a->ref.nthreads, ne = a->ref.nelems, k = a->ref.per_thread;
    if (alloc_layout(g, x, ne, n * k, n, e))
        return -1;
    x->nout = ne;
    if (a->kind == MI_MD)
        return ev_start(g, e) || tmap_gpu_memre_morton(da->a, 4, n, x->from, NULL, e) ||
                       tmap_gpu_memre_relabel(o->q, n, k, x->from, ne, x->q, NULL, e) ||
                       tmap_cuda_copy(g->c, x->perm, x->from, n * 4, e) ||
                       ev_stop(g, &x->build_ms, e) || locality_steps(g, a, da, o, x, e) ? -1 : 0;
    uint64_t rowptr = 0;
    unsigned nnz = (unsigned)n, nrows = (unsigned)ne;
    void *args[] = {&da->aux, &nnz, &rowptr, &nrows};
    tmap_launch l = grid(args, 4, ne + 1);
    tmap_gpu_rcm_steps st;
    double ms[4] = {0, 0, 0, 0}; /* each step in its own window: CSR rows, RCM, follow, relabel */
    int rc = tmap_cuda_alloc(g->c, (ne + 1) * 4, &rowptr, e) || ev_start(g, e) ||
             tmap_kernel_enqueue(g->csr_rows, &l, NULL, e) || ev_stop(g, &ms[0], e) ||
             ev_start(g, e) || tmap_gpu_memre_rcm_timed(rowptr, o->q, ne, x->from, &st, NULL, e) ||
             ev_stop(g, &ms[1], e) || ev_start(g, e) ||
             tmap_gpu_memre_follow(da->aux, n, x->from, ne, x->perm, NULL, e) ||
             ev_stop(g, &ms[2], e) || ev_start(g, e) ||
             tmap_gpu_memre_relabel(o->q, n, k, x->from, ne, x->q, NULL, e) ||
             ev_stop(g, &ms[3], e) ||
             tmap_gpu_memre_rcm_floors(rowptr, o->q, ne, &st, NULL, e); /* outside the windows */
    tmap_cuda_free(g->c, rowptr);
    if (rc)
        return -1;
    x->build_ms += ms[0] + ms[1] + ms[2] + ms[3];
    printf("  (locality build step by step: CSR row pointers %.3f ms, threads following their "
           "rows %.3f, relabeling %zu accesses %.3f; RCM %.3f ms: ", ms[0], ms[2], n * k, ms[3],
           ms[1]);
    bench_rcm_steps(stdout, "", &st, ")");
    return 0;
}

/* The symmetric renumbering (spmv): the locality layout `loc` (its rows'
 * order, the threads following their rows, its q the columns in the new
 * numbering) with the rows renumbered too, so that y is written in the new
 * order (A' = P A P^T).  Its arrays are its own copies; its one-time cost
 * includes loc's build.  1 built, 0 not (bfs, md). */
static int build_symmetric(gpu *g, const mi_app *a, const dev_layout *loc, dev_layout *x,
                           tmap_error *e)
{
    size_t n = a->ref.nthreads, ne = a->ref.nelems;
    if (a->kind != MI_SPMV || !loc->built || !loc->aux || !loc->val || loc->perm)
        return 0;
    x->sym = 1, x->nout = ne;
    double ms[2] = {0, 0}; /* the copies; the rows relabeled */
    int rc = alloc_layout(g, x, ne, n, 0, e) || tmap_cuda_alloc(g->c, n * 4, &x->aux, e) ||
             tmap_cuda_alloc(g->c, n * 8, &x->val, e) ||
             tmap_cuda_alloc(g->c, ne * 8, &x->ybuf, e) || ev_start(g, e) ||
             tmap_cuda_copy(g->c, x->from, loc->from, ne * 4, e) ||
             tmap_cuda_copy(g->c, x->q, loc->q, n * 4, e) ||
             tmap_cuda_copy(g->c, x->val, loc->val, n * 8, e) || ev_stop(g, &ms[0], e) ||
             ev_start(g, e) ||
             tmap_gpu_memre_relabel(loc->aux, n, 1, loc->from, ne, x->aux, NULL, e) ||
             ev_stop(g, &ms[1], e) ? -1 : 1;
    x->build_ms += ms[0] + ms[1] + loc->build_ms, x->cpu_ms = loc->cpu_ms;
    if (rc == 1)
        printf("  (symmetric build: the locality build's %.3f ms, then its own copies %.3f ms "
               "and rows relabeled %.3f: %.3f ms)\n", loc->build_ms, ms[0], ms[1], x->build_ms);
    return rc;
}

/* A layout built on the CPU only (the hybrid), when the reference has at
 * most --cpu-limit accesses; its upload counted.  1 built, 0 not. */
static int build_cpu(gpu *g, const mi_app *a, tmap_memre_kind k, dev_layout *x, tmap_error *e)
{
    size_t n = a->ref.nthreads, m = n * a->ref.per_thread;
    const char *name = tmap_memre_kind_name(k);
    if (m > g->cpu_limit) {
        printf("  %-10s | not built: zhang2011's greedy is sequential and has no GPU build; "
               "its CPU build is run up to --cpu-limit %zu accesses (here %zu)\n", name,
               g->cpu_limit, m);
        return 0;
    }
    tmap_memre_costs c = {0};
    tmap_memre mm = {0};
    tmap_error be = {0};
    double t0 = tmap_clock_seconds();
    tmap_status st = tmap_memre_build(k, &a->ref, a->index, &c, &mm, &be);
    x->cpu_ms = 1e3 * (tmap_clock_seconds() - t0);
    if (st == TMAP_ERR_UNSUPPORTED || st == TMAP_ERR_INVALID)
        return 0;
    if (st)
        return *e = be, -1;
    x->nout = mm.from ? mm.nout : a->ref.nelems;
    int rc = ev_start(g, e) || !(x->q = up(g, mm.index, m * 4, e)) ||
             (mm.perm && !(x->perm = up(g, mm.perm, n * 4, e))) ||
             (mm.from && !(x->from = up(g, mm.from, mm.nout * 4, e))) ||
             ev_stop(g, &x->build_ms, e);
    x->build_ms += x->cpu_ms;
    tmap_memre_free(&mm);
    return rc ? -1 : 1;
}

/* Sharing's build again (warm, into arrays of its own, checked equal to
 * x's): where its time goes.  Says so; builds nothing that is used. */
static int share_again(gpu *g, const mi_app *a, const dev_layout *loc, const dev_layout *x,
                       tmap_error *e)
{
    size_t n = a->ref.nthreads, m = n * a->ref.per_thread, nb = (n + 255) / 256, nout = 0;
    dev_layout y = {0};
    double ms = 0;
    int rc = alloc_layout(g, &y, m, m, 0, e) || tmap_cuda_alloc(g->c, (nb + 1) * 4, &y.start, e) ||
             ev_start(g, e) ||
             tmap_gpu_memre_share(loc->q, loc->perm, n, a->ref.per_thread, 256, y.from, y.q,
                                  y.start, &nout, e) ||
             ev_stop(g, &ms, e) ? -1 : 0;
    int same = rc ? -1 : nout == x->nout;
    if (same == 1)
        same = same_bytes(g, x->from, y.from, nout * 4, e);
    if (same == 1)
        same = same_bytes(g, x->q, y.q, m * 4, e);
    if (same == 1)
        same = same_bytes(g, x->start, y.start, (nb + 1) * 4, e);
    layout_free(g, &y);
    if (same < 0)
        return -1;
    printf("  (sharing's build again, warm: %.3f ms; the first, timed build %.3f ms, without the "
           "locality layout's; the same arrays: %s)\n", ms, x->build_ms, same ? "yes" : "NO");
    return 0;
}

/* Sharing (md): the 256-thread blocks of the locality layout `loc` stage
 * their working sets of its A' in shared memory (48 KiB at most; not built
 * where a block's does not fit).  Its one-time cost includes loc's build;
 * its sectors are the staged loads', its gather loc's.  1 built, 0 not. */
static int build_share(gpu *g, const mi_app *a, const dev_layout *loc, dev_layout *x,
                       tmap_error *e)
{
    size_t n = a->ref.nthreads, m = n * a->ref.per_thread, nb = (n + 255) / 256;
    size_t requests = (n + 31) / 32 * a->ref.per_thread, most = 0;
    uint32_t *start = malloc((nb + 1) * 4), *from = malloc(m * 4);
    x->under = loc;
    int rc = !start || !from || alloc_layout(g, x, m, m, n, e) ||
             tmap_cuda_alloc(g->c, (nb + 1) * 4, &x->start, e) || ev_start(g, e) ||
             tmap_gpu_memre_share(loc->q, loc->perm, n, a->ref.per_thread, 256, x->from, x->q,
                                  x->start, &x->nout, e) ||
             tmap_cuda_copy(g->c, x->perm, loc->perm, n * 4, e) ||
             ev_stop(g, &x->build_ms, e) ||
             tmap_cuda_download(g->c, start, x->start, (nb + 1) * 4, e) ||
             tmap_cuda_download(g->c, from, x->from, x->nout * 4, e) ? -1 : 0;
    for (size_t b = 0; !rc && b < nb; b++)
        most = start[b + 1] - start[b] > most ? start[b + 1] - start[b] : most;
    tmap_memre lists = {from, x->nout, NULL, NULL};
    tmap_memref r = a->ref;
    r.write = 0, r.nelems = loc->nout;
    if (!rc && (rc = tmap_memre_share_sectors(&r, &lists, start, 256, &x->counts, e) ? -1 : 0) == 0)
        printf("  (sharing: blocks of 256 stage %zu elements, %.1f per block, at most %zu: %llu "
               "staged requests of %.2f sectors, %llu sectors against the reference's %zu "
               "requests; built in %.2f ms on the GPU over the locality layout)\n", x->nout,
               (double)x->nout / nb, most, (unsigned long long)x->counts.requests,
               tmap_sectors_per_request(&x->counts), (unsigned long long)x->counts.sectors,
               requests, x->build_ms);
    free(start), free(from);
    if (rc || share_again(g, a, loc, x, e))
        return -1;
    if (most * a->ref.elem_bytes > 48 * 1024) {
        printf("  share      | not built: a block's working set (%zu elements) exceeds 48 KiB\n",
               most);
        return 0;
    }
    x->smem = (unsigned)(most * a->ref.elem_bytes);
    x->spr = (double)x->counts.sectors / (double)requests; /* per request of the reference */
    x->build_ms += loc->build_ms, x->cpu_ms = loc->cpu_ms;
    x->gather = loc->gather;
    return 1;
}

/* bfs and spmv: a layout that reorders threads (slot s runs thread
 * perm[s]) moves their per-thread arrays with them once, at build time,
 * as their owner would (the matrix and the graph do not change between
 * launches; only A does): dst/row, val and Q gathered through perm, and
 * the kernel then runs in slot order (perm dropped).  Timed into the
 * build.  md's own positions change every step and stay read through
 * perm. */
static int move_threads(gpu *g, const mi_app *a, const dev_app *da, dev_layout *x,
                        tmap_error *e)
{
    size_t n = a->ref.nthreads;
    uint64_t q = 0;
    if (a->kind == MI_MD || !x->perm || a->ref.per_thread != 1)
        return 0;
    int rc = tmap_cuda_alloc(g->c, n * 4, &x->aux, e) || tmap_cuda_alloc(g->c, n * 4, &q, e) ||
             (da->val && tmap_cuda_alloc(g->c, n * 8, &x->val, e)) || ev_start(g, e) ||
             tmap_gpu_memre_gather(x->perm, n, da->aux, 4, x->aux, NULL, e) ||
             (da->val && tmap_gpu_memre_gather(x->perm, n, da->val, 8, x->val, NULL, e)) ||
             tmap_gpu_memre_gather(x->perm, n, x->q, 4, q, NULL, e) ||
             ev_stop(g, &x->build_ms, e) ? -1 : 0;
    if (rc)
        return tmap_cuda_free(g->c, q), -1;
    if (!x->borrowed_q)
        tmap_cuda_free(g->c, x->q);
    tmap_cuda_free(g->c, x->perm);
    x->q = q, x->borrowed_q = 0, x->perm = 0;
    return 0;
}

/* Builds layout k into d[k] (d[0], the original, first; sharing after the
 * locality order); 1 built, 0 does not apply or skipped (said so), -1 on
 * error.  Counts its sectors and its gather's. */
static int build_kind(gpu *g, mi_app *a, dev_app *da, tmap_memre_kind k, dev_layout *d,
                      tmap_error *e)
{
    const dev_layout *o = &d[TMAP_MEMRE_ORIGINAL];
    dev_layout *x = &d[k];
    size_t n = a->ref.nthreads, kk = a->ref.per_thread, m = n * kk, ne = a->ref.nelems;
    int rc = 1;
    switch (k) {
    case TMAP_MEMRE_ORIGINAL:
        x->nout = ne;
        rc = (x->q = up(g, a->index, m * 4, e)) ? 1 : -1;
        break;
    case TMAP_MEMRE_DUPLICATE:
        x->nout = m;
        rc = alloc_layout(g, x, m, m, 0, e) || ev_start(g, e) ||
             tmap_gpu_memre_duplicate(o->q, n, kk, x->from, x->q, NULL, e) ||
             ev_stop(g, &x->build_ms, e) ? -1 : 1;
        break;
    case TMAP_MEMRE_REORDER:
        x->nout = ne;
        rc = alloc_layout(g, x, ne, m, 0, e) || ev_start(g, e) ||
             tmap_gpu_memre_reorder(o->q, n, kk, ne, x->from, x->q, e) ||
             ev_stop(g, &x->build_ms, e) ? -1 : 1;
        break;
    case TMAP_MEMRE_PAD:
        rc = kk != 1 ? 0 : build_pad(g, a, o, x, e) ? -1 : 1;
        break;
    case TMAP_MEMRE_SWAP:
        x->q = o->q, x->borrowed_q = 1, x->nout = ne;
        rc = alloc_layout(g, x, 0, 0, n, e) || ev_start(g, e) ||
             tmap_gpu_memre_swap(o->q, n, kk, ne, a->ref.elem_bytes, 0, x->perm, e) ||
             ev_stop(g, &x->build_ms, e) || swap_again(g, a, o, x, e) ? -1 : 1;
        break;
    case TMAP_MEMRE_HYBRID:
        rc = build_cpu(g, a, k, x, e);
        break;
    case TMAP_MEMRE_LOCALITY:
        rc = build_locality(g, a, da, o, x, e) ? -1 : 1;
        break;
    case TMAP_MEMRE_SYMMETRIC:
        rc = build_symmetric(g, a, &d[TMAP_MEMRE_LOCALITY], x, e);
        break;
    case TMAP_MEMRE_SHARE:
        rc = a->kind != MI_MD || !d[TMAP_MEMRE_LOCALITY].built ? 0
             : build_share(g, a, &d[TMAP_MEMRE_LOCALITY], x, e);
        if (rc != 1)
            layout_free(g, x);
        return (x->built = rc == 1), rc; /* counted in build_share */
    default:
        rc = 0;
    }
    double before = x->build_ms;
    if (rc == 1 && ((x->from && tmap_cuda_alloc(g->c, x->nout * a->ref.elem_bytes, &x->ap, e)) ||
                    move_threads(g, a, da, x, e)))
        rc = -1;
    if (rc == 1 && k == TMAP_MEMRE_LOCALITY && a->kind != MI_MD)
        printf("  (locality build: then the threads' arrays moved %.3f ms; in all %.3f ms)\n",
               x->build_ms - before, x->build_ms);
    if (rc == 1 && (layout_counts(g, a, x, e) || (x->from && gather_counts(g, a, x, e))))
        rc = -1;
    if (rc != 1 && k != TMAP_MEMRE_SHARE)
        layout_free(g, x);
    x->built = rc == 1;
    return rc;
}

/* Every layout of the app, once; -1 on error. */
static int build_all(gpu *g, mi_app *a, dev_app *da, dev_layout *d, tmap_error *e)
{
    for (int k = 0; k < TMAP_MEMRE_KINDS; k++)
        if (build_kind(g, a, da, (tmap_memre_kind)k, d, e) < 0)
            return -1;
    return 0;
}

static void free_all(gpu *g, dev_layout *d)
{
    for (int k = TMAP_MEMRE_KINDS; k-- > 0;)
        if (d[k].built)
            layout_free(g, &d[k]);
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
 * r = 1); its time (CUDA events) is p->build_ms. */
static int partial_build(gpu *g, const mi_app *a, uint64_t index, double r, dev_layout *p,
                         tmap_error *e)
{
    size_t eb = a->ref.elem_bytes, seg = eb < 32 ? 32 / eb : 1;
    p->build_ms = 0;
    if (ev_start(g, e) ||
        tmap_gpu_memre_partial(index, a->ref.nthreads, a->ref.per_thread, a->ref.nelems, eb, r,
                               p->from, p->q, &p->nout, e) ||
        ev_stop(g, &p->build_ms, e))
        return -1;
    p->head = (a->ref.nelems + seg - 1) / seg * seg;
    return 0;
}

/* zhang2011's adaptive fraction over real launches (tmap_memfrac, serial:
 * the copies are gathered before each launch), then the settled
 * fraction's row.  orig: the original layout (its q is P on the device).
 * A fraction settled above 0 stays built in *p (p->built; its sectors and
 * its copies' gather counted): a candidate of the choice, measured to pay
 * already.  -1 on a CUDA error, 1 when its output differs, else 0. */
static int bench_partial(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                         const dev_layout *orig, double launches, float ms0, dev_layout *p,
                         float *ms, double *amort, tmap_error *e)
{
    size_t n = a->ref.nthreads * a->ref.per_thread, slots = with_room(a) / a->ref.elem_bytes;
    tmap_memfrac *f = NULL;
    memset(p, 0, sizeof *p);
    int rc = tmap_cuda_alloc(g->c, n * 4, &p->q, e) ||
                     tmap_cuda_alloc(g->c, slots * 4, &p->from, e) ||
                     tmap_memfrac_create(0, 0, 0, &f, e)
                 ? -1 : 0;
    double built = -1;
    int launches_run = 0;
    printf("  adaptive fraction (zhang2011 Fig. 8, serial), per launch:");
    while (!rc && !tmap_memfrac_done(f) && launches_run++ < 60) {
        double r = tmap_memfrac_next(f);
        float kernel, transform, kv[3], tv[3];
        if (r > 0 && r != built && !(rc = partial_build(g, a, orig->q, r, p, e)))
            built = r;
        for (int i = 0; !rc && i < 3; i++) /* a step: medians of 3 (one is noise at 0.3 ms) */
            rc = split_run(g, a, r > 0 ? p : orig, da, &kv[i], &tv[i], e);
        kernel = bench_median(kv, 3), transform = bench_median(tv, 3);
        if (!rc)
            printf(" r %.3g %.4f+%.4f ms;", r, kernel, transform), tmap_memfrac_record(f, kernel, transform);
    }
    double r = rc ? 0 : tmap_memfrac_next(f);
    if (!rc)
        printf("\n  -> %s (%d steps of 3 runs)\n", tmap_memfrac_why(f), launches_run);
    if (!rc && r > 0 && r != built)
        rc = partial_build(g, a, orig->q, r, p, e);
    if (!rc && r > 0) {
        char name[32];
        snprintf(name, sizeof name, "partial%.3g", r);
        rc = layout_counts(g, a, p, e) || gather_counts(g, a, p, e)
                 ? -1 : measure(g, a, da, ref, p, name, launches, ms, amort, ms0, e);
        rc = rc < 0 ? -1 : rc ? 0 : 1;
        p->built = rc == 0;
    } else if (!rc)
        *ms = ms0, *amort = ms0;
    tmap_memfrac_free(f);
    if (!p->built)
        layout_free(g, p);
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
        printf("  cusparse  |    ---    --- | %9.3f       ---       --- | %6.2fx | %s  (CSR SpMV, "
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

/* The targets for one kernel: the chosen layout against the
 * original, the locality baseline and the best measured (amortized). */
static void targets(const dev_layout *d, const double *amort, tmap_memre_kind chosen)
{
    int best = 0;
    for (int k = 1; k < TMAP_MEMRE_KINDS; k++) /* partial duplication included when settled */
        if (d[k].built && amort[k] < amort[best])
            best = k;
    double bt = amort[best], sp = amort[0] / amort[chosen];
    const char *bn = tmap_memre_kind_name((tmap_memre_kind)best);
    int loc = d[TMAP_MEMRE_LOCALITY].built;
    printf("  targets (original %.2f sectors/request%s): chosen %s %.2fx: >= 1.3x %s, >= 0.97x "
           "%s; ahead of locality (%.2fx) %s; within 5%% of the best measured (%s %.2fx) %s\n",
           d[0].spr, d[0].spr > 2 ? ", over 2" : "", tmap_memre_kind_name(chosen), sp,
           d[0].spr <= 2 ? "n/a" : sp >= 1.3 ? "MET" : "MISSED", sp >= 0.97 ? "MET" : "MISSED",
           loc ? amort[0] / amort[TMAP_MEMRE_LOCALITY] : 0,
           !loc ? "n/a" : chosen == TMAP_MEMRE_LOCALITY ? "n/a (chosen: the baseline itself)"
           : amort[chosen] < amort[TMAP_MEMRE_LOCALITY] ? "MET" : "MISSED", bn,
           amort[0] / bt, amort[chosen] <= 1.05 * bt ? "MET" : "MISSED");
}

/* tmap_memchooser over real launches among v[0..n) (the original first),
 * the decision printed after `what`; the kind kept, -1 on error. */
static int choose(gpu *g, const mi_app *a, dev_app *da, const dev_layout *d,
                  const tmap_memre_choice *v, size_t n, const tmap_memre_costs *c,
                  const char *what, tmap_error *e)
{
    tmap_memchooser *ch = NULL;
    if (tmap_memchooser_create(v, n, 3, c->threshold, c->launches, &ch, e))
        return -1;
    int rc = 0;
    while (!rc && tmap_memchooser_chosen(ch) < 0) {
        int timed, cand = tmap_memchooser_next(ch, &timed);
        float t = timed_run(g, a, &d[v[cand].kind], da, e);
        if (t < 0)
            rc = -1;
        else if (timed) /* per launch */
            tmap_memchooser_record(ch, cand, (float)(t / per_run(a, da)));
    }
    int kind = rc ? -1 : (int)v[tmap_memchooser_chosen(ch)].kind;
    if (!rc)
        printf("%s: %s (%s)\n", what, tmap_memre_kind_name((tmap_memre_kind)kind),
               tmap_memchooser_why(ch));
    tmap_memchooser_free(ch);
    return kind;
}

/* Measures every built layout, then partial duplication with the adaptive
 * fraction (its settled fraction, when above 0, becomes d[PARTIAL]),
 * cuSPARSE (spmv), then the model's proposal over the built layouts (the
 * settled fraction kept in it: measured to pay already) and the measured
 * choice among it, then the measured choice among every built layout
 * (what the model's pruning costs); 0 when every output matched. */
static int bench_layouts(gpu *g, const mi_app *a, dev_app *da, const reference *ref,
                         dev_layout *d, tmap_error *e)
{
    tmap_memre_costs c = {.launches = reuse(a, da), .data_changes = 1, .threshold = 0.03};
    float ms[TMAP_MEMRE_KINDS] = {0};
    double amort[TMAP_MEMRE_KINDS] = {0};
    int bad = 0, rc = 0;
    printf("  %-10s | %6s %6s | %9s %9s %8s %9s | %7s | %s\n", "layout", "sec/rq", "blk/rq",
           "run_ms", "build_ms", "cpu_ms", "amort_ms", "speedup", "same");
    for (int k = 0; k < TMAP_MEMRE_KINDS && !rc; k++) {
        if (!d[k].built)
            continue;
        int same = measure(g, a, da, ref, &d[k], tmap_memre_kind_name((tmap_memre_kind)k),
                           c.launches, &ms[k], &amort[k], ms[0], e);
        rc = same < 0 ? -1 : 0, bad |= same == 0;
    }
    int pr = rc ? rc : bench_partial(g, a, da, ref, &d[0], c.launches, ms[0],
                                     &d[TMAP_MEMRE_PARTIAL], &ms[TMAP_MEMRE_PARTIAL],
                                     &amort[TMAP_MEMRE_PARTIAL], e);
    rc = pr < 0 ? -1 : rc;
    bad |= pr > 0;
    c.keep = d[TMAP_MEMRE_PARTIAL].built ? 1u << TMAP_MEMRE_PARTIAL : 0;
    /* the symmetric renumbering: the model prices its reads of x (and the
     * gather), not what it changes, y's atomics in the new order; the trial
     * decides */
    c.keep |= d[TMAP_MEMRE_SYMMETRIC].built ? 1u << TMAP_MEMRE_SYMMETRIC : 0;
#ifdef TMAP_HAVE_CUSPARSE
    if (!rc && a->kind == MI_SPMV && !da->cg_iters)
        rc = bench_cusparse(g, a, da, ref, ms[0], e);
#endif
    tmap_memre_choice v[TMAP_MEMRE_KINDS], all[TMAP_MEMRE_KINDS];
    size_t n = 0;
    for (int k = 0; k < TMAP_MEMRE_KINDS && !rc; k++)
        if (d[k].built) {
            v[n] = (tmap_memre_choice){.kind = (tmap_memre_kind)k, .counts = d[k].counts,
                                       .build_ms = d[k].build_ms};
            tmap_memre_score(&a->ref, &c, d[k].gather, &v[n++]);
        }
    size_t nall = n;
    memcpy(all, v, n * sizeof *v);
    printf("  model, predicted per launch (L1 + L2 terms, gather, build over %g launches):",
           c.launches);
    for (size_t i = 0; !rc && i < nall; i++)
        printf(" %s %.4f ms;", tmap_memre_kind_name(all[i].kind), all[i].total_ms / c.launches);
    n = rc ? 0 : tmap_memre_rank(v, n, &c);
    printf("\n  model's proposal%s%s: ", c.keep >> TMAP_MEMRE_PARTIAL & 1
                                              ? " (partial kept: its fraction measured to pay)" : "",
           c.keep >> TMAP_MEMRE_SYMMETRIC & 1 ? " (symmetric kept: the model does not price y's "
                                                "atomics; the trial decides)" : "");
    for (size_t i = 0; !rc && i < n; i++)
        printf("%s%s", i ? ", " : "", tmap_memre_kind_name(v[i].kind));
    int chosen = rc ? -1 : choose(g, a, da, d, v, n, &c, "\n  measured choice", e);
    if (chosen >= 0)
        targets(d, amort, (tmap_memre_kind)chosen);
    chosen = chosen < 0 ? -1 : choose(g, a, da, d, all, nall, &c,
                                      "  measured choice among every layout built (the model "
                                      "not pruning)", e);
    if (chosen >= 0)
        targets(d, amort, (tmap_memre_kind)chosen);
    rc = chosen < 0 ? -1 : rc;
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

/* Seconds since t0, printed after what. */
static double took(const char *what, double t0)
{
    double s = tmap_clock_seconds() - t0;
    printf("  %s: %.2f s (host, every CPU)\n", what, s);
    return s;
}

static int md_size(gpu *g, uint32_t n, uint64_t seed, tmap_error *e)
{
    mi_app a;
    dev_app da = {0};
    dev_layout d[TMAP_MEMRE_KINDS] = {{0}};
    double t0 = tmap_clock_seconds();
    if (mi_md_make(n, seed, &a))
        return tmap_fail(e, TMAP_ERR_NOMEM, "md: out of memory"), -1;
    heading(&a, "md, %u particles", n);
    took("generated", t0);
    float *f = malloc((size_t)n * 12);
    reference ref = {f, (size_t)n * 12, 0, NULL, NULL, 0};
    t0 = tmap_clock_seconds();
    int rc = !f || mi_cpu_run(&a, NULL, 0, f) ? -1 : 0;
    took("CPU reference", t0);
    rc = rc || !(da.a = up_room(g, a.data, (size_t)n * 16, with_room(&a), e)) ||
                 tmap_cuda_alloc(g->c, (size_t)n * 12, &da.out, e) ? -1 : 0;
    ref.from = da.out;
    rc = rc || build_all(g, &a, &da, d, e) ? -1 : bench_layouts(g, &a, &da, &ref, d, e);
    free_all(g, d), release(g, &da), free(f), mi_free(&a);
    return rc;
}

static int bfs_scale(gpu *g, unsigned scale, uint64_t seed, tmap_error *e)
{
    mi_app a;
    dev_app da = {0};
    dev_layout d[TMAP_MEMRE_KINDS] = {{0}};
    double t0 = tmap_clock_seconds();
    if (mi_bfs_make(scale, seed, &a))
        return tmap_fail(e, TMAP_ERR_NOMEM, "bfs: out of memory"), -1;
    heading(&a, "bfs, Kronecker scale %u (%u vertices)", scale, a.nv);
    took("generated", t0);
    uint32_t *want = malloc((size_t)a.nv * 4);
    t0 = tmap_clock_seconds();
    da.depth = want ? mi_bfs_reference(&a, want) : 0;
    took("CPU reference (queue BFS)", t0);
    reference ref = {want, (size_t)a.nv * 4, 0, NULL, NULL, 0};
    int rc = !da.depth || !(da.a = up_room(g, NULL, 0, with_room(&a), e)) ||
                     !(da.aux = up(g, a.aux, a.ref.nthreads * 4, e)) ||
                     !(da.level0 = up(g, a.data, (size_t)a.nv * 4, e))
                 ? -1 : 0;
    ref.from = da.a;
    printf("  %u levels from vertex %u\n", da.depth, a.source);
    rc = rc || build_all(g, &a, &da, d, e) ? -1 : bench_layouts(g, &a, &da, &ref, d, e);
    free_all(g, d), release(g, &da), free(want), mi_free(&a);
    return rc;
}

/* SpMV on the matrix of `a` (made by the caller), then CG of cg_iters
 * iterations on it, both through the same built layouts. */
static int spmv_app(gpu *g, mi_app *a, int cg_iters, tmap_error *e)
{
    dev_app da = {0};
    dev_layout d[TMAP_MEMRE_KINDS] = {{0}};
    uint32_t n = a->nv;
    double *y = malloc((size_t)n * 8), *scale = calloc(n, 8), *x = malloc((size_t)n * 8);
    const double *xa = a->data;
    int rc = y && scale && x ? 0 : -1;
    double t0 = tmap_clock_seconds();
    if (!rc) {
        mi_spmv_cpu(a, a->data, y);
        for (size_t i = 0; i < a->ref.nthreads; i++)
            scale[a->aux[i]] += fabs(a->val[i] * xa[a->index[i]]);
    }
    took("CPU reference", t0);
    reference ref = {NULL, 0, 0, y, scale, 0};
    size_t vb = (size_t)n * 8;
    rc = rc || !(da.a = up_room(g, a->data, vb, with_room(a), e)) ||
                 !(da.aux = up(g, a->aux, a->ref.nthreads * 4, e)) ||
                 !(da.val = up(g, a->val, a->ref.nthreads * 8, e)) ||
                 tmap_cuda_alloc(g->c, vb, &da.out, e)
             ? -1 : 0;
    rc = rc || build_all(g, a, &da, d, e) ? -1 : bench_layouts(g, a, &da, &ref, d, e);
    if (!rc && cg_iters > 0) {
        t0 = tmap_clock_seconds();
        ref.cg_res = mi_cg_cpu(a, cg_iters, x);
        da.cg_iters = cg_iters;
        printf("\ncg, %d iterations on that matrix (a run: the solve; CPU residual %.2g; the "
               "layouts built above, not again)\n", cg_iters, ref.cg_res);
        took("CPU reference", t0);
        rc = tmap_cuda_alloc(g->c, vb, &da.x, e) || tmap_cuda_alloc(g->c, vb, &da.r, e) ||
                     !(da.p = up_room(g, NULL, 0, with_room(a), e)) ||
                     tmap_cuda_alloc(g->c, vb, &da.ap, e) ||
                     tmap_cuda_alloc(g->c, 8, &da.scalar, e)
                 ? -1 : bench_layouts(g, a, &da, &ref, d, e);
    }
    free_all(g, d), release(g, &da), free(y), free(scale), free(x);
    return rc;
}

/* SpMV and CG on power-law rows (n rows) or on the permuted stencil (side
 * n). */
static int matrix_size(gpu *g, int stencil, uint32_t n, int cg_iters, uint64_t seed,
                       tmap_error *e)
{
    mi_app a;
    double t0 = tmap_clock_seconds();
    if (stencil ? mi_stencil_make(n, seed, &a) : mi_spmv_make(n, seed, &a))
        return tmap_fail(e, TMAP_ERR_NOMEM, "spmv: out of memory"), -1;
    if (stencil)
        heading(&a, "spmv, 7-point Laplacian of %u^3 under a random permutation, %u rows", n,
                a.nv);
    else
        heading(&a, "spmv, power-law rows, %u rows", n);
    took("generated", t0);
    int rc = spmv_app(g, &a, cg_iters, e);
    mi_free(&a);
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

/* The stream-ordered allocator's first use in a process costs about 7 ms
 * on an H100, whatever the size (benchmarks/experiments/alloc_first.cu;
 * cudaMalloc's first use 0.2-0.3 ms): the pool is created.  The GPU builds
 * that take their scratch from it (runtime/gpu_memorder.cu) would charge it
 * to whichever layout comes first, so one tiny relabeling runs here, before
 * anything is timed; its time is printed, once per process, charged to no
 * layout. */
static int warm_allocator(gpu *g, tmap_error *e)
{
    const uint32_t ids[4] = {0, 1, 2, 3};
    uint64_t index = 0, order = 0, q = 0;
    double ms = 0;
    int rc = tmap_cuda_alloc(g->c, sizeof ids, &index, e) ||
             tmap_cuda_alloc(g->c, sizeof ids, &order, e) ||
             tmap_cuda_alloc(g->c, sizeof ids, &q, e) ||
             tmap_cuda_upload(g->c, index, ids, sizeof ids, e) ||
             tmap_cuda_upload(g->c, order, ids, sizeof ids, e) || ev_start(g, e) ||
             tmap_gpu_memre_relabel(index, 4, 1, order, 4, q, NULL, e) || ev_stop(g, &ms, e);
    tmap_cuda_free(g->c, index), tmap_cuda_free(g->c, order), tmap_cuda_free(g->c, q);
    if (!rc)
        printf("# the stream-ordered allocator's first use in this process (a relabeling of 4 "
               "elements): %.2f ms, once per process, charged to no layout\n", ms);
    return rc ? -1 : 0;
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
        tmap_kernel_load(g->c, out->ptx, "unpad", &g->unpad, e) ||
        tmap_kernel_load(g->c, out->ptx, "csr_rows", &g->csr_rows, e) ||
        tmap_kernel_load(g->c, out->ptx, "scatter", &g->scatter, e) ||
        tmap_timer_create(g->c, &g->timer, e) || warm_allocator(g, e))
        return -1;
    bench_banner(stdout, &d, "# ");
    return 0;
}

int main(int argc, char **argv)
{
    gpu g = {.reps = 11, .cpu_limit = 1u << 21};
    long md[8] = {1000000}, bfs[8] = {20}, sp[8] = {1000000}, st[8] = {128};
    int nmd = 1, nbfs = 1, nsp = 1, nst = 1, cg_iters = 50;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (i + 1 < argc && !strcmp(o, "--md"))
            nmd = list(argv[++i], md);
        else if (i + 1 < argc && !strcmp(o, "--bfs"))
            nbfs = list(argv[++i], bfs);
        else if (i + 1 < argc && !strcmp(o, "--spmv"))
            nsp = list(argv[++i], sp);
        else if (i + 1 < argc && !strcmp(o, "--stencil"))
            nst = list(argv[++i], st);
        else if (i + 1 < argc && !strcmp(o, "--cg-iters"))
            cg_iters = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(o, "--reps"))
            g.reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(o, "--seed"))
            seed = strtoull(argv[++i], NULL, 10);
        else if (i + 1 < argc && !strcmp(o, "--cpu-limit"))
            g.cpu_limit = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_memirr_apps [--md N,..] [--bfs SCALE,..] [--spmv N,..] "
                            "[--stencil SIDE,..] [--cg-iters I] [--reps R] [--seed S] "
                            "[--cpu-limit ACCESSES]\n");
            return strcmp(o, "--help") ? 2 : 0;
        }
    }
    for (int i = 0; i < nbfs; i++)
        if (bfs[i] < 4 || bfs[i] > 26)
            return fprintf(stderr, "bench_memirr_apps: Kronecker scales are in [4, 26]\n"), 2;
    for (int i = 0; i < nmd + nsp; i++)
        if ((i < nmd ? md[i] : sp[i - nmd]) < 64 || (i < nmd ? md[i] : sp[i - nmd]) > 100000000)
            return fprintf(stderr, "bench_memirr_apps: sizes are in [64, 1e8]\n"), 2;
    for (int i = 0; i < nst; i++)
        if (st[i] < 4 || st[i] > 512)
            return fprintf(stderr, "bench_memirr_apps: stencil sides are in [4, 512]\n"), 2;
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
           "# launch (the data changes between launches); build_ms: the layout's one-time\n"
           "# cost, once per input (GPU builds by CUDA events, plus cpu_ms: its CPU part);\n"
           "# amort_ms: run_ms + build_ms over the runs that reuse the layout; speedup: the\n"
           "# original's run_ms over amort_ms; the model's and the chooser's times are per\n"
           "# kernel launch (bfs: per level, cg: per SpMV).  swap is built on the GPU as a\n"
           "# sort (tmap_gpu_memre_swap: whole warps of each category, then the residues in\n"
           "# category order), not the CPU's greedy packing; the hybrid only on the CPU, up\n"
           "# to --cpu-limit %zu accesses\n", (unsigned long long)seed, g.reps, g.cpu_limit);
    for (int i = 0; !rc && i < nmd; i++)
        rc = md_size(&g, (uint32_t)md[i], seed + (uint64_t)i, &e);
    for (int i = 0; !rc && i < nbfs; i++)
        rc = bfs_scale(&g, (unsigned)bfs[i], seed + (uint64_t)i, &e);
    for (int i = 0; !rc && i < nsp; i++)
        rc = matrix_size(&g, 0, (uint32_t)sp[i], cg_iters, seed + (uint64_t)i, &e);
    for (int i = 0; !rc && i < nst; i++)
        rc = matrix_size(&g, 1, (uint32_t)st[i], cg_iters, seed + (uint64_t)i, &e);
    if (rc)
        fprintf(stderr, "bench_memirr_apps: %s\n", e.message);
    tmap_timer_free(g.timer);
    tmap_kernel *k[] = {g.md, g.md_shared, g.bfs, g.spmv, g.dot, g.axpy, g.unpad, g.csr_rows,
                        g.scatter};
    for (int i = 0; i < 9; i++)
        tmap_kernel_free(k[i]);
    tmap_compiled_free(&out);
    tmap_cuda_close(g.c);
    return rc ? 1 : 0;
}

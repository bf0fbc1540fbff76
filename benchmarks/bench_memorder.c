/*
 * bench_memorder.c -- the cost of building the ordered layouts: each on the
 * CPU (regroup's tmap_memre_relabel, tmap_memre_morton, tmap_memre_pad,
 * tmap_memre_rcm) and on the GPU (runtime/gpu_memorder.cu; the data already
 * there), for n threads reading n elements at random (k = 1, 8-byte
 * elements), n random points, and RCM of the 7-point Laplacian of a cube of
 * about n vertices under a random permutation (tmap_gpu_memre_rcm since
 * branch rcmfast).  Every GPU result is
 * compared with the CPU's; GPU times: events around the call, median of
 * --reps; RCM then once more, its steps timed (tmap_gpu_memre_rcm_timed).
 *
 * usage: bench_memorder [--sizes 1048576,16777216] [--reps R] [--seed S]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

typedef struct gpu {
    tmap_cuda *c;
    tmap_timer *timer;
    int reps;
} gpu;

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void shuffle(uint32_t *v, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        size_t j = next(s) % i;
        uint32_t t = v[i - 1];
        v[i - 1] = v[j], v[j] = t;
    }
}

/* The three GPU builds, selected by `which`, on the default stream. */
typedef struct args {
    int which; /* 0 relabel, 1 Morton, 2 padding */
    size_t n;
    uint64_t index, order, xyz, from, q, perm, nout;
} args;

static tmap_status build(const args *a, tmap_error *e)
{
    if (a->which == 0)
        return tmap_gpu_memre_relabel(a->index, a->n, 1, a->order, a->n, a->q, NULL, e);
    if (a->which == 1)
        return tmap_gpu_memre_morton(a->xyz, 3, a->n, a->order, NULL, e);
    return tmap_gpu_memre_pad(a->index, a->n, a->n, 8, 32, a->from, a->q, a->perm, a->nout, NULL,
                              e);
}

/* Median GPU time of the build (one untimed run first), or -1. */
static float gpu_ms(gpu *g, const args *a, tmap_error *e)
{
    float ms[64];
    int reps = g->reps < 64 ? g->reps : 64;
    for (int i = -1; i < reps; i++)
        if (tmap_timer_start(g->timer, NULL, e) || build(a, e) ||
            tmap_timer_stop(g->timer, NULL, e) || tmap_timer_wait(g->timer, &ms[i < 0 ? 0 : i], e))
            return -1;
    return bench_median(ms, reps);
}

/* The GPU's u32 array at d equals want[0..n). */
static int same(gpu *g, uint64_t d, const uint32_t *want, size_t n, tmap_error *e)
{
    uint32_t *got = malloc(n * sizeof *got);
    int ok = got && !tmap_cuda_download(g->c, got, d, n * sizeof *got, e) &&
             !memcmp(got, want, n * sizeof *got);
    free(got);
    return ok;
}

/* tmap_gpu_memre_rcm's median time (one untimed run first) on the CSR
 * (n vertices, nnz entries), its order compared with want; -1: failed or
 * differs. */
static float rcm_gpu_ms(gpu *g, const uint32_t *rowptr, const uint32_t *col, size_t n,
                        const uint32_t *want, tmap_error *e)
{
    size_t nnz = rowptr[n];
    uint64_t dr = 0, dc = 0, dord = 0;
    float ms[64], med = -1;
    int reps = g->reps < 64 ? g->reps : 64, rc = tmap_cuda_alloc(g->c, (n + 1) * 4, &dr, e) ||
             tmap_cuda_alloc(g->c, nnz * 4, &dc, e) || tmap_cuda_alloc(g->c, n * 4, &dord, e) ||
             tmap_cuda_upload(g->c, dr, rowptr, (n + 1) * 4, e) ||
             tmap_cuda_upload(g->c, dc, col, nnz * 4, e);
    for (int i = -1; !rc && i < reps; i++)
        rc = tmap_timer_start(g->timer, NULL, e) ||
             tmap_gpu_memre_rcm(dr, dc, n, dord, NULL, e) ||
             tmap_timer_stop(g->timer, NULL, e) || tmap_timer_wait(g->timer, &ms[i < 0 ? 0 : i], e);
    if (!rc && same(g, dord, want, n, e))
        med = bench_median(ms, reps);
    tmap_gpu_rcm_steps st; /* one more run, step by step (its waits add a few us each) */
    float total = 0;
    if (med >= 0 && (tmap_timer_start(g->timer, NULL, e) ||
                     tmap_gpu_memre_rcm_timed(dr, dc, n, dord, &st, NULL, e) ||
                     tmap_timer_stop(g->timer, NULL, e) || tmap_timer_wait(g->timer, &total, e) ||
                     !same(g, dord, want, n, e) ||
                     tmap_gpu_memre_rcm_floors(dr, dc, n, &st, NULL, e)))
        med = -1;
    if (med >= 0) {
        printf("#   rcm at %zu, one more run step by step (%.3f ms): ", n, total);
        bench_rcm_steps(stdout, "", &st, "");
    }
    tmap_cuda_free(g->c, dr), tmap_cuda_free(g->c, dc), tmap_cuda_free(g->c, dord);
    return med;
}

/* RCM's CPU time for the Laplacian of side^3 vertices, randomly renumbered;
 * *gms its GPU time (tmap_gpu_memre_rcm, the same order), -1 if not. */
static double rcm_ms(gpu *g, uint32_t side, uint64_t *s, float *gms, tmap_error *e)
{
    size_t n = (size_t)side * side * side;
    uint32_t *lab = malloc(n * 4), *rowptr = malloc((n + 1) * 4), *col = malloc(n * 7 * 4);
    uint32_t *order = malloc(n * 4), *inv = malloc(n * 4);
    double ms = -1;
    if (lab && rowptr && col && order && inv) {
        shuffle(lab, n, s); /* lab[old] = new */
        for (size_t v = 0; v < n; v++)
            inv[lab[v]] = (uint32_t)v;
        rowptr[0] = 0;
        for (size_t nv = 0; nv < n; nv++) { /* new vertex nv's neighbours, as new labels */
            size_t v = inv[nv], x = v % side, y = v / side % side, z = v / side / side;
            uint32_t *c = col + rowptr[nv], m = 0;
            c[m++] = lab[v];
            if (x > 0) c[m++] = lab[v - 1];
            if (x + 1 < side) c[m++] = lab[v + 1];
            if (y > 0) c[m++] = lab[v - side];
            if (y + 1 < side) c[m++] = lab[v + side];
            if (z > 0) c[m++] = lab[v - (size_t)side * side];
            if (z + 1 < side) c[m++] = lab[v + (size_t)side * side];
            rowptr[nv + 1] = rowptr[nv] + m;
        }
        double t0 = tmap_clock_seconds();
        if (!tmap_memre_rcm(rowptr, col, n, order, e))
            ms = (tmap_clock_seconds() - t0) * 1e3;
        if (ms >= 0)
            *gms = rcm_gpu_ms(g, rowptr, col, n, order, e);
    }
    free(lab), free(rowptr), free(col), free(order), free(inv);
    return ms;
}

static int run_size(gpu *g, size_t n, uint64_t seed, tmap_error *e)
{
    uint64_t s = seed;
    uint32_t *p = malloc(n * 4), *order = malloc(n * 4);
    float *xyz = malloc(n * 3 * sizeof *xyz);
    if (!p || !order || !xyz)
        return free(p), free(order), free(xyz), 1;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint32_t)(next(&s) % n);
    for (size_t i = 0; i < 3 * n; i++)
        xyz[i] = (float)((double)next(&s) / (1u << 31) * 100.0);
    shuffle(order, n, &s);
    tmap_memref r = {.nthreads = n, .per_thread = 1, .elem_bytes = 8, .nelems = n};
    size_t slots = (n + 31) / 32 * (32 + 4);
    args a = {0, n, 0, 0, 0, 0, 0, 0, 0};
    int rc = tmap_cuda_alloc(g->c, n * 4, &a.index, e) || tmap_cuda_alloc(g->c, n * 4, &a.order, e) ||
             tmap_cuda_alloc(g->c, n * 12, &a.xyz, e) || tmap_cuda_alloc(g->c, slots * 4, &a.from, e) ||
             tmap_cuda_alloc(g->c, n * 4, &a.q, e) || tmap_cuda_alloc(g->c, n * 4, &a.perm, e) ||
             tmap_cuda_alloc(g->c, 4, &a.nout, e) || tmap_cuda_upload(g->c, a.index, p, n * 4, e) ||
             tmap_cuda_upload(g->c, a.order, order, n * 4, e) ||
             tmap_cuda_upload(g->c, a.xyz, xyz, n * 12, e);
    static const char *names[] = {"relabel", "morton", "pad"};
    for (int w = 0; !rc && w < 3; w++) {
        tmap_memre m = {0};
        uint32_t *want = w == 1 ? malloc(n * 4) : NULL;
        double t0 = tmap_clock_seconds();
        rc = w == 0 ? tmap_memre_relabel(&r, p, order, 0, &m, e) != TMAP_OK
           : w == 1 ? !want || tmap_memre_morton(xyz, 3, n, want, e) != TMAP_OK
                    : tmap_memre_pad(&r, p, &m, e) != TMAP_OK;
        double cpu = (tmap_clock_seconds() - t0) * 1e3;
        a.which = w;
        float ms = rc ? -1 : gpu_ms(g, &a, e);
        rc = rc || ms < 0 || !(w == 1 ? same(g, a.order, want, n, e) : same(g, a.q, m.index, n, e));
        if (!rc && w == 2)
            rc = !same(g, a.perm, m.perm, n, e) || !same(g, a.from, m.from, m.nout, e);
        if (!rc)
            printf("%-8s %10zu %10.2f %9.3f %8.1fx\n", names[w], n, cpu, ms, cpu / ms);
        if (w == 1 && !rc) /* the order is the points' Morton order again: restore */
            rc = tmap_cuda_upload(g->c, a.order, order, n * 4, e) != TMAP_OK;
        tmap_memre_free(&m), free(want);
    }
    uint32_t side = (uint32_t)cbrt((double)n);
    float rgpu = -1;
    double rcm = rc ? -1 : rcm_ms(g, side, &s, &rgpu, e);
    if (!rc && rcm >= 0 && rgpu >= 0)
        printf("rcm      %10zu %10.2f %9.3f %8.1fx  (7-point Laplacian of %u^3, randomly "
               "relabeled)\n", (size_t)side * side * side, rcm, rgpu, rcm / rgpu, side);
    rc = rc || rcm < 0 || rgpu < 0;
    tmap_cuda_free(g->c, a.index), tmap_cuda_free(g->c, a.order), tmap_cuda_free(g->c, a.xyz);
    tmap_cuda_free(g->c, a.from), tmap_cuda_free(g->c, a.q), tmap_cuda_free(g->c, a.perm);
    tmap_cuda_free(g->c, a.nout);
    free(p), free(order), free(xyz);
    return rc;
}

int main(int argc, char **argv)
{
    size_t sizes[8] = {1u << 20, 1u << 24}, nsizes = 2;
    uint64_t seed = 1;
    gpu g = {NULL, NULL, 5};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *p = argv[++i];
            for (nsizes = 0; nsizes < 8 && *p; nsizes++) {
                sizes[nsizes] = strtoull(p, &p, 10);
                p += *p == ',';
            }
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            g.reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_memorder [--sizes 1048576,16777216] [--reps R] "
                    "[--seed S]\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    for (size_t i = 0; i < nsizes; i++)
        if (sizes[i] < 64 || sizes[i] > (1u << 28))
            return fprintf(stderr, "bench_memorder: sizes are in [64, 2^28]\n"), 2;
    if (g.reps < 1)
        return fprintf(stderr, "bench_memorder: --reps must be positive\n"), 2;
    tmap_error e = {0};
    tmap_device_info d;
    if (tmap_cuda_open(0, &g.c, &e) || tmap_cuda_info(g.c, &d, &e) ||
        tmap_timer_create(g.c, &g.timer, &e))
        return bench_gpu_failed("bench_memorder", &e);
    bench_banner(stdout, &d, "# ");
    printf("# building the ordered layouts: CPU (one thread) vs GPU (data on the GPU, medians\n"
           "# of %d reps, events around the call, scratch allocation included); seed %llu;\n"
           "# every GPU result equals the CPU's.\n"
           "# what          n     cpu_ms    gpu_ms  speedup\n", g.reps, (unsigned long long)seed);
    int rc = 0;
    for (size_t i = 0; !rc && i < nsizes; i++)
        rc = run_size(&g, sizes[i], seed + i, &e);
    if (rc)
        fprintf(stderr, "bench_memorder: %s\n", e.message[0] ? e.message : "a result differs");
    tmap_timer_free(g.timer);
    tmap_cuda_close(g.c);
    return rc ? 1 : 0;
}

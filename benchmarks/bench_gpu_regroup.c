/*
 * bench_gpu_regroup.c -- the regroup path on the GPU, stage by stage, next
 * to each stage's bandwidth floor: for N threads with 5 features and B CFG
 * blocks,
 *   cost -- eq. 1 and eq. 11 per thread (tmap_gpu_regroup_cost) for B
 *           distinct blocks each of which may be clamped in every tile
 *           (the per-block fallback: the worst case); folded: B distinct
 *           blocks never clamped (all folded: p+1 fmas per thread);
 *           floor: reading the features and writing the cost once;
 *   sort -- the stable device sort of (key bits, thread) pairs into the
 *           permutation, over the grid and per 256-thread block
 *           (tmap_gpu_regroup_sort); floor: one read and one write of the
 *           keys and values (a radix sort makes several such passes);
 *   deal -- bin-and-deal's dealing of the grid order (tmap_gpu_regroup_deal);
 *   path -- cost (the worst case above) + grid sort as one CUDA graph
 *           (tmap_gpu_regroup_run), as regroup() runs them, from one event
 *           to the next, and the host time to enqueue it; path_deal: the
 *           same then the deal (bin-and-deal's whole path); path_folded:
 *           the path with the folded model (no block can be clamped);
 *   busy -- the grid sort (sort) and the worst-case path (path) enqueued
 *           behind two paths still running, so that the host's enqueue
 *           is hidden: the GPU's own time;
 *   classes -- on the cost (worst case) as key, R = 10 value classes
 *           (runtime/gpu_classes.cu): lam (LAM wholly on the GPU), table
 *           (classes, class sort, the sizes to the host: it waits),
 *           gmax and greedy (table, the host's runs, the expansion; their
 *           host step included); floor: reading the key and writing the
 *           permutation once;
 *   regrouper -- regroup() through tmap_regrouper, as the trial runs it: a
 *           regrouper keyed by the worst-case model (grid scope, thread
 *           blocks of 256, one 4-byte in/out array to gather and scatter)
 *           with Sorting over the grid and per block and bin-and-deal,
 *           launched in the trial's turns (original, grid, block, deal,
 *           ...) with a new input signature at every launch, so that each
 *           regrouped launch makes its key and sort; each begin..end (no
 *           kernel between) timed from an idle GPU, its host work
 *           included; the medians of the 14 turns after 2 of warm-up:
 *           rg_orig (nothing to do), rg_grid, rg_block, rg_deal.
 * The other stages are timed from an idle GPU, so their times include the
 * host's enqueue (CUB's dispatch in the sorts; a graph launch in the
 * paths).
 * Medians of --reps after 3 warm-ups, CUDA events on one stream.
 *   bench_gpu_regroup [--reps R] [--max-threads N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

enum { NFEAT = 5 };

typedef struct stage_times {
    float cost, folded, sort_grid, sort_block, deal, path, path_deal, path_folded, enqueue_us;
    float sort_busy, path_busy;
    float lam, table, gmax, greedy;
} stage_times;

/* The regrouper's candidates, in its trial's turns. */
enum { RG_CAND = 4, RG_TURNS = 16, RG_WARM = 2 };

enum { R = 10 };

static int fail(const tmap_error *e)
{
    return bench_gpu_failed("bench_gpu_regroup", e);
}

/* Stops the timer, waits for the stream, and reads the stretch's time. */
static tmap_status stop(tmap_gpu_regroup *g, tmap_timer *t, float *ms, tmap_error *err)
{
    int ready = 0;
    tmap_status st = tmap_timer_stop(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_sync(g, NULL, err);
    if (!st) st = tmap_timer_poll(t, &ready, ms, err);
    return st ? st : ready ? TMAP_OK : tmap_fail(err, TMAP_ERR_CUDA, "an event not done after a sync");
}

/* Two worst-case paths (at least tens of us of GPU work), to time what
 * follows them with its enqueue hidden. */
static tmap_status busy(tmap_gpu_regroup *g, tmap_timer *t, uint64_t x, uint64_t sorted,
                        tmap_error *err)
{
    tmap_status st = tmap_gpu_regroup_run(g, x, 1, 0, sorted, NULL, err);
    if (!st) st = tmap_gpu_regroup_run(g, x, 1, 0, sorted, NULL, err);
    return st ? st : tmap_timer_start(t, NULL, err);
}

/* Each stage from an idle GPU (its host-side enqueue counted), then the
 * graph paths as regroup() runs them (both graph runs write `sorted`: a
 * call with other arguments would capture the graph anew), then the grid
 * sort and the path behind a busy GPU. */
static tmap_status one_rep(tmap_gpu_regroup *g, tmap_gpu_regroup *gf, tmap_timer *t, uint64_t x,
                           uint64_t perm, uint64_t sorted, stage_times *o, tmap_error *err)
{
    uint64_t cost = tmap_gpu_regroup_cost_ptr(g);
    tmap_status st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_cost(g, x, NULL, err);
    if (!st) st = stop(g, t, &o->cost, err);
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_cost(gf, x, NULL, err);
    if (!st) st = stop(gf, t, &o->folded, err);
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_sort(g, cost, 1, 0, sorted, NULL, err);
    if (!st) st = stop(g, t, &o->sort_grid, err);
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_sort(g, cost, 1, 256, perm, NULL, err);
    if (!st) st = stop(g, t, &o->sort_block, err);
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_deal(g, sorted, 256, perm, NULL, err);
    if (!st) st = stop(g, t, &o->deal, err);
    double h0 = tmap_clock_seconds();
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_run(g, x, 1, 0, sorted, NULL, err);
    o->enqueue_us = (float)((tmap_clock_seconds() - h0) * 1e6);
    if (!st) st = stop(g, t, &o->path, err);
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_run(g, x, 1, 0, sorted, NULL, err);
    if (!st) st = tmap_gpu_regroup_deal(g, sorted, 256, perm, NULL, err);
    if (!st) st = stop(g, t, &o->path_deal, err);
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_regroup_run(gf, x, 1, 0, perm, NULL, err);
    if (!st) st = stop(gf, t, &o->path_folded, err);
    if (!st) st = busy(g, t, x, sorted, err);
    if (!st) st = tmap_gpu_regroup_sort(g, cost, 1, 0, perm, NULL, err);
    if (!st) st = stop(g, t, &o->sort_busy, err);
    if (!st) st = busy(g, t, x, sorted, err);
    if (!st) st = tmap_gpu_regroup_run(g, x, 1, 0, sorted, NULL, err);
    if (!st) st = stop(g, t, &o->path_busy, err);
    return st;
}

/* The value-class stages on the cost as key (see the top). */
static tmap_status class_rep(tmap_gpu_regroup *g, tmap_gpu_classes *k, tmap_timer *t,
                             uint64_t perm, uint32_t *runs, stage_times *o, tmap_error *err)
{
    uint64_t key = tmap_gpu_regroup_cost_ptr(g);
    uint32_t size[R];
    tmap_status st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_classes_lam(k, key, R, perm, NULL, err);
    if (!st) st = stop(g, t, &o->lam, err);
    if (!st) st = tmap_timer_start(t, NULL, err);
    if (!st) st = tmap_gpu_classes_table(k, key, R, size, NULL, err);
    if (!st) st = stop(g, t, &o->table, err);
    tmap_algo algo[2] = {TMAP_ALGO_GREEDY_MAX, TMAP_ALGO_GREEDY};
    float *ms[2] = {&o->gmax, &o->greedy};
    for (int a = 0; a < 2 && !st; a++) {
        size_t nruns = 0;
        st = tmap_timer_start(t, NULL, err);
        if (!st) st = tmap_gpu_classes_table(k, key, R, size, NULL, err);
        if (!st) st = tmap_regroup_class_runs(algo[a], size, R, 32, runs, &nruns, err);
        if (!st) st = tmap_gpu_classes_expand(k, runs, nruns, perm, NULL, err);
        if (!st) st = stop(g, t, ms[a], err);
    }
    return st;
}

/* rg[c]: the median begin..end time (ms) of the regrouper's candidate c
 * (see the top). */
static tmap_status regrouper_rep(tmap_cuda *c, tmap_gpu_regroup *g, tmap_timer *t, size_t n,
                                 const tmap_predictor *model, const double *lat, uint64_t x,
                                 float rg[RG_CAND], tmap_error *err)
{
    static const tmap_thread_array array = {0, 4, 1, 1, 1};
    uint64_t arr = 0;
    void *args[1] = {&arr};
    tmap_launch l = {{(unsigned)(n / 256), 1, 1}, {256, 1, 1}, 0, args, 1};
    tmap_regrouper_opts o = {.candidates = (1u << TMAP_REGROUPER_SORT_GRID) |
                                           (1u << TMAP_REGROUPER_SORT_BLOCK) |
                                           (1u << TMAP_REGROUPER_BIN_DEAL),
                             .scope = TMAP_REGROUP_GRID, .trial_launches = RG_TURNS,
                             .model = model, .lat = lat, .features = x};
    tmap_regrouper *r = NULL;
    float ms[RG_CAND][RG_TURNS - RG_WARM];
    tmap_status st = tmap_cuda_alloc(c, n * sizeof(uint32_t), &arr, err);
    if (!st) st = tmap_cuda_zero(c, arr, n * sizeof(uint32_t), err);
    if (!st) st = tmap_regrouper_create(c, &l, &array, 1, &o, &r, err);
    for (int j = 0; !st && j < RG_CAND * RG_TURNS; j++) {
        float v = 0;
        st = tmap_timer_start(t, NULL, err);
        if (!st) st = tmap_regrouper_begin(r, (uint64_t)j + 1, NULL, err);
        if (!st) st = tmap_regrouper_end(r, NULL, err);
        if (!st) st = stop(g, t, &v, err);
        if (j >= RG_CAND * RG_WARM)
            ms[j % RG_CAND][j / RG_CAND - RG_WARM] = v;
    }
    for (int k = 0; !st && k < RG_CAND; k++)
        rg[k] = bench_median(ms[k], RG_TURNS - RG_WARM);
    tmap_regrouper_free(r);
    if (arr)
        tmap_cuda_free(c, arr);
    return st;
}

static float median_of(stage_times *r, int n, size_t off)
{
    float *v = malloc((size_t)n * sizeof *v), m;
    for (int i = 0; i < n; i++)
        memcpy(&v[i], (char *)&r[i] + off, sizeof v[i]);
    m = bench_median(v, n);
    free(v);
    return m;
}

static int measure(tmap_cuda *c, size_t n, size_t nb, int reps, double peak, tmap_timer *t)
{
    tmap_error e = {0};
    tmap_gpu_regroup *g = NULL, *gf = NULL;
    tmap_gpu_classes *k = NULL;
    uint32_t *runs = malloc(2 * TMAP_REGROUP_MAX_RUNS * sizeof *runs);
    uint64_t x = 0, perm = 0, sorted = 0;
    double *hx = malloc(n * NFEAT * sizeof *hx), *coef = malloc(nb * (NFEAT + 2) * sizeof *coef);
    double *lat = malloc(nb * sizeof *lat), *fcoef = malloc(nb * (NFEAT + 2) * sizeof *fcoef);
    stage_times *r = calloc((size_t)reps, sizeof *r);
    uint64_t s = 1;
    for (size_t i = 0; i < n * NFEAT; i++) /* uniform in [0, 1678): every tile spans it */
        s = s * 6364136223846793005ull + 1, hx[i] = (double)(s >> 40) / 1e4;
    for (size_t b = 0; b < nb; b++) { /* distinct blocks: none merges with another */
        double *c = coef + b * (NFEAT + 2), *f = fcoef + b * (NFEAT + 2), sum = 0;
        for (size_t j = 1; j <= NFEAT; j++) {
            s = s * 6364136223846793005ull + 1;
            c[j] = f[j] = 0.001 + 0.009 * (double)(s >> 40) / 16777216.0;
            sum += c[j];
        }
        c[0] = -sum * 839, f[0] = 5 + (double)b; /* c: eq. 1 crosses 0 in every tile */
        c[NFEAT + 1] = f[NFEAT + 1] = 1e-9 * (double)(b + 1);
        lat[b] = 4 + (double)(b % 5);
    }
    tmap_status st = tmap_gpu_regroup_create(c, n, &g, &e);
    if (!st) st = tmap_gpu_regroup_create(c, n, &gf, &e);
    if (!st) st = tmap_gpu_regroup_model(gf, fcoef, lat, nb, NFEAT, &e);
    if (!st) st = tmap_cuda_alloc(c, n * NFEAT * sizeof *hx, &x, &e);
    if (!st) st = tmap_cuda_alloc(c, n * sizeof(uint32_t), &perm, &e);
    if (!st) st = tmap_cuda_alloc(c, n * sizeof(uint32_t), &sorted, &e);
    if (!st) st = tmap_cuda_upload(c, x, hx, n * NFEAT * sizeof *hx, &e);
    if (!st) st = tmap_gpu_regroup_model(g, coef, lat, nb, NFEAT, &e);
    if (!st) st = runs ? tmap_gpu_classes_create(c, n, &k, &e)
                       : tmap_fail(&e, TMAP_ERR_NOMEM, "out of memory");
    for (int i = -3; !st && i < reps; i++) {
        stage_times o;
        st = one_rep(g, gf, t, x, perm, sorted, &o, &e);
        if (!st)
            st = class_rep(g, k, t, perm, runs, &o, &e);
        if (i >= 0)
            r[i] = o;
    }
    tmap_predictor model = {.nblocks = nb, .nfeatures = NFEAT, .coef = coef};
    float rg[RG_CAND];
    if (!st)
        st = regrouper_rep(c, g, t, n, &model, lat, x, rg, &e);
    if (!st) {
        double cost_floor = (double)n * (NFEAT + 1) * 8 / (peak * 1e9) * 1e6;
        double sort_floor = (double)n * 8 * 2 / (peak * 1e9) * 1e6;
        double class_floor = (double)n * (8 + 4) / (peak * 1e9) * 1e6;
        printf("%9zu %5zu | %8.1f %7.1f %6.1f | %9.1f %10.1f %6.1f %6.1f | %8.1f %9.1f %11.1f "
               "%8.1f | %9.1f %9.1f | %8.1f %8.1f %8.1f %9.1f %6.1f | %7.1f %7.1f %8.1f "
               "%7.1f\n",
               n, nb, median_of(r, reps, offsetof(stage_times, cost)) * 1e3,
               median_of(r, reps, offsetof(stage_times, folded)) * 1e3, cost_floor,
               median_of(r, reps, offsetof(stage_times, sort_grid)) * 1e3,
               median_of(r, reps, offsetof(stage_times, sort_block)) * 1e3,
               median_of(r, reps, offsetof(stage_times, deal)) * 1e3, sort_floor,
               median_of(r, reps, offsetof(stage_times, path)) * 1e3,
               median_of(r, reps, offsetof(stage_times, path_deal)) * 1e3,
               median_of(r, reps, offsetof(stage_times, path_folded)) * 1e3,
               median_of(r, reps, offsetof(stage_times, enqueue_us)),
               median_of(r, reps, offsetof(stage_times, sort_busy)) * 1e3,
               median_of(r, reps, offsetof(stage_times, path_busy)) * 1e3,
               median_of(r, reps, offsetof(stage_times, lam)) * 1e3,
               median_of(r, reps, offsetof(stage_times, table)) * 1e3,
               median_of(r, reps, offsetof(stage_times, gmax)) * 1e3,
               median_of(r, reps, offsetof(stage_times, greedy)) * 1e3, class_floor,
               rg[0] * 1e3, rg[1] * 1e3, rg[2] * 1e3, rg[3] * 1e3);
    }
    tmap_gpu_regroup_free(g);
    tmap_gpu_regroup_free(gf);
    tmap_gpu_classes_free(k);
    free(runs);
    tmap_cuda_free(c, x);
    tmap_cuda_free(c, perm);
    tmap_cuda_free(c, sorted);
    free(hx), free(coef), free(fcoef), free(lat), free(r);
    return st ? fail(&e) : 0;
}

int main(int argc, char **argv)
{
    int reps = 21;
    long max_threads = 10000000;
    int rc = bench_sweep_args(argc, argv, "bench_gpu_regroup", &reps, &max_threads);
    if (rc >= 0)
        return rc;
    tmap_error e = {0};
    tmap_cuda *c = NULL;
    tmap_device_info d;
    if (tmap_cuda_open(0, &c, &e) || tmap_cuda_info(c, &d, &e))
        return fail(&e);
    tmap_timer *t = NULL;
    if (tmap_timer_create(c, &t, &e))
        return fail(&e);
    double peak = (double)d.mem_clock_khz * 1e3 * 2.0 * (d.mem_bus_width_bits / 8.0) / 1e9;
    bench_banner(stdout, &d, "# ");
    printf("# peak DRAM bandwidth %.0f GB/s; %d features; medians of %d reps; times in us\n",
           peak, NFEAT, reps);
    printf("%9s %5s | %8s %7s %6s | %9s %10s %6s %6s | %8s %9s %11s %8s | %9s %9s | %8s %8s "
           "%8s %9s %6s | %7s %7s %8s %7s\n", "threads", "B", "cost", "folded", "floor",
           "sort_grid", "sort_block", "deal", "floor", "path", "path_deal", "path_folded",
           "enqueue", "sort_busy", "path_busy", "lam", "table", "gmax", "greedy", "floor",
           "rg_orig", "rg_grid", "rg_block", "rg_deal");
    for (long n = 10000; n <= max_threads; n *= 10)
        for (size_t nb = 16; nb <= 256; nb *= 4)
            if (measure(c, (size_t)n / 256 * 256, nb, reps, peak, t)) /* whole 256-thread blocks */
                return 1;
    tmap_timer_free(t);
    tmap_cuda_close(c);
    return 0;
}

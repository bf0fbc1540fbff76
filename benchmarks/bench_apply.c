/*
 * bench_apply.c -- what applying a regrouping by layout transform costs on
 * this GPU, next to its bandwidth floor.  For N threads and A per-thread
 * 4-byte input arrays plus one 4-byte output array, a random permutation:
 *   pooled  -- tmap_layout_apply on a layout made once (what a launch pays):
 *              the fused gather and scatter, timed by CUDA events, and the
 *              host time of a call that asks for no times (enqueueing the
 *              three launches, without waiting for them);
 *   per-launch -- tmap_layout_launch: the layout made, applied, waited for
 *              and freed on every launch (allocation, upload, sync included);
 *   floor   -- the bytes the gather and scatter must move (D read once per
 *              pass, each moved row read once and written once) at the peak
 *              DRAM bandwidth (memory clock x bus width x 2): a floor for
 *              sequential traffic; random rows cost whole 32-byte sectors
 *              where the arrays do not fit in L2.
 * The kernel between them is empty.  Medians over --reps after 3 warm-ups.
 * Usage: bench_apply [--reps R] [--max-threads N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

static const char empty_src[] =
    "extern \"C\" __global__ void empty(unsigned *a, unsigned *b, unsigned *c, unsigned *d,\n"
    "                                   unsigned *o) {}\n";

typedef struct cell {
    float gather_ms, scatter_ms, host_us, per_launch_ms, floor_ms;
} cell;

/* A seeded random permutation of 0..n-1 (malloc'ed; NULL when out of memory). */
static uint32_t *random_perm(uint32_t n, uint64_t seed)
{
    uint32_t *p = malloc((size_t)n * sizeof *p);
    for (uint32_t i = 0; p && i < n; i++)
        p[i] = i;
    for (uint32_t i = n - 1; p && i > 0; i--) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t j = (uint32_t)((seed >> 33) % (i + 1)), t = p[i];
        p[i] = p[j], p[j] = t;
    }
    return p;
}

static int fail(const tmap_error *e)
{
    return bench_gpu_failed("bench_apply", e);
}

static int measure(tmap_cuda *c, tmap_kernel *k, double peak_gbps, uint32_t n, int narr,
                   int reps, cell *out)
{
    tmap_error e = {0};
    uint64_t d[5] = {0}, perm = 0;
    tmap_status st = tmap_cuda_alloc(c, (size_t)n * 4, &perm, &e);
    for (int i = 0; st == TMAP_OK && i < 5; i++)
        st = tmap_cuda_alloc(c, (size_t)n * 4, &d[i], &e);
    uint32_t *p = random_perm(n, 5);
    if (st == TMAP_OK && !p)
        st = tmap_fail(&e, TMAP_ERR_NOMEM, "out of memory");
    if (st == TMAP_OK)
        st = tmap_cuda_upload(c, perm, p, (size_t)n * 4, &e);
    free(p);
    void *args[5];
    tmap_thread_array arrays[5];
    for (int i = 0; i < 5; i++) {
        int used = i < narr || i == 4;
        args[i] = &d[i];
        arrays[i] = (tmap_thread_array){(unsigned)i, 4, 1, used && i < 4, i == 4};
    }
    tmap_launch l = {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0, args, 5};
    tmap_layout *y = NULL;
    if (st == TMAP_OK)
        st = tmap_layout_create(c, &l, arrays, 5, &y, &e);
    float *g = calloc((size_t)reps, sizeof *g), *s = calloc((size_t)reps, sizeof *s);
    float *h = calloc((size_t)reps, sizeof *h), *pl = calloc((size_t)reps, sizeof *pl);
    for (int r = -3; st == TMAP_OK && r < reps; r++) {
        float ms[3];
        st = tmap_layout_apply(y, k, &l, perm, NULL, ms, &e);
        double t0 = tmap_clock_seconds();
        if (st == TMAP_OK)
            st = tmap_layout_apply(y, k, &l, perm, NULL, NULL, &e);
        double t1 = tmap_clock_seconds();
        uint32_t sink;
        if (st == TMAP_OK) /* waits for the enqueued work, outside the timing */
            st = tmap_cuda_download(c, &sink, perm, sizeof sink, &e);
        float whole[3];
        double t2 = tmap_clock_seconds();
        if (st == TMAP_OK)
            st = tmap_layout_launch(c, k, &l, perm, arrays, 5, whole, &e);
        double t3 = tmap_clock_seconds();
        if (r >= 0) {
            g[r] = ms[0], s[r] = ms[2], h[r] = (float)((t1 - t0) * 1e6);
            pl[r] = (float)((t3 - t2) * 1e3);
        }
    }
    if (st == TMAP_OK) {
        /* D read once per pass; each moved row read once and written once */
        double bytes = 2.0 * n * 4 + (double)n * 8 * (narr + 1);
        *out = (cell){bench_median(g, reps), bench_median(s, reps), bench_median(h, reps),
                      bench_median(pl, reps), (float)(bytes / (peak_gbps * 1e9) * 1e3)};
    }
    free(g), free(s), free(h), free(pl);
    tmap_layout_free(y);
    for (int i = 0; i < 5; i++)
        tmap_cuda_free(c, d[i]);
    tmap_cuda_free(c, perm);
    return st == TMAP_OK ? 0 : fail(&e);
}

int main(int argc, char **argv)
{
    int reps = 21;
    long max_threads = 10000000;
    int rc = bench_sweep_args(argc, argv, "bench_apply", &reps, &max_threads);
    if (rc >= 0)
        return rc;
    tmap_error e = {0};
    tmap_cuda *c = NULL;
    tmap_device_info d;
    tmap_kernel *k = NULL;
    tmap_compiled out = {0};
    if (tmap_cuda_open(0, &c, &e) || tmap_cuda_info(c, &d, &e) ||
        tmap_compile(empty_src, "empty.cu", NULL, &out, &e) ||
        tmap_kernel_load(c, out.ptx, "empty", &k, &e))
        return fail(&e);
    tmap_compiled_free(&out);
    double peak = (double)d.mem_clock_khz * 1e3 * 2.0 * (d.mem_bus_width_bits / 8.0) / 1e9;
    bench_banner(stdout, &d, "# ");
    printf("# peak DRAM bandwidth %.0f GB/s; medians of %d reps; 4-byte arrays, random D\n",
           peak, reps);
    printf("%9s %6s | %9s %9s %9s | %8s | %12s\n", "threads", "inputs", "gather_us",
           "scatter_us", "floor_us", "enqueue_us", "per-launch_us");
    for (long n = 10000; n <= max_threads; n *= 10)
        for (int narr = 1; narr <= 4; narr *= 4) {
            cell x = {0};
            if (measure(c, k, peak, (uint32_t)n, narr, reps, &x))
                return 1;
            printf("%9ld %6d | %9.1f %9.1f %9.1f | %8.1f | %12.1f\n", n, narr,
                   x.gather_ms * 1e3, x.scatter_ms * 1e3, x.floor_ms * 1e3, x.host_us,
                   x.per_launch_ms * 1e3);
        }
    tmap_kernel_free(k);
    tmap_cuda_close(c);
    return 0;
}

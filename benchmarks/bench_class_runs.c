/*
 * bench_class_runs.c -- the host step of Greedy and Greedy-Max on a class
 * table (tmap_regroup_class_runs, the GPU path's host step between the
 * class table and its expansion on the GPU), on the CPU alone: for N
 * threads in R classes of random sizes (each uniform in [0, 2N/R), a
 * fixed seed), the median time of --reps calls, and the runs written.
 *   bench_class_runs [--reps R] [--max-threads N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

static uint32_t runs[2 * TMAP_REGROUP_MAX_RUNS];

/* Median microseconds of reps calls of algo on the table; *nruns: runs. */
static int time_algo(tmap_algo algo, const uint32_t *size, size_t R, int reps, float *us,
                     size_t *nruns)
{
    float *t = malloc((size_t)reps * sizeof *t);
    tmap_error e = {0};
    for (int i = 0; t && i < reps; i++) {
        double t0 = tmap_clock_seconds();
        if (tmap_regroup_class_runs(algo, size, R, 32, runs, nruns, &e)) {
            fprintf(stderr, "bench_class_runs: %s\n", e.message);
            free(t);
            return 1;
        }
        t[i] = (float)((tmap_clock_seconds() - t0) * 1e6);
    }
    *us = t ? bench_median(t, reps) : -1;
    free(t);
    return !t;
}

int main(int argc, char **argv)
{
    int reps = 21;
    long max_threads = 10000000;
    int rc = bench_sweep_args(argc, argv, "bench_class_runs", &reps, &max_threads);
    if (rc >= 0)
        return rc;
    static uint32_t size[TMAP_REGROUP_LAM_MAX_CLASSES];
    printf("# medians of %d calls; times in us; groups of 32\n", reps);
    printf("%9s %4s | %10s %6s | %10s %6s\n", "threads", "R", "greedy", "runs", "greedy_max",
           "runs");
    for (long n = 10000; n <= max_threads; n *= 10)
        for (size_t R = 10; R <= TMAP_REGROUP_LAM_MAX_CLASSES; R = R == 10 ? 256 : 257) {
            uint64_t s = 1;
            size_t total = 0;
            for (size_t c = 0; c < R; c++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                total += size[c] = (uint32_t)((double)(s >> 11) / 9007199254740992.0 * 2.0 *
                                              (double)n / (double)R);
            }
            float tg, tm;
            size_t ng, nm;
            if (time_algo(TMAP_ALGO_GREEDY, size, R, reps, &tg, &ng) ||
                time_algo(TMAP_ALGO_GREEDY_MAX, size, R, reps, &tm, &nm))
                return 1;
            printf("%9zu %4zu | %10.1f %6zu | %10.1f %6zu\n", total, R, tg, ng, tm, nm);
        }
    return 0;
}

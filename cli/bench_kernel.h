/*
 * bench_kernel.h -- one kernel of `threadmap bench` on the GPU: profiling
 * runs on the profiling seeds, the predictor (eq. 1) trained and saved,
 * tmap_evaluate on the evaluation seed with every candidate applied, the
 * per-kernel report, and the plain data of model/bench.h filled in.
 */
#ifndef TMAP_CLI_BENCH_KERNEL_H
#define TMAP_CLI_BENCH_KERNEL_H

#include <stdint.h>

#include "model/bench.h"

#define TMAP_BENCH_MAXSEEDS 16

typedef struct tmap_bench_cfg {
    const char *out;              /* the run's folder; the kernel's is out/NAME */
    uint64_t seed;                /* evaluation input */
    uint64_t profile_seeds[TMAP_BENCH_MAXSEEDS];
    size_t nseeds;
    int reps, warmup;             /* requested timed launches (capped by budget_s) */
    int launches;                 /* launches reusing one permutation: the plan's too */
    long sample;                  /* profile every sample-th thread block; 0: auto */
    int measured_bbv;             /* 1: profile the evaluation input instead of predicting */
    const char *table;            /* latency table, or NULL: the GPU's default */
    double budget_s;              /* the whole run's time budget */
    size_t nkernels;              /* kernels in the run (shares the budget) */
    int quiet;
} tmap_bench_cfg;

/* Runs kernel `index` (0-based, for progress) from `manifest`.  On failure
 * out->ok is 0, out->error says why, and the status is returned; out->r2
 * (malloc'ed) is freed by the caller in every case. */
tmap_status tmap_bench_kernel_run(tmap_cuda *c, const tmap_device_info *d, const char *manifest,
                                  const tmap_bench_cfg *cfg, size_t index, tmap_bench_kernel *out,
                                  tmap_error *err);

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
double tmap_bench_now(void);

#endif

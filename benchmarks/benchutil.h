/*
 * benchutil.h -- what the benchmark programs share: medians, the device
 * banner (name, clocks, driver) that every result must carry, and listing
 * manifests.  Included by benchmark programs only.
 */
#ifndef TMAP_BENCHMARKS_BENCHUTIL_H
#define TMAP_BENCHMARKS_BENCHUTIL_H

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap.h"

static int bench_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of n values (sorts them). */
static inline float bench_median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* The sweep options of bench_apply and bench_gpu_regroup: --reps R and
 * --max-threads N.  Returns -1 to go on, else the exit code (0 after
 * --help, 2 on bad usage). */
static inline int bench_sweep_args(int argc, char **argv, const char *name, int *reps,
                                   long *max_threads)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            *reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-threads") && i + 1 < argc)
            *max_threads = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--reps R] [--max-threads N]\n", name);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (*reps < 1 || *max_threads < 1) {
        fprintf(stderr, "%s: --reps and --max-threads must be positive\n", name);
        return 2;
    }
    return -1;
}

/* A failed GPU setup: the message on stderr after the program's name;
 * the exit code, 3 without a GPU, else 1. */
static inline int bench_gpu_failed(const char *name, const tmap_error *e)
{
    fprintf(stderr, "%s: %s\n", name, e->message);
    return e->status == TMAP_ERR_NO_DEVICE ? 3 : 1;
}

/* A tmap_gpu_memre_rcm_timed call's steps, on one line between `prefix`
 * and `suffix`, each beside its floor (its grid barriers at the measured
 * barrier, its compulsory bytes at the measured copy bandwidth). */
static inline void bench_rcm_steps(FILE *out, const char *prefix, const tmap_gpu_rcm_steps *s,
                                   const char *suffix)
{
    double sum = s->alloc_ms + s->setup_ms + s->sweep_ms + s->least_ms + s->number_ms +
                 s->rest_ms;
    fprintf(out, "%sallocation %.3f ms, setup %.3f (floor %.3f), sweeps %.3f (%u, %s:", prefix,
            s->alloc_ms, s->setup_ms, s->floor_setup_ms, s->sweep_ms, s->sweeps,
            s->coop_sweeps ? "cooperative" : "launches");
    for (unsigned i = 0; i < s->sweeps && i < 4; i++)
        fprintf(out, " %.3f", s->sweep_each_ms[i]);
    fprintf(out, "%s; floor %.3f: %llu barriers), least vertices %.3f, numbering %.3f "
            "(%u components, %llu levels, %s, %u sweeps inside it, %u discarded; floor %.3f: "
            "%llu barriers), marks and reversal %.3f; sum %.3f ms (floors at a barrier of "
            "%.2f us, %.2f us with one block per SM, and %.0f GB/s)%s\n", s->sweeps > 4 ? " ..." : "", s->floor_sweep_ms,
            s->sweep_barriers, s->least_ms, s->number_ms, s->components, s->levels,
            s->coop_number ? "cooperative" : "launches per level", s->fused_sweeps, s->discarded,
            s->floor_number_ms, s->number_barriers, s->rest_ms, sum, s->barrier_us, s->barrier_one_us, s->copy_gbs,
            suffix);
}

static inline void bench_banner(FILE *out, const tmap_device_info *d, const char *prefix)
{
    fprintf(out, "%sdevice: %s (sm_%d%d), %d SMs, SM clock %d MHz, memory clock %d MHz\n", prefix,
            d->name, d->cc_major, d->cc_minor, d->sms, d->clock_khz / 1000, d->mem_clock_khz / 1000);
    fprintf(out, "%sdriver: CUDA %d.%d (PTX ISA up to %d.%d)\n", prefix, d->driver_version / 1000,
            (d->driver_version % 1000) / 10, d->ptx_major, d->ptx_minor);
}

/* The manifests named on the command line, or every *.json under dir. */
static inline char **bench_manifests(int argc, char **argv, int first, const char *dir, size_t *n)
{
    char **out = NULL;
    *n = 0;
    if (first < argc) {
        out = calloc((size_t)(argc - first), sizeof *out);
        for (int i = first; i < argc; i++)
            out[(*n)++] = strdup(argv[i]);
        return out;
    }
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/*.json", dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) {
        out = calloc(g.gl_pathc, sizeof *out);
        for (size_t i = 0; i < g.gl_pathc; i++)
            out[(*n)++] = strdup(g.gl_pathv[i]);
        globfree(&g);
    }
    return out;
}

#endif

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

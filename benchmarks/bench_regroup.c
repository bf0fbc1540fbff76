/*
 * bench_regroup.c -- CPU time of the regrouping algorithms on synthetic BBVs
 * (seeded): "few" (64 distinct rows), "powerlaw" (rows set by a power-law
 * loop trip count, as threads sharing trip counts give), "random" (every
 * row distinct: the worst case).  Prints one table row per (distribution,
 * N, blocks): distinct rows and the median wall time of each algorithm
 * (CLOCK_MONOTONIC; the classes pass on --threads CPU threads, the rest on
 * one), and next to Sorting, `read`: the memory-read floor of one core,
 * i.e. the median time of one pass summing the BBV matrix on one thread,
 * measured in the same run (Sorting reads the matrix once).  The pass runs
 * plainly and with software prefetch, and the faster median counts: on some
 * hosts prefetching reads faster than the hardware prefetcher alone.  Usage:
 *   bench_regroup [--max-threads N] [--reps R] [--seed S] [--threads T]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base.h"
#include "regroup/classes.h"
#include "threadmap/regroup.h"

#define MAX_BYTES (1ULL << 30) /* BBV matrices above this are skipped */
#define SLOW_S 2.0             /* a first run above this is not repeated */

#define READ_AHEAD 2048 /* u32 prefetched ahead by the prefetching read */

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static double unit(uint64_t *s) { return (double)(rnd(s) >> 11) / 9007199254740992.0; }

typedef enum { FEW, POWERLAW, RANDOM } dist;
static const char *dist_name[] = {"few", "powerlaw", "random"};

static void fill(tmap_bbv *b, dist d, uint64_t *seed)
{
    size_t nb = b->nblocks;
    uint32_t *proto = malloc(64 * nb * sizeof *proto);
    for (size_t i = 0; i < 64 * nb; i++)
        proto[i] = (uint32_t)(rnd(seed) % 100);
    for (size_t t = 0; t < b->nthreads; t++) {
        uint32_t *r = b->counts + t * nb;
        if (d == FEW) {
            memcpy(r, proto + (rnd(seed) % 64) * nb, nb * sizeof *r);
        } else if (d == POWERLAW) {
            /* trip count L ~ Pareto(alpha 1.5), capped; blocks: entry, loop
             * bodies scaled by L, a branch on L's parity, the exit */
            uint32_t L = (uint32_t)(1.0 / __builtin_pow(unit(seed) + 1e-12, 1 / 1.5));
            if (L > 5000)
                L = 5000;
            for (size_t j = 0; j < nb; j++)
                r[j] = j == 0 || j == nb - 1 ? 1
                       : j % 4 == 3          ? (L % 2) * L
                                             : L * (uint32_t)(j % 3 + 1);
        } else {
            for (size_t j = 0; j < nb; j++)
                r[j] = (uint32_t)(rnd(seed) % 1000);
        }
    }
    free(proto);
}

static volatile uint64_t read_sink;

/* One pass summing the matrix, with or without software prefetch. */
static double read_pass(const tmap_bbv *b, int prefetch)
{
    const uint32_t *v = b->counts;
    size_t n = b->nthreads * b->nblocks, i = 0;
    uint64_t s = 0;
    double t0 = tmap_clock_seconds();
    if (prefetch)
        for (; i + 16 + READ_AHEAD <= n; i += 16) { /* 16 u32: a cache line */
            __builtin_prefetch(v + i + READ_AHEAD);
            for (size_t k = i; k < i + 16; k++)
                s += v[k];
        }
    for (; i < n; i++)
        s += v[i];
    read_sink = s;
    return tmap_clock_seconds() - t0;
}

/* The memory-read floor: the faster median of the two read passes. */
static void read_cell(const tmap_bbv *b, int reps)
{
    double plain[32], ahead[32];
    for (int r = 0; r < reps; r++) {
        plain[r] = read_pass(b, 0);
        ahead[r] = read_pass(b, 1);
    }
    double a = tmap_median(plain, reps), c = tmap_median(ahead, reps);
    printf(" %10.2fms", (a < c ? a : c) * 1e3);
}

enum { A_SORT, A_KEY, A_GREEDY, A_GMAX, A_GREEDY_BLK, A_GMAX_BLK, NALG };
static const char *alg_name[] = {"sort", "sort_key", "greedy", "greedy_max",
                                 "greedy/blk256", "gmax/blk256"};

static tmap_status run_alg(int a, const tmap_bbv *b, const double *lat,
                           const double *key, uint32_t *perm, size_t threads,
                           tmap_error *err)
{
    tmap_regroup_opts grid = {32, TMAP_REGROUP_GRID, 0, threads};
    tmap_regroup_opts blk = {32, TMAP_REGROUP_BLOCK, 256, threads};
    switch (a) {
    case A_SORT: return tmap_regroup_sort(b, &grid, perm, err);
    case A_KEY: return tmap_regroup_sort_key(key, b->nthreads, 1, &grid, perm, err);
    case A_GREEDY: return tmap_regroup_greedy(b, lat, &grid, perm, err);
    case A_GMAX: return tmap_regroup_greedy_max(b, lat, &grid, perm, err);
    case A_GREEDY_BLK: return tmap_regroup_greedy(b, lat, &blk, perm, err);
    default: return tmap_regroup_greedy_max(b, lat, &blk, perm, err);
    }
}

/* Why a cell is not run, or NULL. */
static const char *skip_reason(int a, dist d, size_t n, size_t nb)
{
    if (d == RANDOM && a == A_GMAX && (double)n * n * nb > 1e10)
        return "O(N^2)";
    if (d == RANDOM && (a == A_GREEDY_BLK || a == A_GMAX_BLK) && n > 100000)
        return "too slow";
    if (d == RANDOM && a == A_GREEDY && n > TMAP_REGROUP_GREEDY_MAX_TYPES)
        return "types>cap";
    return NULL;
}

static void cell(int a, dist d, const tmap_bbv *b, const double *lat,
                 const double *key, uint32_t *perm, int reps, size_t threads)
{
    const char *why = skip_reason(a, d, b->nthreads, b->nblocks);
    if (why) {
        printf(" %12s", why);
        return;
    }
    double t[32];
    int r = 0;
    for (; r < reps; r++) {
        tmap_error err;
        double t0 = tmap_clock_seconds();
        tmap_status st = run_alg(a, b, lat, key, perm, threads, &err);
        t[r] = tmap_clock_seconds() - t0;
        if (st != TMAP_OK) {
            printf(" %12s", tmap_status_string(st));
            return;
        }
        if (t[r] > SLOW_S) {
            r++;
            break;
        }
    }
    printf(" %10.2fms", tmap_median(t, r) * 1e3);
}

static size_t distinct_rows(const tmap_bbv *b)
{
    tmap_regroup_part p = {.rows = b->counts, .nblocks = b->nblocks,
                           .n = b->nthreads, .groupsize = 32};
    tmap_regroup_classes c;
    if (tmap_regroup_classes_find(&p, &c, NULL) != TMAP_OK)
        return 0;
    size_t k = c.count;
    tmap_regroup_classes_free(&c);
    return k;
}

static void cpu_model(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            printf("cpu:%s", strchr(line, ':') + 1);
            break;
        }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    size_t max_threads = 10000000;
    int reps = 5;
    size_t threads = 1;
    uint64_t seed0 = 1;
    const char *usage = "usage: %s [--max-threads N] [--reps R (1..32)] [--seed S]\n"
                        "       [--threads T (1..64): CPU threads of the classes pass]\n";
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(usage, argv[0]);
            return 0;
        }
        if (i + 1 == argc || argv[i + 1][0] < '0' || argv[i + 1][0] > '9') {
            fprintf(stderr, usage, argv[0]);
            return 2;
        }
        if (!strcmp(argv[i], "--max-threads"))
            max_threads = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads"))
            threads = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--seed"))
            seed0 = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, usage, argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 32 || threads < 1 ||
        threads > TMAP_REGROUP_MAX_THREADS) {
        fprintf(stderr, usage, argv[0]);
        return 2;
    }
    cpu_model();
    printf("groupsize 32, %zu CPU thread%s (the classes pass), median of up to "
           "%d runs (1 when a run takes > %.0f s); blk256 = block scope, 256 "
           "threads per block\n", threads, threads > 1 ? "s" : "", reps, SLOW_S);
    printf("%-9s %9s %6s %9s", "dist", "N", "blocks", "distinct");
    for (int a = 0; a < NALG; a++) {
        printf(" %12s", alg_name[a]);
        if (a == A_SORT)
            printf(" %12s", "read");
    }
    printf("\n");
    const size_t ns[] = {10000, 100000, 1000000, 10000000};
    const size_t nbs[] = {16, 64, 256};
    for (int d = 0; d < 3; d++)
        for (size_t i = 0; i < 4 && ns[i] <= max_threads; i++)
            for (size_t j = 0; j < 3; j++) {
                size_t n = ns[i], nb = nbs[j];
                if ((unsigned long long)n * nb * 4 > MAX_BYTES) {
                    printf("%-9s %9zu %6zu   skipped: BBV of %.1f GB > 1 GiB "
                           "memory cap\n", dist_name[d], n, nb, n * nb * 4e-9);
                    continue;
                }
                uint64_t seed = seed0 + 1000 * (uint64_t)d + i * 10 + j;
                tmap_bbv b;
                if (tmap_bbv_create(&b, n, nb, NULL) != TMAP_OK)
                    return 1;
                fill(&b, (dist)d, &seed);
                double *lat = malloc(nb * sizeof *lat);
                for (size_t k = 0; k < nb; k++)
                    lat[k] = 4 + (double)(rnd(&seed) % 600);
                double *key = malloc(n * sizeof *key);
                for (size_t t = 0; t < n; t++) {
                    double s = 0;
                    for (size_t k = 0; k < nb; k++)
                        s += lat[k] * b.counts[t * nb + k];
                    key[t] = s;
                }
                uint32_t *perm = malloc(n * sizeof *perm);
                printf("%-9s %9zu %6zu %9zu", dist_name[d], n, nb,
                       distinct_rows(&b));
                fflush(stdout);
                for (int a = 0; a < NALG; a++) {
                    cell(a, (dist)d, &b, lat, key, perm, reps, threads);
                    if (a == A_SORT)
                        read_cell(&b, reps);
                    fflush(stdout);
                }
                printf("\n");
                free(perm);
                free(key);
                free(lat);
                tmap_bbv_free(&b);
            }
    return 0;
}

/*
 * class_runs.c -- Greedy and Greedy-Max on a table of value classes, for
 * the GPU path: the GPU sorts the threads stably by class and sends only
 * the class sizes; the algorithm runs here on the class-sorted problem
 * (position j of the class-sorted order is a thread whose one-block BBV
 * row is its class + 1, latency 1), and its permutation of positions is
 * sent back as runs of consecutive positions, which the GPU expands.  Both
 * algorithms take a class's threads in ascending position, so the runs
 * number about the classes plus the mixed groups, not the threads.
 *
 * Greedy-Max needs no expansion: on these rows it is the classes in
 * descending order, each in ascending position.  A group starts at the
 * highest class left (Lat = count), takes its threads (identical first,
 * lowest position first); when the class runs dry every other class
 * left is lower, so the largest gain 2 min - max is the next class down,
 * which the group then takes the same way; the next group starts where
 * this one stopped.  (Tested against tmap_regroup_greedy_max.)
 */
#include "threadmap/regroup.h"

#include <stdlib.h>

#include "common/base.h"

/* The positions of perm as runs: runs[2r] the first slot of run r,
 * runs[2r + 1] its first position; slots of a run take consecutive
 * positions.  Returns the run count, or 0 past max. */
static size_t compress(const uint32_t *perm, size_t n, uint32_t *runs, size_t max)
{
    size_t r = 0;
    for (size_t s = 0; s < n; s++) {
        if (s && perm[s] == perm[s - 1] + 1)
            continue;
        if (r == max)
            return 0;
        runs[2 * r] = (uint32_t)s, runs[2 * r + 1] = perm[s];
        r++;
    }
    return r;
}

/* Greedy-Max's runs: the non-empty classes, highest first. */
static size_t descending(const uint32_t *size, size_t nclasses, uint32_t *runs)
{
    size_t r = 0;
    uint32_t slot = 0, start = 0;
    for (size_t c = 0; c < nclasses; c++)
        start += size[c];
    for (size_t c = nclasses; c-- > 0;) {
        start -= size[c];
        if (!size[c])
            continue;
        runs[2 * r] = slot, runs[2 * r + 1] = start;
        slot += size[c], r++;
    }
    return r;
}

tmap_status tmap_regroup_class_runs(tmap_algo algo, const uint32_t *size, size_t nclasses,
                                    size_t groupsize, uint32_t *runs, size_t *nruns,
                                    tmap_error *err)
{
    if (!size || !runs || !nruns || !nclasses || nclasses > TMAP_REGROUP_LAM_MAX_CLASSES)
        return tmap_fail(err, TMAP_ERR_INVALID, "class runs: %s",
                         nclasses ? "an argument is NULL" : "no classes");
    if (algo != TMAP_ALGO_GREEDY && algo != TMAP_ALGO_GREEDY_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID, "class runs: %s is not Greedy or Greedy-Max",
                         tmap_algo_name(algo));
    size_t n = 0;
    for (size_t c = 0; c < nclasses; c++)
        n += size[c];
    if (!n || n > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID, "class runs: %zu threads", n);
    if (algo == TMAP_ALGO_GREEDY_MAX) {
        *nruns = descending(size, nclasses, runs);
        return TMAP_OK;
    }
    uint32_t *rows = malloc(n * sizeof *rows), *perm = malloc(n * sizeof *perm);
    tmap_status st = rows && perm ? TMAP_OK
                                  : tmap_fail(err, TMAP_ERR_NOMEM, "class runs: %zu threads", n);
    for (size_t c = 0, j = 0; !st && c < nclasses; c++)
        for (size_t i = 0; i < size[c]; i++)
            rows[j++] = (uint32_t)c + 1;
    tmap_bbv bbv = {.counts = rows, .nthreads = n, .nblocks = 1};
    double lat = 1;
    tmap_regroup_opts o = {.groupsize = groupsize, .scope = TMAP_REGROUP_GRID};
    if (!st)
        st = tmap_regroup_greedy(&bbv, &lat, &o, perm, err);
    if (!st && !(*nruns = compress(perm, n, runs, TMAP_REGROUP_MAX_RUNS)))
        st = tmap_fail(err, TMAP_ERR_UNSUPPORTED, "class runs: %s needs more than %d runs",
                       tmap_algo_name(algo), TMAP_REGROUP_MAX_RUNS);
    free(rows);
    free(perm);
    return st;
}

/*
 * deal.c -- bin-and-deal, a candidate none of the papers has: threads
 * ordered heaviest first are cut into homogeneous warps (groups), and the
 * groups are dealt round-robin to the thread blocks, so that every block
 * gets a balanced share of the work (grid-wide Sorting piles the heaviest
 * threads into one block) and the lower blocks, dispatched first, get the
 * heavier groups of each round.  Inside a group, threads keep their index
 * order, which keeps what coalescing the original order had.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/gain.h"
#include "threadmap/regroup.h"

static int by_index(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

tmap_status tmap_regroup_deal(const uint32_t *sorted, size_t nthreads, size_t block_size,
                              size_t groupsize, uint32_t *perm, tmap_error *err)
{
    if (!sorted || !perm || sorted == perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "deal: %s",
                         sorted && sorted == perm ? "sorted and perm are the same array"
                                                  : "an argument is NULL");
    if (!groupsize || groupsize % 32 || !block_size || block_size % groupsize || !nthreads ||
        nthreads % block_size)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "deal: %zu threads, thread blocks of %zu, groups of %zu: every thread "
                         "block must be full and hold whole groups of a multiple of 32",
                         nthreads, block_size, groupsize);
    size_t nblocks = nthreads / block_size, ngroups = nthreads / groupsize;
    for (size_t g = 0; g < ngroups; g++) {
        uint32_t *dst = perm + (g % nblocks) * block_size + (g / nblocks) * groupsize;
        memcpy(dst, sorted + g * groupsize, groupsize * sizeof *dst);
        qsort(dst, groupsize, sizeof *dst, by_index);
    }
    return TMAP_OK;
}

tmap_status tmap_regroup_bin_deal(const tmap_bbv *bbv, const double *lat,
                                  const tmap_regroup_opts *opts, uint32_t *perm,
                                  tmap_error *err)
{
    if (!bbv || !bbv->counts || !lat || !opts || !perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "bin-and-deal: an argument is NULL");
    if (opts->scope != TMAP_REGROUP_GRID)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "bin-and-deal moves threads between "
                         "thread blocks: it needs grid scope");
    size_t n = bbv->nthreads;
    double *cost = malloc(n * sizeof *cost);
    uint32_t *order = malloc(n * sizeof *order);
    tmap_status st = cost && order ? TMAP_OK
                                   : tmap_fail(err, TMAP_ERR_NOMEM, "bin-and-deal: %zu threads", n);
    for (size_t t = 0; !st && t < n; t++)
        cost[t] = tmap_regroup_latency(bbv->counts + t * bbv->nblocks, lat, bbv->nblocks);
    if (!st)
        st = tmap_regroup_sort_key(cost, n, 1, opts, order, err);
    if (!st)
        st = tmap_regroup_deal(order, n, opts->block_size, opts->groupsize, perm, err);
    free(cost);
    free(order);
    return st;
}

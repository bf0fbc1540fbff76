/*
 * constant.c -- the SM model's counts for the constant cache: per warp the
 * distinct addresses of its __constant__ reads, per thread block the rows
 * its SM's residents read, from a key per thread that decides the rows
 * (docs/model.md, "The constant cache's capacity").  sm.c prices them.
 */
#include "threadmap/model.h"

#include <math.h>
#include <stdlib.h>

#include "common/base.h"

/* ca of warp k: per block the most executions of each of its lanes'
 * distinct groups, summed. */
static void warp_const(const tmap_warp_counts *w, const tmap_bbv *bbv, const uint32_t *perm,
                       const uint32_t *group, size_t k, double *ca)
{
    uint32_t thread[32], lane_of[32];
    size_t nd, n = tmap_warp_counts_lanes(w, group, perm, k, thread, lane_of, &nd), nb = w->nblocks;
    for (size_t b = 0; b < nb; b++) {
        uint32_t most[32] = {0};
        for (size_t i = 0; i < n; i++) {
            uint32_t v = bbv->counts[(size_t)thread[i] * nb + b];
            most[lane_of[i]] = v > most[lane_of[i]] ? v : most[lane_of[i]];
        }
        double sum = 0;
        for (size_t j = 0; j < nd; j++)
            sum += most[j];
        ca[k * nb + b] = sum;
    }
}

/* const_ws of thread block k: the distinct groups of blocks k, k + nsms,
 * ..., k + (R - 1) nsms (stamp[g] == k + 1 once g is counted). */
static double block_rows(const tmap_warp_counts *w, const uint32_t *perm, const uint32_t *group,
                         size_t k, size_t nsms, size_t R, uint32_t *stamp)
{
    size_t S = w->block_size, nblk = (w->nthreads + S - 1) / S, rows = 0;
    for (size_t j = 0; j < R && k + j * nsms < nblk; j++)
        for (size_t i = (k + j * nsms) * S; i < (k + j * nsms + 1) * S && i < w->nthreads; i++) {
            uint32_t x = group[perm ? perm[i] : i];
            rows += stamp[x] != k + 1;
            stamp[x] = (uint32_t)(k + 1);
        }
    return (double)rows;
}

tmap_status tmap_warp_counts_const(tmap_warp_counts *w, const tmap_bbv *bbv, const uint32_t *perm,
                                   const uint32_t *group, size_t ngroups, double table_bytes,
                                   size_t nsms, size_t blocks_per_sm, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, w, bbv, group);
    if (st)
        return st;
    if (bbv->nthreads != w->nthreads || bbv->nblocks != w->nblocks || !nsms || !blocks_per_sm ||
        !ngroups || !(table_bytes >= 0) || isinf(table_bytes))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_warp_counts_const: %zu threads and %zu "
                         "blocks counted, the BBV %zu and %zu; %zu SMs, %zu resident blocks, "
                         "%zu groups, %g bytes of table", w->nthreads, w->nblocks, bbv->nthreads,
                         bbv->nblocks, nsms, blocks_per_sm, ngroups, table_bytes);
    size_t n = w->nthreads, nblk = (n + w->block_size - 1) / w->block_size;
    for (size_t t = 0; t < n; t++)
        if (group[t] >= ngroups)
            return tmap_fail(err, TMAP_ERR_INVALID, "tmap_warp_counts_const: thread %zu's group "
                             "%u, of %zu groups", t, group[t], ngroups);
    free(w->ca), free(w->const_ws);
    w->ca = malloc((w->nwarps * w->nblocks + 1) * sizeof *w->ca);
    w->const_ws = malloc((nblk + 1) * sizeof *w->const_ws);
    uint32_t *stamp = calloc(ngroups + 1, sizeof *stamp);
    if (!stamp || !w->ca || !w->const_ws)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the constant counts of %zu "
                       "threads", n);
    for (size_t k = 0; !st && k < w->nwarps; k++)
        warp_const(w, bbv, perm, group, k, w->ca);
    for (size_t k = 0; !st && k < nblk; k++)
        w->const_ws[k] = table_bytes * block_rows(w, perm, group, k, nsms, blocks_per_sm, stamp) /
                         (double)ngroups;
    if (st) {
        free(w->ca), free(w->const_ws);
        w->ca = NULL, w->const_ws = NULL;
    }
    free(stamp);
    return st;
}

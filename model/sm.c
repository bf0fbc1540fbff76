/*
 * sm.c -- the sub-partition model: a kernel's time on an SM of Volta and
 * later (Hopper is the reference), where each SM has P sub-partitions, each
 * a warp scheduler issuing one warp instruction per cycle to the warps
 * assigned to it, and several thread blocks resident at once.  It stands
 * beside the paper's metrics (which add a block's warps one after another
 * and give each resident block a whole SM).  docs/model.md states it:
 *
 *   per warp w      I_w = sum_b c_wb issue_b        (issue cycles)
 *                   L_w = sum_b c_wb lat_b          (latency chain)
 *                   c_wb = max over the warp's threads of BBV_t[b]
 *   per block k     warp j of k goes to sub-partition j mod P;
 *                   I_ks = sum of its warps' I_w on sub-partition s,
 *                   L_k = max of its warps' L_w,
 *                   d_k = max(L_k, R * max_s I_ks) alone among R residents
 *   placement       dynamic list scheduling of d_k over nsms x R slots
 *   per SM m, s     T_ms = max(sum over m's blocks of I_ks,
 *                              max over m's slots of the sum of their L_k)
 *   kernel          T = max over m, s of T_ms
 */
#include "threadmap/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

static tmap_status sm_check(const tmap_sm_params *p, tmap_error *err)
{
    if (!p)
        return tmap_fail(err, TMAP_ERR_INVALID, "sub-partition model: no parameters");
    if (!p->nsms || !p->blocks_per_sm || !p->subpartitions || !p->warps_per_block)
        return tmap_fail(err, TMAP_ERR_INVALID, "sub-partition model: SMs (%zu), resident "
                         "blocks (%zu), sub-partitions (%zu) and warps per block (%zu) must "
                         "all be positive", p->nsms, p->blocks_per_sm, p->subpartitions,
                         p->warps_per_block);
    if (p->subpartitions > TMAP_SM_MAX_SUBPARTITIONS)
        return tmap_fail(err, TMAP_ERR_INVALID, "sub-partition model: %zu sub-partitions "
                         "(at most %d)", p->subpartitions, TMAP_SM_MAX_SUBPARTITIONS);
    return TMAP_OK;
}

/* I_ks and L_k of block k (sub-partition sums into iks[P]). */
static double block_costs(const double *wi, const double *wl, size_t nwarps, size_t k,
                          const tmap_sm_params *p, double *iks)
{
    double lk = 0;
    memset(iks, 0, p->subpartitions * sizeof *iks);
    for (size_t j = 0; j < p->warps_per_block; j++) {
        size_t w = k * p->warps_per_block + j;
        if (w >= nwarps)
            break;
        iks[j % p->subpartitions] += wi[w];
        if (wl[w] > lk)
            lk = wl[w];
    }
    return lk;
}

static double max_of(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

/* T from the placement: per SM the sub-partitions' issue sums and each
 * slot's chain of latencies. */
static double sm_makespan(const double *wi, const double *wl, size_t nwarps, size_t nblocks,
                          const tmap_sm_params *p, const tmap_sched_slot *where, double *issue,
                          double *chain)
{
    size_t P = p->subpartitions, R = p->blocks_per_sm;
    double iks[TMAP_SM_MAX_SUBPARTITIONS];
    for (size_t k = 0; k < nblocks; k++) {
        double lk = block_costs(wi, wl, nwarps, k, p, iks);
        for (size_t s = 0; s < P; s++)
            issue[where[k].sm * P + s] += iks[s];
        chain[where[k].sm * R + where[k].slot] += lk;
    }
    double t = 0;
    for (size_t m = 0; m < p->nsms; m++) {
        double lat = max_of(&chain[m * R], R), iss = max_of(&issue[m * P], P);
        double tm = lat > iss ? lat : iss;
        if (tm > t)
            t = tm;
    }
    return t;
}

tmap_status tmap_sm_schedule(const double *warp_issue, const double *warp_latency,
                             size_t nwarps, const tmap_sm_params *p, double *cycles,
                             tmap_error *err)
{
    tmap_status st = sm_check(p, err);
    if (st)
        return st;
    if ((nwarps && (!warp_issue || !warp_latency)) || !cycles)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_sm_schedule: an array is NULL");
    for (size_t w = 0; w < nwarps; w++)
        if (!(warp_issue[w] >= 0) || !(warp_latency[w] >= 0) || isinf(warp_issue[w]) ||
            isinf(warp_latency[w]))
            return tmap_fail(err, TMAP_ERR_INVALID, "warp %zu: issue %g, latency %g cycles "
                             "(each must be finite and >= 0)", w, warp_issue[w],
                             warp_latency[w]);
    size_t nblocks = (nwarps + p->warps_per_block - 1) / p->warps_per_block;
    double *d = malloc((nblocks + 1) * sizeof *d);
    tmap_sched_slot *where = malloc((nblocks + 1) * sizeof *where);
    double *issue = calloc(p->nsms * p->subpartitions, sizeof *issue);
    double *chain = calloc(p->nsms * p->blocks_per_sm, sizeof *chain);
    if (!d || !where || !issue || !chain)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu thread blocks", nblocks);
    double iks[TMAP_SM_MAX_SUBPARTITIONS];
    for (size_t k = 0; !st && k < nblocks; k++) {
        double lk = block_costs(warp_issue, warp_latency, nwarps, k, p, iks);
        double ik = (double)p->blocks_per_sm * max_of(iks, p->subpartitions);
        d[k] = lk > ik ? lk : ik;
    }
    double unused;
    if (!st)
        st = tmap_sched_dynamic(d, nblocks, p->nsms, p->blocks_per_sm, &unused, where, err);
    if (!st)
        *cycles = sm_makespan(warp_issue, warp_latency, nwarps, nblocks, p, where, issue, chain);
    free(d), free(where), free(issue), free(chain);
    return st;
}

tmap_status tmap_sm_warps(const tmap_bbv *bbv, const uint32_t *perm, const double *issue,
                          const double *lat, double *warp_issue, double *warp_latency,
                          tmap_error *err)
{
    if (!bbv || !bbv->counts || !issue || !lat || !warp_issue || !warp_latency)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_sm_warps: an argument is NULL");
    size_t n = bbv->nthreads, nb = bbv->nblocks, nwarps = (n + 31) / 32;
    if (perm) {
        tmap_status st = tmap_perm_check(perm, n, "the grouping", err);
        if (st)
            return st;
    }
    uint32_t *c = malloc((nb ? nb : 1) * sizeof *c);
    if (!c)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t w = 0; w < nwarps; w++) {
        memset(c, 0, nb * sizeof *c);
        for (size_t i = w * 32; i < n && i < w * 32 + 32; i++) {
            const uint32_t *row = &bbv->counts[(size_t)(perm ? perm[i] : i) * nb];
            for (size_t b = 0; b < nb; b++)
                if (row[b] > c[b])
                    c[b] = row[b];
        }
        double iw = 0, lw = 0;
        for (size_t b = 0; b < nb; b++)
            iw += c[b] * issue[b], lw += c[b] * lat[b];
        warp_issue[w] = iw;
        warp_latency[w] = lw;
    }
    free(c);
    return TMAP_OK;
}

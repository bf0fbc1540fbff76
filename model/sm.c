/*
 * sm.c -- the SM model ("sm90"): a kernel's time on SMs of Volta and later
 * (Hopper is the reference).  Each SM has P sub-partitions, each a warp
 * scheduler that issues to the warps assigned to it and hides one warp's
 * latency behind the others' issue, R resident thread blocks, and a share
 * of the L2's bandwidth.  docs/model.md states it:
 *
 *   per warp w      I_w = sum_b v_wb issue_b + constant replays
 *                   (v_wb: the warp's executions of b, c_wb or more when its
 *                   lanes run b at visits of their own: tmap_sm_visits,
 *                   visits.c; c below stands for v)
 *                   L_w = sum_b v_wb latency_b + wavefronts + walks: a
 *                   gathered access whose a/c lanes touch as many lines
 *                   waits a cycle for each line after the first, a
 *                   scattered walk (data, s_w) for its busiest bank's
 *                   lanes after the first: c ((a/c - 1) gather_n +
 *                   (E[busiest bank of a/c lanes] - 1) data_n s_w)
 *                   (walks: c max(0, walk_b (1 - (1 - q_b)^(a/c)) -
 *                   walk_base_b), the warp waiting for the slowest of its
 *                   a/c lanes walking segments of their own: tmap_sm_blocks)
 *                   S_w = sum_b sectors of b's accesses (below)
 *   per block k     warp j of k goes to sub-partition (j + r_k) mod P,
 *                   r_k its resident slot on the SM (the same warp of
 *                   co-resident blocks on different schedulers: measured,
 *                   benchmarks/results/subpartition.txt);
 *                   I_ks = sum of its warps' I_w on sub-partition s,
 *                   X_k = max of its warps' stalls L_w - I_w (the
 *                   critical warp waits this long beyond its own issue),
 *                   M_k = sum_w (32 S_w / bw + G_w / g): shared sectors at
 *                   the L2's bandwidth bw, a lane's own at its rate of
 *                   gathered sectors g (32 / bw per sector without one),
 *                   O_k = M_k at one SM's own rates (bw1, g1: measured
 *                   with no other SM drawing on the L2),
 *                   d_k = max(R max_s I_ks + X_k + R O_k, R M_k) among R
 *                   residents
 *   placement       list scheduling of d_k over nsms x R slots in launch
 *                   order, the first wave spread over the SMs
 *   per SM m        T_m = max(max_s sum of its blocks' I_ks
 *                             + max over its slots of the sum of their
 *                               X_k + O_k,
 *                             M = sum over all blocks of M_k / nsms,
 *                             O_m = sum over its blocks of O_k)
 *   local rows      after the placement, each warp's local rows (32 x its
 *                   longest lane's bytes) and the segments its lanes walk
 *                   again every outer iteration (rewalk_lines) live on its
 *                   SM for its chain's
 *                   share of its block's placed time; its local loads miss
 *                   the L1 in the mean over its life of max(0, 1 - C/F(t)),
 *                   F(t) the live rows, C = sm:l1.local_bytes, each miss at
 *                   the L2 latency on its chain (local_misses)
 *   kernel          T = max over m of T_m
 * (M: the L2 serves all SMs from one pool; an SM draws more than its
 * share while others idle, up to its own rate: O_m.  A block's own sectors
 * add to its chain: a loop's next loads wait for this iteration's sectors,
 * which queue behind the other warps' at the SM's rate, measured additive
 * within 12% in benchmarks/results/tail-block.txt.)
 * (The other warps issue around the critical warp's stalls; its stalls add
 * to the total issue: T_m >= max(issue, longest chain), closer to measured
 * times where few warps share a scheduler.)
 *
 * Sectors of block b for warp w (c = c_wb, a = a_wb executions by its
 * lanes, n lanes, u = min(a, n) lanes that ran it, s_w = how scattered its
 * lanes' original ids are: (d_w - n/8) / (n - n/8), 0 in the original order,
 * 1 when no two come from one group of 8):
 *   thread-affine   max(affine_n c, a affine_bytes / 32) under the layout
 *                   transform; plus affine_n u s_w under redirection
 *   data-dependent  a data_bytes / 32 + data_n u s_w: each lane walks its
 *                   own contiguous segment (a CSR row, a sequence); in the
 *                   original order neighbouring segments lie side by side,
 *                   so lanes share sectors; scattered, each lane's segment
 *                   starts a sector of its own
 *   gathered        gather_n a: a sector per access and lane
 *   uniform         none (one line for the warp, an L1 hit)
 * Constant reads at varying addresses issue once per distinct address;
 * lanes that run the same blocks are taken to read the same entries:
 *   replays         const_replay const_n (a - c) (1 - h_w) issue cycles,
 *                   h_w = the warp's active lanes per executed block over n
 * With keys (tmap_warp_counts_const: ca, the distinct addresses, and
 * const_ws, the SM's rows) the replays wait instead, and the SM's constant
 * cache serves one address at a time:
 *   replays         const_replay const_n max(0, ca - c) on the warp's chain
 *   per block k     C_k = sum_w const_n (v + max(0, ca - c)) (idc_cycles +
 *                   idc_fill_cycles m_k^2), m_k = max(0, 1 - const_cache_bytes
 *                   / const_ws_k); d_k >= R C_k
 *   per SM m        T_m >= sum over its blocks of C_k
 */
#include "threadmap/model.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

/* Warps of n threads in blocks of S: 32-slot warps from each block's start. */
static size_t warps_of(size_t n, size_t S)
{
    return n / S * ((S + 31) / 32) + (n % S + 31) / 32;
}

static tmap_status sm_check(const tmap_sm_params *p, tmap_error *err)
{
    if (!p)
        return tmap_fail(err, TMAP_ERR_INVALID, "SM model: no parameters");
    if (!p->nsms || !p->blocks_per_sm || !p->subpartitions || !p->warps_per_block)
        return tmap_fail(err, TMAP_ERR_INVALID, "SM model: SMs (%zu), resident blocks (%zu), "
                         "sub-partitions (%zu) and warps per block (%zu) must all be positive",
                         p->nsms, p->blocks_per_sm, p->subpartitions, p->warps_per_block);
    if (p->subpartitions > TMAP_SM_MAX_SUBPARTITIONS)
        return tmap_fail(err, TMAP_ERR_INVALID, "SM model: %zu sub-partitions (at most %d)",
                         p->subpartitions, TMAP_SM_MAX_SUBPARTITIONS);
    const double rate[] = {p->bytes_per_cycle, p->gather_sectors_per_cycle,
                           p->one_sm_bytes_per_cycle, p->one_sm_gather_sectors_per_cycle,
                           p->l1_local_bytes, p->local_miss_cycles, p->const_cache_bytes,
                           p->idc_cycles, p->idc_fill_cycles};
    for (size_t i = 0; i < sizeof rate / sizeof rate[0]; i++)
        if (!(rate[i] >= 0) || isinf(rate[i]))
            return tmap_fail(err, TMAP_ERR_INVALID, "SM model: bandwidth %g bytes and %g "
                             "gathered sectors per cycle, one SM's %g and %g, L1 for local "
                             "rows %g bytes, a local miss %g cycles (each must be finite and "
                             ">= 0), the constant cache %g bytes at %g + %g m^2 cycles an "
                             "address", p->bytes_per_cycle, p->gather_sectors_per_cycle,
                             p->one_sm_bytes_per_cycle, p->one_sm_gather_sectors_per_cycle,
                             p->l1_local_bytes, p->local_miss_cycles, p->const_cache_bytes,
                             p->idc_cycles, p->idc_fill_cycles);
    return TMAP_OK;
}

/* The visit parents form a forest: no block is its own ancestor. */
static tmap_status parents_check(const tmap_sm_block *blk, size_t n, tmap_error *err)
{
    unsigned char *state = calloc(n + 1, 1); /* 1: on the current path, 2: done */
    if (!state)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu blocks", n);
    tmap_status st = TMAP_OK;
    for (size_t b = 0; !st && b < n; b++) {
        size_t x = b;
        while (!state[x] && blk[x].visit_parent)
            state[x] = 1, x = blk[x].visit_parent - 1;
        if (state[x] == 1)
            st = tmap_fail(err, TMAP_ERR_INVALID, "SM model: block %zu is its own visit "
                           "ancestor", x);
        for (x = b; state[x] == 1; x = blk[x].visit_parent - 1)
            state[x] = 2;
        state[x] = 2;
    }
    free(state);
    return st;
}

static tmap_status blocks_check(const tmap_sm_block *blk, size_t n, tmap_error *err)
{
    for (size_t b = 0; b < n; b++) {
        const double v[] = {blk[b].issue, blk[b].latency, blk[b].affine_n,
                            blk[b].affine_bytes, blk[b].data_n, blk[b].data_bytes,
                            blk[b].gather_n, blk[b].uniform_n, blk[b].const_n,
                            blk[b].const_keyed_n, blk[b].walk, blk[b].walk_base, blk[b].walk_q,
                            blk[b].local_loads, blk[b].local_fill, blk[b].local_fixed,
                            blk[b].rewalk_bytes};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (!(v[i] >= 0) || v[i] > TMAP_LAT_MAX)
                return tmap_fail(err, TMAP_ERR_INVALID, "SM model: block %zu: a cost of %g "
                                 "(each must be in [0, %g])", b, v[i], TMAP_LAT_MAX);
        if (blk[b].const_keyed_n > blk[b].const_n)
            return tmap_fail(err, TMAP_ERR_INVALID, "SM model: block %zu: %g keyed constant "
                             "reads of %g", b, blk[b].const_keyed_n, blk[b].const_n);
        if (blk[b].walk_q > 1)
            return tmap_fail(err, TMAP_ERR_INVALID, "SM model: block %zu: a walked load starts "
                             "a sector in a share %g of its executions (at most 1)", b,
                             blk[b].walk_q);
        if (blk[b].visit_parent > n || blk[b].visit_parent == b + 1)
            return tmap_fail(err, TMAP_ERR_INVALID, "SM model: block %zu: visit parent %u "
                             "(1 + a block of %zu other than itself, or 0)", b,
                             blk[b].visit_parent, n);
        if (blk[b].loop_id > n || blk[b].rewalk_loop > n)
            return tmap_fail(err, TMAP_ERR_INVALID, "SM model: block %zu: loop ids %u, %u "
                             "(1 + a block of %zu, or 0)", b, blk[b].loop_id, blk[b].rewalk_loop,
                             n);
    }
    return parents_check(blk, n, err);
}

/* Cycles between two L1 wavefronts of one request. */
enum { WAVEFRONT_CYCLES = 1 };

/* One warp's issue, latency and sector totals: sectors its lanes share
 * (coalesced, or walked in turn), and sectors of one lane each (gathered,
 * scattered segment starts). */
typedef struct warp_cost {
    double issue, latency, sectors, lane_sectors;
    double local_bytes, local_loads; /* its rows' bytes in L1, its local requests */
    double constant; /* distinct addresses of its __constant__ reads (with ca) */
} warp_cost;

size_t tmap_warp_counts_slots(const tmap_warp_counts *w, size_t k, size_t *first)
{
    size_t wpb = (w->block_size + 31) / 32, end = k / wpb * w->block_size + w->block_size;
    *first = k / wpb * w->block_size + k % wpb * 32;
    end = end < w->nthreads ? end : w->nthreads;
    return *first < end ? (end - *first < 32 ? end - *first : 32) : 0;
}

size_t tmap_warp_counts_lanes(const tmap_warp_counts *w, const uint32_t *group,
                              const uint32_t *perm, size_t k, uint32_t thread[32],
                              uint32_t lane_of[32], size_t *ndistinct)
{
    size_t first, n = tmap_warp_counts_slots(w, k, &first), nd = 0;
    uint32_t seen[32];
    for (size_t i = 0; i < n; i++) {
        thread[i] = perm ? perm[first + i] : (uint32_t)(first + i);
        uint32_t x = group ? group[thread[i]] : (uint32_t)i, j = 0;
        while (j < nd && seen[j] != x)
            j++;
        if (j == nd)
            seen[nd++] = x;
        lane_of[i] = j;
    }
    *ndistinct = nd;
    return n;
}

/* Threads in warp k of w. */
static double warp_lanes(const tmap_warp_counts *w, size_t k)
{
    size_t first;
    return (double)tmap_warp_counts_slots(w, k, &first);
}

/* The expected largest number of n lanes on one of 32 banks, each lane's
 * bank uniform and independent (n = 0..32; exact: P(max <= k) = n! / 32^n
 * [x^n] (sum_{i<=k} x^i / i!)^32): the data-stage wavefronts of one request
 * whose lanes read words at unrelated offsets (ncu, nw_embl: 2.2-2.8 a load
 * at 12-15 sectors a request; benchmarks/results/nw-deal.txt). */
static const double BUSIEST_BANK[33] = {
    0.000000, 1.000000, 1.031250, 1.092773, 1.180786, 1.289287, 1.410974, 1.538326,
    1.664622, 1.784733, 1.895541, 1.995958, 2.086602, 2.169258, 2.246266, 2.319981,
    2.392383, 2.464876, 2.538239, 2.612713, 2.688134, 2.764091, 2.840058, 2.915507,
    2.989973, 3.063103, 3.134672, 3.204585, 3.272864, 3.339629, 3.405072, 3.469426,
    3.532941};

/* BUSIEST_BANK at n lanes (a/c, not a whole number: linear between). */
static double busiest_bank(double n)
{
    if (!(n > 0))
        return 0;
    if (n >= 32)
        return BUSIEST_BANK[32];
    size_t lo = (size_t)n;
    return BUSIEST_BANK[lo] + (BUSIEST_BANK[lo + 1] - BUSIEST_BANK[lo]) * (n - (double)lo);
}

/* Bytes of the L1 that warp k's lanes re-walk in block b (a walked load
 * in a loop inside an outer loop): each of its a/c lanes walks
 * c_wb x rewalk_bytes / (the outer loop's executions: the most of its
 * blocks' c_w, its header's) bytes an outer iteration, a segment at an
 * unrelated offset, which spans 1 + (bytes - 1) / 128 lines of 128 bytes
 * on average over its byte offsets in a line. */
static double rewalk_lines(const tmap_warp_counts *w, const tmap_sm_block *blk, size_t k,
                           size_t b)
{
    size_t nb = w->nblocks;
    const uint32_t *c = &w->c[k * nb], *a = &w->a[k * nb];
    double outer = 0;
    for (size_t h = 0; h < nb; h++)
        if (blk[h].loop_id == blk[b].rewalk_loop)
            outer = fmax(outer, c[h]);
    if (!(outer > 0) || !c[b])
        return 0;
    double segment = c[b] * blk[b].rewalk_bytes / outer;
    return (double)a[b] / c[b] * (1 + fmax(0, segment - 1) / 128) * 128;
}

static warp_cost warp_of(const tmap_warp_counts *w, const tmap_sm_block *blk,
                         const tmap_sm_params *p, size_t k, double *v, uint32_t *stack)
{
    size_t nb = w->nblocks;
    double lanes = warp_lanes(w, k);
    const uint32_t *c = &w->c[k * nb], *a = &w->a[k * nb];
    tmap_sm_visits(blk, nb, c, a, v, stack); /* the warp's executions: c, or more */
    double ran = 0, active = 0;
    for (size_t b = 0; b < nb; b++)
        ran += lanes * v[b], active += a[b];
    double h = ran > 0 ? active / ran : 1, g0 = ceil(lanes / 8);
    double scattered = lanes > g0 ? fmax(0, (w->d[k] - g0) / (lanes - g0)) : 0;
    warp_cost r = {0, 0, 0, 0, 0, 0, 0};
    for (size_t b = 0; b < nb; b++) {
        double cb = v[b], ab = a[b], u = fmin(ab, lanes);
        if (!cb)
            continue;
        const tmap_sm_block *x = &blk[b];
        if (w->ca) { /* the further addresses wait; the SM's cache serves each */
            double further = fmax(0, w->ca[k * nb + b] - c[b]);
            r.issue += cb * x->issue;
            r.latency += p->const_replay * x->const_n * further;
            r.constant += x->const_n * (cb + further);
        } else {
            r.issue += cb * x->issue + p->const_replay * x->const_n * (ab - cb) * (1 - h);
        }
        /* an access whose lanes touch k lines is k L1 wavefronts, processed
         * one a cycle (Nsight Compute's profiling guide): the last is k - 1
         * cycles behind the first; a/c lanes a request.  Gathered lanes miss
         * the L1 (a wavefront a line); scattered walks hit it and wait for
         * their busiest bank */
        double extra = ab / cb - 1, bank = busiest_bank(ab / cb) - 1;
        r.latency += cb * x->latency + WAVEFRONT_CYCLES * cb *
                                           (extra * x->gather_n + bank * x->data_n * scattered);
        /* the warp waits for its slowest lane: the walked load waits for a
         * new sector when any of its ab / cb lanes starts one */
        if (x->walk > 0)
            r.latency += cb * fmax(0, x->walk * (1 - pow(1 - x->walk_q, ab / cb)) - x->walk_base);
        r.sectors += fmax(x->affine_n * cb, ab * x->affine_bytes / 32) + ab * x->data_bytes / 32;
        r.lane_sectors += (p->redirect ? x->affine_n * u * scattered : 0) +
                          x->data_n * u * scattered + x->gather_n * ab;
        /* local words interleave by lane: word i of the warp's lanes is one
         * line, so its rows take 32 x its longest lane's bytes */
        r.local_bytes += 32 * (cb * x->local_fill + x->local_fixed);
        r.local_loads += cb * x->local_loads;
        if (x->rewalk_bytes > 0)
            r.local_bytes += rewalk_lines(w, blk, k, b);
    }
    return r;
}

/* The L2's cycles for w's sectors: shared ones at bytes_per_cycle, a
 * lane's own at `gather` sectors per cycle (at bytes_per_cycle when 0);
 * 0 when bytes_per_cycle is. */
static double memory_cycles(const warp_cost *w, double bytes_per_cycle, double gather)
{
    if (!(bytes_per_cycle > 0))
        return 0;
    double lane = gather > 0 ? 1 / gather : 32 / bytes_per_cycle;
    return 32 * w->sectors / bytes_per_cycle + w->lane_sectors * lane;
}

/* Per thread block: issue per sub-partition, longest chain, memory time
 * at the SM's share of the L2 (M_k) and at one SM's own rates (O_k). */
typedef struct block_cost {
    double issue[TMAP_SM_MAX_SUBPARTITIONS], latency, memory, own;
    double constant; /* C_k: the constant cache's cycles */
} block_cost;

/* The constant cache's cycles per distinct address while the SM's rows
 * take ws bytes: idc_cycles, plus idc_fill_cycles m^2 beyond its capacity
 * (m = 1 - capacity / ws: measured, benchmarks/results/const-cache-tput.txt). */
static double idc_per_address(const tmap_sm_params *p, double ws)
{
    double m = p->const_cache_bytes > 0 && ws > p->const_cache_bytes
                   ? 1 - p->const_cache_bytes / ws : 0;
    return p->idc_cycles + p->idc_fill_cycles * m * m;
}

static void block_costs(const tmap_warp_counts *w, const warp_cost *wc, size_t nwarps,
                        const tmap_sm_params *p, block_cost *out, size_t nblocks)
{
    for (size_t k = 0; k < nblocks; k++) {
        block_cost *o = &out[k];
        memset(o, 0, sizeof *o);
        double idc = w->const_ws ? idc_per_address(p, w->const_ws[k]) : 0;
        for (size_t j = 0; j < p->warps_per_block && k * p->warps_per_block + j < nwarps; j++) {
            const warp_cost *x = &wc[k * p->warps_per_block + j];
            o->issue[j % p->subpartitions] += x->issue;
            o->latency = fmax(o->latency, fmax(0, x->latency - x->issue));
            o->memory += memory_cycles(x, p->bytes_per_cycle, p->gather_sectors_per_cycle);
            o->own += memory_cycles(x, p->one_sm_bytes_per_cycle,
                                    p->one_sm_gather_sectors_per_cycle);
            o->constant += x->constant * idc;
        }
    }
}

/* ------------------------------------------- local rows in the L1 */

/* A warp's rows enter (its start) or leave (its end) an SM's L1 at t. */
typedef struct local_event {
    size_t sm, warp;
    int end;
    double t, bytes;
} local_event;

static int event_cmp(const void *x, const void *y)
{
    const local_event *a = x, *b = y;
    if (a->sm != b->sm)
        return a->sm < b->sm ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->warp != b->warp)
        return a->warp < b->warp ? -1 : 1;
    return a->end - b->end;
}

/* The share of local requests that miss the L1 while F bytes of rows are
 * live against C bytes: none while they fit, then the part beyond it. */
static double local_miss_share(double F, double C)
{
    return F > C ? 1 - C / F : 0;
}

/* Local rows in the L1 (docs/model.md, "Local memory in L1"): each warp
 * lives on its SM from its block's start for its chain's share of the
 * block's placed time; while it runs its rows (32 x its longest lane's
 * bytes) are live; each of its local requests waits local_miss_cycles in
 * the share of them that misses, the time average of local_miss_share over
 * its life.  Its chain grows by that, and its block's stalls X_k with it. */
static tmap_status local_misses(const warp_cost *wc, size_t nwarps, const tmap_sm_params *p,
                                const tmap_sched_slot *where, block_cost *bc, tmap_error *err)
{
    size_t wpb = p->warps_per_block, n = 0;
    if (!(p->l1_local_bytes > 0) || !(p->local_miss_cycles > 0))
        return TMAP_OK;
    for (size_t i = 0; i < nwarps; i++)
        n += wc[i].local_loads > 0;
    if (!n)
        return TMAP_OK;
    local_event *ev = malloc((2 * nwarps + 1) * sizeof *ev);
    double *g = malloc((2 * nwarps + 1) * sizeof *g); /* g[2 i + end] */
    double *t = malloc((2 * nwarps + 1) * sizeof *t);
    if (!ev || !g || !t) {
        free(ev), free(g), free(t);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the local rows of %zu warps",
                         nwarps);
    }
    for (size_t k = 0; k * wpb < nwarps; k++) {
        double longest = 0, span = where[k].finish - where[k].start;
        for (size_t j = 0; j < wpb && k * wpb + j < nwarps; j++)
            longest = fmax(longest, wc[k * wpb + j].latency);
        for (size_t j = 0; j < wpb && k * wpb + j < nwarps; j++) {
            size_t i = k * wpb + j; /* where[k].slot is the SM (see tmap_sm_time) */
            double end = where[k].start + (longest > 0 ? span * wc[i].latency / longest : 0);
            ev[2 * i] = (local_event){where[k].slot, i, 0, where[k].start, wc[i].local_bytes};
            ev[2 * i + 1] = (local_event){where[k].slot, i, 1, end, wc[i].local_bytes};
        }
    }
    qsort(ev, 2 * nwarps, sizeof *ev, event_cmp);
    double live = 0, sum = 0;
    for (size_t e = 0; e < 2 * nwarps; e++) {
        if (e > 0 && ev[e].sm != ev[e - 1].sm)
            live = 0, sum = 0;
        else if (e > 0)
            sum += (ev[e].t - ev[e - 1].t) * local_miss_share(live, p->l1_local_bytes);
        live = fmax(0, live + (ev[e].end ? -ev[e].bytes : ev[e].bytes));
        g[2 * ev[e].warp + ev[e].end] = sum, t[2 * ev[e].warp + ev[e].end] = ev[e].t;
    }
    for (size_t i = 0; i < nwarps; i++) {
        double life = t[2 * i + 1] - t[2 * i];
        if (!(wc[i].local_loads > 0) || !(life > 0))
            continue;
        double share = (g[2 * i + 1] - g[2 * i]) / life;
        assert(share >= -1e-9 && share <= 1 + 1e-9);
        double chain = wc[i].latency + share * p->local_miss_cycles * wc[i].local_loads;
        bc[i / wpb].latency = fmax(bc[i / wpb].latency, chain - wc[i].issue);
    }
    free(ev), free(g), free(t);
    return TMAP_OK;
}

static double max_of(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, v[i]);
    return m;
}

/* T from the placement: per SM the sub-partitions' issue sums and each
 * slot's chain of stalls and own sectors; the memory term of all SMs' sectors at the
 * L2's bandwidth of nsms x bytes_per_cycle, or of the SM's own sectors at
 * its own rate if larger; its constant cache's cycles.
 * sum[m * SUMS(P, R) + ...]: P issue sums, R chains, M, O_m, C_m. */
#define SUMS(P, R) ((P) + (R) + 3)

static void makespan(const block_cost *bc, size_t nblocks, const tmap_sm_params *p,
                     const tmap_sched_slot *where, double *sum, tmap_sm_time_parts *out)
{
    size_t P = p->subpartitions, R = p->blocks_per_sm, stride = SUMS(P, R);
    for (size_t k = 0; k < nblocks; k++) {
        /* tmap_sched_dynamic ran with SMs and slots swapped (see below). */
        double *m = &sum[where[k].slot * stride];
        for (size_t s = 0; s < P; s++) /* warp j on (j + its slot) mod P */
            m[(s + where[k].sm) % P] += bc[k].issue[s];
        m[P + where[k].sm] += bc[k].latency + bc[k].own;
        m[P + R] += bc[k].memory;
        m[P + R + 1] += bc[k].own;
        m[P + R + 2] += bc[k].constant;
    }
    memset(out, 0, sizeof *out);
    double all = 0;
    for (size_t m = 0; m < p->nsms; m++)
        all += sum[m * stride + P + R];
    for (size_t m = 0; m < p->nsms; m++) {
        const double *x = &sum[m * stride];
        double issue = max_of(x, P), lat = max_of(x + P, R);
        double mem = fmax(all / p->nsms, x[P + R + 1]);
        out->cycles = fmax(out->cycles, fmax(fmax(issue + lat, mem), x[P + R + 2]));
        out->constant = fmax(out->constant, x[P + R + 2]);
        out->issue = fmax(out->issue, issue);
        out->latency = fmax(out->latency, lat);
        out->memory = fmax(out->memory, mem);
    }
}

/* The placement is one list schedule of the blocks' durations d_k, and a
 * schedule is chaotic: a duration moved by 0.5% moves later blocks to other
 * SMs, and spmv_csr's original order by up to 9% (docs/model.md, "One
 * schedule is one draw").  T is the mean over SM_SCHEDULES schedules, each
 * of the durations times 1 + SM_JITTER u, u in [-1, 1) a hash of (k, the
 * schedule): the same for every grouping; the costs placed are the
 * blocks' own. */
#define SM_SCHEDULES 16
#define SM_JITTER 0.01

static double sm_jitter(size_t k, size_t j)
{
    uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ULL + (uint64_t)(j + 1) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 31)) * 0x94d049bb133111ebULL;
    h ^= h >> 29;
    return 1 + SM_JITTER * ((double)(h >> 11) / 4503599627370496.0 - 1);
}

/* One schedule j of durations d: its placement, local misses and T into t
 * (dj, bj, sum: scratch of nblocks, nblocks and the makespan's sums). */
static tmap_status sm_schedule(const warp_cost *wc, size_t nwarps, const tmap_sm_params *p,
                               const block_cost *bc, const double *d, size_t nblocks, size_t j,
                               double *dj, block_cost *bj, tmap_sched_slot *where, double *sum,
                               tmap_sm_time_parts *t, tmap_error *err)
{
    double unused;
    for (size_t k = 0; k < nblocks; k++)
        dj[k] = d[k] * sm_jitter(k, j);
    memcpy(bj, bc, nblocks * sizeof *bj);
    memset(sum, 0, p->nsms * SUMS(p->subpartitions, p->blocks_per_sm) * sizeof *sum);
    /* Ties go to the lowest (SM, slot) pair in tmap_sched_dynamic; with the
     * two swapped, the first wave goes round the SMs as the hardware's
     * block distributor sends it: where[k].sm is the slot, .slot the SM. */
    tmap_status st = tmap_sched_dynamic(dj, nblocks, p->blocks_per_sm, p->nsms, &unused, where,
                                        err);
    if (!st)
        st = local_misses(wc, nwarps, p, where, bj, err);
    if (!st)
        makespan(bj, nblocks, p, where, sum, t);
    return st;
}

tmap_status tmap_sm_time(const tmap_warp_counts *w, const tmap_sm_block *blk,
                         const tmap_sm_params *p, tmap_sm_time_parts *cycles, tmap_error *err)
{
    tmap_status st = sm_check(p, err);
    if (st)
        return st;
    if (!w || !cycles || (w->nwarps && (!w->c || !w->a || !w->d || !blk)))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_sm_time: an argument is NULL");
    if (!w->ca != !w->const_ws)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_sm_time: the constant counts need both "
                         "ca and const_ws");
    if (!w->block_size || (w->block_size + 31) / 32 != p->warps_per_block ||
        w->nwarps != warps_of(w->nthreads, w->block_size))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_sm_time: %zu warps for %zu threads in "
                         "blocks of %zu, %zu warps each", w->nwarps, w->nthreads,
                         w->block_size, p->warps_per_block);
    if ((st = blocks_check(blk, w->nwarps ? w->nblocks : 0, err)))
        return st;
    size_t nblocks = (w->nwarps + p->warps_per_block - 1) / p->warps_per_block;
    size_t R = p->blocks_per_sm, P = p->subpartitions;
    warp_cost *wc = malloc((w->nwarps + 1) * sizeof *wc);
    block_cost *bc = malloc((nblocks + 1) * sizeof *bc);
    double *d = malloc((nblocks + 1) * sizeof *d), *dj = malloc((nblocks + 1) * sizeof *dj);
    block_cost *bj = malloc((nblocks + 1) * sizeof *bj);
    tmap_sched_slot *where = malloc((nblocks + 1) * sizeof *where);
    double *sum = calloc(p->nsms * SUMS(P, R), sizeof *sum);
    double *visits = malloc((w->nblocks + 1) * sizeof *visits);
    uint32_t *stack = malloc((w->nblocks + 1) * sizeof *stack);
    if (!wc || !bc || !d || !dj || !bj || !where || !sum || !visits || !stack)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu thread blocks", nblocks);
    for (size_t k = 0; !st && k < w->nwarps; k++)
        wc[k] = warp_of(w, blk, p, k, visits, stack);
    if (!st)
        block_costs(w, wc, w->nwarps, p, bc, nblocks);
    for (size_t k = 0; !st && k < nblocks; k++)
        d[k] = fmax(fmax(bc[k].latency + R * (max_of(bc[k].issue, P) + bc[k].own),
                         R * bc[k].memory), R * bc[k].constant);
    memset(cycles, 0, sizeof *cycles);
    for (size_t j = 0; !st && j < SM_SCHEDULES; j++) {
        tmap_sm_time_parts one = {0};
        st = sm_schedule(wc, w->nwarps, p, bc, d, nblocks, j, dj, bj, where, sum, &one, err);
        cycles->cycles += one.cycles / SM_SCHEDULES, cycles->issue += one.issue / SM_SCHEDULES;
        cycles->latency += one.latency / SM_SCHEDULES;
        cycles->memory += one.memory / SM_SCHEDULES;
        cycles->constant += one.constant / SM_SCHEDULES;
    }
    free(wc), free(bc), free(d), free(dj), free(bj), free(where), free(sum), free(visits),
        free(stack);
    return st;
}

/* ------------------------------------------------------------ the counts */

void tmap_warp_counts_free(tmap_warp_counts *w)
{
    if (!w)
        return;
    free(w->c), free(w->a), free(w->d), free(w->ca), free(w->const_ws);
    memset(w, 0, sizeof *w);
}

static uint32_t distinct_groups(const uint32_t *perm, size_t first, size_t end)
{
    uint32_t g[32], n = 0;
    for (size_t i = first; i < end; i++) {
        uint32_t x = (uint32_t)((perm ? perm[i] : i) / 8), j = 0;
        while (j < n && g[j] != x)
            j++;
        if (j == n)
            g[n++] = x;
    }
    return n;
}

/* Adds slot i's thread to the counts of its warp w. */
static tmap_status add_thread(const tmap_bbv *bbv, const uint32_t *perm, size_t i, size_t w,
                              tmap_warp_counts *out, tmap_error *err)
{
    size_t nb = bbv->nblocks;
    const uint32_t *row = &bbv->counts[(size_t)(perm ? perm[i] : i) * nb];
    uint32_t *c = &out->c[w * nb], *a = &out->a[w * nb];
    for (size_t b = 0; b < nb; b++) {
        if (row[b] > c[b])
            c[b] = row[b];
        if (row[b] > UINT32_MAX - a[b])
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "warp %zu, block %zu: executions "
                             "summed over the warp exceed 2^32", w, b);
        a[b] += row[b];
    }
    return TMAP_OK;
}

tmap_status tmap_warp_counts_make(const tmap_bbv *bbv, const uint32_t *perm, size_t block_size,
                                  tmap_warp_counts *out, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, bbv, out);
    if (st)
        return st;
    memset(out, 0, sizeof *out);
    if (!block_size)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_warp_counts_make: block size 0");
    if (!bbv->counts && bbv->nthreads && bbv->nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_warp_counts_make: no counts");
    if (perm && (st = tmap_perm_check(perm, bbv->nthreads, "the grouping", err)))
        return st;
    size_t n = bbv->nthreads, nb = bbv->nblocks, nw = warps_of(n, block_size);
    size_t wpb = (block_size + 31) / 32;
    out->nthreads = n, out->block_size = block_size, out->nwarps = nw, out->nblocks = nb;
    out->c = calloc(nw * nb + 1, sizeof *out->c);
    out->a = calloc(nw * nb + 1, sizeof *out->a);
    out->d = calloc(nw + 1, sizeof *out->d);
    if (!out->c || !out->a || !out->d)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the counts of %zu warps", nw);
    for (size_t i = 0; !st && i < n; i++)
        st = add_thread(bbv, perm, i, i / block_size * wpb + i % block_size / 32, out, err);
    for (size_t k = 0; !st && k < nw; k++) {
        size_t first, n = tmap_warp_counts_slots(out, k, &first);
        out->d[k] = distinct_groups(perm, first, first + n);
    }
    if (st)
        tmap_warp_counts_free(out);
    return st;
}

/* ---------------------------------------------------- the blocks' costs */

/* The issue cycles of block b: its instruction count, or the busiest class
 * (the sum of the table's issue intervals of its instructions there).  A
 * count of 0 issues nothing: with SASS counts, ptxas ran the block's code
 * in a neighbour's SASS block (if-converted, predicated), which counts it. */
static tmap_status block_issue(const tmap_lat_table *t, const tmap_cfg_block *blk, double count,
                               double *per_class, size_t nclasses, double *issue,
                               tmap_error *err)
{
    memset(per_class, 0, nclasses * sizeof *per_class);
    double busiest = 0;
    for (uint32_t i = 0; i < blk->ninstr; i++) {
        tmap_lat_lookup how;
        tmap_status st = tmap_lat_lookup_opcode(t, blk->opcodes[i], &how, err);
        if (st)
            return st;
        const char *cls = tmap_lat_class_of(blk->opcodes[i]);
        size_t c = 0;
        while (c + 1 < nclasses && strcmp(tmap_lat_class_name(c), cls))
            c++;
        per_class[c] += how.issue > 0 ? how.issue : 1;
        busiest = fmax(busiest, per_class[c]);
    }
    *issue = count > 0 ? fmax(count, busiest) : 0;
    return TMAP_OK;
}

static void add_access(tmap_sm_block *b, const tmap_access *a)
{
    if (a->space == TMAP_SPACE_CONST) {
        b->const_n += a->cls != TMAP_ACCESS_UNIFORM;
        b->const_keyed_n += a->cls == TMAP_ACCESS_DATA;
    } else if (a->space == TMAP_SPACE_LOCAL) {
        /* the thread's own words, interleaved: L1 traffic, left out of the
         * L2 term; whether they stay in the L1: local_costs, local_misses */
    } else if (a->cls == TMAP_ACCESS_AFFINE) {
        if (a->space != TMAP_SPACE_SHARED)
            b->affine_n += 1, b->affine_bytes += a->bytes;
    } else if (a->space == TMAP_SPACE_GLOBAL) {
        if (a->cls == TMAP_ACCESS_DATA)
            b->data_n += 1, b->data_bytes += a->bytes;
        else if (a->cls == TMAP_ACCESS_GATHER)
            b->gather_n += 1;
        else
            b->uniform_n += 1;
    }
}

static double entry_of(const tmap_lat_table *t, const char *key);

/* nests[h]: whether the outermost loop headed by h holds a loop (one of
 * its blocks at depth 2 or more); outer from tmap_cfg_loops. */
static void outer_nests(size_t n, const uint32_t *depth, const uint32_t *outer, uint8_t *nests)
{
    memset(nests, 0, n);
    for (size_t u = 0; u < n; u++)
        assert(!depth[u] == !outer[u] && (!outer[u] || depth[outer[u] - 1] == 1));
    for (size_t u = 0; u < n; u++)
        if (outer[u] && depth[u] >= 2)
            nests[outer[u] - 1] = 1;
}

/* loop_id and the re-walked loads: every block of a loop that holds a
 * loop and is held by none gets 1 + the loop's header; a walked load
 * (DATA, global) in a loop inside it, its bytes and that id. */
static void rewalk_costs(size_t n, const uint32_t *depth, const uint32_t *outer,
                         const uint8_t *nests, const tmap_access *acc, size_t nacc,
                         tmap_sm_block *out)
{
    for (size_t u = 0; u < n; u++)
        if (depth[u] == 1 && nests[outer[u] - 1])
            out[u].loop_id = outer[u];
    for (size_t i = 0; i < nacc; i++) {
        uint32_t u = acc[i].block;
        if (depth[u] >= 2 && nests[outer[u] - 1] && !acc[i].store &&
            acc[i].space == TMAP_SPACE_GLOBAL && acc[i].cls == TMAP_ACCESS_DATA)
            out[u].rewalk_bytes += acc[i].bytes, out[u].rewalk_loop = outer[u];
    }
}

/* Local memory per block: its loads; the bytes its stores at a fixed
 * address take (a spill slot, a lane's once); and, where the block lies in
 * a loop that holds no loop and is held by none, the bytes its stores at a
 * moving address fill per execution: one pass of such a loop stores at a
 * new address in each iteration (a row's fill), where a store in a nested
 * loop, or in a loop holding one, revisits the words of each outer
 * iteration. */
static tmap_status local_costs(const tmap_cfg *cfg, const uint32_t *depth,
                               const uint32_t *outer, const tmap_access *acc, size_t nacc,
                               tmap_sm_block *out, tmap_error *err)
{
    size_t n = cfg->nblocks;
    uint8_t *nests = malloc(n + 1);
    if (!nests)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu blocks", n);
    outer_nests(n, depth, outer, nests);
    for (size_t i = 0; i < nacc; i++) {
        const tmap_access *a = &acc[i];
        tmap_sm_block *o = &out[a->block];
        if (a->space != TMAP_SPACE_LOCAL)
            continue;
        if (!a->store)
            o->local_loads += 1;
        else if (!a->moves)
            o->local_fixed += a->bytes;
        else if (depth[a->block] == 1 && !nests[outer[a->block] - 1])
            o->local_fill += a->bytes;
    }
    rewalk_costs(n, depth, outer, nests, acc, nacc, out);
    free(nests);
    return TMAP_OK;
}

/* The chains (tmap_lat_chains_dataflow) with every walked load (a DATA
 * global load) starting a sector in a share bytes / 32 of its executions,
 * at l2_latency: bytes 0, all hit; 32, all start one; WALK_ASIS, as the
 * access says. */
enum { WALK_ASIS = 64 };

static tmap_status chains_at(const tmap_lat_table *t, const tmap_ptx_module *m,
                             const char *kernel, const tmap_access *acc, size_t nacc,
                             double l2_latency, uint32_t bytes, double **chain, tmap_error *err)
{
    tmap_access *a = malloc((nacc + 1) * sizeof *a);
    if (!a)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu accesses", nacc);
    for (size_t i = 0; i < nacc; i++) {
        a[i] = acc[i];
        if (a[i].cls == TMAP_ACCESS_DATA && a[i].space == TMAP_SPACE_GLOBAL && !a[i].store &&
            bytes != WALK_ASIS)
            a[i].bytes = bytes;
    }
    tmap_status st = tmap_lat_chains_dataflow(t, m, kernel, a, nacc, l2_latency, chain, err);
    free(a);
    return st;
}

/* A warp waits for its slowest lane (docs/model.md): per block, what its
 * chain grows by when every walked load starts a sector at the walk
 * latency (sm:dram.latency, else l2_latency) instead of hitting: the
 * growth between the chains of all hits and all sectors at l2_latency,
 * scaled to the walk latency over an L1 hit's (ld.global.u32); the part
 * of that the chain holds as the loads are (walk_base); their share of
 * executions that start one (walk_q).  None in a loop inside a loop: its
 * segment is walked again on every outer iteration, from the caches. */
static tmap_status walk_costs(const tmap_lat_table *t, const tmap_ptx_module *m,
                              const char *kernel, const tmap_cfg *cfg, const uint32_t *depth,
                              const tmap_access *acc, size_t nacc, double l2_latency,
                              tmap_sm_block *out, tmap_error *err)
{
    double walk_latency = entry_of(t, "sm:dram.latency"), l1 = entry_of(t, "ld.global.u32");
    if (!(walk_latency > 0))
        walk_latency = l2_latency;
    if (!(l1 >= 0) || !(l2_latency > l1) || !nacc)
        return TMAP_OK; /* no L2 latency: the chains do not see sectors */
    double *hit = NULL, *all = NULL, *asis = NULL, *n = calloc(cfg->nblocks + 1, sizeof *n);
    double scale = fmax(0, (walk_latency - l1) / (l2_latency - l1));
    tmap_status st = n ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu blocks",
                                             cfg->nblocks);
    if (!st)
        st = chains_at(t, m, kernel, acc, nacc, l2_latency, 0, &hit, err);
    if (!st)
        st = chains_at(t, m, kernel, acc, nacc, l2_latency, 32, &all, err);
    if (!st)
        st = chains_at(t, m, kernel, acc, nacc, l2_latency, WALK_ASIS, &asis, err);
    for (size_t i = 0; !st && i < nacc; i++)
        if (acc[i].cls == TMAP_ACCESS_DATA && acc[i].space == TMAP_SPACE_GLOBAL &&
            !acc[i].store && depth[acc[i].block] < 2)
            n[acc[i].block] += 1, out[acc[i].block].walk_q += fmin(1, acc[i].bytes / 32.0);
    for (size_t b = 0; !st && b < cfg->nblocks; b++) {
        out[b].walk_q = n[b] > 0 ? out[b].walk_q / n[b] : 0;
        out[b].walk = n[b] > 0 ? fmax(0, all[b] - hit[b]) * scale : 0;
        out[b].walk_base = n[b] > 0 ? fmax(0, asis[b] - hit[b]) : 0;
    }
    free(hit), free(all), free(asis), free(n);
    return st;
}

/* Each block's visit parent (tmap_sm_visit_parents): a warp runs a block
 * in a loop whenever any of its lanes does (docs/model.md). */
static tmap_status visit_parents(const tmap_cfg *cfg, tmap_sm_block *out, tmap_error *err)
{
    uint32_t *parent = malloc((cfg->nblocks + 1) * sizeof *parent);
    if (!parent)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu blocks", cfg->nblocks);
    tmap_status st = tmap_sm_visit_parents(cfg, parent, err);
    for (size_t b = 0; !st && b < cfg->nblocks; b++)
        out[b].visit_parent = parent[b];
    free(parent);
    return st;
}

tmap_status tmap_sm_blocks(const tmap_lat_table *t, const tmap_ptx_module *m, const char *kernel,
                           const tmap_cfg *cfg, const double *sass, double l2_latency,
                           tmap_sm_block **blk, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, t, m, kernel, cfg, blk);
    if (st)
        return st;
    tmap_access *acc = NULL;
    size_t nacc = 0, ncls = tmap_lat_num_classes();
    double *chain = NULL, *per_class = malloc((ncls + 1) * sizeof *per_class);
    tmap_sm_block *out = calloc(cfg->nblocks + 1, sizeof *out);
    uint32_t *depth = calloc(2 * cfg->nblocks + 1, sizeof *depth); /* the loops, once */
    uint32_t *outer = depth + cfg->nblocks;
    if (!per_class || !out || !depth)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu blocks", cfg->nblocks);
    if (!st) st = tmap_cfg_loops(cfg, depth, outer, err);
    if (!st) st = tmap_access_list(m, cfg, &acc, &nacc, err);
    if (!st) st = tmap_lat_chains(t, m, kernel, acc, nacc, l2_latency, &chain, err);
    for (size_t b = 0; !st && b < cfg->nblocks; b++) {
        out[b].latency = chain[b];
        st = block_issue(t, &cfg->blocks[b], sass ? sass[b] : cfg->blocks[b].ninstr, per_class,
                         ncls, &out[b].issue, err);
    }
    for (size_t i = 0; !st && i < nacc; i++) {
        assert(acc[i].block < cfg->nblocks); /* tmap_access_list maps into cfg */
        add_access(&out[acc[i].block], &acc[i]);
    }
    if (!st)
        st = walk_costs(t, m, kernel, cfg, depth, acc, nacc, l2_latency, out, err);
    if (!st)
        st = visit_parents(cfg, out, err);
    if (!st)
        st = local_costs(cfg, depth, outer, acc, nacc, out, err);
    free(acc), free(chain), free(per_class), free(depth);
    if (st)
        free(out);
    else
        *blk = out;
    return st;
}

/* ------------------------------------------------------------ the model */

static double entry_of(const tmap_lat_table *t, const char *key)
{
    for (size_t i = 0, n = tmap_lat_num_entries(t); i < n; i++) {
        const char *k, *src;
        double lat, issue;
        tmap_lat_entry(t, i, &k, &lat, &issue, &src);
        if (!strcmp(k, key))
            return lat;
    }
    return -1;
}

void tmap_sm_table_params(const tmap_lat_table *t, double *l2_latency, tmap_sm_params *p)
{
    double l2 = t ? entry_of(t, "sm:l2.latency") : -1; /* a random chase's */
    if (!(l2 > 0) && t)
        l2 = entry_of(t, "ld.global.cg.u64"); /* one word's: near or far in the L2 */
    double one = t ? entry_of(t, "sm:const.lanes1") : -1;
    double many = t ? entry_of(t, "sm:const.lanes16") : -1;
    double bw = t ? entry_of(t, "sm:l2.bytes_per_cycle") : -1;
    double gather = t ? entry_of(t, "sm:l2.gather_sectors_per_cycle") : -1;
    double bw1 = t ? entry_of(t, "sm:l2.one_sm.bytes_per_cycle") : -1;
    double gather1 = t ? entry_of(t, "sm:l2.one_sm.gather_sectors_per_cycle") : -1;
    *l2_latency = l2 > 0 ? l2 : 0;
    p->const_replay = one > 0 && many > one ? (many - one) / 15 : 0;
    p->bytes_per_cycle = bw > 0 ? bw : 0;
    p->gather_sectors_per_cycle = gather > 0 ? gather : 0;
    p->one_sm_bytes_per_cycle = bw1 > 0 ? bw1 : 0;
    p->one_sm_gather_sectors_per_cycle = gather1 > 0 ? gather1 : 0;
    double l1 = t ? entry_of(t, "sm:l1.local_bytes") : -1;
    p->l1_local_bytes = l1 > 0 && l2 > 0 ? l1 : 0;
    p->local_miss_cycles = l1 > 0 && l2 > 0 ? l2 : 0;
    double cc = t ? entry_of(t, "sm:const.cache_bytes") : -1;
    double idc = t ? entry_of(t, "sm:const.idc_cycles") : -1;
    double fill = t ? entry_of(t, "sm:const.idc_fill_cycles") : -1;
    p->const_cache_bytes = cc > 0 ? cc : 0;
    p->idc_cycles = idc > 0 ? idc : 0;
    p->idc_fill_cycles = fill > 0 && cc > 0 ? fill : 0;
}

void tmap_sm_model_free(tmap_sm_model *s)
{
    if (!s)
        return;
    free(s->blocks);
    free(s->group);
    memset(s, 0, sizeof *s);
}

tmap_status tmap_sm_model_features(tmap_sm_model *s, const double *features, size_t n, size_t p,
                                   tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, s);
    if (!st && n && (st = TMAP_NEED(err, features)))
        return st;
    if (st)
        return st;
    if (!p)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_sm_model_features: no features a thread");
    uint64_t *key = malloc((n + 1) * sizeof *key);
    uint32_t *group = malloc((n + 1) * sizeof *group);
    size_t ngroups = 0;
    if (!key || !group)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the groups of %zu threads", n);
    if (!st) {
        tmap_noise_keys(features, n, p, key);
        st = tmap_noise_groups(key, n, group, &ngroups, err);
    }
    free(key);
    if (st) {
        free(group);
        return st;
    }
    free(s->group);
    s->group = group, s->group_n = n, s->ngroups = ngroups;
    return TMAP_OK;
}

tmap_status tmap_sm_model_make(const tmap_lat_table *t, const tmap_ptx_module *m,
                               const char *kernel, const tmap_cfg *cfg, const double *sass,
                               size_t nsms, size_t blocks_per_sm, size_t block_size, int redirect,
                               tmap_sm_model *out, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, t, m, kernel, cfg, out);
    if (st)
        return st;
    memset(out, 0, sizeof *out);
    double l2;
    tmap_sm_params *p = &out->params;
    *p = (tmap_sm_params){nsms, blocks_per_sm, 4, (block_size + 31) / 32, 0, 0, redirect, 0, 0, 0, 0, 0, 0, 0, 0};
    tmap_sm_table_params(t, &l2, p);
    if ((st = sm_check(p, err)))
        return st;
    st = tmap_sm_blocks(t, m, kernel, cfg, sass, l2, &out->blocks, err);
    out->nblocks = st ? 0 : cfg->nblocks;
    out->block_size = block_size;
    out->issue_sass = sass != NULL;
    for (size_t b = 0; b < out->nblocks; b++)
        out->const_loads += (size_t)out->blocks[b].const_n;
    if (!st && out->const_loads)
        st = tmap_access_const_bytes(m, &out->const_bytes, err);
    if (st)
        tmap_sm_model_free(out);
    return st;
}

int tmap_sm_model_const_keyed(const tmap_sm_model *s)
{
    double n = 0, keyed = 0;
    for (size_t b = 0; s && b < s->nblocks; b++)
        n += s->blocks[b].const_n, keyed += s->blocks[b].const_keyed_n;
    return n > 0 && keyed == n;
}

/* The constant counts apply: a key per thread and the table's two costs. */
static int const_priced(const tmap_sm_model *s)
{
    return s->group && tmap_sm_model_const_keyed(s) &&
           (s->params.idc_cycles > 0 || s->params.idc_fill_cycles > 0);
}

int tmap_sm_model_const_blind(const tmap_sm_model *s)
{
    return s && s->const_loads && s->params.const_cache_bytes > 0 &&
           (double)s->const_bytes > s->params.const_cache_bytes && !const_priced(s);
}

tmap_status tmap_sm_model_time(const tmap_sm_model *s, const tmap_bbv *bbv, const uint32_t *perm,
                               tmap_sm_time_parts *cycles, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, s, bbv, cycles);
    if (st)
        return st;
    if (bbv->nblocks != s->nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID, "SM model: %zu blocks, the BBV has %zu",
                         s->nblocks, bbv->nblocks);
    if (s->group && s->group_n != bbv->nthreads)
        return tmap_fail(err, TMAP_ERR_INVALID, "SM model: the groups of %zu threads, the BBV "
                         "has %zu", s->group_n, bbv->nthreads);
    tmap_warp_counts w;
    st = tmap_warp_counts_make(bbv, perm, s->block_size, &w, err);
    if (!st && s->noise)
        st = tmap_noise_warp_counts(s->noise, bbv, s->group, perm, &w, err);
    if (!st && const_priced(s))
        st = tmap_warp_counts_const(&w, bbv, perm, s->group, s->ngroups, (double)s->const_bytes,
                                    s->params.nsms, s->params.blocks_per_sm, err);
    if (!st)
        st = tmap_sm_time(&w, s->blocks, &s->params, cycles, err);
    tmap_warp_counts_free(&w);
    return st;
}

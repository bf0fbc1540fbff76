/*
 * metrics.c -- the divergence metrics of Liang et al. section IV on a BBV
 * matrix: warp time (eq. 2-3), thread-block time (eq. 4), BBV-weighted
 * (eq. 5), BBV-weighted-scheduled (sched.c), the zero-divergence time (per
 * kernel), the divergent-warps percentage, the divergent-branch estimate and
 * SIMD efficiency (active threads per warp instruction).
 * docs/model.md states each formula and the choices made here.
 */
#include "threadmap/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

#define WARP 32

tmap_status tmap_perm_check(const uint32_t *perm, size_t n, const char *name,
                            tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, perm, name);
    if (absent)
        return absent;
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", name);
    for (size_t i = 0; i < n; i++) {
        if (perm[i] >= n || seen[perm[i]]) {
            tmap_status s = tmap_fail(err, TMAP_ERR_INVALID,
                                      "%s: entry %zu = %u is %s, so it is not a permutation of "
                                      "0..%zu",
                                      name, i, perm[i], perm[i] >= n ? "out of range" : "repeated",
                                      n ? n - 1 : 0);
            free(seen);
            return s;
        }
        seen[perm[i]] = 1;
    }
    free(seen);
    return TMAP_OK;
}

void tmap_metrics_free(tmap_metrics *m)
{
    if (!m)
        return;
    free(m->warp_cost);
    free(m->block_cost);
    free(m->ideal_warp_cost);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------- branch blocks from the CFG */

/* A block ending in a branch whose divergence can be estimated: direction 0
 * is "the rest" (successors whose counts are unknown, or leaving through a
 * predicated ret/exit), directions 1..nknown are successors whose only
 * predecessor is this block, so their counts are this edge's counts. */
typedef struct br_block {
    uint32_t b;
    uint32_t nknown;
    uint32_t *known; /* successor blocks */
} br_block;

typedef struct br_info {
    size_t n;
    br_block *v;
    size_t unestimated; /* branch blocks with no known successor */
    uint32_t *known_pool;
} br_info;

static void br_free(br_info *bi)
{
    free(bi->v);
    free(bi->known_pool);
    memset(bi, 0, sizeof *bi);
}

/* Distinct successors of block b into out (returns how many). */
static uint32_t br_distinct(const tmap_cfg_block *blk, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < blk->nsucc; i++) {
        uint32_t j = 0;
        while (j < n && out[j] != blk->succ[i])
            j++;
        if (j == n)
            out[n++] = blk->succ[i];
    }
    return n;
}

static tmap_status br_validate(const tmap_cfg *cfg, size_t nblocks, tmap_error *err)
{
    if (cfg->nblocks != nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "the CFG has %zu blocks but the BBV matrix has %zu columns",
                         cfg->nblocks, nblocks);
    for (size_t b = 0; b < nblocks; b++)
        for (uint32_t i = 0; i < cfg->blocks[b].nsucc; i++)
            if (cfg->blocks[b].succ[i] >= nblocks)
                return tmap_fail(err, TMAP_ERR_INVALID, "CFG block %zu: successor %u out of range",
                                 b, cfg->blocks[b].succ[i]);
    for (size_t f = 0; f < cfg->nfuncs; f++)
        if (cfg->funcs[f].first_block >= nblocks && cfg->funcs[f].nblocks)
            return tmap_fail(err, TMAP_ERR_INVALID, "CFG function %zu: first block out of range", f);
    return TMAP_OK;
}

static int br_is_branch(const tmap_cfg_block *blk)
{
    return blk->term == TMAP_TERM_CBRA || blk->term == TMAP_TERM_BRX ||
           ((blk->term == TMAP_TERM_RET || blk->term == TMAP_TERM_EXIT) && blk->predicated_term);
}

/* Finds the branch blocks and their known successors. */
static tmap_status br_build(const tmap_cfg *cfg, br_info *bi, tmap_error *err)
{
    size_t nb = cfg->nblocks, nsucc = 0;
    memset(bi, 0, sizeof *bi);
    for (size_t b = 0; b < nb; b++)
        nsucc += cfg->blocks[b].nsucc;
    uint32_t *npred = calloc(nb ? nb : 1, sizeof *npred);
    uint32_t *tmp = malloc((nsucc ? nsucc : 1) * sizeof *tmp);
    bi->v = calloc(nb ? nb : 1, sizeof *bi->v);
    bi->known_pool = malloc((nsucc ? nsucc : 1) * sizeof *bi->known_pool);
    if (!npred || !tmp || !bi->v || !bi->known_pool) {
        free(npred);
        free(tmp);
        br_free(bi);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the CFG's %zu blocks", nb);
    }
    /* npred[s]: distinct predecessor blocks, plus one for a function entry
     * (entered by launch or call, not by an edge). */
    for (size_t b = 0; b < nb; b++) {
        uint32_t n = br_distinct(&cfg->blocks[b], tmp);
        for (uint32_t i = 0; i < n; i++)
            npred[tmp[i]]++;
    }
    for (size_t f = 0; f < cfg->nfuncs; f++)
        if (cfg->funcs[f].nblocks)
            npred[cfg->funcs[f].first_block]++;
    if (nb)
        npred[0]++;
    size_t used = 0;
    for (size_t b = 0; b < nb; b++) {
        const tmap_cfg_block *blk = &cfg->blocks[b];
        if (!br_is_branch(blk))
            continue;
        uint32_t n = br_distinct(blk, tmp);
        if (n < 2 && blk->term != TMAP_TERM_RET && blk->term != TMAP_TERM_EXIT)
            continue; /* both ways lead to one block: never divergent */
        br_block *r = &bi->v[bi->n];
        r->b = (uint32_t)b;
        r->known = bi->known_pool + used;
        r->nknown = 0;
        for (uint32_t i = 0; i < n; i++)
            if (npred[tmp[i]] == 1 && tmp[i] != b)
                r->known[r->nknown++] = tmp[i];
        used += r->nknown;
        if (r->nknown == 0)
            bi->unestimated++;
        else
            bi->n++;
    }
    free(npred);
    free(tmp);
    return TMAP_OK;
}

/* ------------------------------------- divergent rounds of one branch */

typedef struct br_event {
    double at;     /* round index (0-based) where it happens */
    uint32_t dir;
    int delta;     /* +1: the thread starts going this way; -1: stops */
} br_event;

static int br_cmp_event(const void *a, const void *b)
{
    const br_event *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* Scratch for the estimate, sized for the largest branch. */
typedef struct br_scratch {
    br_event *ev;
    uint32_t *cnt;     /* active threads per direction */
    double *total;     /* per known direction: warp total */
    uint32_t *order;   /* known directions in run order */
} br_scratch;

/*
 * Divergent executions of branch r in one warp (threads ts[0..n)), under the
 * round model of docs/model.md: the warp executes the branch in rounds
 * 0..max n_t-1; thread t is active in rounds [0, n_t); it goes "the rest"
 * first, then each known successor in order of decreasing warp total, each
 * for as many consecutive rounds as its count; a round is divergent when its
 * active threads go more than one way.  *rounds receives max n_t.
 */
static double br_warp(const br_block *r, const uint32_t *counts, size_t nblocks,
                      const uint32_t *ts, size_t n, br_scratch *sc, double *rounds)
{
    uint32_t m = r->nknown;
    for (uint32_t j = 0; j < m; j++) {
        sc->total[j] = 0;
        sc->order[j] = j;
        for (size_t i = 0; i < n; i++)
            sc->total[j] += counts[(size_t)ts[i] * nblocks + r->known[j]];
    }
    for (uint32_t j = 1; j < m; j++) { /* insertion sort: decreasing total */
        uint32_t o = sc->order[j], k = j;
        while (k > 0 && sc->total[sc->order[k - 1]] < sc->total[o]) {
            sc->order[k] = sc->order[k - 1];
            k--;
        }
        sc->order[k] = o;
    }
    size_t ne = 0;
    double maxn = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *row = counts + (size_t)ts[i] * nblocks;
        double nt = row[r->b], known = 0, pos;
        if (nt > maxn)
            maxn = nt;
        for (uint32_t j = 0; j < m; j++)
            known += row[r->known[j]];
        double rest = nt - known > 0 ? nt - known : 0;
        /* Invariant: the thread's runs tile [0, nt) in order; runs past nt
         * (inconsistent counts) are cut. */
        pos = 0;
        for (uint32_t j = 0; j <= m && pos < nt; j++) {
            uint32_t dir = j == 0 ? 0 : sc->order[j - 1] + 1;
            double len = j == 0 ? rest : row[r->known[sc->order[j - 1]]];
            double end = pos + len < nt ? pos + len : nt;
            if (j == m)
                end = nt;
            if (end > pos) {
                sc->ev[ne++] = (br_event){pos, dir, +1};
                sc->ev[ne++] = (br_event){end, dir, -1};
            }
            pos = end;
        }
    }
    qsort(sc->ev, ne, sizeof *sc->ev, br_cmp_event);
    memset(sc->cnt, 0, (m + 1) * sizeof *sc->cnt);
    uint32_t ways = 0; /* directions with at least one active thread */
    double div = 0, prev = 0;
    for (size_t e = 0; e < ne;) {
        double at = sc->ev[e].at;
        if (ways >= 2)
            div += at - prev;
        for (; e < ne && sc->ev[e].at == at; e++) {
            uint32_t *c = &sc->cnt[sc->ev[e].dir];
            if (sc->ev[e].delta > 0)
                ways += (*c)++ == 0;
            else
                ways -= --(*c) == 0;
        }
        prev = at;
    }
    *rounds = maxn;
    return div;
}

/* ----------------------------------------------------------- per warp */

/* Per-warp accumulators over the blocks of the kernel. */
typedef struct warp_acc {
    uint32_t *max;  /* [nblocks] */
    double *sum;    /* [nblocks] */
    uint32_t *ts;   /* [32] original thread ids of the warp's slots */
    uint32_t *lead, *most; /* [32] split_execs' groups */
} warp_acc;

typedef struct metrics_ctx {
    const tmap_bbv *bbv;
    const double *lat;
    const uint32_t *perm;
    const double *ninstr; /* [nblocks] or NULL (no CFG) */
    double *whole;        /* [nblocks] the part of ninstr that a warp issues
                             once per execution (less the splits) */
    const tmap_sass_splits *splits; /* NULL: none */
    const br_info *br;
    br_scratch sc;
    warp_acc acc;
    double simd_num, simd_den, div_branches, branch_execs;
    size_t divergent_warps;
} metrics_ctx;

/* Warp executions of split e (tmap_sass_split) in the warp of threads
 * ts[0..n): per group of the threads that run e.block, those with equal
 * counts on e.key, the group's most executions.  lead[] holds each group's
 * first thread, most[] its executions. */
static double split_execs(const tmap_sass_split *e, const uint32_t *counts, size_t nb,
                          const uint32_t *ts, size_t n, uint32_t *lead, uint32_t *most)
{
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *row = counts + (size_t)ts[i] * nb;
        if (!row[e->block])
            continue;
        size_t g = 0;
        for (; g < ng; g++) {
            const uint32_t *r = counts + (size_t)lead[g] * nb;
            uint32_t k = 0;
            while (k < e->nkey && r[e->key[k]] == row[e->key[k]])
                k++;
            if (k == e->nkey)
                break;
        }
        if (g == ng) {
            lead[ng] = ts[i];
            most[ng++] = 0;
        }
        if (row[e->block] > most[g])
            most[g] = row[e->block];
    }
    double sum = 0;
    for (size_t g = 0; g < ng; g++)
        sum += most[g];
    return sum;
}

/* Cost of the warp of slots [a, e): fills T_w and the counters. */
static void metrics_warp(metrics_ctx *c, size_t a, size_t e, double *tw)
{
    size_t nb = c->bbv->nblocks, n = e - a;
    const uint32_t *counts = c->bbv->counts;
    for (size_t i = 0; i < n; i++)
        c->acc.ts[i] = c->perm ? c->perm[a + i] : (uint32_t)(a + i);
    memset(c->acc.max, 0, nb * sizeof *c->acc.max);
    memset(c->acc.sum, 0, nb * sizeof *c->acc.sum);
    int divergent = 0;
    const uint32_t *first = counts + (size_t)c->acc.ts[0] * nb;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *row = counts + (size_t)c->acc.ts[i] * nb;
        if (!divergent && i && nb && memcmp(row, first, nb * sizeof *row))
            divergent = 1;
        for (size_t b = 0; b < nb; b++) {
            if (row[b] > c->acc.max[b])
                c->acc.max[b] = row[b];
            c->acc.sum[b] += row[b];
        }
    }
    double t = 0;
    for (size_t b = 0; b < nb; b++) {
        t += c->lat[b] * c->acc.max[b];               /* eq. 2-3 */
        if (c->ninstr) {
            c->simd_num += c->ninstr[b] * c->acc.sum[b];
            c->simd_den += (divergent ? c->whole[b] : c->ninstr[b]) * c->acc.max[b];
        }
    }
    /* threads of a warp with one path run together: one group each */
    for (size_t k = 0; divergent && c->ninstr && c->splits && k < c->splits->n; k++) {
        const tmap_sass_split *sp = &c->splits->v[k];
        c->simd_den += sp->ninstr * split_execs(sp, counts, nb, c->acc.ts, n, c->acc.lead,
                                                c->acc.most);
    }
    for (size_t k = 0; c->br && k < c->br->n; k++) {
        double rounds;
        c->div_branches += br_warp(&c->br->v[k], counts, nb, c->acc.ts, n, &c->sc, &rounds);
        c->branch_execs += rounds;
    }
    c->divergent_warps += divergent;
    *tw = t;
}

/* The original launch's warp of slots [a, e) at its threads' mean counts,
 * whatever the grouping: sum_b lat[b] * mean_{t in [a, e)} BBV_t[b].  Called
 * after metrics_warp, whose sums are the original's under the identity. */
static double ideal_warp(metrics_ctx *c, size_t a, size_t e)
{
    size_t nb = c->bbv->nblocks;
    if (c->perm) {
        memset(c->acc.sum, 0, nb * sizeof *c->acc.sum);
        for (size_t t = a; t < e; t++)
            for (size_t b = 0; b < nb; b++)
                c->acc.sum[b] += c->bbv->counts[t * nb + b];
    }
    double id = 0;
    for (size_t b = 0; b < nb; b++)
        id += c->lat[b] * c->acc.sum[b] / (double)(e - a);
    return id;
}

/* Splits need SIMD weights and name blocks of the BBV (metrics_alloc
 * checks that they take from each block no more than it has). */
static tmap_status split_check(size_t nb, const tmap_model_params *p, tmap_error *err)
{
    const tmap_sass_splits *sp = p->simd_splits;
    for (size_t k = 0; sp && k < sp->n; k++) {
        const tmap_sass_split *e = &sp->v[k];
        int bad = !p->simd_weights || e->block >= nb || (e->nkey && !e->key);
        for (uint32_t j = 0; !bad && j < e->nkey; j++)
            bad = e->key[j] >= nb;
        if (bad)
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "SIMD split %zu names a block outside the BBV's %zu, or comes "
                             "without SIMD weights", k, nb);
    }
    return TMAP_OK;
}

static tmap_status metrics_check(const tmap_bbv *bbv, const double *lat,
                                 const uint32_t *perm, const tmap_model_params *p,
                                 tmap_error *err)
{
    if (!p->block_size)
        return tmap_fail(err, TMAP_ERR_INVALID, "block size must be at least 1");
    if (bbv->nthreads > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID, "%zu threads: at most 2^32-1 supported",
                         bbv->nthreads);
    tmap_status s = tmap_lat_check(lat, bbv->nblocks, "metrics", err);
    if (s)
        return s;
    for (size_t b = 0; p->simd_weights && b < bbv->nblocks; b++)
        if (!(p->simd_weights[b] >= 0) || !isfinite(p->simd_weights[b]))
            return tmap_fail(err, TMAP_ERR_INVALID, "SIMD weight %zu = %g is not finite and >= 0",
                             b, p->simd_weights[b]);
    s = split_check(bbv->nblocks, p, err);
    if (!s && perm)
        s = tmap_perm_check(perm, bbv->nthreads, "permutation", err);
    return s;
}

/* Allocates the context's scratch and the output arrays. */
static tmap_status metrics_alloc(metrics_ctx *c, tmap_metrics *m, const tmap_cfg *cfg,
                                 const double *w, tmap_error *err)
{
    size_t nb = c->bbv->nblocks ? c->bbv->nblocks : 1, maxk = 1;
    for (size_t k = 0; c->br && k < c->br->n; k++)
        if (c->br->v[k].nknown + 1 > maxk)
            maxk = c->br->v[k].nknown + 1;
    c->acc.max = malloc(nb * sizeof *c->acc.max);
    c->acc.sum = malloc(nb * sizeof *c->acc.sum);
    c->acc.ts = malloc(WARP * sizeof *c->acc.ts);
    c->acc.lead = malloc(WARP * sizeof *c->acc.lead);
    c->acc.most = malloc(WARP * sizeof *c->acc.most);
    c->sc.ev = malloc(2 * WARP * maxk * sizeof *c->sc.ev);
    c->sc.cnt = malloc(maxk * sizeof *c->sc.cnt);
    c->sc.total = malloc(maxk * sizeof *c->sc.total);
    c->sc.order = malloc(maxk * sizeof *c->sc.order);
    m->warp_cost = malloc((m->nwarps ? m->nwarps : 1) * sizeof *m->warp_cost);
    m->ideal_warp_cost = malloc((m->nwarps ? m->nwarps : 1) * sizeof *m->ideal_warp_cost);
    m->block_cost = calloc(m->nthread_blocks ? m->nthread_blocks : 1, sizeof *m->block_cost);
    double *ni = NULL;
    if (cfg) {
        ni = malloc(nb * sizeof *ni);
        c->whole = malloc(nb * sizeof *c->whole);
        for (size_t b = 0; ni && c->whole && b < c->bbv->nblocks; b++)
            ni[b] = c->whole[b] = w ? w[b] : cfg->blocks[b].ninstr;
        for (size_t k = 0; ni && c->whole && c->splits && k < c->splits->n; k++)
            c->whole[c->splits->v[k].block] -= c->splits->v[k].ninstr;
    }
    c->ninstr = ni;
    if (!c->acc.max || !c->acc.sum || !c->acc.ts || !c->acc.lead || !c->acc.most || !c->sc.ev ||
        !c->sc.cnt || !c->sc.total || !c->sc.order || !m->warp_cost || !m->ideal_warp_cost ||
        !m->block_cost || (cfg && (!ni || !c->whole)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the metrics of %zu warps",
                         m->nwarps);
    for (size_t b = 0; cfg && b < c->bbv->nblocks; b++)
        if (c->whole[b] < 0)
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "SIMD splits take %g instructions from block %zu, which has %g",
                             ni[b] - c->whole[b], b, ni[b]);
    return TMAP_OK;
}

static void metrics_ctx_free(metrics_ctx *c)
{
    free(c->acc.max);
    free(c->acc.sum);
    free(c->acc.ts);
    free(c->acc.lead);
    free(c->acc.most);
    free(c->whole);
    free(c->sc.ev);
    free(c->sc.cnt);
    free(c->sc.total);
    free(c->sc.order);
    free((void *)c->ninstr);
}

/* Walks the thread blocks and their warps, filling costs and counters. */
static tmap_status metrics_walk(metrics_ctx *c, const tmap_model_params *p, tmap_metrics *m,
                                tmap_error *err)
{
    size_t T = c->bbv->nthreads, S = p->block_size, w = 0;
    double *ideal_block = calloc(m->nthread_blocks ? m->nthread_blocks : 1, sizeof *ideal_block);
    if (!ideal_block)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < m->nthread_blocks; k++) {
        size_t lo = k * S, hi = lo + S < T ? lo + S : T;
        /* Warps are 32 consecutive slots from the block's start; slots past
         * nthreads are absent (the last warp may be partial). */
        for (size_t a = lo; a < hi; a += WARP, w++) {
            size_t e = a + WARP < hi ? a + WARP : hi;
            metrics_warp(c, a, e, &m->warp_cost[w]);
            m->ideal_warp_cost[w] = ideal_warp(c, a, e);
            m->block_cost[k] += m->warp_cost[w];      /* eq. 4 */
            ideal_block[k] += m->ideal_warp_cost[w];
        }
    }
    double sum = 0;
    for (size_t k = 0; k < m->nthread_blocks; k++)
        sum += m->block_cost[k];
    m->bbv_weighted = sum / (double)p->nsms;          /* eq. 5 */
    tmap_status s = tmap_sched_dynamic(m->block_cost, m->nthread_blocks, p->nsms,
                                       p->blocks_per_sm, &m->bbv_weighted_scheduled, NULL, err);
    if (!s)
        s = tmap_sched_dynamic(ideal_block, m->nthread_blocks, p->nsms, p->blocks_per_sm,
                               &m->zero_divergence, NULL, err);
    free(ideal_block);
    return s;
}

/* Number of warps: each thread block's threads split into 32-slot warps. */
static size_t metrics_nwarps(size_t T, size_t S)
{
    size_t full = T / S, rest = T % S;
    return full * ((S + WARP - 1) / WARP) + (rest + WARP - 1) / WARP;
}

tmap_status tmap_metrics_compute(const tmap_bbv *bbv, const double *lat,
                                 const uint32_t *perm, const tmap_cfg *cfg,
                                 const tmap_model_params *params, tmap_metrics *out,
                                 tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, bbv, lat, params, out);
    if (absent)
        return absent;
    memset(out, 0, sizeof *out);
    /* the CFG's block count first: lat has as many entries as it has blocks */
    tmap_status s = cfg ? br_validate(cfg, bbv->nblocks, err) : TMAP_OK;
    if (!s)
        s = metrics_check(bbv, lat, perm, params, err);
    if (!s && (!params->nsms || !params->blocks_per_sm))
        s = tmap_fail(err, TMAP_ERR_INVALID, "#SM and blocks per SM must be at least 1");
    if (s)
        return s;
    br_info br = {0};
    if (cfg && (s = br_build(cfg, &br, err)))
        return s;
    tmap_metrics m = {0};
    m.nthread_blocks = (bbv->nthreads + params->block_size - 1) / params->block_size;
    m.nwarps = metrics_nwarps(bbv->nthreads, params->block_size);
    metrics_ctx c = {.bbv = bbv, .lat = lat, .perm = perm, .br = cfg ? &br : NULL,
                     .splits = params->simd_splits};
    s = metrics_alloc(&c, &m, cfg, params->simd_weights, err);
    if (!s)
        s = metrics_walk(&c, params, &m, err);
    m.sm = (tmap_sm_time_parts){NAN, NAN, NAN, NAN, NAN};
    if (!s && params->sm)
        s = tmap_sm_model_time(params->sm, bbv, perm, &m.sm, err);
    size_t unestimated = br.unestimated;
    metrics_ctx_free(&c);
    br_free(&br);
    if (s) {
        tmap_metrics_free(&m);
        return s;
    }
    m.divergent_warps_pct = m.nwarps ? 100.0 * (double)c.divergent_warps / (double)m.nwarps : 0;
    m.simd_active_threads_per_inst = cfg && c.simd_den > 0 ? c.simd_num / c.simd_den : NAN;
    m.thread_instructions = cfg ? c.simd_num : NAN;
    m.warp_instructions = cfg ? c.simd_den : NAN;
    m.divergent_branches = cfg ? c.div_branches : NAN;
    m.branch_executions = cfg ? c.branch_execs : NAN;
    m.branches_unestimated = unestimated;
    *out = m;
    return TMAP_OK;
}

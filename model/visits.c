/*
 * visits.c -- how often a warp runs a block that its lanes run at visits of
 * their own (the SM model, docs/model.md, "A warp runs a block whenever any
 * lane does"): a block b that not every lane runs at each visit of its
 * immediate dominator p (a mismatch branch in a loop) runs once for each
 * visit of p at which any of the warp's lanes takes it.  A BBV counts
 * executions, not when they happen, so the lanes are taken to take b
 * independently, each at a share a_b / a_p of its visits of p:
 *
 *   v_b = v_p (1 - (1 - a_b / a_p)^(a_p / v_p))   a_b <= a_p
 *   v_b = v_p a_b / a_p                           a_b >  a_p (a loop inside)
 *
 * clamped to [c_b, a_b] (the busiest lane's executions, all lanes apart);
 * v = c for a block without a parent.  Parents come from the CFG's
 * dominator tree (Cooper, Harvey and Kennedy's iteration over the reverse
 * postorder).
 */
#include "threadmap/model.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

/* Reverse postorder of the blocks reachable from the functions' first
 * blocks: po[b] = its postorder number (0: unreached), order[] the blocks in
 * reverse postorder; returns their count. */
static size_t postorder(const tmap_cfg *cfg, uint32_t *po, uint32_t *order, uint32_t *stack,
                        uint32_t *edge)
{
    size_t n = cfg->nblocks, done = 0;
    memset(po, 0, n * sizeof *po);
    memset(edge, 0, n * sizeof *edge);
    for (size_t f = 0; f < cfg->nfuncs; f++) {
        uint32_t root = cfg->funcs[f].first_block;
        if (!cfg->funcs[f].nblocks || po[root] || edge[root])
            continue;
        size_t top = 0;
        stack[top++] = root, edge[root] = 1; /* edge[u] = 1 + the next successor to visit */
        while (top) {
            uint32_t u = stack[top - 1];
            if (edge[u] - 1 == cfg->blocks[u].nsucc) {
                po[u] = (uint32_t)++done, order[n - done] = u, top--;
                continue;
            }
            uint32_t v = cfg->blocks[u].succ[edge[u]++ - 1];
            if (!edge[v])
                stack[top++] = v, edge[v] = 1;
        }
    }
    memmove(order, order + n - done, done * sizeof *order);
    return done;
}

/* The nearest common dominator of x and y (both reached). */
static uint32_t common(const uint32_t *idom, const uint32_t *po, uint32_t x, uint32_t y)
{
    while (x != y) {
        while (po[x] < po[y])
            x = idom[x];
        while (po[y] < po[x])
            y = idom[y];
    }
    return x;
}

tmap_status tmap_sm_visit_parents(const tmap_cfg *cfg, uint32_t *parent, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, cfg, parent);
    if (st)
        return st;
    size_t n = cfg->nblocks, ne = 0;
    for (size_t b = 0; b < n; b++)
        ne += cfg->blocks[b].nsucc;
    /* idom[b] == b marks a root (a function's first block); n: not yet known */
    uint32_t *po = malloc((n + 1) * sizeof *po), *order = malloc((n + 1) * sizeof *order);
    uint32_t *stack = malloc((n + 1) * sizeof *stack), *edge = malloc((n + 1) * sizeof *edge);
    uint32_t *idom = malloc((n + 1) * sizeof *idom), *first = calloc(n + 2, sizeof *first);
    uint32_t *pred = malloc((ne + 1) * sizeof *pred);
    if (!po || !order || !stack || !edge || !idom || !first || !pred) {
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the dominators of %zu blocks", n);
        goto out;
    }
    for (size_t b = 0; b < n; b++) /* predecessors as CSR: pred[first[v] .. first[v + 1]) */
        for (uint32_t k = 0; k < cfg->blocks[b].nsucc; k++)
            first[cfg->blocks[b].succ[k] + 1]++;
    for (size_t b = 0; b < n; b++)
        first[b + 1] += first[b];
    memset(edge, 0, (n + 1) * sizeof *edge);
    for (size_t b = 0; b < n; b++)
        for (uint32_t k = 0; k < cfg->blocks[b].nsucc; k++) {
            uint32_t v = cfg->blocks[b].succ[k];
            pred[first[v] + edge[v]++] = (uint32_t)b;
        }
    size_t nr = postorder(cfg, po, order, stack, edge);
    for (size_t b = 0; b < n; b++)
        idom[b] = (uint32_t)n;
    for (size_t f = 0; f < cfg->nfuncs; f++)
        if (cfg->funcs[f].nblocks)
            idom[cfg->funcs[f].first_block] = cfg->funcs[f].first_block;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < nr; i++) {
            uint32_t b = order[i], d = (uint32_t)n;
            if (idom[b] == b)
                continue;
            for (uint32_t k = first[b]; k < first[b + 1]; k++) {
                uint32_t p = pred[k];
                if (!po[p] || idom[p] == n)
                    continue;
                d = d == n ? p : common(idom, po, p, d);
            }
            if (d != idom[b])
                idom[b] = d, changed = 1;
        }
    }
    /* only inside a loop, and with the parent in the same loop: a loop's
     * exit runs once after its lanes have reconverged, whatever iteration
     * each left in; a loop's first block, whose parent lies outside the
     * loop, runs as often as its busiest lane iterates */
    memset(edge, 0, (n + 1) * sizeof *edge);
    if ((st = tmap_cfg_loop_depths(cfg, edge, err)))
        goto out;
    for (size_t b = 0; b < n; b++) {
        uint32_t d = idom[b];
        parent[b] = d == n || d == b || !edge[b] || edge[d] != edge[b] ? 0 : d + 1;
    }
out:
    free(po), free(order), free(stack), free(edge), free(idom), free(first), free(pred);
    return st;
}

/* v_b from v_p (above). */
static double visits_from(double vp, double ap, double cb, double ab)
{
    double v;
    if (!(vp > 0) || !(ap > 0))
        v = cb;
    else if (ab <= ap)
        v = vp * (1 - pow(1 - ab / ap, ap / vp));
    else
        v = vp * ab / ap;
    return fmin(ab, fmax(cb, v));
}

void tmap_sm_visits(const tmap_sm_block *blk, size_t nblocks, const uint32_t *c,
                    const uint32_t *a, double *visits, uint32_t *stack)
{
    for (size_t b = 0; b < nblocks; b++)
        visits[b] = -1;
    for (size_t b = 0; b < nblocks; b++) {
        size_t top = 0;
        uint32_t x = (uint32_t)b; /* up the parents to one known, then down */
        while (visits[x] < 0 && blk[x].visit_parent) {
            stack[top++] = x;
            x = blk[x].visit_parent - 1;
            assert(top <= nblocks);
        }
        if (visits[x] < 0)
            visits[x] = c[x];
        while (top) {
            uint32_t y = stack[--top], p = blk[y].visit_parent - 1;
            visits[y] = c[y] ? visits_from(visits[p], a[p], c[y], a[y]) : 0;
        }
    }
}

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
 * dominator tree (tmap_cfg_dominators).
 */
#include "threadmap/model.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "common/base.h"

tmap_status tmap_sm_visit_parents(const tmap_cfg *cfg, uint32_t *parent, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, cfg, parent);
    if (st)
        return st;
    size_t n = cfg->nblocks;
    int32_t *idom = malloc((n + 1) * sizeof *idom);
    uint32_t *depth = calloc(n + 1, sizeof *depth);
    if (!idom || !depth)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the visits of %zu blocks", n);
    if (!st)
        st = tmap_cfg_dominators(cfg, idom, err);
    if (!st)
        st = tmap_cfg_loops(cfg, depth, NULL, err);
    /* only inside a loop, and with the parent in the same loop: a loop's
     * exit runs once after its lanes have reconverged, whatever iteration
     * each left in; a loop's first block, whose parent lies outside the
     * loop, runs as often as its busiest lane iterates */
    for (size_t b = 0; !st && b < n; b++) {
        int32_t d = idom[b];
        parent[b] = d < 0 || !depth[b] || depth[d] != depth[b] ? 0 : (uint32_t)d + 1;
    }
    free(idom), free(depth);
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

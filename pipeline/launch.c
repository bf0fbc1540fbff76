/*
 * launch.c -- regroup() before a launch: choose a regrouping with the plan
 * and launch with it (or without, when nothing pays), by layout transform or
 * redirection.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "threadmap/pipeline.h"

tmap_status tmap_regroup_launch(const tmap_regroup_target *t, const tmap_launch *l,
                                tmap_mechanism m, uint64_t perm, float ms[3], tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, t, l, ms);
    if (absent)
        return absent;
    ms[0] = ms[1] = ms[2] = 0;
    if (m == TMAP_MECH_LAYOUT && t->layout)
        return tmap_layout_apply(t->layout, t->original, l, perm, NULL, ms, err);
    if (m == TMAP_MECH_LAYOUT)
        return tmap_layout_launch(t->cuda, t->original, l, perm, t->arrays, t->narrays, ms, err);
    if (m != TMAP_MECH_REDIRECT || !t->redirected)
        return tmap_fail(err, TMAP_ERR_INVALID, "no way to apply a regrouping to this launch");
    tmap_status st = tmap_redirect_set(t->redirected, perm, err);
    return st ? st : tmap_kernel_time(t->redirected, l, 0, 1, &ms[1], err);
}

tmap_status tmap_regroup(const tmap_regroup_target *t, const tmap_launch *l, tmap_mechanism m,
                         const tmap_bbv *bbv, const double *lat, const tmap_cfg *cfg,
                         const tmap_plan_opts *o, uint64_t perm, tmap_plan *plan, float ms[3],
                         tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, t, l, bbv, lat, o, plan, ms);
    if (absent)
        return absent;
    tmap_status st = tmap_plan_make(bbv, lat, cfg, o, plan, err);
    if (st)
        return st;
    if (plan->chosen == 0 || m == TMAP_MECH_NONE) {
        ms[0] = ms[2] = 0;
        return tmap_kernel_time(t->original, l, 0, 1, &ms[1], err);
    }
    const uint32_t *p = plan->cand[plan->chosen].perm;
    st = tmap_cuda_upload(t->cuda, perm, p, bbv->nthreads * sizeof *p, err);
    return st ? st : tmap_regroup_launch(t, l, m, perm, ms, err);
}

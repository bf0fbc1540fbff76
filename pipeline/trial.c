/*
 * trial.c -- measured feedback (see trial.h): which candidate a launch
 * runs while the kernel is on trial, and the choice once the times are in.
 */
#include <assert.h>
#include <string.h>

#include "common/base.h"
#include "pipeline/trial.h"

tmap_status tmap_trial_init(tmap_trial *t, int ncand, int reps, double threshold,
                            tmap_error *err)
{
    if (!t || ncand < 1 || ncand > TMAP_TRIAL_MAX_CAND || reps < 1 ||
        reps > TMAP_TRIAL_MAX_REPS || !(threshold >= 0 && threshold < 1))
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "trial: 1 to %d candidates, 1 to %d launches each, a threshold "
                         "in [0, 1)", TMAP_TRIAL_MAX_CAND, TMAP_TRIAL_MAX_REPS);
    memset(t, 0, sizeof *t);
    t->ncand = ncand, t->reps = reps, t->threshold = threshold, t->chosen = -1;
    return TMAP_OK;
}

int tmap_trial_next(tmap_trial *t, int *timed)
{
    *timed = 0;
    if (t->chosen >= 0)
        return t->chosen;
    if (t->handed == t->ncand * t->reps)
        return 0;
    *timed = 1;
    return t->handed++ % t->ncand;
}

static void decide(tmap_trial *t)
{
    for (int c = 0; c < t->ncand; c++) {
        double v[TMAP_TRIAL_MAX_REPS];
        for (int r = 0; r < t->reps; r++)
            v[r] = t->ms[c][r];
        t->median_ms[c] = tmap_median(v, (size_t)t->reps);
    }
    int best = 0;
    for (int c = 1; c < t->ncand; c++)
        if (t->median_ms[c] < t->median_ms[best])
            best = c;
    t->chosen = t->median_ms[best] <= t->median_ms[0] * (1 - t->threshold) ? best : 0;
}

void tmap_trial_record(tmap_trial *t, int cand, float ms)
{
    assert(cand >= 0 && cand < t->ncand && t->have[cand] < t->reps);
    t->ms[cand][t->have[cand]++] = ms;
    if (++t->recorded == t->ncand * t->reps)
        decide(t);
}

/*
 * trial.h (pipeline) -- measured feedback: the first launches of a kernel
 * try each candidate `reps` times, in turns (the original, candidate 1,
 * ..., then again), so that a GPU clock still rising, or any drift, weighs
 * on every candidate alike; once every time is in, the candidate of least
 * median time is kept if it beats the original's median by the threshold,
 * else the original.  Pure bookkeeping: the caller launches and times.
 */
#ifndef TMAP_PIPELINE_TRIAL_H
#define TMAP_PIPELINE_TRIAL_H

#include "threadmap/common.h"

#define TMAP_TRIAL_MAX_CAND 16
#define TMAP_TRIAL_MAX_REPS 16

typedef struct tmap_trial {
    int ncand, reps;      /* candidates (0: the original launch), launches each */
    double threshold;     /* a fraction of the original's time */
    int handed;           /* timed launches handed out so far */
    int recorded;         /* of which times are in */
    float ms[TMAP_TRIAL_MAX_CAND][TMAP_TRIAL_MAX_REPS];
    int have[TMAP_TRIAL_MAX_CAND];
    double median_ms[TMAP_TRIAL_MAX_CAND];
    int chosen;           /* -1 until every time is in */
} tmap_trial;

tmap_status tmap_trial_init(tmap_trial *t, int ncand, int reps, double threshold,
                            tmap_error *err);
/* The candidate of the next launch; *timed: whether it is a trial launch
 * whose time must be recorded.  While the last trial times are pending,
 * the original (untimed). */
int tmap_trial_next(tmap_trial *t, int *timed);
/* One trial launch of candidate `cand` took ms; decides with the last. */
void tmap_trial_record(tmap_trial *t, int cand, float ms);

#endif

/*
 * memchooser.c -- the measured choice of a data layout (threadmap/
 * pipeline.h): the model's proposal (tmap_memre_propose) goes on trial
 * (trial.c, as the regrouper's candidates do), each launch's time counted
 * with its layout's one-time cost spread over the launches that reuse it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/base.h"
#include "pipeline/trial.h"
#include "threadmap/pipeline.h"

struct tmap_memchooser {
    tmap_trial trial;
    tmap_memre_kind kind[TMAP_TRIAL_MAX_CAND];
    double share_ms[TMAP_TRIAL_MAX_CAND]; /* once_ms / launches */
    char why[512];
};

tmap_status tmap_memchooser_create(const tmap_memre_choice *v, size_t n, int reps,
                                   double threshold, double launches, tmap_memchooser **out,
                                   tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, v, out);
    if (st)
        return st;
    *out = NULL;
    if (n < 1 || n > TMAP_TRIAL_MAX_CAND || v[0].kind != TMAP_MEMRE_ORIGINAL)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memchooser_create: %zu candidates: 1 to "
                         "%d, the original first", n, TMAP_TRIAL_MAX_CAND);
    tmap_memchooser *m = calloc(1, sizeof *m);
    if (!m)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if ((st = tmap_trial_init(&m->trial, (int)n, reps ? reps : 3, threshold, err)))
        return free(m), st;
    for (size_t i = 0; i < n; i++)
        m->kind[i] = v[i].kind, m->share_ms[i] = v[i].once_ms / (launches > 1 ? launches : 1);
    snprintf(m->why, sizeof m->why, "on trial: %zu layouts, %d timed launches each", n,
             m->trial.reps);
    *out = m;
    return TMAP_OK;
}

void tmap_memchooser_free(tmap_memchooser *m) { free(m); }

int tmap_memchooser_next(tmap_memchooser *m, int *timed) { return tmap_trial_next(&m->trial, timed); }

/* The decision in words, every layout's median with its share of the once cost. */
static void explain(tmap_memchooser *m)
{
    const tmap_trial *t = &m->trial;
    int len = snprintf(m->why, sizeof m->why, "%s kept:", tmap_memre_kind_name(m->kind[t->chosen]));
    for (int c = 0; c < t->ncand && len > 0 && (size_t)len < sizeof m->why; c++)
        len += snprintf(m->why + len, sizeof m->why - (size_t)len, " %s %.4f ms",
                        tmap_memre_kind_name(m->kind[c]), t->median_ms[c]);
}

void tmap_memchooser_record(tmap_memchooser *m, int cand, float launch_ms)
{
    tmap_trial_record(&m->trial, cand, (float)(launch_ms + m->share_ms[cand]));
    if (m->trial.chosen >= 0)
        explain(m);
}

int tmap_memchooser_chosen(const tmap_memchooser *m)
{
    return m && m->trial.chosen >= 0 ? m->trial.chosen : -1;
}

const char *tmap_memchooser_why(const tmap_memchooser *m) { return m ? m->why : ""; }

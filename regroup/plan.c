/*
 * plan.c -- the decision before a launch: every candidate regrouping is run
 * and scored by the model; the winner is applied only when its predicted
 * time, plus the algorithm's and the application's cost, beats the
 * original launch by the threshold.  Without a measured original time the
 * costs cannot be weighed against the model's cycles, so the decision rests
 * on the predicted gain alone, and says so.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base.h"
#include "threadmap/regroup.h"

static const char *const names[TMAP_ALGO_COUNT] = {"identity", "sorting", "greedy", "greedy-max",
                                                   "key",      "bin-and-deal"};

const char *tmap_algo_name(tmap_algo a) { return a < TMAP_ALGO_COUNT ? names[a] : "?"; }

int tmap_algo_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < TMAP_ALGO_COUNT; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

tmap_status tmap_algo_run(tmap_algo a, const tmap_bbv *bbv, const double *lat,
                          const double *key, const tmap_regroup_opts *opts, uint32_t *perm,
                          tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, bbv, opts, perm);
    if (absent)
        return absent;
    switch (a) {
    case TMAP_ALGO_IDENTITY: return tmap_regroup_identity(bbv->nthreads, perm, err);
    case TMAP_ALGO_SORTING: return tmap_regroup_sort(bbv, opts, perm, err);
    case TMAP_ALGO_GREEDY: return tmap_regroup_greedy(bbv, lat, opts, perm, err);
    case TMAP_ALGO_GREEDY_MAX: return tmap_regroup_greedy_max(bbv, lat, opts, perm, err);
    case TMAP_ALGO_KEY:
        if (!key)
            return tmap_fail(err, TMAP_ERR_INVALID, "the key algorithm needs a per-thread key");
        return tmap_regroup_sort_key(key, bbv->nthreads, 1, opts, perm, err);
    case TMAP_ALGO_BIN_DEAL: return tmap_regroup_bin_deal(bbv, lat, opts, perm, err);
    default: return tmap_fail(err, TMAP_ERR_INVALID, "unknown algorithm %d", (int)a);
    }
}

/* Runs and scores one candidate.  An algorithm that cannot run on this
 * input (TMAP_ERR_UNSUPPORTED: too many distinct rows for Greedy) leaves the
 * candidate unavailable with the reason; other failures fail the plan. */
static tmap_status score(tmap_candidate *c, const tmap_bbv *bbv, const double *lat,
                         const tmap_cfg *cfg, const tmap_plan_opts *o, tmap_error *err)
{
    if (!(c->perm = malloc(bbv->nthreads * sizeof *c->perm)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for a permutation");
    tmap_error e = {0};
    double t0 = (1e3 * tmap_clock_seconds());
    tmap_regroup_opts ro = o->regroup;
    if (!ro.block_size)
        ro.block_size = o->model.block_size; /* bin-and-deal needs it in grid scope too */
    tmap_status st = tmap_algo_run(c->algo, bbv, lat, o->key, &ro, c->perm, &e);
    c->algo_ms = (1e3 * tmap_clock_seconds()) - t0;
    if (st == TMAP_ERR_UNSUPPORTED) {
        snprintf(c->note, sizeof c->note, "%s", e.message);
        free(c->perm);
        c->perm = NULL;
        return TMAP_OK;
    }
    if (st != TMAP_OK)
        return err ? (*err = e, st) : st;
    c->available = 1;
    return tmap_metrics_compute(bbv, lat, c->algo == TMAP_ALGO_IDENTITY ? NULL : c->perm, cfg,
                                &o->model, &c->m, err);
}

/* Fills gain and total_ms of every available candidate; returns the one
 * with the largest predicted gain (0 if none gains). */
/* The algorithm's time per launch. */
static double per_launch(const tmap_plan_opts *o, double algo_ms)
{
    return algo_ms / (o->launches > 1 ? o->launches : 1);
}

/* The time the plan ranks by: the SM model's when it was given, else the
 * paper's BBV-weighted-scheduled. */
static double ranked_time(const tmap_plan_opts *o, const tmap_metrics *m)
{
    return o->model.sm ? m->sm.cycles : m->bbv_weighted_scheduled;
}

static int fill_scores(tmap_plan *p, const tmap_plan_opts *o)
{
    double base = ranked_time(o, &p->cand[0].m);
    int best = 0;
    for (size_t i = 0; i < p->n; i++) {
        tmap_candidate *c = &p->cand[i];
        if (!c->available)
            continue;
        c->gain = base > 0 ? 1.0 - ranked_time(o, &c->m) / base : 0;
        c->total_ms = NAN;
        if (o->original_ms > 0)
            c->total_ms = i == 0 ? o->original_ms
                                 : o->original_ms * (1.0 - c->gain) + per_launch(o, c->algo_ms) +
                                       o->apply_ms;
        if (i && c->gain > p->cand[best].gain)
            best = (int)i;
    }
    return best;
}

/* With the original launch's time: the candidate of least total time. */
static int least_total(const tmap_plan *p)
{
    int best = 0;
    for (size_t i = 1; i < p->n; i++)
        if (p->cand[i].available && p->cand[i].total_ms < p->cand[best].total_ms)
            best = (int)i;
    return best;
}

static void decide(tmap_plan *p, const tmap_plan_opts *o)
{
    int fastest = fill_scores(p, o);
    const tmap_candidate *f = &p->cand[fastest];
    if (!fastest) {
        snprintf(p->why, sizeof p->why, "no candidate is predicted faster than the original "
                                        "launch: leave it alone");
        return;
    }
    if (o->original_ms <= 0) {
        int pays = f->gain > o->threshold;
        p->chosen = pays ? fastest : 0;
        snprintf(p->why, sizeof p->why,
                 "%s: predicted %.1f%% faster (model only: without the original launch's time "
                 "the costs of the algorithm, %.3f ms, and of applying it are not weighed), %s "
                 "the %.0f%% threshold: %s",
                 names[f->algo], 100 * f->gain, f->algo_ms, pays ? "beats" : "misses",
                 100 * o->threshold, pays ? "apply it" : "leave the launch alone");
        return;
    }
    int best = least_total(p);
    const tmap_candidate *b = &p->cand[best ? best : fastest];
    int pays = best && b->total_ms < o->original_ms * (1.0 - o->threshold);
    p->chosen = pays ? best : 0;
    char spread[64] = "";
    if (o->launches > 1)
        snprintf(spread, sizeof spread, " (%.3f ms over %g launches)", b->algo_ms, o->launches);
    snprintf(p->why, sizeof p->why,
             "%s: predicted %.3f ms (kernel %.3f + algorithm %.3f%s + applying %.3f) vs %.3f ms "
             "original, %s the %.0f%% threshold: %s",
             names[b->algo], b->total_ms, o->original_ms * (1.0 - b->gain),
             per_launch(o, b->algo_ms), spread, o->apply_ms, o->original_ms,
             pays ? "beats" : "misses", 100 * o->threshold,
             pays ? "apply it" : "leave the launch alone");
}

tmap_status tmap_plan_make(const tmap_bbv *bbv, const double *lat, const tmap_cfg *cfg,
                           const tmap_plan_opts *o, tmap_plan *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, bbv, lat, o, out);
    if (absent)
        return absent;
    memset(out, 0, sizeof *out);
    if (o->threshold < 0 || o->threshold >= 1 || o->original_ms < 0 || o->apply_ms < 0 ||
        o->launches < 0)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "plan: threshold must be in [0, 1), times and launches >= 0");
    unsigned want = o->algos ? o->algos | 1u : ~0u;
    tmap_status st = TMAP_OK;
    for (int a = 0; a < TMAP_ALGO_COUNT && st == TMAP_OK; a++) {
        if (!(want & (1u << a)) || (a == TMAP_ALGO_KEY && !o->key))
            continue;
        tmap_candidate *c = &out->cand[out->n++];
        c->algo = (tmap_algo)a;
        st = score(c, bbv, lat, cfg, o, err);
    }
    if (st == TMAP_OK && !out->cand[0].available)
        st = tmap_fail(err, TMAP_ERR_INVALID, "plan: the identity grouping could not be scored");
    if (st != TMAP_OK) {
        tmap_plan_free(out);
        return st;
    }
    decide(out, o);
    return TMAP_OK;
}

void tmap_plan_free(tmap_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->cand[i].perm);
        tmap_metrics_free(&p->cand[i].m);
    }
    memset(p, 0, sizeof *p);
}

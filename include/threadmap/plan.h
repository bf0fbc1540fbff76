/*
 * plan.h -- choosing a regrouping before a launch (Liang et al. sec. VI-B):
 * run the candidate algorithms on the (predicted) BBVs, score each with the
 * model (BBV-weighted-scheduled), add what applying it costs, and pick the
 * best only if it beats the unregrouped launch by a threshold; otherwise
 * say why the launch is left alone.
 */
#ifndef TMAP_REGROUP_PLAN_H
#define TMAP_REGROUP_PLAN_H

#include "threadmap/model.h"
#include "threadmap/regroup.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tmap_algo {
    TMAP_ALGO_IDENTITY,
    TMAP_ALGO_SORTING,
    TMAP_ALGO_GREEDY,
    TMAP_ALGO_GREEDY_MAX,
    TMAP_ALGO_KEY,       /* sort by a user key, descending (CUB binning, JDS...) */
    TMAP_ALGO_COUNT
} tmap_algo;

const char *tmap_algo_name(tmap_algo a);
/* "identity", "sorting", "greedy", "greedy-max", "key"; -1 if unknown. */
int tmap_algo_parse(const char *name);

/* Runs one algorithm: perm (caller's, nthreads entries). key: one value per
 * thread, needed by TMAP_ALGO_KEY only. */
tmap_status tmap_algo_run(tmap_algo a, const tmap_bbv *bbv, const double *lat,
                          const double *key, const tmap_regroup_opts *opts, uint32_t *perm,
                          tmap_error *err);

typedef struct tmap_plan_opts {
    tmap_model_params model;   /* launch shape for the scheduling model */
    tmap_regroup_opts regroup; /* group size and scope */
    const double *key;         /* per-thread key for TMAP_ALGO_KEY; NULL: no such candidate */
    unsigned algos;            /* candidates, bit (1u << algo); 0: all available */
    double threshold;          /* required gain over the original, e.g. 0.05 */
    double original_ms;        /* measured time of the unregrouped launch; 0: unknown */
    double apply_ms;           /* time to apply a permutation (gather/scatter or the
                                  redirection's extra work), per launch */
    double launches;           /* launches that reuse one permutation (same input, e.g.
                                  an iterative solver): the algorithm's time is spread
                                  over them; 0 or 1: it runs before every launch */
} tmap_plan_opts;

typedef struct tmap_candidate {
    tmap_algo algo;
    int available;         /* 0: did not run; `note` says why */
    char note[200];
    uint32_t *perm;        /* [nthreads], malloc'ed when available */
    tmap_metrics m;        /* the model under this grouping */
    double algo_ms;        /* CPU time of the algorithm (it runs before each launch) */
    double gain;           /* 1 - scheduled / scheduled(identity) */
    double total_ms;       /* with original_ms: predicted kernel + algo + apply; else NAN */
} tmap_candidate;

typedef struct tmap_plan {
    size_t n;
    tmap_candidate cand[TMAP_ALGO_COUNT];  /* cand[0] is identity */
    int chosen;            /* index into cand of the winner, or 0 (identity):
                              leave the launch alone */
    char why[512];         /* the decision in words */
} tmap_plan;

tmap_status tmap_plan_make(const tmap_bbv *bbv, const double *lat, const tmap_cfg *cfg,
                           const tmap_plan_opts *opts, tmap_plan *out, tmap_error *err);
void tmap_plan_free(tmap_plan *p);

#ifdef __cplusplus
}
#endif

#endif

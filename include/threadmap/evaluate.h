/*
 * evaluate.h -- the whole pipeline on one input of a manifest's kernel, on
 * the GPU: BBVs (predicted by a trained model, or measured by a profiling
 * run), block latencies, the safety analysis, the plan (every candidate
 * scored by the model), then each candidate applied for real (layout
 * transform or redirection), checked against the original's outputs and
 * timed with CUDA events.  `threadmap run` and the benchmarks use it.
 */
#ifndef TMAP_REGROUP_EVALUATE_H
#define TMAP_REGROUP_EVALUATE_H

#include "threadmap/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tmap_mechanism { TMAP_MECH_NONE, TMAP_MECH_LAYOUT, TMAP_MECH_REDIRECT } tmap_mechanism;

const char *tmap_mechanism_name(tmap_mechanism m);

/* A launch ready to be regrouped. */
typedef struct tmap_regroup_target {
    tmap_cuda *cuda;
    tmap_kernel *original;     /* the kernel as written */
    tmap_kernel *redirected;   /* its redirected twin (tmap_redirect_load), or NULL */
    const tmap_thread_array *arrays;  /* per-thread arrays, for the layout transform */
    size_t narrays;
} tmap_regroup_target;

/* One launch regrouped by perm (device, u32 [threads]) with mechanism m.
 * ms: the time to apply it before the launch, the kernel, and after it
 * (layout: gather, kernel, scatter; redirection: 0, kernel, 0). */
tmap_status tmap_regroup_launch(const tmap_regroup_target *t, const tmap_launch *l,
                                tmap_mechanism m, uint64_t perm, float ms[3], tmap_error *err);

/*
 * regroup() before a launch, in one call: makes the plan from the (predicted)
 * BBVs of this launch's threads (tmap_plan_make: every candidate scored by
 * the model, plus the costs in o), then launches: regrouped by the chosen
 * permutation with mechanism m, or unchanged when the plan chose the
 * identity (plan->why says why).  perm: a device buffer of u32 [threads]
 * the call fills.  *plan is the caller's to free (tmap_plan_free); ms as in
 * tmap_regroup_launch.  The launch is synchronous.
 */
tmap_status tmap_regroup(const tmap_regroup_target *t, const tmap_launch *l, tmap_mechanism m,
                         const tmap_bbv *bbv, const double *lat, const tmap_cfg *cfg,
                         const tmap_plan_opts *o, uint64_t perm, tmap_plan *plan, float ms[3],
                         tmap_error *err);

typedef struct tmap_eval_opts {
    uint64_t seed;             /* the input (generated arrays) */
    const char *model_path;    /* trained predictor; NULL: measure BBVs by profiling */
    const char *table_path;    /* latency table; NULL: the device's default */
    int warmup, reps;          /* timing: median of reps after warmup launches */
    double threshold;          /* plan threshold (fraction) */
    size_t groupsize;
    size_t threads;            /* CPU threads of the regrouping algorithms (tmap_regroup_opts) */
    int scope;                 /* -1: as the safety analysis advises, else tmap_regroup_scope */
    int mechanism;             /* -1: layout when safe, else redirection; else tmap_mechanism */
    unsigned algos;            /* plan candidates (0: all) */
    const char *key_feature;   /* a manifest feature to sort by (the key candidate), or NULL */
    int measure_all;           /* apply and time every candidate, not only the chosen one */
    double launches;           /* launches reusing one permutation (tmap_plan_opts) */
} tmap_eval_opts;

typedef struct tmap_eval {
    tmap_device_info device;
    char *entry;               /* PTX entry name */
    tmap_cfg *cfg;
    double *lat;
    tmap_lat_report fallbacks;
    char table[4096];
    tmap_safety safety;
    tmap_bbv bbv;              /* predicted or measured */
    char origin[512];          /* where the BBVs come from */
    double bbv_ms;             /* time to predict (or profile) them */
    tmap_kernel_stats stats;   /* of the original kernel */
    tmap_model_params params;  /* the launch shape the model used */
    tmap_plan plan;
    tmap_mechanism mechanism;  /* used to apply regroupings */
    double original_ms;        /* measured median */
    double apply_ms;           /* measured cost of applying (identity permutation) */
    double measured_ms[TMAP_ALGO_COUNT];  /* per plan candidate, NAN if not run */
    double measured_apply_ms[TMAP_ALGO_COUNT];
    int outputs_equal[TMAP_ALGO_COUNT];   /* -1 not run, 0 differ, 1 equal */
} tmap_eval;

tmap_status tmap_evaluate(tmap_cuda *c, tmap_manifest *m, const tmap_eval_opts *o,
                          tmap_eval *out, tmap_error *err);
void tmap_eval_free(tmap_eval *e);

#ifdef __cplusplus
}
#endif

#endif

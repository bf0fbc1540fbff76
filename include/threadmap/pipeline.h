/*
 * threadmap/pipeline.h -- the pipeline stage (experimental: changes with the
 * GPU regroup path): regroup() before a launch; the whole measured pipeline
 * on one input of a manifest's kernel (BBVs predicted or profiled, block
 * latencies, safety, the plan, each candidate applied for real, checked
 * against the original's outputs and timed with CUDA events); and the
 * evaluation of section VII of Liang et al. as plain data (the numbers of
 * `threadmap bench`; docs/bench.md defines each).
 */
#ifndef THREADMAP_PIPELINE_H
#define THREADMAP_PIPELINE_H

#include <stdio.h>

#include "threadmap/regroup.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tmap_mechanism { TMAP_MECH_NONE, TMAP_MECH_LAYOUT, TMAP_MECH_REDIRECT } tmap_mechanism;

const char *tmap_mechanism_name(tmap_mechanism m);
/* The mechanism a kernel's safety analysis allows, as `threadmap run`
 * picks it: the layout transform when it keeps the results and the launch
 * has arrays to move (have_arrays), else the redirection, else none. */
tmap_mechanism tmap_mechanism_choose(const tmap_safety *s, int have_arrays);

/* A launch ready to be regrouped. */
typedef struct tmap_regroup_target {
    tmap_cuda *cuda;
    tmap_kernel *original;     /* the kernel as written */
    tmap_kernel *redirected;   /* its redirected twin (tmap_redirect_load), or NULL */
    const tmap_thread_array *arrays;  /* per-thread arrays, for the layout transform */
    size_t narrays;
    tmap_layout *layout;       /* made once for these arrays (tmap_layout_create), or
                                  NULL: made and freed on each launch */
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
    int paper_metric;          /* rank by the paper's BBV-weighted-scheduled (--metric
                                  scheduled); 0: by the SM model (sm90) */
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
    tmap_bbv_noise noise;      /* predicted: the predictor's residuals, which the
                                  SM model takes (sm.noise); measured: none */
    char origin[512];          /* where the BBVs come from */
    double bbv_ms;             /* time to predict (or profile) them */
    tmap_kernel_stats stats;   /* of the original kernel */
    tmap_model_params params;  /* the launch shape the model used */
    tmap_sm_model sm;          /* the SM model the plan ranked by (params.sm),
                                  unless paper_metric */
    tmap_plan plan;
    tmap_mechanism mechanism;  /* used to apply regroupings */
    double original_ms;        /* measured median */
    double apply_ms;           /* measured cost of applying (identity permutation) */
    double measured_ms[TMAP_ALGO_COUNT];  /* per plan candidate, NAN if not run */
    double measured_apply_ms[TMAP_ALGO_COUNT];
    int outputs_equal[TMAP_ALGO_COUNT];   /* -1 not run, 0 differ, 1 equal */
    /* regroup() on the GPU with measured feedback (tmap_regrouper, the key
     * from the predictor on device features), when it could run: */
    int gpu_ran;               /* 0: gpu_note says why not */
    char gpu_note[512];        /* the regrouper's decision, or why it did not run */
    char gpu_chosen[96];       /* the candidate kept (tmap_regrouper_chosen_name; as long as its name) */
    double gpu_fresh_ms;       /* per launch, a new input each: the features
                                  (tmap_manifest_features_gpu), key, sort, gather,
                                  kernel, scatter (median) */
    double gpu_features_ms;    /* of which the features kernel (median, CUDA events) */
    double gpu_cached_ms;      /* per launch, the same input again: the kernel and the
                                  scatter, reps launches back to back (one event pair,
                                  after warm-up); NAN when the kernel updates an input */
    double gpu_original_ms;    /* the original timed as gpu_cached_ms: back to back */
    double gpu_overlap_ms;     /* as gpu_fresh_ms, each next input announced before the
                                  launch (tmap_regrouper_prepare): its key and sort
                                  beside this launch's kernel */
    size_t gpu_overlap_taken, gpu_overlap_late; /* tmap_regrouper_overlap_counts after it */
    int gpu_outputs_equal;     /* -1 not run, 0 differ, 1 equal */
} tmap_eval;

tmap_status tmap_evaluate(tmap_cuda *c, tmap_manifest *m, const tmap_eval_opts *o,
                          tmap_eval *out, tmap_error *err);
void tmap_eval_free(tmap_eval *e);

/* -------------------------------------------- the runs a model is fit on */

/* The runs a BBV predictor is fitted on (`threadmap train` from files, the
 * bench from its profiling runs), checked alike as they are added. */
typedef struct tmap_train_set {
    size_t nruns, p;          /* runs; features per thread */
    double **feat;            /* [nruns] rows x p, owned */
    tmap_bbv *bbv;            /* [nruns], owned */
    tmap_regress_run *runs;   /* [nruns] views of feat and bbv, for tmap_regress_* */
    char **blocks;            /* the first run's block names (owned), or NULL */
    size_t nblocks;
} tmap_train_set;

/* Adds a run: feat (rows x p), *bbv and names (bbv->nblocks names, or NULL)
 * move into the set, also on failure; refused (the message names `what`)
 * unless rows are its threads and p, the block count and the names are the
 * first run's. */
tmap_status tmap_train_add(tmap_train_set *t, double *feat, size_t rows, size_t p, tmap_bbv *bbv,
                           char **names, const char *what, tmap_error *err);
/* Eq. 1 fitted on every run (tmap_regress_fit). */
tmap_status tmap_train_fit(const tmap_train_set *t, const char *kernel,
                           const char *const *feature_names, tmap_predictor *out,
                           tmap_error *err);
size_t tmap_train_threads(const tmap_train_set *t);
void tmap_train_free(tmap_train_set *t);

/* ------------------------------------------------ checking a manifest */

#define TMAP_CHECK_MAX_FINDINGS 8

/* What tmap_pipeline_check found.  A finding is a problem with the
 * manifest (it would fail or pass wrong data on the GPU); the safety
 * analysis' verdict is information, not a finding. */
typedef struct tmap_check {
    char manifest[1024];
    char entry[256];          /* the PTX entry name ("" if not compiled) */
    int loaded, compiled, generated, features_done, safety_done;
    unsigned grid[3], block[3], shared_bytes;
    size_t threads, nargs, narrays, nfeatures;
    double bytes;             /* the arrays' device memory */
    uint64_t seed;
    tmap_safety safety;       /* when safety_done */
    size_t nfindings;         /* at most TMAP_CHECK_MAX_FINDINGS are kept */
    tmap_error findings[TMAP_CHECK_MAX_FINDINGS];
} tmap_check;

/*
 * Everything short of a launch, without a GPU: loads the manifest, compiles
 * its kernel (NVRTC, the manifest's arch or compute_90) and matches the
 * arguments to its .param list, generates the arrays from `seed`, evaluates
 * every feature for every thread (indices within their arrays), and runs
 * the safety analysis.  Steps that depend on a failed one are skipped.
 * Returns TMAP_OK when nothing was found, else the first finding's status
 * with its message in err; *out is filled either way.
 */
tmap_status tmap_pipeline_check(const char *manifest, uint64_t seed, tmap_check *out,
                                tmap_error *err);
/* tmap_cuda_open for the pipeline of a manifest: without a GPU or driver
 * (TMAP_ERR_NO_DEVICE), the manifest is checked (seed: its input) and its
 * first finding, if any, is returned instead, so that errors in the
 * manifest are not hidden behind the missing GPU. */
tmap_status tmap_pipeline_open(const char *manifest, uint64_t seed, int ordinal, tmap_cuda **out,
                               tmap_error *err);
/* Prints a check as text, or JSON (docs/cli.md, `threadmap check`). */
tmap_status tmap_check_print(const tmap_check *c, int json, FILE *out, tmap_error *err);

/* ----------------------------------------------------- profiling folder */

typedef struct tmap_profile_dir_opts {
    const char *out;   /* the folder (created if missing) */
    long runs;         /* inputs to profile, >= 1 */
    uint64_t seed;     /* run r uses seed + r */
    uint32_t sample;   /* count every sample-th thread block, >= 1 */
    int quiet;         /* no progress line per run on stderr */
} tmap_profile_dir_opts;

/* Profiles the manifest's kernel on o->runs generated inputs and writes
 * o->out/kernel.ptx, runN.bbv.npy (+ sidecar), runN.features.npy (when the
 * manifest has features) and profile.json (docs/cli.md). */
tmap_status tmap_pipeline_profile(tmap_cuda *c, const char *manifest,
                                  const tmap_profile_dir_opts *o, tmap_error *err);

/* ------------------------------------------------ the evaluation (bench) */

/* The paper's numbers (GTX480) and the issue's targets. */
#define TMAP_BENCH_PAPER_SCHEDULED_ERR 6.2  /* % points, compute-bound kernels */
#define TMAP_BENCH_PAPER_WEIGHTED_ERR 12.7
#define TMAP_BENCH_PAPER_GMAX_SPEEDUP 2.2   /* average, with overhead */
#define TMAP_BENCH_PAPER_SORT_SPEEDUP 1.7
#define TMAP_BENCH_PAPER_GREEDY_SPEEDUP 1.6
#define TMAP_BENCH_TARGET_SCHEDULED_ERR 5.0
#define TMAP_BENCH_TARGET_SM90_ERR 10.0     /* issue 16: the SM model's mean error (pp), */
#define TMAP_BENCH_TARGET_SM90_SIGN 0.9     /* the share of signs right, */
#define TMAP_BENCH_TARGET_SM90_BEST 12      /* the kernels whose best is right (of 14) */
#define TMAP_BENCH_TARGET_GMAX_SPEEDUP 2.2
#define TMAP_BENCH_WITHIN 0.05              /* regroup() within 5% of the best */
#define TMAP_BENCH_TARGET_REGROUP_ONE 1.5   /* regroup() with overhead, geometric
                                               mean, divergent kernels, 1 launch */
#define TMAP_BENCH_TARGET_REGROUP_MANY 1.8  /* the same at --launches > 1 (1000) */
#define TMAP_BENCH_TARGET_FLOOR 0.97        /* no kernel slower than this under regroup() */
#define TMAP_BENCH_MEMORY_BOUND 0.5         /* fraction of peak DRAM bandwidth, used
                                               without the SM model's terms */
/* tmap_bench_kernel.bound_by: the unit against its peak. */
enum { TMAP_BENCH_BY_ISSUE, TMAP_BENCH_BY_L2, TMAP_BENCH_BY_DRAM };
#define TMAP_BENCH_MOVES 0.05            /* a regrouping that moves the kernel time */
#define TMAP_BENCH_TIME_LIMIT_S 600.0       /* the whole default set on one GPU */

/* The metrics whose predicted improvement is compared with the measured one. */
typedef enum tmap_bench_metric {
    TMAP_BM_WEIGHTED,      /* BBV-weighted, eq. 5: 1 - M_c / M_orig */
    TMAP_BM_SCHEDULED,     /* BBV-weighted-scheduled: 1 - M_c / M_orig */
    TMAP_BM_DIV_WARPS,     /* divergent warps: relative reduction */
    TMAP_BM_DIV_BRANCHES,  /* divergent branches: relative reduction */
    TMAP_BM_SM90,          /* the SM model (docs/model.md): 1 - T_c / T_orig */
    TMAP_BM_COUNT
} tmap_bench_metric;

/* "bbv_weighted", "bbv_weighted_scheduled", "divergent_warps",
 * "divergent_branches", "sm90" (CSV/JSON keys) and "BBV-weighted"...
 * (tables). */
const char *tmap_bench_metric_key(tmap_bench_metric m);
const char *tmap_bench_metric_label(tmap_bench_metric m);

/* The regroupings the summaries go over, in plan order. */
#define TMAP_BENCH_NALGOS 4
extern const char *const tmap_bench_algos[TMAP_BENCH_NALGOS]; /* sorting greedy greedy-max key */

#define TMAP_BENCH_MAXOPT 8

/* One grouping of one kernel: inputs first, then what tmap_bench_derive
 * computes.  Times in ms; NAN where not measured. */
typedef struct tmap_bench_option {
    char name[24];        /* "original" (always option 0), "sorting"... */
    int available;        /* the plan computed it; note says why not */
    char note[200];
    int chosen;           /* the plan (regroup()) picked it */
    double kernel_ms;     /* measured median kernel time */
    double apply_ms;      /* measured cost of applying (gather + scatter) */
    double algo_ms;       /* CPU time of the algorithm */
    int outputs_equal;    /* -1 not checked, 0 differ, 1 equal to the original's */
    int on_gpu;           /* regroup() on the GPU ("gpu-path"): key, sort and
                             gather are in algo_ms (once per input), the kernel
                             and the scatter in kernel_ms; no CPU prediction;
                             no model metrics */
    tmap_metrics m;       /* the model under this grouping, without its
                             per-warp arrays (NULL); read only when available */

    /* derived */
    int valid;            /* measured and outputs equal: counts in every summary */
    double total_ms;      /* kernel + apply + (predict + algo) / launches */
    double speedup_kernel, speedup_total;   /* original kernel time / this */
    double predicted[TMAP_BM_COUNT];        /* improvement, fraction */
    double measured_impr;                   /* 1 - kernel / original kernel */
    double measured_impr_total;             /* 1 - total / original kernel */
    double error_pp[TMAP_BM_COUNT];         /* |predicted - measured| x 100 */
    double zero_div_model;    /* zero-divergence / scheduled: 1 = at it */
    double zero_div_measured; /* (original ms x zero-divergence / scheduled(original))
                                 / kernel ms */
} tmap_bench_option;

/* One kernel of the run. */
typedef struct tmap_bench_kernel {
    char name[64];
    char manifest[512];
    char entry[128];
    int ok;               /* the pipeline ran to the end; else error says why */
    char error[512];
    size_t threads, nwarps;
    double branch_executions;  /* warp executions of branches (Table IV total) */
    char mechanism[32];
    char origin[512];     /* where the BBVs came from */
    char decision[512];   /* the plan's decision in words */
    char model[512];      /* the predictor file, or why there is none */
    size_t nr2;           /* per-block R^2 of the fit */
    double *r2;           /* [nr2] or NULL; the filler owns it (the CLI mallocs it) */
    double cv_rms;        /* cross-validated RMS error of the BBV counts; NAN: none */
    int cv_by_run;        /* 1: leave one profiling run out; 0: k-fold over threads */
    size_t train_threads; /* profiled rows the predictor was fitted on */
    double predict_ms;    /* CPU time of eq. 1 on the input's features, per launch
                             (NAN: BBVs measured, no prediction) */
    double overlap_algo_ms; /* regroup() on the GPU with overlap: the per-input part
                               of its time (what the side stream did not hide),
                               as the gpu-path option's algo_ms (NAN: none) */
    double features_ms;   /* CPU time to compute those features with the manifest's
                             expressions (the CPU path's, for eq. 1 on the CPU):
                             reported, not in total_ms (NAN: none) */
    double gpu_features_ms; /* regroup() on the GPU: the same features computed by
                               one kernel per new input (tmap_manifest_features_gpu,
                               median, CUDA events), inside the gpu-path option's
                               algo_ms and so its total (NAN: none) */
    double bytes;         /* minimum DRAM traffic: input + output arrays */
    double sm_clock_khz;  /* the SM clock the model's cycles are read at (0: none) */
    double wall_s;        /* the whole kernel's pipeline, wall clock */
    int reps;             /* timed launches per measurement */
    size_t noptions;
    tmap_bench_option opt[TMAP_BENCH_MAXOPT];

    /* derived */
    double gbps;          /* bytes / original kernel time */
    double bw_fraction;   /* gbps / peak; NAN if the peak is unknown */
    double issue_fraction; /* estimated: the SM model's busiest sub-partition's
                              issue cycles (opt[0].m.sm.issue) over the measured
                              original kernel's cycles; NAN without the model */
    double l2_fraction;   /* estimated: the SM model's memory term (the kernel's
                              sectors at the L2's peak bandwidth) over the same */
    int bound_by;         /* the unit busiest against its peak, as Nsight
                             Compute's speed of light: TMAP_BENCH_BY_* (-1: none) */
    int memory_bound;     /* 1 memory (L2 or DRAM busiest), 0 compute (SM issue
                             busiest), -1 unknown; without the model's terms,
                             DRAM at TMAP_BENCH_MEMORY_BOUND of its peak */
    int divergent;        /* the original has divergent warps */
    double headroom;      /* 1 - zero-divergence / scheduled of the original
                             (model), a fraction */
    double error_pp[TMAP_BM_COUNT]; /* mean over valid regroupings; NAN: none */
    size_t nerr;          /* regroupings behind error_pp */
    int best;             /* valid option of least total_ms (-1: none) */
    int chosen;           /* the plan's option (0: left alone) */
    double regroup_ratio; /* total(chosen) / total(best) */
    int regroup_ok;       /* chosen valid and regroup_ratio <= 1 + TMAP_BENCH_WITHIN */
    int outputs_ok;       /* no option's outputs differ */
} tmap_bench_kernel;

/* The whole run. */
typedef struct tmap_bench_run {
    char device[256];
    char arch[16];
    int sms, sm_clock_mhz, mem_clock_mhz, bus_width_bits;
    char driver[64];      /* kernel driver version, e.g. "580.159.04" */
    char cuda[32];        /* CUDA version of the driver API, e.g. "13.0" */
    char nvrtc[32];
    char date[32];        /* UTC, ISO 8601 */
    char command[2048];
    char bbv_source[32];  /* "predicted" or "measured" */
    char profile_seeds[128];
    unsigned long long seed;
    int launches;         /* launches per computed permutation */
    double peak_gbps;     /* memory clock x bus width x 2; 0 unknown */
    double wall_s;
    size_t nkernels;
    tmap_bench_kernel *k;
} tmap_bench_run;

/* One algorithm's speedups over the divergent kernels where it was valid. */
typedef struct tmap_bench_speedup {
    size_t n;             /* kernels counted */
    size_t missing;       /* divergent kernels where it was not valid */
    double geo_kernel, geo_total;   /* geometric means; NAN if n == 0 */
    double mean_total, max_total;
} tmap_bench_speedup;

typedef struct tmap_bench_summary {
    size_t ok, failed;            /* kernels that ran / did not */
    size_t compute, memory;       /* of the ok ones */
    size_t divergent;
    double mae_compute[TMAP_BM_COUNT];  /* mean of kernel errors, compute-bound */
    size_t n_compute[TMAP_BM_COUNT];
    double mae_all[TMAP_BM_COUNT];
    size_t n_all[TMAP_BM_COUNT];
    size_t sign_right[TMAP_BM_COUNT]; /* valid regroupings that move the kernel
                                         by more than TMAP_BENCH_MOVES whose
                                         predicted sign is the measured one */
    size_t sign_n;                    /* those regroupings */
    size_t best_ok[TMAP_BM_COUNT];    /* kernels whose best predicted valid option
                                         (the original included) measures within
                                         TMAP_BENCH_WITHIN of the fastest kernel */
    size_t best_n;                    /* kernels with a valid regrouping */
    tmap_bench_speedup speedup[TMAP_BENCH_NALGOS];
    tmap_bench_speedup regroup;   /* the chosen option of each divergent kernel */
    tmap_bench_speedup regroup_overlap; /* the same, the GPU path with overlap
                                           (overlap_algo_ms) where measured */
    double regroup_min;           /* least speedup with overhead of the chosen
                                     option over every ok kernel; NAN: none */
    int regroup_min_kernel;       /* its kernel, -1: none */
    size_t regroup_ok, regroup_n;
    size_t outputs_bad;           /* kernels with an option whose outputs differ */
} tmap_bench_summary;

/* 1 - cand / orig; NAN unless both are finite and orig > 0. */
double tmap_bench_improvement(double orig, double cand);
/* Relative reduction of a count, 1 - cand / orig; 0 when both are 0; NAN
 * when orig is 0 and cand is not, or either is not finite. */
double tmap_bench_reduction(double orig, double cand);
/* Geometric mean of n positive values; NAN if n == 0 or one is not > 0. */
double tmap_bench_geomean(const double *v, size_t n);
/* Whether `chosen` is within `tol` (a fraction) of `best`. */
int tmap_bench_within(double chosen, double best, double tol);
/* Peak DRAM bandwidth in GB/s: memory clock x bus width x 2 (double data
 * rate); 0 if either is unknown. */
double tmap_bench_peak_gbps(int mem_clock_khz, int bus_width_bits);
/* Index of the option named `name`, or -1. */
int tmap_bench_find(const tmap_bench_kernel *k, const char *name);

/* Fills the derived fields of k (options, then the kernel's). */
void tmap_bench_derive(tmap_bench_kernel *k, int launches, double peak_gbps);
/* Derives every kernel and fills s. */
void tmap_bench_summarize(tmap_bench_run *r, tmap_bench_summary *s);

/* ------------------------------------ one kernel of `threadmap bench` */

/* Profiling runs on the profiling seeds, the predictor (eq. 1) trained and
 * saved, tmap_evaluate on the evaluation seed with every candidate applied,
 * and the plain data above filled in. */
#define TMAP_BENCH_MAXSEEDS 16

typedef struct tmap_bench_cfg {
    const char *out;              /* the run's folder; the kernel's is out/NAME */
    uint64_t seed;                /* evaluation input */
    uint64_t profile_seeds[TMAP_BENCH_MAXSEEDS];
    size_t nseeds;
    int reps, warmup;             /* requested timed launches (capped by budget_s) */
    int launches;                 /* launches reusing one permutation: the plan's too */
    long sample;                  /* profile every sample-th thread block; 0: auto */
    int measured_bbv;             /* 1: profile the evaluation input instead of predicting */
    const char *table;            /* latency table, or NULL: the GPU's default */
    int paper_metric;             /* rank the candidates by the paper's
                                     BBV-weighted-scheduled; 0: the SM model */
    double budget_s;              /* the whole run's time budget */
    size_t nkernels;              /* kernels in the run (shares the budget) */
    int quiet;
    /* Called with each kernel's evaluation and folder, before the evaluation
     * is freed (the CLI writes the per-kernel report there); may be NULL. */
    tmap_status (*on_eval)(const tmap_eval *e, const char *dir, void *user, tmap_error *err);
    void *on_eval_user;
} tmap_bench_cfg;

/* Runs kernel `index` (0-based, for progress) from `manifest`.  On failure
 * out->ok is 0, out->error says why, and the status is returned; out->r2
 * (malloc'ed) is freed by the caller in every case. */
tmap_status tmap_bench_kernel_run(tmap_cuda *c, const tmap_device_info *d, const char *manifest,
                                  const tmap_bench_cfg *cfg, size_t index, tmap_bench_kernel *out,
                                  tmap_error *err);

/*
 * The regrouper: regroup() on the GPU with measured feedback (experimental;
 * docs/regrouper.md).  Made once per kernel launch shape; before each launch
 * it either leaves the launch alone or computes a key per thread (the
 * caller's `key` function enqueues it on the stream), sorts the threads by
 * it on the GPU, gathers the per-thread arrays into the new order; after
 * the launch it scatters the outputs back, so the caller sees the original
 * launch's results.  The model proposes, the GPU decides: the first
 * launches try each candidate `trial_launches` times, timed with CUDA
 * events read later without waiting (no extra launches: every trial launch
 * is a real one with the right results); then the candidate of least
 * median time is kept if it beats the original's by `threshold`, and
 * otherwise every later launch is left alone.
 *
 * Remap cache and persistent layout (zheng2020 5.2): `signature` names the
 * input; while it is unchanged (and not 0), the last permutation is reused
 * (no key, no sort) and, when the previous launch was regrouped the same
 * way, the copies are still in the regrouped order (the kernel updated them
 * and the scatter wrote them back), so nothing is gathered either.  Change
 * the signature whenever anything other than the kernel changes an array
 * or the data the key is computed from.
 */
typedef enum tmap_regrouper_cand {
    TMAP_REGROUPER_ORIGINAL,    /* the launch left alone */
    TMAP_REGROUPER_SORT_GRID,   /* threads sorted by key, heaviest first, over the grid */
    TMAP_REGROUPER_SORT_BLOCK,  /* the same within each thread block */
    TMAP_REGROUPER_BIN_DEAL,    /* grid order dealt across the thread blocks */
    TMAP_REGROUPER_GREEDY,      /* Greedy on the key's value classes (grid; asked for only) */
    TMAP_REGROUPER_GREEDY_MAX,  /* Greedy-Max on them (grid; asked for only) */
    TMAP_REGROUPER_LAM,         /* LAM on them, all on the GPU (grid) */
    TMAP_REGROUPER_COUNT
} tmap_regrouper_cand;

/* The value classes (R) of the key that Greedy, Greedy-Max and LAM work
 * on: zhang2010's R = 10. */
#define TMAP_REGROUPER_CLASSES 10

const char *tmap_regrouper_cand_name(tmap_regrouper_cand c);

/* Writes one double per thread (the work it will do, larger: heavier) into
 * the device array `key`, enqueued on `stream`; returns 0 or a CUDA error. */
typedef int (*tmap_regrouper_key_fn)(void *user, uint64_t key, void *stream);

typedef struct tmap_regrouper_opts {
    unsigned candidates;            /* bits 1u << cand; 0: all the scope allows but
                                       Greedy and Greedy-Max, whose host step waits
                                       for the GPU (first: {0} initializes it in C++ too) */
    tmap_regroup_scope scope;       /* GRID allows every candidate, BLOCK only
                                       those that keep threads in their block
                                       (what the safety analysis allows) */
    int trial_launches;             /* timed launches per candidate; 0: 3 */
    double threshold;               /* 0: 0.03 (3% faster than the original) */
    tmap_regrouper_key_fn key;      /* the key: the caller's function, or */
    void *key_user;
    const tmap_predictor *model;    /* without `key`: each thread's eq. 11 latency
                                       from eq. 1 on the GPU (tmap_gpu_regroup_cost) */
    const double *lat;              /* with model: [model->nblocks] block latencies */
    uint64_t features;              /* with model: device double [threads][nfeatures],
                                       read at each launch that needs a key: none once
                                       tmap_regrouper_chosen is TMAP_REGROUPER_ORIGINAL,
                                       so a caller may stop computing them then */
    tmap_kernel *redirected;        /* the kernel redirected (tmap_redirect_load): each
                                       algorithm is then also tried by redirection, which
                                       moves no data (launch with tmap_regrouper_launch);
                                       NULL: by layout transform only */
    const tmap_predictor *alt_model; /* with model: a second key from the same features,
                                       each algorithm also tried by it (e.g. a one-block
                                       model that reads the manifest's key feature) */
    const double *alt_lat;          /* its block latencies */
    const char *alt_name;           /* what it is, for the candidates' names */
    int overlap;                    /* 1: tmap_regrouper_prepare makes the next input's
                                       permutation beside the current kernel */
} tmap_regrouper_opts;

typedef struct tmap_regrouper tmap_regrouper;

/* l: the launch's shape and arguments (array pointers are read here and
 * must stay where they are); arrays: its per-thread arrays. */
tmap_status tmap_regrouper_create(tmap_cuda *c, const tmap_launch *l,
                                  const tmap_thread_array *arrays, size_t narrays,
                                  const tmap_regrouper_opts *o, tmap_regrouper **out,
                                  tmap_error *err);
void tmap_regrouper_free(tmap_regrouper *r);
/* Before the caller's own launch on `stream`: then launch with array i at
 * tmap_regrouper_ptr(r, i), then call tmap_regrouper_end. */
tmap_status tmap_regrouper_begin(tmap_regrouper *r, uint64_t signature, void *stream,
                                 tmap_error *err);
uint64_t tmap_regrouper_ptr(const tmap_regrouper *r, size_t i);
tmap_status tmap_regrouper_end(tmap_regrouper *r, void *stream, tmap_error *err);
/* begin, the kernel (driver API, l's arguments with the arrays replaced), end. */
tmap_status tmap_regrouper_launch(tmap_regrouper *r, tmap_kernel *k, uint64_t signature,
                                  void *stream, tmap_error *err);
/* Overlap (opts.overlap; zhang2010 4.1, zheng2020 5.1): the input of
 * `signature` (not 0) is the one after the next launch, and what its key
 * reads (the model's features, the key function's data) is in place as
 * far as `stream` holds now and stays so until that input's launch.  At
 * the next begin/launch, after that launch's own preparation and before
 * its kernel, the key and sort for `signature` are enqueued on the GPU
 * regroup path's own stream (tmap_gpu_regroup_side), ordered by events,
 * so they run beside the kernel.  At the launch of `signature`, if they
 * are done the permutation is taken (stream-ordered copy); if not, the
 * launch goes ahead with the permutation it has (the last input's: any
 * permutation gives the same results) or, having none, is left alone,
 * and is counted late.  Does nothing while on trial or when the trial
 * left launches alone. */
tmap_status tmap_regrouper_prepare(tmap_regrouper *r, uint64_t signature, void *stream,
                                   tmap_error *err);
/* Prepared permutations taken, and launches that found theirs not done. */
void tmap_regrouper_overlap_counts(const tmap_regrouper *r, size_t *used, size_t *late);
/* Reads the trial times that are in (wait: first waits for the stream and,
 * with overlap, the regrouper's own). */
tmap_status tmap_regrouper_poll(tmap_regrouper *r, int wait, void *stream, tmap_error *err);
/* The algorithm kept (a tmap_regrouper_cand), or -1 while on trial; its
 * name with the mechanism ("sorting (grid), redirected"), "" while on
 * trial; `why` the decision in words with every candidate's median time. */
int tmap_regrouper_chosen(const tmap_regrouper *r);
const char *tmap_regrouper_chosen_name(const tmap_regrouper *r);
const char *tmap_regrouper_why(const tmap_regrouper *r);
/* The trial's median time per launch, everything counted, of the original
 * and of the candidate kept (ms); NAN for both while on trial. */
void tmap_regrouper_medians(const tmap_regrouper *r, double *original_ms, double *chosen_ms);

/*
 * The measured choice of a data layout (issue 19 item 4; docs/memory.md):
 * the layouts tmap_memre_propose proposes (the original first) go on trial
 * over the first launches, as the regrouper's candidates do (each `reps`
 * times, in turns); the caller builds the layout next() names, launches,
 * times the launch (the gather of A' included when it runs per launch) and
 * records it.  Each time counts the layout's once_ms spread over
 * `launches`; the layout of least median is kept if it beats the
 * original's by `threshold`, else the reference is left alone.
 */
typedef struct tmap_memchooser tmap_memchooser;

tmap_status tmap_memchooser_create(const tmap_memre_choice *v, size_t n, int reps,
                                   double threshold, double launches, tmap_memchooser **out,
                                   tmap_error *err);
void tmap_memchooser_free(tmap_memchooser *m);
/* The index into v of the next launch's layout; *timed: record its time. */
int tmap_memchooser_next(tmap_memchooser *m, int *timed);
/* A timed launch of cand (as next() handed it out) took launch_ms. */
void tmap_memchooser_record(tmap_memchooser *m, int cand, float launch_ms);
/* The index into v kept, -1 while on trial; the decision in words. */
int tmap_memchooser_chosen(const tmap_memchooser *m);
const char *tmap_memchooser_why(const tmap_memchooser *m);

/*
 * zhang2011's adaptive optimization ratio r (sec. 5.4, Fig. 8) for partial
 * duplication (tmap_memre_partial; docs/memory.md): the caller launches
 * with the fraction next() names (0: the original) and records the
 * kernel's time and the transform's (the build and gather of that
 * fraction's copies).  Launch 1 runs the original (T_org); launch 2 runs
 * r0 (T_tr, T_sav = T_org - T_opt), and the reference is left alone when
 * T_tr > T_org.  Then the paper's estimate, r' = r0 T_org / (T_tr +
 * T_sav), in both settings.  `overlap` (the paper's setting: the transform
 * for the next launch runs beside this one): a failure is a transform
 * slower than its kernel.  Serial (the transform precedes its kernel, as
 * a gather of data that changes does): left alone when T_sav <= T_tr at
 * r0, and a failure is a launch (kernel + transform) slower than the best
 * launch at a lower fraction (the original included; not its own earlier
 * launches).  A failure
 * lowers r by `step` (to 0: left alone); two successes raise it a step if
 * it was never lowered, else fix it; r = 1 after two successes is fixed.
 * r0, step 0: 0.1.
 */
typedef struct tmap_memfrac tmap_memfrac;

tmap_status tmap_memfrac_create(double r0, double step, int overlap, tmap_memfrac **out,
                                tmap_error *err);
void tmap_memfrac_free(tmap_memfrac *f);
/* The fraction the next launch runs; once done, the one kept. */
double tmap_memfrac_next(const tmap_memfrac *f);
void tmap_memfrac_record(tmap_memfrac *f, float kernel_ms, float transform_ms);
/* 1 once r is fixed; the state or decision in words. */
int tmap_memfrac_done(const tmap_memfrac *f);
const char *tmap_memfrac_why(const tmap_memfrac *f);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_PIPELINE_H */

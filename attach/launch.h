/*
 * launch.h (attach) -- one intercepted launch, and profiling it: the
 * kernel's PTX instrumented with the counter pass and launched in place of
 * the original (launch.c), the per-thread features read from its
 * arguments, and the result written to the output folder (record.c).
 * Private to attach/.
 */
#ifndef TMAP_ATTACH_LAUNCH_H
#define TMAP_ATTACH_LAUNCH_H

#include <stdio.h>

#include <cuda.h>

#include "threadmap/attach.h"

/* A launch as the application asked for it.  relaunch() makes the same
 * call (same driver entry point, stream, parameters, attributes) with the
 * function handle replaced by f, and returns the driver's result. */
typedef struct tmap_attach_call {
    void *function;              /* the handle launched: CUfunction or CUkernel */
    unsigned grid[3], block[3], shared_bytes;
    CUstream stream;
    void **params, **extra;
    CUresult (*relaunch)(const struct tmap_attach_call *c, CUfunction f);
    const void *raw;             /* the intercepted call's own arguments */
    int per_thread_stream;       /* a _ptsz entry point: stream 0 is the thread's */
    unsigned nattrs;             /* cuLaunchKernelEx's launch attributes */
} tmap_attach_call;

/* The bytes of parameter i (p its layout): from kernelParams, or from the
 * packed buffer of the `extra` form; NULL when the call has neither. */
const void *tmap_attach_param_value(const tmap_attach_call *c, const tmap_param *p, size_t i);

/* The name of a kernel's PTX in messages (params.c): it came from the
 * application, not from a file ("<PTX of K from the application's module
 * image>", tmap_ptx_describe). */
const char *tmap_attach_params_label(const char *entry, char *buf, size_t size);

/* What profiling one launch gave. */
typedef struct tmap_attach_result {
    tmap_bbv bbv;
    tmap_counting *counting;     /* the instrumented kernel; its CFG names the columns */
    tmap_param *params;
    size_t nparams;
    double *features;            /* [threads][nfeatures], or NULL */
    size_t nfeatures;
} tmap_attach_result;

/*
 * Profiles the launch: reads the features (before the kernel runs: it may
 * overwrite them), launches the instrumented kernel through c->relaunch
 * and waits for it.  *launched is set once the instrumented launch was
 * made (its driver result in *cu): the caller must then not launch the
 * original; when it is 0 (nothing ran: an error before the launch, or the
 * driver refused it) the caller launches the original as usual.
 */
tmap_status tmap_attach_launch(tmap_cuda *cuda, const char *ptx, const char *entry,
                               const tmap_attach_call *c, const tmap_attach_feature *f,
                               size_t nf, tmap_attach_result *res, int *launched, CUresult *cu,
                               tmap_error *err);
void tmap_attach_result_free(tmap_attach_result *r);

/* record.c: the files of one profiled launch in DIR/KERNEL/ (kernel.ptx on
 * the first run, runN.bbv.npy and its sidecar, runN.features.npy, and
 * profile.json rewritten with every run so far, as `threadmap train`
 * reads it), and a line in DIR/launches.tsv.  *summary (a json_t *, NULL
 * at first) holds the kernel's profile.json between calls. */
tmap_status tmap_attach_record(const char *dir, const char *entry, const char *ptx,
                               const tmap_attach_call *c, const tmap_attach_result *r,
                               const tmap_attach_opts *o, const tmap_device_info *d,
                               long launch, void **summary, tmap_error *err);

/* ------------------------------------------------- run mode (regroup.c) */

typedef struct tmap_attach_regroup tmap_attach_regroup;

typedef struct tmap_attach_regroup_opts {
    const char *entry;
    const char *key;                      /* the key expression (key.c), or */
    const char *predictor;                /* a predictor file (tmap_predictor_load) over
                                             the features, in their order */
    const char *arch;                     /* "sm_90": the default latency table's */
    const tmap_attach_feature *features;  /* names the key may use */
    size_t nfeatures;
    int trial_launches;                   /* 0: the regrouper's default */
    double threshold;                     /* 0: the regrouper's default */
    CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr); /* cuMemGetAddressRange */
} tmap_attach_regroup_opts;

/* What run mode did with one kernel, for the summary at exit. */
typedef struct tmap_attach_run_stats {
    char kernel[256];
    long seen;          /* selected launches */
    long trial;         /* launched through the regrouper before the trial decided
                           (its times are read without waiting: launches queued
                           meanwhile count too) */
    long regrouped;     /* launched regrouped after the trial kept a candidate */
    long alone;         /* left alone otherwise: another launch shape, a graph
                           capture, launch attributes, an error */
    double saved_ms;    /* over the regrouped launches: original - kept, trial medians */
    double setup_ms;    /* wall time of making the kernel's regrouper (safety analysis,
                           the key's NVRTC compilation, two JIT loads, allocations) */
    double original_ms, chosen_ms; /* the trial's medians per launch; NAN before */
    char chosen[96];    /* the candidate kept ("" while on trial) */
    char note[1024];    /* the trial's decision in words, or why the kernel is left alone */
} tmap_attach_run_stats;

/* May `entry` be regrouped by redirection?  Fails with the safety
 * analysis's findings (their PTX and source lines) when not. */
tmap_status tmap_attach_regroup_check(const char *ptx, const char *entry,
                                      tmap_regroup_scope *scope, tmap_error *err);
/* At the kernel's first selected launch c, in the current context. */
tmap_status tmap_attach_regroup_create(tmap_cuda *cuda, const char *ptx,
                                       const tmap_attach_call *c,
                                       const tmap_attach_regroup_opts *o,
                                       tmap_attach_regroup **out, tmap_error *err);
void tmap_attach_regroup_free(tmap_attach_regroup *g);
/* 1 when c has the launch shape g was made for. */
int tmap_attach_regroup_fits(const tmap_attach_regroup *g, const tmap_attach_call *c);
/* Launches c through the regrouper on `stream` (*launched 1), or leaves it
 * to the caller (*launched 0) once the trial kept the original; counts it
 * in s. */
tmap_status tmap_attach_regroup_launch(tmap_attach_regroup *g, const tmap_attach_call *c,
                                       void *stream, tmap_attach_run_stats *s, int *launched,
                                       tmap_error *err);
/* The trial's medians, the candidate kept and the decision into s. */
void tmap_attach_regroup_stats(const tmap_attach_regroup *g, tmap_attach_run_stats *s);
/* The summary at exit, a line per kernel ("threadmap run: KERNEL: ..."). */
void tmap_attach_regroup_summary(const tmap_attach_run_stats *s, size_t n, FILE *f);

#endif

/*
 * threadmap/report.h -- the report stage (stable): the performance-estimate
 * report of one kernel: the original launch and each candidate regrouping
 * side by side, with the model's metrics (BBV-weighted,
 * BBV-weighted-scheduled; the zero-divergence time once per kernel) next to
 * the older ones (divergent warps, divergent branches, SIMD efficiency),
 * measured times when there are any, and the decision.  Written as a text
 * table, Markdown, JSON, or a self-contained HTML page with SVG plots; one
 * grouping's metrics as `estimate` prints them; the plan as `regroup
 * --json` prints it.  Every key states its unit (docs/report.md).
 * And the writers of a bench run (experimental): CSV, JSON, Markdown, SVG.
 */
#ifndef THREADMAP_REPORT_H
#define THREADMAP_REPORT_H

#include <stdio.h>

#include "threadmap/pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One grouping of the threads: the original (identity) or a candidate. */
typedef struct tmap_report_row {
    const char *name;         /* "original", "sorting", "greedy-max"... */
    int available;            /* 0: not computed; note says why */
    const char *note;
    const tmap_metrics *m;    /* the model under this grouping (NULL if !available) */
    double gain;              /* predicted: 1 - t / t(original), t the plan's
                                 ranking model (sm90 or BBV-weighted-scheduled) */
    double algo_ms;           /* CPU time of the algorithm; NAN if none */
    double measured_ms;       /* measured kernel time; NAN if not measured */
    double apply_ms;          /* measured cost of applying it; NAN if not measured */
    int outputs_equal;        /* -1 not checked, 0 differ, 1 equal to the original's */
    int chosen;               /* the decision picked this row */
} tmap_report_row;

typedef struct tmap_report {
    const char *kernel;
    const char *origin;       /* where the BBVs come from, e.g. "measured on NVIDIA H200
                                 (recorded 2026-11-21)", "predicted by MODEL" */
    const char *device;       /* GPU the BBVs or times come from, or NULL */
    const tmap_bbv *bbv;      /* the (original order) BBVs */
    const double *lat;        /* [bbv->nblocks] block latencies */
    const char *const *block_names;   /* [bbv->nblocks] or NULL */
    const tmap_model_params *params;
    const char *latency_table;        /* path, or NULL (written relative to the
                                         current folder when below it) */
    const tmap_lat_report *fallbacks; /* opcodes that fell back, or NULL */
    size_t nrows;
    const tmap_report_row *rows;      /* rows[0] is the original */
    const char *decision;             /* the decision in words */
    const char *mechanism;            /* "layout transform", "redirection", or NULL */
    char gpu_path[1024];              /* regroup() on the GPU, measured, in words;
                                         "" when not part of the report */
    const tmap_cfg *cfg;              /* the blocks' CFG (bbv's columns), for the table of
                                         source lines (PTX with .loc lines); or NULL */
} tmap_report;

/* The four forms.  Each writes the whole report to f. */
tmap_status tmap_report_text(const tmap_report *r, FILE *f, tmap_error *err);
tmap_status tmap_report_markdown(const tmap_report *r, FILE *f, tmap_error *err);
tmap_status tmap_report_json(const tmap_report *r, FILE *f, tmap_error *err);
tmap_status tmap_report_html(const tmap_report *r, FILE *f, tmap_error *err);

/* One grouping's metrics, as `threadmap estimate` prints them: r->rows[0]
 * is the grouping (the original or a permutation's), the other rows are
 * not read.  Lines of text, or one flat JSON object (the keys of a report
 * row's metrics and the report's launch, table and fallback keys). */
tmap_status tmap_report_estimate_text(const tmap_report *r, FILE *f, tmap_error *err);
tmap_status tmap_report_estimate_json(const tmap_report *r, FILE *f, tmap_error *err);
/* The plan's candidates as one JSON object (`threadmap regroup --json`), in
 * the report's vocabulary; perm_path: where the chosen permutation went. */
tmap_status tmap_report_plan_json(const tmap_plan *p, const char *perm_path, FILE *f,
                                  tmap_error *err);

/* Writes DIR/report.{txt,md,json,html} (creating DIR and its parents). */
tmap_status tmap_report_write_dir(const tmap_report *r, const char *dir, tmap_error *err);

/* The report of an evaluation (tmap_evaluate): one row per plan candidate
 * (the identity is "original"), with measured times where they were taken.
 * Rows and names borrowed from e; valid while e lives.  rows has
 * TMAP_ALGO_COUNT entries of storage. */
void tmap_run_report(const tmap_eval *e, tmap_report_row *rows, const char **names,
                     tmap_report *r);

/* ------------------------------------------- bench writers (experimental) */

/* The writers (r derived: call tmap_bench_summarize first). */
tmap_status tmap_bench_csv(const tmap_bench_run *r, FILE *f, tmap_error *err);
tmap_status tmap_bench_json(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f,
                            tmap_error *err);
tmap_status tmap_bench_markdown(const tmap_bench_run *r, const tmap_bench_summary *s,
                                FILE *f, tmap_error *err);
/* Predicted vs measured improvement of one metric, one point per kernel x
 * regrouping, with the diagonal. */
tmap_status tmap_bench_svg_scatter(const tmap_bench_run *r, tmap_bench_metric m, FILE *f,
                                   tmap_error *err);
/* Speedup per kernel, one bar per regrouping; with_overhead: total_ms. */
tmap_status tmap_bench_svg_speedup(const tmap_bench_run *r, int with_overhead, FILE *f,
                                   tmap_error *err);
/* The plots' file names inside the output folder. */
void tmap_bench_scatter_file(tmap_bench_metric m, char *buf, size_t size);
const char *tmap_bench_speedup_file(int with_overhead);

/* Summarizes r and writes DIR/results.csv, results.json, report.md and the
 * plots (DIR created if missing). */
tmap_status tmap_bench_write_dir(tmap_bench_run *r, const char *dir, tmap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_REPORT_H */

/*
 * metrics.h -- the one writer of tmap_metrics (private to report/): every
 * output that states the model's metrics (report.json, estimate --json,
 * regroup --json, the bench's results.json and results.csv) writes them
 * through these functions, so that one key means one thing everywhere.
 * Keys state their units: _cycles, _pct (percent), _frac (fraction), _ms;
 * counts are bare.  docs/report.md lists the keys.
 */
#ifndef TMAP_REPORT_METRICS_H
#define TMAP_REPORT_METRICS_H

#include <jansson.h>
#include <stdio.h>

#include "threadmap/model.h"

/* SIMD efficiency in percent: 100 x active threads per warp instruction / 32. */
double tmap_report_metrics_simd_pct(const tmap_metrics *m);
/* A number, or null when NAN or infinite. */
json_t *tmap_report_metrics_num(double v);

/* Sets o's keys for the metrics of one grouping (m NULL: every one null). */
void tmap_report_metrics_json(json_t *o, const tmap_metrics *m);
/* Sets o's keys for what is one per kernel (warps, thread_blocks,
 * zero_divergence_cycles); m: the metrics of any grouping of the kernel. */
void tmap_report_metrics_kernel_json(json_t *o, const tmap_metrics *m);

/* results.csv: the grouping's columns' names, and its cells (empty for NULL
 * or NAN); each name and cell ends with a comma. */
void tmap_report_metrics_csv_head(FILE *f);
void tmap_report_metrics_csv(FILE *f, const tmap_metrics *m);

#endif

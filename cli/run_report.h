/*
 * run_report.h -- turning an evaluation (regroup/evaluate.h) into the
 * performance-estimate report (model/report.h), for `run` and `bench`.
 */
#ifndef TMAP_CLI_RUN_REPORT_H
#define TMAP_CLI_RUN_REPORT_H

#include "threadmap/report.h"
#include "threadmap/evaluate.h"

/* Rows and names borrowed from e; valid while e lives.  rows has
 * TMAP_ALGO_COUNT entries of storage. */
void tmap_run_report(const tmap_eval *e, tmap_report_row *rows, const char **names,
                     tmap_report *r);

#endif

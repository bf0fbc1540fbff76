/*
 * bench_priv.h -- what the bench writers share (private to report/):
 * Markdown escaping, number cells with "-" for NAN, and the targets
 * section of report.md.
 */
#ifndef TMAP_REPORT_BENCH_PRIV_H
#define TMAP_REPORT_BENCH_PRIV_H

#include <stdio.h>

#include "threadmap/report.h"

/* Writes s with Markdown's table and emphasis characters escaped. */
void tmap_bench_md(FILE *f, const char *s);
/* v formatted with fmt, or "-" when NAN or infinite; returns buf. */
const char *tmap_bench_cell(char *buf, size_t size, const char *fmt, double v);
/* "compute", "memory" or "unknown", and the unit that says so: "memory
 * (L2, est.)" where the model's terms estimate it. */
const char *tmap_bench_bound_word(const tmap_bench_kernel *k);
/* "sm_issue", "l2", "dram" (TMAP_BENCH_BY_*), "" for none (CSV/JSON). */
const char *tmap_bench_unit_key(int bound_by);
/* The model's speedup for a kernel if no warp diverged: scheduled /
 * zero-divergence of the original (NAN if unknown). */
double tmap_bench_zero_div_speedup(const tmap_bench_kernel *k);
/* Section (f) of report.md: each target met or missed, and why. */
void tmap_bench_targets(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f);

#endif

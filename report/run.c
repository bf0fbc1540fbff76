/*
 * run.c -- the report of an evaluation: one row per plan candidate
 * (the identity is "original"), with measured times where they were taken.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "threadmap/report.h"

/* regroup() on the GPU in one line: what the trial kept, and each launch's
 * time with its overhead against the original's. */
static void gpu_path(const tmap_eval *e, char *buf, size_t size)
{
    if (!e->gpu_ran) {
        snprintf(buf, size, "%s", e->gpu_note);
        return;
    }
    double t0 = e->original_ms, f = e->gpu_fresh_ms, c = e->gpu_cached_ms;
    int n = snprintf(buf, size, "%s kept; per launch, overhead counted: %.3f ms with a new "
                     "input (%.2fx; its features on the GPU %.3f ms of it)", e->gpu_chosen, f,
                     t0 / f, e->gpu_features_ms);
    if (n > 0 && (size_t)n < size && isfinite(c))
        n += snprintf(buf + n, size - (size_t)n, ", %.3f ms with the same input back to back "
                      "(%.2fx the original's %.3f ms back to back)", c, e->gpu_original_ms / c,
                      e->gpu_original_ms);
    if (n > 0 && (size_t)n < size && isfinite(e->gpu_overlap_ms))
        n += snprintf(buf + n, size - (size_t)n, ", %.3f ms with a new input and overlap "
                      "(%.2fx; %zu prepared permutations taken, %zu late)", e->gpu_overlap_ms,
                      t0 / e->gpu_overlap_ms, e->gpu_overlap_taken, e->gpu_overlap_late);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " against %.3f ms original; outputs %s; trial: %s", t0,
                 e->gpu_outputs_equal == 1 ? "equal" : "DIFFER", e->gpu_note);
}

void tmap_run_report(const tmap_eval *e, tmap_report_row *rows, const char **names,
                     tmap_report *r)
{
    if (!e || !rows || !r)
        return;
    for (size_t i = 0; i < e->plan.n; i++) {
        const tmap_candidate *c = &e->plan.cand[i];
        rows[i] = (tmap_report_row){i ? tmap_algo_name(c->algo) : "original",
                                    c->available,
                                    c->note,
                                    c->available ? &c->m : NULL,
                                    c->gain,
                                    i ? c->algo_ms : NAN,
                                    e->measured_ms[i],
                                    e->measured_apply_ms[i],
                                    e->outputs_equal[i],
                                    (int)i == e->plan.chosen};
    }
    for (size_t b = 0; b < e->cfg->nblocks; b++)
        names[b] = e->cfg->blocks[b].name;
    memset(r, 0, sizeof *r);
    r->kernel = e->entry;
    r->origin = e->origin;
    r->device = e->device.name;
    r->bbv = &e->bbv;
    r->lat = e->lat;
    r->block_names = names;
    r->params = &e->params;
    r->latency_table = e->table;
    r->fallbacks = &e->fallbacks;
    r->nrows = e->plan.n;
    r->rows = rows;
    r->decision = e->plan.why;
    r->mechanism = tmap_mechanism_name(e->mechanism);
    r->cfg = e->cfg;
    gpu_path(e, r->gpu_path, sizeof r->gpu_path);
}

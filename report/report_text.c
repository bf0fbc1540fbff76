/*
 * report_text.c -- the report as a terminal table: one row per grouping
 * (the original first, '*' on the chosen one), columns as wide as their
 * widest cell, then the decision, the inputs and the latency fallbacks.
 * And one grouping's metrics as lines (`threadmap estimate`).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/report.h"
#include "common/base.h"
#include "report/metrics.h"
#include "report/report_priv.h"

typedef char tmap_report_cellrow[TMAP_RC_COUNT][TMAP_REPORT_CELL];

/* Widths of the shown columns over the headings and all rows; the name
 * column has room for the two-character marker. */
static void widths(const tmap_report *r, tmap_report_cellrow *cells, int w[TMAP_RC_COUNT])
{
    for (int c = 0; c < TMAP_RC_COUNT; c++) {
        w[c] = (int)strlen(tmap_report_columns[c].head);
        for (size_t i = 0; i < r->nrows; i++) {
            int n = (int)strlen(cells[i][c]) + (c == TMAP_RC_NAME ? 2 : 0);
            w[c] = n > w[c] ? n : w[c];
        }
    }
}

static void print_line(const tmap_report *r, FILE *f, const char *const *text, const int *w,
                       const char *marker)
{
    for (int c = 0; c < TMAP_RC_COUNT; c++) {
        if (!tmap_report_col_shown(r, (tmap_report_col)c))
            continue;
        if (c == TMAP_RC_NAME)
            fprintf(f, "%s%-*s", marker, w[c] - 2, text[c]);
        else
            fprintf(f, "  %*s", w[c], text[c]);
    }
    fputc('\n', f);
}

static void print_table(const tmap_report *r, FILE *f, tmap_report_cellrow *cells)
{
    int w[TMAP_RC_COUNT];
    const char *text[TMAP_RC_COUNT];
    widths(r, cells, w);
    for (int c = 0; c < TMAP_RC_COUNT; c++)
        text[c] = tmap_report_columns[c].head;
    print_line(r, f, text, w, "  ");
    for (size_t i = 0; i < r->nrows; i++) {
        for (int c = 0; c < TMAP_RC_COUNT; c++)
            text[c] = cells[i][c];
        print_line(r, f, text, w, r->rows[i].chosen ? "* " : "  ");
    }
    fprintf(f, "(* chosen; gain = 1 - t / t(original), t: %s; n/a: not computed, "
               "-: not available)\n", r->params && r->params->sm
                                         ? "the SM model sm90's cycles"
                                         : "BBV-weighted-scheduled cycles");
    for (size_t i = 0; i < r->nrows; i++)
        if (!r->rows[i].available)
            fprintf(f, "%s: not computed: %s\n", cells[i][TMAP_RC_NAME],
                    r->rows[i].note && *r->rows[i].note ? r->rows[i].note : "no reason given");
}

static void print_caveat(const tmap_report *r, FILE *f)
{
    char buf[1024];
    const char *c = tmap_report_caveat(r, buf, sizeof buf);
    if (c)
        fprintf(f, "model caveat: %s\n", c);
}

static void print_fallbacks(const tmap_report *r, FILE *f)
{
    if (!r->fallbacks || r->fallbacks->n == 0) {
        fprintf(f, "fallback opcodes: none%s\n",
                r->latency_table ? " (every opcode matched the table exactly)"
                                 : " (block latencies were given)");
        return;
    }
    fprintf(f, "fallback opcodes (opcode -> table key, how, cycles, static count):\n");
    for (size_t i = 0; i < r->fallbacks->n; i++) {
        const tmap_lat_fallback *fb = &r->fallbacks->items[i];
        fprintf(f, "  %-24s -> %-18s %-10s %8g  x%zu\n", fb->opcode, fb->how.key,
                tmap_lat_match_name(fb->how.match), fb->how.latency, fb->count);
    }
}

static tmap_status report_text_c(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    if (s)
        return s;
    tmap_report_cellrow *cells = malloc(r->nrows * sizeof *cells);
    if (!cells)
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory");
    for (size_t i = 0; i < r->nrows; i++)
        tmap_report_cells(r, i, cells[i]);
    char shape[256], zero[256], table[4096];
    tmap_report_shape(r, shape, sizeof shape);
    tmap_report_zero_divergence(r, zero, sizeof zero);
    const char *path = tmap_report_table_path(r, table, sizeof table);
    fprintf(f, "threadmap performance estimate: %s\n", r->kernel ? r->kernel : "(unnamed kernel)");
    fprintf(f, "origin:    %s\n", r->origin ? r->origin : "not given");
    fprintf(f, "device:    %s\n", r->device ? r->device : "not given");
    fprintf(f, "launch:    %s\n", shape);
    fprintf(f, "zero-divergence time: %s\n\n", zero);
    print_table(r, f, cells);
    fprintf(f, "\ndecision:  %s\n", r->decision ? r->decision : "none recorded");
    fprintf(f, "mechanism: %s\n", r->mechanism ? r->mechanism : "not given");
    if (r->gpu_path[0])
        fprintf(f, "GPU path:  %s\n", r->gpu_path);
    fprintf(f, "latency table: %s\n", path ? path : "none (block latencies were given)");
    print_fallbacks(r, f);
    print_caveat(r, f);
    free(cells);
    tmap_status ls = tmap_report_lines_write(r, f, TMAP_LINES_TEXT, err);
    return ls ? ls : tmap_report_stream_status(f, "text report", err);
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_report_text(const tmap_report *r, FILE *f, tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = report_text_c(r, f, err);
    tmap_locale_restore(old);
    return st;
}

/* The SIMD efficiency line: of 32, in percent, and its two totals. */
static void estimate_simd(const tmap_metrics *m, FILE *f)
{
    if (isnan(m->simd_active_threads_per_inst)) {
        fprintf(f, "SIMD efficiency          n/a (needs --cfg)\n");
        return;
    }
    fprintf(f, "SIMD efficiency          %.2f of 32 active threads per warp instruction, %.1f %% "
               "(%.4g thread, %.4g warp instructions)\n",
            m->simd_active_threads_per_inst, tmap_report_metrics_simd_pct(m),
            m->thread_instructions, m->warp_instructions);
}

static tmap_status report_estimate_text_c(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    if (s)
        return s;
    const tmap_metrics *m = r->rows[0].m;
    char shape[256], zero[256], table[4096];
    tmap_report_shape(r, shape, sizeof shape);
    tmap_report_zero_divergence(r, zero, sizeof zero);
    const char *path = tmap_report_table_path(r, table, sizeof table);
    fprintf(f, "launch                   %s\n", shape);
    fprintf(f, "latency table            %s\n", path ? path : "none (block latencies were given)");
    fprintf(f, "BBV-weighted             %.1f cycles\n", m->bbv_weighted);
    fprintf(f, "BBV-weighted-scheduled   %.1f cycles\n", m->bbv_weighted_scheduled);
    /* bound as Nsight Compute's speed of light: the busier unit against its
     * peak over the time, here the model's (so both are estimates) */
    double c = m->sm.cycles > 0 ? m->sm.cycles : 1;
    if (isfinite(m->sm.cycles))
        fprintf(f, "SM model (sm90)          %.1f cycles: issue %.1f + stalls %.1f, memory %.1f "
                   "(%s-bound, estimated: SM issue %.0f%%, L2 %.0f%% of peak)\n", m->sm.cycles,
                m->sm.issue, m->sm.latency, m->sm.memory,
                m->sm.memory > m->sm.issue ? "memory" : "compute", 100 * m->sm.issue / c,
                100 * m->sm.memory / c);
    fprintf(f, "zero-divergence time     %s\n", zero);
    fprintf(f, "divergent warps          %.2f %%\n", m->divergent_warps_pct);
    if (isnan(m->divergent_branches))
        fprintf(f, "divergent branches       n/a (needs --cfg)\n");
    else
        fprintf(f, "divergent branches       %.0f of %.0f branch executions (estimate; %zu branch "
                   "blocks not estimable)\n",
                m->divergent_branches, m->branch_executions, m->branches_unestimated);
    estimate_simd(m, f);
    print_fallbacks(r, f);
    print_caveat(r, f);
    return tmap_report_stream_status(f, "estimate", err);
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_report_estimate_text(const tmap_report *r, FILE *f, tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = report_estimate_text_c(r, f, err);
    tmap_locale_restore(old);
    return st;
}

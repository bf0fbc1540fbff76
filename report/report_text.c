/*
 * report_text.c -- the report as a terminal table: one row per grouping
 * (the original first, '*' on the chosen one), columns as wide as their
 * widest cell, then the decision, the inputs and the latency fallbacks.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/report.h"
#include "common/base.h"
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
    fprintf(f, "(* chosen; weighted, scheduled, bound in cycles; gain = 1 - scheduled / "
               "scheduled(original); n/a: not computed, -: not available)\n");
    for (size_t i = 0; i < r->nrows; i++)
        if (!r->rows[i].available)
            fprintf(f, "%s: not computed: %s\n", cells[i][TMAP_RC_NAME],
                    r->rows[i].note && *r->rows[i].note ? r->rows[i].note : "no reason given");
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

tmap_status tmap_report_text(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    if (s)
        return s;
    tmap_report_cellrow *cells = malloc(r->nrows * sizeof *cells);
    if (!cells)
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory");
    for (size_t i = 0; i < r->nrows; i++)
        tmap_report_cells(r, i, cells[i]);
    char shape[256];
    tmap_report_shape(r, shape, sizeof shape);
    fprintf(f, "threadmap performance estimate: %s\n", r->kernel ? r->kernel : "(unnamed kernel)");
    fprintf(f, "origin:    %s\n", r->origin ? r->origin : "not given");
    if (r->device)
        fprintf(f, "device:    %s\n", r->device);
    fprintf(f, "launch:    %s\n\n", shape);
    print_table(r, f, cells);
    fprintf(f, "\ndecision:  %s\n", r->decision ? r->decision : "none recorded");
    fprintf(f, "mechanism: %s\n", r->mechanism ? r->mechanism : "not given");
    fprintf(f, "latency table: %s\n",
            r->latency_table ? r->latency_table : "none (block latencies were given)");
    print_fallbacks(r, f);
    free(cells);
    return tmap_report_stream_status(f, "text report", err);
}

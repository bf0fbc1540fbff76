/*
 * report_markdown.c -- the report as a Markdown document: a title with the
 * kernel, the inputs, the groupings table (the cells of the text table),
 * the decision, and the latency table's fallbacks.
 */
#include <string.h>

#include "report/report_priv.h"
#include "common/base.h"

/* Writes s so that Markdown shows it literally (also inside a table cell). */
static void md_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (strchr("\\`*_|<>[]#", *s))
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void md_pair(FILE *f, const char *key, const char *value)
{
    fprintf(f, "| %s | ", key);
    md_escape(f, value);
    fprintf(f, " |\n");
}

static void md_inputs(const tmap_report *r, FILE *f)
{
    char shape[256], zero[256], table[4096];
    tmap_report_shape(r, shape, sizeof shape);
    tmap_report_zero_divergence(r, zero, sizeof zero);
    const char *path = tmap_report_table_path(r, table, sizeof table);
    fprintf(f, "| input | value |\n|---|---|\n");
    md_pair(f, "origin of the BBVs", r->origin ? r->origin : "not given");
    md_pair(f, "device", r->device ? r->device : "not given");
    md_pair(f, "launch", shape);
    md_pair(f, "zero-divergence time", zero);
    md_pair(f, "latency table", path ? path : "none (block latencies were given)");
}

static void md_groupings(const tmap_report *r, FILE *f)
{
    char cell[TMAP_RC_COUNT][TMAP_REPORT_CELL];
    fprintf(f, "\n## Groupings\n\n|");
    for (int c = 0; c < TMAP_RC_COUNT; c++)
        if (tmap_report_col_shown(r, (tmap_report_col)c))
            fprintf(f, " %s |", tmap_report_columns[c].label);
    fprintf(f, "\n|");
    for (int c = 0; c < TMAP_RC_COUNT; c++)
        if (tmap_report_col_shown(r, (tmap_report_col)c))
            fprintf(f, "%s|", c == TMAP_RC_NAME ? "---" : "---:");
    fputc('\n', f);
    for (size_t i = 0; i < r->nrows; i++) {
        tmap_report_cells(r, i, cell);
        fputc('|', f);
        for (int c = 0; c < TMAP_RC_COUNT; c++) {
            if (!tmap_report_col_shown(r, (tmap_report_col)c))
                continue;
            fputc(' ', f);
            int bold = c == TMAP_RC_NAME && r->rows[i].chosen;
            fputs(bold ? "**" : "", f);
            md_escape(f, cell[c]);
            fputs(bold ? "** (chosen)" : "", f);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nCycles are the model's (Liang et al., TCAD 2016, eq. 2-5); "
               "`n/a`: not computed, `-`: not available.\n");
    for (size_t i = 0; i < r->nrows; i++) {
        if (r->rows[i].available)
            continue;
        fprintf(f, "\n* ");
        md_escape(f, r->rows[i].name);
        fprintf(f, ": not computed: ");
        md_escape(f, r->rows[i].note && *r->rows[i].note ? r->rows[i].note : "no reason given");
        fputc('\n', f);
    }
}

static void md_fallbacks(const tmap_report *r, FILE *f)
{
    fprintf(f, "\n## Latency fallbacks\n\n");
    if (!r->fallbacks || r->fallbacks->n == 0) {
        fprintf(f, "None: %s.\n", r->latency_table ? "every opcode matched the table exactly"
                                                   : "block latencies were given");
        return;
    }
    fprintf(f, "| opcode | table key | how | cycles | static count |\n|---|---|---|---:|---:|\n");
    for (size_t i = 0; i < r->fallbacks->n; i++) {
        const tmap_lat_fallback *fb = &r->fallbacks->items[i];
        fputs("| ", f);
        md_escape(f, fb->opcode);
        fputs(" | ", f);
        md_escape(f, fb->how.key);
        fprintf(f, " | %s | %g | %zu |\n", tmap_lat_match_name(fb->how.match), fb->how.latency,
                fb->count);
    }
}

static tmap_status report_markdown_c(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    if (s)
        return s;
    fprintf(f, "# Performance estimate: ");
    md_escape(f, r->kernel ? r->kernel : "(unnamed kernel)");
    fprintf(f, "\n\n");
    md_inputs(r, f);
    md_groupings(r, f);
    fprintf(f, "\n## Decision\n\n");
    md_escape(f, r->decision ? r->decision : "none recorded");
    fprintf(f, "\n\nMechanism: ");
    md_escape(f, r->mechanism ? r->mechanism : "not given");
    fputc('\n', f);
    if (r->gpu_path[0]) {
        fprintf(f, "\nregroup() on the GPU, measured: ");
        md_escape(f, r->gpu_path);
        fputc('\n', f);
    }
    md_fallbacks(r, f);
    char buf[1024];
    const char *c = tmap_report_caveat(r, buf, sizeof buf);
    if (c) {
        fprintf(f, "\n## Model caveat\n\n");
        md_escape(f, c);
        fputc('\n', f);
    }
    s = tmap_report_lines_write(r, f, TMAP_LINES_MARKDOWN, err);
    return s ? s : tmap_report_stream_status(f, "Markdown report", err);
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_report_markdown(const tmap_report *r, FILE *f, tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = report_markdown_c(r, f, err);
    tmap_locale_restore(old);
    return st;
}

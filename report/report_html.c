/*
 * report_html.c -- the report as one self-contained HTML page: inline CSS,
 * the groupings table, the three SVG figures (report_plots.c), the
 * decision and the latency fallbacks.  No script, no fonts or images from
 * elsewhere; every text from the report is escaped.
 */
#include "threadmap/report.h"
#include "common/base.h"
#include "report/report_priv.h"

static const char style[] =
    "body{margin:0;background:#fafafa;color:#222;"
    "font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif}\n"
    "main{max-width:1140px;margin:0 auto;padding:24px 20px 48px}\n"
    "h1{font-size:24px;margin:0 0 12px}h2{font-size:19px;margin:32px 0 8px;"
    "border-bottom:1px solid #ddd;padding-bottom:4px}\n"
    "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:0.93em}\n"
    "dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}\n"
    "dl.meta dt{font-weight:600}dl.meta dd{margin:0}\n"
    ".decision{background:#eef4fb;border-left:4px solid #2f6fad;padding:10px 14px;margin:16px 0}\n"
    "table{border-collapse:collapse;margin:8px 0;background:#fff}\n"
    "th,td{border:1px solid #d6d6d6;padding:4px 8px}th{background:#f0f0f0;font-weight:600}\n"
    "table.num td{text-align:right}table.num td:first-child{text-align:left}\n"
    "tr.chosen td{background:#e8f3e8;font-weight:600}\n"
    "figure{margin:12px 0}figcaption{font-size:14px;color:#444}\n"
    "svg{max-width:100%;height:auto;background:#fff;border:1px solid #e2e2e2}\n"
    "svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
    "fill:#333}\n"
    "svg .tick{font-size:12px}svg .axis{font-size:13px}svg .legend{font-size:13px}"
    "svg .value{font-size:11px}\n"
    "svg .grid{stroke:#e4e4e4}svg .frame{fill:none;stroke:#777}"
    "svg .ref{stroke:#333;stroke-dasharray:5 4}\n"
    ".note{color:#555;font-style:italic}\n";

static void meta_item(FILE *f, const char *key, const char *value)
{
    fprintf(f, "<dt>%s</dt><dd>", key);
    tmap_html_escape(f, value);
    fputs("</dd>\n", f);
}

static void page_head(const tmap_report *r, FILE *f)
{
    const char *kernel = r->kernel ? r->kernel : "(unnamed kernel)";
    char shape[256], zero[256];
    tmap_report_shape(r, shape, sizeof shape);
    tmap_report_zero_divergence(r, zero, sizeof zero);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>threadmap report: ", f);
    tmap_html_escape(f, kernel);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", style);
    fputs("<h1>Performance estimate: <code>", f);
    tmap_html_escape(f, kernel);
    fputs("</code></h1>\n<dl class=\"meta\">\n", f);
    meta_item(f, "BBVs", r->origin ? r->origin : "origin not given");
    meta_item(f, "device", r->device ? r->device : "not given");
    meta_item(f, "launch", shape);
    meta_item(f, "zero-divergence time", zero);
    fputs("</dl>\n<div class=\"decision\"><strong>Decision:</strong> ", f);
    tmap_html_escape(f, r->decision ? r->decision : "none recorded");
    fputs("<br><strong>Mechanism:</strong> ", f);
    tmap_html_escape(f, r->mechanism ? r->mechanism : "not given");
    if (r->gpu_path[0]) {
        fputs("<br><strong>GPU path (measured):</strong> ", f);
        tmap_html_escape(f, r->gpu_path);
    }
    char buf[1024];
    const char *c = tmap_report_caveat(r, buf, sizeof buf);
    if (c) {
        fputs("<br><strong>Model caveat:</strong> ", f);
        tmap_html_escape(f, c);
    }
    fputs("</div>\n", f);
}

static void groupings_table(const tmap_report *r, FILE *f)
{
    char cell[TMAP_RC_COUNT][TMAP_REPORT_CELL];
    fputs("<h2>Groupings</h2>\n<table class=\"num\">\n<tr>", f);
    for (int c = 0; c < TMAP_RC_COUNT; c++) {
        if (!tmap_report_col_shown(r, (tmap_report_col)c))
            continue;
        fputs("<th title=\"", f);
        tmap_html_escape(f, tmap_report_columns[c].help);
        fputs("\">", f);
        tmap_html_escape(f, tmap_report_columns[c].label);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t i = 0; i < r->nrows; i++) {
        tmap_report_cells(r, i, cell);
        fputs(r->rows[i].chosen ? "<tr class=\"chosen\">" : "<tr>", f);
        for (int c = 0; c < TMAP_RC_COUNT; c++) {
            if (!tmap_report_col_shown(r, (tmap_report_col)c))
                continue;
            fputs("<td>", f);
            tmap_html_escape(f, cell[c]);
            if (c == TMAP_RC_NAME && r->rows[i].chosen)
                fputs(" (chosen)", f);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p class=\"note\">Hover a heading for its meaning. n/a: not computed; "
          "-: not available (no CFG, not measured).</p>\n", f);
    for (size_t i = 0; i < r->nrows; i++) {
        if (r->rows[i].available)
            continue;
        fputs("<p>", f);
        tmap_html_escape(f, r->rows[i].name);
        fputs(": not computed: ", f);
        tmap_html_escape(f, r->rows[i].note && *r->rows[i].note ? r->rows[i].note
                                                               : "no reason given");
        fputs("</p>\n", f);
    }
}

static void latency_section(const tmap_report *r, FILE *f)
{
    char table[4096];
    const char *path = tmap_report_table_path(r, table, sizeof table);
    fputs("<h2>Block latencies</h2>\n<p>Latency table: ", f);
    if (path) {
        fputs("<code>", f);
        tmap_html_escape(f, path);
        fputs("</code></p>\n", f);
    } else {
        fputs("none: block latencies were given.</p>\n", f);
    }
    if (!r->fallbacks || r->fallbacks->n == 0) {
        fprintf(f, "<p>No fallback opcodes%s.</p>\n",
                r->latency_table ? ": every opcode matched the table exactly" : "");
        return;
    }
    fputs("<p>Opcodes without an exact entry, and the key that answered:</p>\n"
          "<table class=\"num\"><tr><th>opcode</th><th>table key</th><th>how</th>"
          "<th>cycles</th><th>static count</th></tr>\n", f);
    for (size_t i = 0; i < r->fallbacks->n; i++) {
        const tmap_lat_fallback *fb = &r->fallbacks->items[i];
        fputs("<tr><td><code>", f);
        tmap_html_escape(f, fb->opcode);
        fputs("</code></td><td><code>", f);
        tmap_html_escape(f, fb->how.key);
        fprintf(f, "</code></td><td>%s</td><td>%g</td><td>%zu</td></tr>\n",
                tmap_lat_match_name(fb->how.match), fb->how.latency, fb->count);
    }
    fputs("</table>\n", f);
}

static tmap_status figures(const tmap_report *r, FILE *f, tmap_error *err)
{
    fputs("<h2>Per-warp cost before and after regrouping</h2>\n"
          "<p>Every warp's cost (eq. 3: the sum over blocks of lat &times; the warp's largest "
          "count), sorted from the slowest warp.  A regrouping that works lowers the left of "
          "the curve towards the dashed line (the same threads with no divergence).</p>\n", f);
    tmap_status s = tmap_report_plot_warps(r, f, err);
    if (s)
        return s;
    fputs("<h2>Where the original launch spends its time</h2>\n"
          "<p>Per basic block: lat &times; the sum over warps of the warp's largest count "
          "(what the warps execute) against lat &times; the sum over warps of the mean count "
          "(the same work without divergence: lat &times; total executions / 32 for full "
          "warps).</p>\n", f);
    if ((s = tmap_report_plot_blocks(r, f, err)))
        return s;
    fputs("<h2>Predicted against measured</h2>\n", f);
    return tmap_report_plot_measured(r, f, err);
}

static tmap_status report_html_c(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    if (s)
        return s;
    page_head(r, f);
    groupings_table(r, f);
    if ((s = figures(r, f, err)))
        return s;
    if ((s = tmap_report_lines_write(r, f, TMAP_LINES_HTML, err)))
        return s;
    latency_section(r, f);
    fprintf(f, "<p class=\"note\">Written by threadmap %d.%d.%d.  The model is Liang et al., "
               "TCAD 2016, section IV; docs/report.md explains every number.</p>\n"
               "</main>\n</body>\n</html>\n",
            TMAP_VERSION_MAJOR, TMAP_VERSION_MINOR, TMAP_VERSION_PATCH);
    return tmap_report_stream_status(f, "HTML report", err);
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_report_html(const tmap_report *r, FILE *f, tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = report_html_c(r, f, err);
    tmap_locale_restore(old);
    return st;
}

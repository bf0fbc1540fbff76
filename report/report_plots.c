/*
 * report_plots.c -- the three figures of the HTML report, drawn as inline
 * SVG: (a) per-warp cost of the original and the compared grouping, sorted,
 * on the same axes; (b) what each basic block costs the original launch
 * with and without divergence; (c) predicted against measured time per
 * grouping, both relative to the original.  Each writes a <figure>.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/report.h"
#include "common/base.h"
#include "report/report_priv.h"

enum { PLOT_W = 1100, MAX_STEPS = 800, MAX_BARS = 20, LABEL_CHARS = 22 };

static const char *const color_original = "#c0504d", *const color_other = "#2f6fad",
                        *const color_ideal = "#8c8c8c";

/* ------------------------------------------------- (a) per-warp costs */

/* v[0..n) (descending) as a step curve: sample k covers ranks
 * [i_k, i_{k+1}) at v[i_k]; at most MAX_STEPS samples. */
static void step_curve(FILE *f, const tmap_svg_frame *fr, const double *v, size_t n,
                       const char *color, double width, int dashed)
{
    size_t p = n < MAX_STEPS ? n : MAX_STEPS;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%g\"%s points=\"", color,
            width, dashed ? " stroke-dasharray=\"6 4\"" : "");
    for (size_t k = 0; k < p; k++) {
        size_t i = k * n / p, next = (k + 1) * n / p;
        double y = tmap_svg_py(fr, v[i]);
        fprintf(f, "%.1f,%.1f %.1f,%.1f ", tmap_svg_px(fr, (double)i), y,
                tmap_svg_px(fr, (double)next), y);
    }
    fputs("\"/>\n", f);
}

/* Rank labels under the x axis: 0, n/4, n/2, 3n/4, n. */
static void rank_ticks(FILE *f, const tmap_svg_frame *fr, size_t n)
{
    char buf[32];
    for (int q = 0; q <= 4; q++) {
        double x = (double)(n * (size_t)q / 4);
        tmap_svg_text(f, tmap_svg_px(fr, x), fr->y0 + fr->h + 16, "middle", "tick",
                      tmap_report_si(buf, sizeof buf, x));
    }
}

static double mean_of(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return n ? s / (double)n : 0;
}

static void warp_caption(FILE *f, const char *name, const double *sorted, size_t n)
{
    char a[32], b[32];
    fputs("<li>", f);
    tmap_html_escape(f, name);
    fprintf(f, ": slowest warp %s cycles, mean %s, median %s</li>\n",
            tmap_report_si(a, sizeof a, sorted[0]), tmap_report_si(b, sizeof b, mean_of(sorted, n)),
            tmap_report_si((char[32]){0}, 32, sorted[n / 2]));
}

tmap_status tmap_report_plot_warps(const tmap_report *r, FILE *f, tmap_error *err)
{
    size_t c = tmap_report_compare_row(r), n = r->rows[0].m->nwarps;
    const double *src[3] = {r->rows[0].m->warp_cost, r->rows[0].m->ideal_warp_cost,
                            c ? r->rows[c].m->warp_cost : NULL};
    double *v[3] = {NULL, NULL, NULL};
    tmap_status s = TMAP_OK;
    double ymax = 0;
    for (int k = 0; k < 3 && !s; k++)
        if (src[k] && !(s = tmap_report_sorted_desc(src[k], n, &v[k], err)) && n)
            ymax = v[k][0] > ymax ? v[k][0] : ymax;
    if (!s && n) {
        tmap_svg_frame fr = {90, 40, 980, 270, (double)n, ymax};
        double step = tmap_svg_nice(&fr.ymax, 5);
        const char *names[3] = {r->rows[0].name, "original, each warp at its threads' mean counts",
                                c ? r->rows[c].name : ""};
        const char *colors[3] = {color_original, color_ideal, color_other};
        fputs("<figure>\n", f);
        tmap_svg_begin(f, PLOT_W, 370, "per-warp cost, sorted");
        tmap_svg_axes(f, &fr, step, "warps, slowest first", "cycles per warp (eq. 3)");
        rank_ticks(f, &fr, n);
        /* the original drawn wider, so that it shows where the curves coincide */
        step_curve(f, &fr, v[1], n, color_ideal, 2, 1);
        step_curve(f, &fr, v[0], n, color_original, 4, 0);
        if (c)
            step_curve(f, &fr, v[2], n, color_other, 2, 0);
        tmap_svg_legend(f, fr.x0, 22, c ? 3 : 2, names, colors);
        tmap_svg_end(f);
        fputs("<figcaption><ul>\n", f);
        warp_caption(f, r->rows[0].name, v[0], n);
        if (c)
            warp_caption(f, r->rows[c].name, v[2], n);
        else
            fputs("<li>no regrouping was computed: only the original is shown</li>\n", f);
        fputs("</ul></figcaption>\n</figure>\n", f);
    }
    for (int k = 0; k < 3; k++)
        free(v[k]);
    return s;
}

/* --------------------------------------------- grouped vertical bars */

typedef struct bar_chart {
    size_t ngroups, nseries;
    const double *v;               /* [ngroups][nseries] */
    const char *const *groups;     /* group labels (truncated when drawn) */
    const char *const *series;     /* legend */
    const char *const *colors;     /* per series */
    const char *label, *ylabel;
    double ref;                    /* a dashed line at this value, or NAN */
} bar_chart;

/* At most LABEL_CHARS bytes of s, "..." appended when cut, never inside a
 * UTF-8 sequence. */
static const char *truncated(const char *s, char *buf, size_t size)
{
    size_t n = strlen(s);
    if (n <= LABEL_CHARS)
        return s;
    n = LABEL_CHARS - 3;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    snprintf(buf, size, "%.*s...", (int)n, s);
    return buf;
}

static void bar_group(FILE *f, const tmap_svg_frame *fr, const bar_chart *c, size_t g)
{
    char buf[64];
    double gw = fr->w / (double)c->ngroups, bw = gw * 0.8 / (double)c->nseries;
    bw = bw > 40 ? 40 : bw;
    double left = fr->x0 + gw * (double)g + (gw - bw * (double)c->nseries) / 2;
    for (size_t s = 0; s < c->nseries; s++) {
        double v = c->v[g * c->nseries + s], y = tmap_svg_py(fr, v);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                   "<title>",
                left + bw * (double)s, y, bw, fr->y0 + fr->h - y, c->colors[s]);
        tmap_html_escape(f, c->groups[g]);
        fprintf(f, ", %s: %.6g</title></rect>\n", c->series[s], v);
        if (c->ngroups * c->nseries <= 24)
            tmap_svg_text(f, left + bw * ((double)s + 0.5), y - 4, "middle", "value",
                          tmap_report_si(buf, sizeof buf, v));
    }
    fprintf(f, "<g transform=\"translate(%.1f %.1f) rotate(-35)\">",
            fr->x0 + gw * ((double)g + 0.5), fr->y0 + fr->h + 14);
    tmap_svg_text(f, 0, 0, "end", "tick", truncated(c->groups[g], buf, sizeof buf));
    fputs("</g>\n", f);
}

static void bar_chart_draw(FILE *f, const bar_chart *c)
{
    double ymax = isfinite(c->ref) ? c->ref : 0;
    for (size_t i = 0; i < c->ngroups * c->nseries; i++)
        ymax = c->v[i] > ymax ? c->v[i] : ymax;
    tmap_svg_frame fr = {90, 40, 980, 260, 1, ymax * 1.08};
    double step = tmap_svg_nice(&fr.ymax, 5);
    tmap_svg_begin(f, PLOT_W, 440, c->label);
    tmap_svg_axes(f, &fr, step, NULL, c->ylabel);
    for (size_t g = 0; g < c->ngroups; g++)
        bar_group(f, &fr, c, g);
    if (isfinite(c->ref))
        fprintf(f, "<line class=\"ref\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                fr.x0, tmap_svg_py(&fr, c->ref), fr.x0 + fr.w, tmap_svg_py(&fr, c->ref));
    tmap_svg_legend(f, fr.x0, 22, c->nseries, c->series, c->colors);
    tmap_svg_end(f);
}

/* ------------------------------------------- (b) per-block breakdown */

static const char *block_name(const tmap_report *r, size_t b, char *buf, size_t size)
{
    if (r->block_names && r->block_names[b] && *r->block_names[b])
        return r->block_names[b];
    snprintf(buf, size, "block %zu", b);
    return buf;
}

/* Every block's numbers (the costliest first, at most 50 rows). */
static void block_table(const tmap_report *r, FILE *f, const tmap_report_block *bl)
{
    char name[64];
    size_t n = r->bbv->nblocks < 50 ? r->bbv->nblocks : 50;
    fputs("<details><summary>per-block numbers</summary>\n<table class=\"num\">\n"
          "<tr><th>block</th><th>lat[b] (cycles)</th><th>executions (all threads)</th>"
          "<th>lat &times; executions</th><th>&Sigma;<sub>warps</sub> max count</th>"
          "<th>lat &times; &Sigma; max (eq. 2)</th><th>lat &times; &Sigma; mean</th>"
          "<th>divergence overhead</th></tr>\n", f);
    for (size_t i = 0; i < n; i++) {
        const tmap_report_block *b = &bl[i];
        double cost = b->lat * b->max_sum, ideal = b->lat * b->mean_sum;
        fputs("<tr><td>", f);
        tmap_html_escape(f, block_name(r, b->index, name, sizeof name));
        fprintf(f, "</td><td>%.6g</td><td>%.0f</td><td>%.6g</td><td>%.0f</td><td>%.6g</td>"
                   "<td>%.6g</td><td>%s</td></tr>\n",
                b->lat, b->execs, b->lat * b->execs, b->max_sum, cost, ideal,
                cost > 0 ? tmap_report_num((char[32]){0}, 32, "%.1f%%", 100 * (1 - ideal / cost))
                         : "-");
    }
    fputs("</table>\n", f);
    if (n < r->bbv->nblocks)
        fprintf(f, "<p>%zu more blocks not listed.</p>\n", r->bbv->nblocks - n);
    fputs("</details>\n", f);
}

tmap_status tmap_report_plot_blocks(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_report_block *bl;
    tmap_status s = tmap_report_blocks(r, &bl, err);
    if (s)
        return s;
    size_t k = r->bbv->nblocks < MAX_BARS ? r->bbv->nblocks : MAX_BARS;
    double *v = malloc(2 * k * sizeof *v);
    const char **groups = malloc(k * sizeof *groups);
    char (*names)[64] = malloc(k * sizeof *names);
    if (!v || !groups || !names)
        s = tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory");
    for (size_t i = 0; !s && i < k; i++) {
        v[2 * i] = bl[i].lat * bl[i].max_sum;
        v[2 * i + 1] = bl[i].lat * bl[i].mean_sum;
        groups[i] = block_name(r, bl[i].index, names[i], sizeof names[i]);
    }
    if (!s) {
        static const char *const series[2] = {"as run: lat × Σ warps max count",
                                              "without divergence: lat × Σ warps mean count"};
        const char *colors[2] = {color_original, color_ideal};
        bar_chart c = {k, 2, v, groups, series, colors, "per-block cost of the original",
                       "warp-cycles", NAN};
        fputs("<figure>\n", f);
        bar_chart_draw(f, &c);
        fprintf(f, "<figcaption>The %zu costliest of %zu basic blocks under the original "
                   "grouping.  The gap between the two bars is what divergence costs in that "
                   "block.</figcaption>\n",
                k, r->bbv->nblocks);
        block_table(r, f, bl);
        fputs("</figure>\n", f);
    }
    free(names);
    free(groups);
    free(v);
    free(bl);
    return s;
}

/* ------------------------------------ (c) predicted against measured */

/* Rows that can be compared: available, measured, with a measured
 * original; none when the original itself was not measured. */
static size_t measured_rows(const tmap_report *r, size_t *idx)
{
    const tmap_report_row *o = &r->rows[0];
    if (!(o->measured_ms > 0) || !isfinite(o->measured_ms) || !(o->m->bbv_weighted_scheduled > 0))
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].available && isfinite(r->rows[i].measured_ms))
            idx[n++] = i;
    return n;
}

tmap_status tmap_report_plot_measured(const tmap_report *r, FILE *f, tmap_error *err)
{
    size_t *idx = malloc(r->nrows * sizeof *idx);
    double *v = malloc(2 * r->nrows * sizeof *v);
    const char **groups = malloc(r->nrows * sizeof *groups);
    if (!idx || !v || !groups) {
        free(idx), free(v), free(groups);
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory");
    }
    size_t n = measured_rows(r, idx);
    fputs("<figure>\n", f);
    if (n < 2) {
        fprintf(f, "<p class=\"note\">Nothing to compare: %s</p>\n",
                n == 1 ? "only the original launch was measured; no regrouped launch was timed."
                       : "nothing was measured (no kernel time of the original launch).");
    } else {
        const tmap_report_row *o = &r->rows[0];
        for (size_t k = 0; k < n; k++) {
            const tmap_report_row *row = &r->rows[idx[k]];
            v[2 * k] = row->m->bbv_weighted_scheduled / o->m->bbv_weighted_scheduled;
            v[2 * k + 1] = row->measured_ms / o->measured_ms;
            groups[k] = row->name ? row->name : "?";
        }
        static const char *const series[2] = {"predicted (BBV-weighted-scheduled)", "measured"};
        const char *colors[2] = {color_other, color_original};
        bar_chart c = {n, 2, v, groups, series, colors, "predicted and measured time",
                       "time relative to the original", 1.0};
        bar_chart_draw(f, &c);
        fputs("<figcaption>Each bar is relative to the original launch (= 1, dashed line); "
              "lower is faster.</figcaption>\n", f);
    }
    fputs("</figure>\n", f);
    free(groups);
    free(v);
    free(idx);
    return TMAP_OK;
}

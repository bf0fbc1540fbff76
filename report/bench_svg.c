/*
 * bench_svg.c -- the bench's plots as standalone SVG files (xmlns given,
 * no scripts, no external resources): predicted vs measured improvement
 * per metric (a scatter with the diagonal, Figs. 7 and 8 of the paper) and
 * speedups per kernel (grouped bars, Fig. 9).  Axes may be negative: a
 * regrouping can be slower than the original.
 */
#include <math.h>
#include <string.h>

#include "common/base.h"
#include "threadmap/report.h"
#include "report/report_priv.h"

static const char *const algo_colors[TMAP_BENCH_NALGOS] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f"};

void tmap_bench_scatter_file(tmap_bench_metric m, char *buf, size_t size)
{
    snprintf(buf, size, "predicted_vs_measured_%s.svg", tmap_bench_metric_key(m));
}

const char *tmap_bench_speedup_file(int with_overhead)
{
    return with_overhead ? "speedup_with_overhead.svg" : "speedup_kernel.svg";
}

/* A linear axis over [lo, hi] mapped onto pixels [p0, p1]. */
typedef struct axis {
    double lo, hi, step;
    double p0, p1;
} axis;

static double at(const axis *a, double v) { return a->p0 + (v - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0); }

/* Widens [lo, hi] to tick boundaries, about 6 ticks. */
static void axis_fit(axis *a, double lo, double hi)
{
    if (!(hi > lo))
        hi = lo + 1;
    double span = hi - lo;
    a->step = tmap_svg_nice(&span, 6);
    a->lo = floor(lo / a->step + 1e-9) * a->step;
    a->hi = ceil(hi / a->step - 1e-9) * a->step;
    if (a->hi <= a->lo)
        a->hi = a->lo + a->step;
}

static void svg_open(FILE *f, double w, double h, const char *title)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
               "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n<title>",
            w, h, w, h);
    tmap_html_escape(f, title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
    fprintf(f, "<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">", w / 2);
    tmap_html_escape(f, title);
    fputs("</text>\n", f);
}

static void text(FILE *f, double x, double y, const char *anchor, const char *extra, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s>", x, y, anchor, extra ? " " : "",
            extra ? extra : "");
    tmap_html_escape(f, s);
    fputs("</text>\n", f);
}

/* Grid lines and labels of a vertical (value) axis; x0..x1 the plot's width. */
static void y_ticks(FILE *f, const axis *y, double x0, double x1, const char *fmt)
{
    char buf[32];
    for (double v = y->lo; v <= y->hi + y->step * 1e-6; v += y->step) {
        double p = at(y, v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0, p, x1, p);
        snprintf(buf, sizeof buf, fmt, fabs(v) < 1e-12 ? 0.0 : v);
        text(f, x0 - 6, p + 4, "end", NULL, buf);
    }
}

static void x_ticks(FILE *f, const axis *x, double y0, double y1, const char *fmt)
{
    char buf[32];
    for (double v = x->lo; v <= x->hi + x->step * 1e-6; v += x->step) {
        double p = at(x, v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", p, y0, p, y1);
        snprintf(buf, sizeof buf, fmt, fabs(v) < 1e-12 ? 0.0 : v);
        text(f, p, y0 + 16, "middle", NULL, buf);
    }
}

static void legend(FILE *f, double x, double y)
{
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++, x += 110) {
        fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y - 10,
                algo_colors[a]);
        text(f, x + 16, y, "start", NULL, tmap_bench_algos[a]);
    }
}

static int algo_index(const char *name)
{
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++)
        if (!strcmp(name, tmap_bench_algos[a]))
            return a;
    return -1;
}

/* The range of the points of metric m, in percent, 0 included. */
static void scatter_range(const tmap_bench_run *r, tmap_bench_metric m, double *lo, double *hi)
{
    *lo = 0, *hi = 10;
    for (size_t i = 0; i < r->nkernels; i++)
        for (size_t j = 1; r->k[i].ok && j < r->k[i].noptions; j++) {
            const tmap_bench_option *o = &r->k[i].opt[j];
            if (!o->valid || !isfinite(o->predicted[m]))
                continue;
            double p = 100 * o->predicted[m], q = 100 * o->measured_impr;
            *lo = fmin(*lo, fmin(p, q));
            *hi = fmax(*hi, fmax(p, q));
        }
    *lo = fmax(*lo, -200); /* a regrouping 3x slower says enough; keep the plot readable */
}

/* Ends a plot begun in the "C" locale: back to the caller's locale `old`,
 * and whether writing failed. */
static tmap_status svg_close(FILE *f, locale_t old, const char *what, tmap_error *err)
{
    fputs("</svg>\n", f);
    tmap_locale_restore(old);
    return ferror(f) ? tmap_fail(err, TMAP_ERR_IO, "writing the %s failed", what) : TMAP_OK;
}

tmap_status tmap_bench_svg_scatter(const tmap_bench_run *r, tmap_bench_metric m, FILE *f,
                                   tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, r, f);
    if (absent)
        return absent;
    locale_t old = tmap_locale_c(); /* numbers with '.' whatever the host's locale */
    const double W = 560, H = 560;
    double lo, hi;
    char title[160], tip[400];
    scatter_range(r, m, &lo, &hi);
    axis x = {0, 0, 0, 70, W - 30}, y = {0, 0, 0, H - 80, 50};
    axis_fit(&x, lo, hi);
    axis_fit(&y, lo, hi);
    snprintf(title, sizeof title, "%s: predicted vs measured improvement", tmap_bench_metric_label(m));
    svg_open(f, W, H, title);
    y_ticks(f, &y, x.p0, x.p1, "%g%%");
    x_ticks(f, &x, y.p0, y.p1, "%g%%");
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
            x.p0, y.p1, x.p1 - x.p0, y.p0 - y.p1);
    double d0 = fmax(x.lo, y.lo), d1 = fmin(x.hi, y.hi);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n",
            at(&x, d0), at(&y, d0), at(&x, d1), at(&y, d1));
    text(f, (x.p0 + x.p1) / 2, H - 45, "middle", NULL, "predicted improvement");
    fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">measured "
               "improvement (kernel time)</text>\n", (y.p0 + y.p1) / 2);
    for (size_t i = 0; i < r->nkernels; i++)
        for (size_t j = 1; r->k[i].ok && j < r->k[i].noptions; j++) {
            const tmap_bench_option *o = &r->k[i].opt[j];
            int a = algo_index(o->name);
            if (!o->valid || !isfinite(o->predicted[m]) || a < 0)
                continue;
            double px = fmax(100 * o->predicted[m], x.lo), py = fmax(100 * o->measured_impr, y.lo);
            snprintf(tip, sizeof tip, "%s, %s: predicted %.1f%%, measured %.1f%%", r->k[i].name, o->name,
                     100 * o->predicted[m], 100 * o->measured_impr);
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" fill-opacity=\"0.8\"><title>",
                    at(&x, px), at(&y, py), algo_colors[a]);
            tmap_html_escape(f, tip);
            fputs("</title></circle>\n", f);
        }
    legend(f, x.p0, H - 15);
    return svg_close(f, old, "scatter plot", err);
}

static double speedup_of(const tmap_bench_option *o, int with_overhead)
{
    return !o->valid ? NAN : with_overhead ? o->speedup_total : o->speedup_kernel;
}

static double speedup_max(const tmap_bench_run *r, int with_overhead, size_t *nk)
{
    double hi = TMAP_BENCH_TARGET_GMAX_SPEEDUP;
    *nk = 0;
    for (size_t i = 0; i < r->nkernels; i++) {
        if (!r->k[i].ok)
            continue;
        (*nk)++;
        for (size_t j = 1; j < r->k[i].noptions; j++) {
            double v = speedup_of(&r->k[i].opt[j], with_overhead);
            if (isfinite(v))
                hi = fmax(hi, v);
        }
    }
    return hi;
}

/* One kernel's group of bars starting at pixel gx. */
static void bar_group(FILE *f, const tmap_bench_kernel *k, const axis *y, double gx, double bw,
                      int with_overhead)
{
    char tip[300];
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++) {
        int j = tmap_bench_find(k, tmap_bench_algos[a]);
        double v = j >= 0 ? speedup_of(&k->opt[j], with_overhead) : NAN;
        if (!isfinite(v))
            continue;
        double top = at(y, fmin(v, y->hi)), base = at(y, 0);
        snprintf(tip, sizeof tip, "%s, %s: %.2fx", k->name, tmap_bench_algos[a], v);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                gx + a * bw, top, bw * 0.9, fmax(base - top, 0.5), algo_colors[a]);
        tmap_html_escape(f, tip);
        fputs("</title></rect>\n", f);
    }
}

tmap_status tmap_bench_svg_speedup(const tmap_bench_run *r, int with_overhead, FILE *f,
                                   tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, r, f);
    if (absent)
        return absent;
    locale_t old = tmap_locale_c(); /* numbers with '.' whatever the host's locale */
    size_t nk;
    double hi = speedup_max(r, with_overhead, &nk);
    double gw = 24.0 * TMAP_BENCH_NALGOS + 16, W = fmax(560, 90 + gw * (double)nk), H = 480;
    axis y = {0, 0, 0, H - 150, 50};
    axis_fit(&y, 0, hi);
    svg_open(f, W, H, with_overhead ? "Speedup with overhead (original / kernel + apply + prediction + algorithm)"
                                    : "Kernel speedup (original / regrouped kernel time)");
    y_ticks(f, &y, 70, W - 20, "%gx");
    fprintf(f, "<line x1=\"70\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", at(&y, 1), W - 20,
            at(&y, 1));
    if (with_overhead)
        fprintf(f, "<line x1=\"70\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e15759\" "
                   "stroke-dasharray=\"6 4\"><title>target %.1fx</title></line>\n",
                at(&y, TMAP_BENCH_TARGET_GMAX_SPEEDUP), W - 20, at(&y, TMAP_BENCH_TARGET_GMAX_SPEEDUP),
                TMAP_BENCH_TARGET_GMAX_SPEEDUP);
    fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">speedup</text>\n",
            (y.p0 + y.p1) / 2);
    double gx = 80;
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok)
            continue;
        bar_group(f, k, &y, gx, 24, with_overhead);
        char tr[96];
        snprintf(tr, sizeof tr, "transform=\"rotate(-40 %.1f %.1f)\"", gx + gw / 2, y.p0 + 14);
        text(f, gx + gw / 2, y.p0 + 14, "end", tr, k->name);
        gx += gw;
    }
    legend(f, 70, H - 15);
    return svg_close(f, old, "speedup plot", err);
}

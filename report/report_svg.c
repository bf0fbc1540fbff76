/*
 * report_svg.c -- the drawing primitives of the report's inline SVG plots
 * (frame, axes with rounded ticks, escaped text, legend) and HTML escaping.
 * Coordinates are in pixels with the origin at the top left; data values
 * start at 0 on both axes.  The SVG is meant to be inline in an HTML page.
 */
#include <math.h>
#include <string.h>

#include "report/report_priv.h"

void tmap_html_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

void tmap_svg_begin(FILE *f, double width, double height, const char *label)
{
    /* inline in HTML5 the parser gives <svg> its namespace: no xmlns needed */
    fprintf(f, "<svg viewBox=\"0 0 %.0f %.0f\" "
               "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
            width, height, width, height);
    tmap_html_escape(f, label);
    fputs("\">\n", f);
}

void tmap_svg_end(FILE *f) { fputs("</svg>\n", f); }

double tmap_svg_px(const tmap_svg_frame *fr, double x)
{
    return fr->x0 + (fr->xmax > 0 ? x / fr->xmax : 0) * fr->w;
}

double tmap_svg_py(const tmap_svg_frame *fr, double y)
{
    return fr->y0 + fr->h - (fr->ymax > 0 ? y / fr->ymax : 0) * fr->h;
}

double tmap_svg_nice(double *ymax, int nticks)
{
    if (!(*ymax > 0) || !isfinite(*ymax))
        *ymax = 1;
    double raw = *ymax / nticks, p = pow(10, floor(log10(raw))), step = p;
    /* the step is 1, 2, 2.5 or 5 times a power of ten */
    static const double mult[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
        if ((step = mult[i] * p) >= raw)
            break;
    *ymax = ceil(*ymax / step - 1e-9) * step;
    return step;
}

void tmap_svg_axes(FILE *f, const tmap_svg_frame *fr, double step, const char *xlabel,
                   const char *ylabel)
{
    char buf[32];
    for (int k = 0; k * step <= fr->ymax * (1 + 1e-9); k++) {
        double y = tmap_svg_py(fr, k * step);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                fr->x0, y, fr->x0 + fr->w, y);
        tmap_svg_text(f, fr->x0 - 6, y + 4, "end", "tick", tmap_report_si(buf, sizeof buf,
                                                                           k * step));
    }
    fprintf(f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            fr->x0, fr->y0, fr->w, fr->h);
    if (xlabel)
        tmap_svg_text(f, fr->x0 + fr->w / 2, fr->y0 + fr->h + 36, "middle", "axis", xlabel);
    if (ylabel) {
        fprintf(f, "<g transform=\"translate(%.1f %.1f) rotate(-90)\">", fr->x0 - 52,
                fr->y0 + fr->h / 2);
        tmap_svg_text(f, 0, 0, "middle", "axis", ylabel);
        fputs("</g>\n", f);
    }
}

void tmap_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls,
                   const char *text)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y, anchor);
    if (cls)
        fprintf(f, " class=\"%s\"", cls);
    fputc('>', f);
    tmap_html_escape(f, text);
    fputs("</text>\n", f);
}

void tmap_svg_legend(FILE *f, double x, double y, size_t n, const char *const *names,
                     const char *const *colors)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", x,
                y - 11, colors[i]);
        tmap_svg_text(f, x + 20, y, "start", "legend", names[i]);
        x += 40 + 8.0 * (double)strlen(names[i]);
    }
}

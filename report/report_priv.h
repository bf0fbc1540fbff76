/*
 * report_priv.h -- what the report's writers share (private to report/):
 * the checks on a tmap_report, the table's columns and their formatted
 * cells, the data behind the plots, and small SVG/HTML helpers.
 */
#ifndef TMAP_REPORT_REPORT_PRIV_H
#define TMAP_REPORT_REPORT_PRIV_H

#include <stdio.h>

#include <jansson.h>

#include "threadmap/report.h"

/* ------------------------------------------------------------ checks */

/* Fails unless r can be written: bbv, lat, params, nrows >= 1, rows[0]
 * available with metrics, every available row has metrics of the same
 * warp and thread-block counts. */
tmap_status tmap_report_check(const tmap_report *r, tmap_error *err);
/* Turns the stream's error flag into a status naming `what`. */
tmap_status tmap_report_stream_status(FILE *f, const char *what, tmap_error *err);

/* ------------------------------------------------------ table columns */

typedef enum tmap_report_col {
    TMAP_RC_NAME,
    TMAP_RC_WEIGHTED,
    TMAP_RC_SCHEDULED,
    TMAP_RC_GAIN,
    TMAP_RC_DIV_WARPS,
    TMAP_RC_DIV_BRANCHES,
    TMAP_RC_SIMD,
    TMAP_RC_SIMD_PCT,
    TMAP_RC_ALGO_MS,
    TMAP_RC_MEASURED_MS,
    TMAP_RC_APPLY_MS,
    TMAP_RC_EQUAL,
    TMAP_RC_COUNT
} tmap_report_col;

#define TMAP_REPORT_CELL 48

typedef struct tmap_report_column {
    const char *head;   /* short heading for the terminal, with its unit */
    const char *label;  /* longer heading (Markdown, HTML), with its unit */
    const char *help;   /* what it means, with the paper's equation */
    int optional;       /* shown only when some row has a value */
} tmap_report_column;

extern const tmap_report_column tmap_report_columns[TMAP_RC_COUNT];

/* Whether column c appears in r's table. */
int tmap_report_col_shown(const tmap_report *r, tmap_report_col c);
/* The cells of row i: numbers formatted, NAN as "-", an unavailable row's
 * values "n/a".  The name cell is the bare name (writers add the marker). */
void tmap_report_cells(const tmap_report *r, size_t i, char cell[TMAP_RC_COUNT][TMAP_REPORT_CELL]);

/* A number with its format, or "-" when NAN or infinite. */
const char *tmap_report_num(char *buf, size_t size, const char *fmt, double v);
/* A compact axis label: 950, 1.2k, 3.4M, 5.6G. */
const char *tmap_report_si(char *buf, size_t size, double v);
/* "yes", "no" or "-" for outputs_equal. */
const char *tmap_report_equal_word(int outputs_equal);
/* Launch shape in one line (threads, blocks, warps, SMs...). */
void tmap_report_shape(const tmap_report *r, char *buf, size_t size);
/* The zero-divergence time in one line: cycles and what they are. */
void tmap_report_zero_divergence(const tmap_report *r, char *buf, size_t size);
/* The model's caveat for r's kernel in words (issue from PTX counts,
 * tmap_sm_model.issue_sass 0; tmap_sm_model_const_blind), or NULL when it
 * has none. */
const char *tmap_report_caveat(const tmap_report *r, char *buf, size_t size);
/* The latency table's path, relative to the current folder when the table
 * lies below it (else as given); NULL when there is none. */
const char *tmap_report_table_path(const tmap_report *r, char *buf, size_t size);

/* ------------------------------------------------------ plot data */

/* The row the plots compare with the original: the chosen one when it is
 * not the original, else the available non-original row of least
 * BBV-weighted-scheduled; 0 (the original itself) when there is none. */
size_t tmap_report_compare_row(const tmap_report *r);

/* What one basic block costs under the original grouping. */
typedef struct tmap_report_block {
    size_t index;     /* BBV column */
    double lat;       /* lat[b], cycles */
    double execs;     /* sum over threads of BBV_t[b] */
    double max_sum;   /* sum over warps of max_{t in w} BBV_t[b] (eq. 2) */
    double mean_sum;  /* sum over warps of mean_{t in w} BBV_t[b] */
} tmap_report_block;

/* blocks[bbv->nblocks] sorted by lat * max_sum, descending (ties by index);
 * warps are cut as in tmap_metrics_compute with the identity permutation. */
tmap_status tmap_report_blocks(const tmap_report *r, tmap_report_block **blocks,
                               tmap_error *err);
/* A copy of v[0..n) sorted in descending order (malloc'ed). */
tmap_status tmap_report_sorted_desc(const double *v, size_t n, double **out, tmap_error *err);

/* ------------------------------------------------------ source lines */

/* One source line's divergence cost (report_lines.c). */
typedef struct tmap_report_line {
    const char *file;  /* as .file gives it (borrowed from r->cfg) */
    uint32_t line;
    double cost;       /* sum over its blocks of lat * (max_sum - mean_sum), cycles */
    double share;      /* cost / the kernel's total (every block's), 0 when that is 0 */
    size_t nblocks;    /* blocks whose source line it is */
} tmap_report_line;

/* The source lines of r's blocks by cost, descending (malloc'ed, *n of
 * them; none when r has no CFG with source lines); *total: every block's
 * divergence cost, with or without a line. */
tmap_status tmap_report_lines(const tmap_report *r, tmap_report_line **out, size_t *n,
                              double *total, tmap_error *err);
/* Each writer's section: the ten costliest lines; nothing without lines
 * (JSON: "source_lines" is every line, or null). */
typedef enum { TMAP_LINES_TEXT, TMAP_LINES_MARKDOWN, TMAP_LINES_HTML } tmap_report_lines_form;
tmap_status tmap_report_lines_write(const tmap_report *r, FILE *f, tmap_report_lines_form k,
                                   tmap_error *err);
tmap_status tmap_report_lines_json(const tmap_report *r, json_t *o, tmap_error *err);

/* ------------------------------------------------------ HTML and SVG */

/* Writes s with & < > " ' escaped. */
void tmap_html_escape(FILE *f, const char *s);

/* A plot area: pixels [x0, x0+w] x [y0, y0+h], data [0, xmax] x [0, ymax]. */
typedef struct tmap_svg_frame {
    double x0, y0, w, h;
    double xmax, ymax;
} tmap_svg_frame;

void tmap_svg_begin(FILE *f, double width, double height, const char *label);
void tmap_svg_end(FILE *f);
/* The pixel position of data (x, y). */
double tmap_svg_px(const tmap_svg_frame *fr, double x);
double tmap_svg_py(const tmap_svg_frame *fr, double y);
/* Rounds ymax up to a tick boundary; returns the tick step. */
double tmap_svg_nice(double *ymax, int nticks);
/* Frame, horizontal grid lines every `step` with labels, axis titles. */
void tmap_svg_axes(FILE *f, const tmap_svg_frame *fr, double step, const char *xlabel,
                   const char *ylabel);
/* Escaped text; anchor is "start", "middle" or "end"; cls a CSS class or NULL. */
void tmap_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls,
                   const char *text);
/* A legend: n colour swatches with names, left to right from (x, y). */
void tmap_svg_legend(FILE *f, double x, double y, size_t n, const char *const *names,
                     const char *const *colors);

/* The three plots of the HTML page (each an <svg> or a note). */
tmap_status tmap_report_plot_warps(const tmap_report *r, FILE *f, tmap_error *err);
tmap_status tmap_report_plot_blocks(const tmap_report *r, FILE *f, tmap_error *err);
tmap_status tmap_report_plot_measured(const tmap_report *r, FILE *f, tmap_error *err);

#endif

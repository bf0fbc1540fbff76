/*
 * report_lines.c -- the source lines that cost the most divergence (PTX
 * compiled with -lineinfo), as Nsight Compute's source page ranks lines by
 * a metric.  A block's divergence cost is lat x (sum over warps of the
 * warp's largest count - sum over warps of its mean count): the cycles its
 * warps spend beyond the same executions without divergence (eq. 2 against
 * the zero-divergence time, the two bars of the report's block plot).  A
 * line's cost is the sum over the blocks whose source line it is
 * (tmap_cfg_block.src_line).  Each writer's section is one function here.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "report/report_priv.h"

enum { LINES_SHOWN = 10 };

/* 1 when r's CFG names bbv's columns and some block has a source line. */
static int has_lines(const tmap_report *r)
{
    if (!r->cfg || r->cfg->nblocks != r->bbv->nblocks)
        return 0;
    for (size_t b = 0; b < r->cfg->nblocks; b++)
        if (r->cfg->blocks[b].src_line)
            return 1;
    return 0;
}

static int same_line(const tmap_report_line *l, const tmap_cfg_block *b)
{
    return l->line == b->src_line && !strcmp(l->file, b->src_file);
}

static int by_cost(const void *pa, const void *pb)
{
    const tmap_report_line *a = pa, *b = pb;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    int c = strcmp(a->file, b->file);
    return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* Adds block bl's cost to its line (a new one at lines[*n] when unseen). */
static void add_block(const tmap_report *r, const tmap_report_block *bl, tmap_report_line *lines,
                      size_t *n)
{
    const tmap_cfg_block *b = &r->cfg->blocks[bl->index];
    if (!b->src_line)
        return;
    size_t i = 0;
    while (i < *n && !same_line(&lines[i], b))
        i++;
    if (i == *n)
        lines[(*n)++] = (tmap_report_line){.file = b->src_file, .line = b->src_line};
    lines[i].cost += bl->lat * (bl->max_sum - bl->mean_sum);
    lines[i].nblocks++;
}

tmap_status tmap_report_lines(const tmap_report *r, tmap_report_line **out, size_t *n,
                              double *total, tmap_error *err)
{
    *out = NULL, *n = 0, *total = 0;
    if (!has_lines(r))
        return TMAP_OK;
    tmap_report_block *blocks = NULL;
    tmap_status s = tmap_report_blocks(r, &blocks, err);
    if (s)
        return s;
    tmap_report_line *lines = calloc(r->bbv->nblocks, sizeof *lines);
    if (!lines) {
        free(blocks);
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory for source lines");
    }
    for (size_t k = 0; k < r->bbv->nblocks; k++) {
        *total += blocks[k].lat * (blocks[k].max_sum - blocks[k].mean_sum);
        add_block(r, &blocks[k], lines, n);
    }
    for (size_t i = 0; i < *n; i++)
        lines[i].share = *total > 0 ? lines[i].cost / *total : 0;
    qsort(lines, *n, sizeof *lines, by_cost);
    free(blocks);
    *out = lines;
    return TMAP_OK;
}

/* The lines with a cost, at most LINES_SHOWN. */
static size_t shown(const tmap_report_line *lines, size_t n)
{
    size_t k = 0;
    while (k < n && k < LINES_SHOWN && lines[k].cost > 0)
        k++;
    return k;
}

static const char lines_help[] =
    "per source line, the divergence cost of its blocks: lat x (sum over warps of the "
    "largest count - sum over warps of the mean count), in cycles, and its share of the "
    "kernel's";

/* How one writer lays out the section (printf formats). */
typedef struct lines_form {
    const char *head;  /* %s: lines_help */
    const char *row;   /* source line, cost, share in %, blocks */
    const char *none;  /* when no line has a cost */
    const char *foot;
    int html;          /* the source line HTML-escaped */
} lines_form;

/* "file:line", HTML-escaped when asked. */
static const char *source(const tmap_report_line *l, int html, char *buf, size_t size)
{
    char plain[256];
    tmap_ptx_loc_format(l->file, l->line, html ? plain : buf, html ? sizeof plain : size);
    FILE *f = html ? fmemopen(buf, size, "w") : NULL;
    if (html && !f)
        snprintf(buf, size, "?");
    if (f) {
        tmap_html_escape(f, plain);
        fclose(f);
    }
    return buf;
}

static tmap_status write_lines(const tmap_report *r, FILE *f, const lines_form *form,
                               tmap_error *err)
{
    tmap_report_line *lines = NULL;
    size_t n = 0;
    double total = 0;
    char src[1024];
    tmap_status s = tmap_report_lines(r, &lines, &n, &total, err);
    if (s || !n)
        return s;
    size_t k = shown(lines, n);
    fprintf(f, form->head, lines_help);
    for (size_t i = 0; i < k; i++)
        fprintf(f, form->row, source(&lines[i], form->html, src, sizeof src), lines[i].cost,
                100 * lines[i].share, lines[i].nblocks);
    fputs(form->foot, f);
    if (!k)
        fputs(form->none, f);
    free(lines);
    return TMAP_OK;
}

tmap_status tmap_report_lines_write(const tmap_report *r, FILE *f, tmap_report_lines_form k,
                                   tmap_error *err)
{
    static const lines_form forms[] = {
        [TMAP_LINES_TEXT] = {
            "\nsource lines that cost the most divergence (%s):\n",
            "  %-32s %14.0f cycles %6.1f %%  (%zu blocks)\n", "  none: no block diverges\n", "",
            0},
        [TMAP_LINES_MARKDOWN] = {
            "\n## Source lines that cost the most divergence\n\nThe cost: %s.\n\n"
            "| source line | divergence cost (cycles) | share | blocks |\n|---|---:|---:|---:|\n",
            "| `%s` | %.0f | %.1f %% | %zu |\n", "\nNone: no block diverges.\n", "", 0},
        [TMAP_LINES_HTML] = {
            "<h2>Source lines that cost the most divergence</h2>\n<p>The cost: %s.</p>\n"
            "<table class=\"num\"><tr><th>source line</th><th>divergence cost (cycles)</th>"
            "<th>share</th><th>blocks</th></tr>\n",
            "<tr><td><code>%s</code></td><td>%.0f</td><td>%.1f %%</td><td>%zu</td></tr>\n",
            "<p>None: no block diverges.</p>\n", "</table>\n", 1},
    };
    assert(k < sizeof forms / sizeof forms[0]);
    return write_lines(r, f, &forms[k], err);
}

tmap_status tmap_report_lines_json(const tmap_report *r, json_t *o, tmap_error *err)
{
    tmap_report_line *lines = NULL;
    size_t n = 0;
    double total = 0;
    tmap_status s = tmap_report_lines(r, &lines, &n, &total, err);
    if (s)
        return s;
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:s, s:I, s:f, s:f, s:I}", "file", lines[i].file,
                                           "line", (json_int_t)lines[i].line, "divergence_cost",
                                           lines[i].cost, "share", lines[i].share, "blocks",
                                           (json_int_t)lines[i].nblocks));
    json_object_set_new(o, "source_lines", n ? a : json_null());
    if (!n)
        json_decref(a);
    free(lines);
    return TMAP_OK;
}

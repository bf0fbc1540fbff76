/*
 * report_data.c -- checking a tmap_report before writing it, and the
 * numbers behind its plots: which row to compare with the original, each
 * basic block's cost under the original grouping, sorted warp costs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/report.h"
#include "common/base.h"
#include "report/report_priv.h"

tmap_status tmap_report_check(const tmap_report *r, tmap_error *err)
{
    if (!r || !r->bbv || !r->lat || !r->params || !r->rows || r->nrows == 0)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "report: needs the BBV, block latencies, launch parameters and rows");
    const tmap_metrics *m0 = r->rows[0].m;
    if (!r->rows[0].available || !m0)
        return tmap_fail(err, TMAP_ERR_INVALID, "report: row 0 (the original) has no metrics");
    if (r->bbv->nthreads == 0 || r->bbv->nblocks == 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "report: the BBV is empty");
    for (size_t i = 0; i < r->nrows; i++) {
        const tmap_report_row *row = &r->rows[i];
        if (!row->available)
            continue;
        if (!row->m)
            return tmap_fail(err, TMAP_ERR_INVALID, "report: row %zu (%s) is available without "
                             "metrics", i, row->name ? row->name : "?");
        if (row->m->nwarps != m0->nwarps || row->m->nthread_blocks != m0->nthread_blocks ||
            !row->m->warp_cost || !row->m->block_cost)
            return tmap_fail(err, TMAP_ERR_INVALID, "report: row %zu (%s) was computed for "
                             "another launch shape than the original", i,
                             row->name ? row->name : "?");
    }
    return TMAP_OK;
}

tmap_status tmap_report_stream_status(FILE *f, const char *what, tmap_error *err)
{
    if (fflush(f) != 0 || ferror(f))
        return tmap_fail(err, TMAP_ERR_IO, "report: writing the %s failed", what);
    return TMAP_OK;
}

size_t tmap_report_compare_row(const tmap_report *r)
{
    size_t best = 0;
    for (size_t i = 1; i < r->nrows; i++) {
        const tmap_report_row *row = &r->rows[i];
        if (!row->available || !row->m)
            continue;
        if (row->chosen)
            return i;
        if (!best || row->m->bbv_weighted_scheduled < r->rows[best].m->bbv_weighted_scheduled)
            best = i;
    }
    return best;
}

/* Adds warp [w0, w1) of the original grouping to every block's sums. */
static void add_warp(const tmap_bbv *bbv, size_t w0, size_t w1, tmap_report_block *blocks)
{
    for (size_t b = 0; b < bbv->nblocks; b++) {
        uint32_t mx = 0;
        double sum = 0;
        for (size_t t = w0; t < w1; t++) {
            uint32_t c = bbv->counts[t * bbv->nblocks + b];
            sum += c;
            mx = c > mx ? c : mx;
        }
        blocks[b].execs += sum;
        blocks[b].max_sum += mx;
        blocks[b].mean_sum += sum / (double)(w1 - w0);
    }
}

static int by_cost_desc(const void *pa, const void *pb)
{
    const tmap_report_block *a = pa, *b = pb;
    double ca = a->lat * a->max_sum, cb = b->lat * b->max_sum;
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

tmap_status tmap_report_blocks(const tmap_report *r, tmap_report_block **out, tmap_error *err)
{
    const tmap_bbv *bbv = r->bbv;
    size_t s = r->params->block_size ? r->params->block_size : bbv->nthreads;
    tmap_report_block *blocks = calloc(bbv->nblocks, sizeof *blocks);
    if (!blocks)
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory");
    for (size_t b = 0; b < bbv->nblocks; b++)
        blocks[b].index = b, blocks[b].lat = r->lat[b];
    /* warps: 32 consecutive slots from the start of each thread block */
    for (size_t k0 = 0; k0 < bbv->nthreads; k0 += s) {
        size_t k1 = k0 + s < bbv->nthreads ? k0 + s : bbv->nthreads;
        for (size_t w0 = k0; w0 < k1; w0 += 32)
            add_warp(bbv, w0, w0 + 32 < k1 ? w0 + 32 : k1, blocks);
    }
    qsort(blocks, bbv->nblocks, sizeof *blocks, by_cost_desc);
    *out = blocks;
    return TMAP_OK;
}

static int desc(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a > b ? -1 : a < b;
}

tmap_status tmap_report_sorted_desc(const double *v, size_t n, double **out, tmap_error *err)
{
    double *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory");
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, desc);
    *out = c;
    return TMAP_OK;
}

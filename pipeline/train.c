/*
 * train.c -- the runs a BBV predictor is fitted on (`threadmap train` from
 * files, the bench from its profiling runs): each run's feature rows and
 * BBVs, checked alike as they are added (feature count, rows against
 * threads, block count and names against the first run), then fitted.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "threadmap/pipeline.h"

/* Every check of a new run against the set; 0 or the failure. */
static tmap_status check_run(const tmap_train_set *t, size_t rows, size_t p, const tmap_bbv *bbv,
                             char **names, const char *what, tmap_error *err)
{
    if (t->nruns && p != t->p)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu features, but the first run has %zu",
                         what, p, t->p);
    if (rows != bbv->nthreads)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu feature rows for %zu threads", what, rows,
                         bbv->nthreads);
    if (t->nruns && bbv->nblocks != t->nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu blocks, but the first run has %zu", what,
                         bbv->nblocks, t->nblocks);
    for (size_t b = 0; t->nruns && names && t->blocks && b < t->nblocks; b++)
        if (strcmp(names[b], t->blocks[b]))
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: block %zu is '%s', in the first run '%s'",
                             what, b, names[b], t->blocks[b]);
    return TMAP_OK;
}

/* *array (of elem-byte elements) resized to n; nonzero on failure. */
static int grow(void *array, size_t n, size_t elem)
{
    void *p = realloc(*(void **)array, n * elem);
    if (p)
        *(void **)array = p;
    return !p;
}

tmap_status tmap_train_add(tmap_train_set *t, double *feat, size_t rows, size_t p, tmap_bbv *bbv,
                           char **names, const char *what, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, t, feat, bbv, what);
    if (st)
        return st;
    size_t n = t->nruns;
    st = check_run(t, rows, p, bbv, names, what, err);
    if (!st && (grow(&t->feat, n + 1, sizeof *t->feat) || grow(&t->bbv, n + 1, sizeof *t->bbv) ||
                grow(&t->runs, n + 1, sizeof *t->runs)))
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu runs", n + 1);
    if (st) {
        tmap_names_free(names, bbv->nblocks);
        free(feat);
        tmap_bbv_free(bbv);
        return st;
    }
    if (!n)
        t->p = p, t->nblocks = bbv->nblocks, t->blocks = names, names = NULL;
    tmap_names_free(names, bbv->nblocks);
    t->feat[n] = feat;
    t->bbv[n] = *bbv;
    *bbv = (tmap_bbv){0};
    for (size_t i = 0; i <= n; i++) /* the views follow a moved array */
        t->runs[i] = (tmap_regress_run){t->feat[i], &t->bbv[i]};
    t->nruns = n + 1;
    return TMAP_OK;
}

size_t tmap_train_threads(const tmap_train_set *t)
{
    size_t rows = 0;
    for (size_t i = 0; t && i < t->nruns; i++)
        rows += t->bbv[i].nthreads;
    return rows;
}

tmap_status tmap_train_fit(const tmap_train_set *t, const char *kernel,
                           const char *const *feature_names, tmap_predictor *out, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, t, out);
    if (st)
        return st;
    if (!t->nruns)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_train_fit: no runs to fit");
    return tmap_regress_fit(t->runs, t->nruns, t->p, kernel, (const char *const *)t->blocks,
                            feature_names, out, err);
}

void tmap_train_free(tmap_train_set *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nruns; i++) {
        free(t->feat[i]);
        tmap_bbv_free(&t->bbv[i]);
    }
    tmap_names_free(t->blocks, t->nblocks);
    free(t->feat);
    free(t->bbv);
    free(t->runs);
    memset(t, 0, sizeof *t);
}

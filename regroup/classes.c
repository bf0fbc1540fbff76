/*
 * classes.c -- distinct rows by hashing, members by a counting sort.
 */
#include "regroup/classes.h"

#include <stdlib.h>
#include <string.h>

#include "instrument/base.h"
#include "regroup/rowset.h"

typedef struct rows_ctx {
    const uint32_t *rows;
    size_t nblocks;
} rows_ctx;

static const uint32_t *row_of(const void *ctx, uint32_t t)
{
    const rows_ctx *r = ctx;
    return r->rows + (size_t)t * r->nblocks;
}

void tmap_regroup_classes_free(tmap_regroup_classes *c)
{
    free(c->of);
    free(c->start);
    free(c->member);
    memset(c, 0, sizeof *c);
}

/* c->of filled; builds start[] and member[] (stable, so ascending). */
static int bucket(tmap_regroup_classes *c)
{
    c->start = calloc(c->count + 1, sizeof *c->start);
    c->member = malloc(c->n * sizeof *c->member);
    if (!c->start || !c->member)
        return -1;
    for (size_t t = 0; t < c->n; t++)
        c->start[c->of[t] + 1]++;
    for (size_t k = 0; k < c->count; k++)
        c->start[k + 1] += c->start[k];
    uint32_t *fill = malloc(c->count * sizeof *fill);
    if (!fill)
        return -1;
    memcpy(fill, c->start, c->count * sizeof *fill);
    for (size_t t = 0; t < c->n; t++)
        c->member[fill[c->of[t]]++] = (uint32_t)t;
    free(fill);
    return 0;
}

tmap_status tmap_regroup_classes_build(const tmap_regroup_part *p,
                                       tmap_regroup_classes *c,
                                       tmap_error *err)
{
    memset(c, 0, sizeof *c);
    c->n = p->n;
    rows_ctx ctx = {p->rows, p->nblocks};
    tmap_regroup_rowset set;
    c->of = malloc(p->n * sizeof *c->of);
    if (!c->of || tmap_regroup_rowset_init(&set, p->nblocks, row_of, &ctx)) {
        free(c->of);
        c->of = NULL;
        return tmap_fail(err, TMAP_ERR_NOMEM, "regroup: class table");
    }
    /* class ids are handed out in order of first member; the set names a
     * class by its first member, translated to the class id through of[] */
    int bad = 0;
    for (size_t t = 0; t < p->n && !bad; t++) {
        const uint32_t *r = row_of(&ctx, (uint32_t)t);
        uint32_t first;
        int added = tmap_regroup_rowset_add(&set, r,
                                            tmap_regroup_hash(r, p->nblocks),
                                            (uint32_t)t, &first);
        if (added < 0)
            bad = 1;
        else
            c->of[t] = added ? (uint32_t)c->count++ : c->of[first];
    }
    tmap_regroup_rowset_free(&set);
    if (bad || bucket(c)) {
        tmap_regroup_classes_free(c);
        return tmap_fail(err, TMAP_ERR_NOMEM, "regroup: class table");
    }
    return TMAP_OK;
}

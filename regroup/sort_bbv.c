/*
 * sort_bbv.c -- Sorting (sec. V-A): ascending lexicographic order of the BBV
 * rows, stable.  The distinct rows are found by hashing (one pass over the
 * matrix), only they are compared, and the threads are then laid out class
 * by class, each class in thread order.  O(N * nblocks + C log C * nblocks)
 * for C distinct rows.
 */
#include "threadmap/regroup.h"

#include <stdlib.h>

#include "instrument/base.h"
#include "regroup/classes.h"
#include "regroup/gain.h"

typedef struct class_ref {
    const uint32_t *row;
    size_t nblocks;
    uint32_t k;
} class_ref;

static int cmp_ref(const void *a, const void *b)
{
    const class_ref *x = a, *y = b;
    return tmap_regroup_row_cmp(x->row, y->row, x->nblocks);
}

static tmap_status sort_part(const tmap_regroup_part *p, uint32_t *out,
                             tmap_error *err)
{
    tmap_regroup_classes c;
    tmap_status st = tmap_regroup_classes_build(p, &c, err);
    if (st != TMAP_OK)
        return st;
    class_ref *ref = malloc(c.count * sizeof *ref);
    if (!ref) {
        tmap_regroup_classes_free(&c);
        return tmap_fail(err, TMAP_ERR_NOMEM, "sort: %zu classes", c.count);
    }
    for (size_t k = 0; k < c.count; k++)
        ref[k] = (class_ref){tmap_regroup_class_row(p, &c, k), p->nblocks,
                             (uint32_t)k};
    /* rows of distinct classes differ, so the order has no ties */
    qsort(ref, c.count, sizeof *ref, cmp_ref);
    size_t slot = 0;
    for (size_t i = 0; i < c.count; i++)
        for (uint32_t m = c.start[ref[i].k]; m < c.start[ref[i].k + 1]; m++)
            out[slot++] = c.member[m];
    free(ref);
    tmap_regroup_classes_free(&c);
    return TMAP_OK;
}

tmap_status tmap_regroup_sort(const tmap_bbv *bbv,
                              const tmap_regroup_opts *opts, uint32_t *perm,
                              tmap_error *err)
{
    tmap_regroup_input in = {.bbv = bbv, .need_bbv = 1, .name = "sort"};
    return tmap_regroup_run(sort_part, &in, opts, perm, err);
}

/*
 * sort_bbv.c -- Sorting (sec. V-A): ascending lexicographic order of the BBV
 * rows, stable.  One pass over the matrix names each thread's class (its
 * distinct row, found by hashing: classes.c); only the C class rows are
 * ranked, by a radix sort on their two leading varying words, then by whole
 * rows where those tie; one counting-sort pass over the class ids then
 * writes each thread straight to its slot, a class's threads in thread
 * order.  O(N * nblocks + C), plus comparisons of the rows that tie.
 */
#include "threadmap/regroup.h"

#include <stdlib.h>

#include "common/base.h"
#include "regroup/classes.h"
#include "regroup/gain.h"
#include "regroup/keysort.h"

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

/* The first column where two class rows differ (nblocks if C == 1): the
 * columns before it are equal in every row and do not order them. */
static size_t first_varying(const tmap_regroup_part *p,
                            const tmap_regroup_classes *c)
{
    const uint32_t *r0 = tmap_regroup_class_row(p, c, 0);
    size_t j = p->nblocks;
    /* invariant: rows 0..k-1 agree on columns 0..j-1 */
    for (size_t k = 1; k < c->count && j > 0; k++) {
        const uint32_t *r = tmap_regroup_class_row(p, c, k);
        size_t i = 0;
        while (i < j && r[i] == r0[i])
            i++;
        j = i;
    }
    return j;
}

/* order[i] = the class of the i-th smallest row.  0, or -1 (no memory). */
static int rank_classes(const tmap_regroup_part *p,
                        const tmap_regroup_classes *c, uint32_t *order)
{
    size_t C = c->count, nb = p->nblocks, j = first_varying(p, c);
    uint64_t *key = malloc(C * sizeof *key);
    class_ref *ref = malloc(C * sizeof *ref);
    int bad = !key || !ref;
    for (size_t k = 0; k < C && !bad; k++) {
        const uint32_t *r = tmap_regroup_class_row(p, c, k);
        uint64_t hi = j < nb ? r[j] : 0, lo = j + 1 < nb ? r[j + 1] : 0;
        key[k] = hi << 32 | lo;
        order[k] = (uint32_t)k;
    }
    bad = bad || tmap_regroup_keysort(key, order, C);
    /* a run of equal keys [i, e) agrees up to column j + 1: whole rows
     * order it (distinct classes differ, so there are no ties) */
    for (size_t i = 0, e; i < C && !bad; i = e) {
        for (e = i + 1; e < C && key[e] == key[i]; e++)
            ;
        if (e - i == 1)
            continue;
        for (size_t m = i; m < e; m++)
            ref[m - i] = (class_ref){tmap_regroup_class_row(p, c, order[m]),
                                     nb, order[m]};
        qsort(ref, e - i, sizeof *ref, cmp_ref);
        for (size_t m = i; m < e; m++)
            order[m] = ref[m - i].k;
    }
    free(key);
    free(ref);
    return bad ? -1 : 0;
}

static tmap_status sort_part(const tmap_regroup_part *p, uint32_t *out,
                             tmap_error *err)
{
    tmap_regroup_classes c;
    tmap_status st = tmap_regroup_classes_find(p, &c, err);
    if (st != TMAP_OK)
        return st;
    size_t C = c.count;
    uint32_t *order = malloc(C * sizeof *order);
    uint32_t *next = malloc(C * sizeof *next);
    if (!order || !next || rank_classes(p, &c, order)) {
        st = tmap_fail(err, TMAP_ERR_NOMEM, "sort: %zu classes", C);
        goto done;
    }
    /* next[k]: the slot of class k's next thread; the classes' slot ranges
     * follow in row order */
    uint32_t slot = 0;
    for (size_t i = 0; i < C; i++) {
        next[order[i]] = slot;
        slot += c.size[order[i]];
    }
    for (size_t t = 0; t < c.n; t++)
        out[next[c.of[t]]++] = (uint32_t)t;
done:
    free(order);
    free(next);
    tmap_regroup_classes_free(&c);
    return st;
}

tmap_status tmap_regroup_sort(const tmap_bbv *bbv,
                              const tmap_regroup_opts *opts, uint32_t *perm,
                              tmap_error *err)
{
    tmap_regroup_input in = {.bbv = bbv, .need_bbv = 1, .name = "sort"};
    return tmap_regroup_run(sort_part, &in, opts, perm, err);
}

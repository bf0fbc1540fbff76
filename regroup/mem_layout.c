/*
 * mem_layout.c -- memory transformations that move data, one warp request
 * at a time in the original thread order: duplication, data reordering,
 * relabeling by a locality order; and building A' from a result
 * (threadmap/regroup.h, docs/memory.md).
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/regroup.h"
#include "common/base.h"
#include "regroup/mem.h"

size_t tmap_memre_warp(const tmap_memref *r) { return r->warp ? r->warp : 32; }

size_t tmap_memre_segment(const tmap_memref *r)
{
    size_t sb = r->sector_bytes ? r->sector_bytes : 32;
    return sb > r->elem_bytes ? sb / r->elem_bytes : 1;
}

size_t tmap_memre_partial_head(const tmap_memref *r)
{
    size_t seg = tmap_memre_segment(r);
    return (r->nelems + seg - 1) / seg * seg;
}

static int by_key(const void *a, const void *b)
{
    const tmap_memre_keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

void tmap_memre_sort(tmap_memre_keyed *v, size_t n) { qsort(v, n, sizeof *v, by_key); }

void tmap_memre_free(tmap_memre *m)
{
    if (!m)
        return;
    free(m->from), free(m->index), free(m->perm);
    memset(m, 0, sizeof *m);
}

tmap_status tmap_memre_begin(const tmap_memref *r, const uint32_t *index, const char *fn,
                             int copies, int single, size_t nout, int perm, tmap_memre *out,
                             tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, out);
    if (st)
        return st;
    memset(out, 0, sizeof *out);
    if (!index)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: the reference needs its index array", fn);
    if ((st = tmap_sectors_check(r, index, fn, err)))
        return st;
    if (copies && r->write)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: the reference writes, and this layout "
                         "holds some elements twice", fn);
    if (r->nelems > UINT32_MAX || nout > UINT32_MAX) /* TMAP_MEMRE_EMPTY is no slot */
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: %zu elements, %zu slots: at most "
                         "2^32 - 1", fn, r->nelems, nout);
    if (single && r->per_thread != 1)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: %zu accesses per thread: this "
                         "transformation takes one (per_thread 1)", fn, r->per_thread);
    size_t n = r->nthreads * r->per_thread;
    out->nout = nout ? nout : r->nelems;
    out->from = nout ? malloc(nout * sizeof *out->from) : NULL;
    out->index = malloc(n * sizeof *out->index);
    out->perm = perm ? malloc(r->nthreads * sizeof *out->perm) : NULL;
    if ((nout && !out->from) || !out->index || (perm && !out->perm)) {
        tmap_memre_free(out);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    return TMAP_OK;
}

void tmap_memre_gather(const tmap_memre *m, const void *a, size_t elem_bytes, void *out)
{
    const unsigned char *src = a;
    unsigned char *dst = out;
    for (size_t x = 0; x < m->nout; x++) {
        uint32_t f = m->from ? m->from[x] : (uint32_t)x;
        if (f == TMAP_MEMRE_EMPTY)
            memset(dst + x * elem_bytes, 0, elem_bytes);
        else
            memcpy(dst + x * elem_bytes, src + (size_t)f * elem_bytes, elem_bytes);
    }
}

/* Calls visit(access i, its duplication slot) for every access, warp by
 * warp, request by request, lane by lane. */
typedef void (*visit_fn)(void *ctx, size_t i, size_t slot);
static void each_request(const tmap_memref *r, visit_fn visit, void *ctx)
{
    size_t w = tmap_memre_warp(r), k = r->per_thread;
    for (size_t first = 0; first < r->nthreads; first += w) {
        size_t lanes = r->nthreads - first < w ? r->nthreads - first : w;
        for (size_t j = 0; j < k; j++)
            for (size_t l = 0; l < lanes; l++)
                visit(ctx, (first + l) * k + j, first * k + j * lanes + l);
    }
}

typedef struct dup_ctx {
    const uint32_t *index;
    tmap_memre *out;
} dup_ctx;

static void dup_visit(void *ctx, size_t i, size_t slot)
{
    dup_ctx *d = ctx;
    d->out->from[slot] = d->index[i];
    d->out->index[i] = (uint32_t)slot;
}

tmap_status tmap_memre_duplicate(const tmap_memref *r, const uint32_t *index, tmap_memre *out,
                                 tmap_error *err)
{
    size_t n = r ? r->nthreads * r->per_thread : 1;
    if (n > UINT32_MAX) /* Q numbers the copies with 32 bits */
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "tmap_memre_duplicate: %zu accesses, more "
                         "copies than 32-bit indices number", n);
    tmap_status st = tmap_memre_begin(r, index, "tmap_memre_duplicate", 1, 0, n, 0, out, err);
    if (st)
        return st;
    dup_ctx d = {index, out};
    each_request(r, dup_visit, &d);
    return TMAP_OK;
}

/* Q[i] = where[P[i]] for every access. */
static void redirect(const tmap_memref *r, const uint32_t *index, const uint32_t *where,
                     uint32_t *q)
{
    for (size_t i = 0; i < r->nthreads * r->per_thread; i++)
        q[i] = where[index[i]];
}

typedef struct reorder_ctx {
    const uint32_t *index;
    size_t nelems;
    uint32_t *from, *where; /* from[slot], where[element]; EMPTY until placed */
    uint8_t *seen;          /* [element] */
    uint32_t *late;         /* read elements whose first slot is past A's end, in order */
    size_t nlate;
} reorder_ctx;

/* Accesses come in slot order: an element's first visit has its least
 * slot, distinct from every other element's. */
static void first_visit(void *ctx, size_t i, size_t slot)
{
    reorder_ctx *c = ctx;
    uint32_t e = c->index[i];
    if (c->seen[e])
        return;
    c->seen[e] = 1;
    if (slot < c->nelems)
        c->from[slot] = e, c->where[e] = (uint32_t)slot;
    else
        c->late[c->nlate++] = e;
}

tmap_status tmap_memre_reorder(const tmap_memref *r, const uint32_t *index, tmap_memre *out,
                               tmap_error *err)
{
    size_t ne = r ? r->nelems : 1;
    tmap_status st = tmap_memre_begin(r, index, "tmap_memre_reorder", 0, 0, ne, 0, out, err);
    if (st)
        return st;
    reorder_ctx c = {index, ne, out->from, malloc(ne * sizeof(uint32_t)), calloc(ne, 1),
                     malloc(ne * sizeof(uint32_t)), 0};
    if (!c.where || !c.seen || !c.late) {
        free(c.where), free(c.seen), free(c.late), tmap_memre_free(out);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    memset(out->from, 0xff, ne * sizeof *out->from);
    each_request(r, first_visit, &c);
    for (uint32_t e = 0; e < ne; e++) /* then the elements nobody reads */
        if (!c.seen[e])
            c.late[c.nlate++] = e;
    for (size_t x = 0, l = 0; x < ne; x++) /* as many free slots as late elements */
        if (out->from[x] == TMAP_MEMRE_EMPTY)
            out->from[x] = c.late[l], c.where[c.late[l++]] = (uint32_t)x;
    redirect(r, index, c.where, out->index);
    free(c.where), free(c.seen), free(c.late);
    return TMAP_OK;
}

tmap_status tmap_memre_relabel(const tmap_memref *r, const uint32_t *index, const uint32_t *order,
                               int permute_threads, tmap_memre *out, tmap_error *err)
{
    size_t ne = r ? r->nelems : 1;
    tmap_status st = tmap_memre_begin(r, index, "tmap_memre_relabel", 0, 0, ne, permute_threads,
                                      out, err);
    if (st)
        return st;
    if (permute_threads && r->nthreads != r->nelems)
        st = tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_relabel: threads follow the "
                       "elements only when there are as many (%zu threads, %zu elements)",
                       r->nthreads, r->nelems);
    if (st == TMAP_OK)
        st = TMAP_NEED(err, order);
    if (st == TMAP_OK)
        st = tmap_perm_check(order, ne, "tmap_memre_relabel: order", err);
    uint32_t *where = st == TMAP_OK ? malloc(ne * sizeof *where) : NULL;
    if (st == TMAP_OK && !where)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (st) {
        tmap_memre_free(out);
        return st;
    }
    for (size_t x = 0; x < ne; x++)
        where[order[x]] = (uint32_t)x;
    memcpy(out->from, order, ne * sizeof *order);
    if (permute_threads)
        memcpy(out->perm, order, ne * sizeof *order);
    redirect(r, index, where, out->index);
    free(where);
    return TMAP_OK;
}

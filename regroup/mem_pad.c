/*
 * mem_pad.c -- wu2013's padding (sec. 3.3.2, Fig. 3): elements by access
 * frequency, threads by their element, each warp's working set packed into
 * one segment, padding where it would straddle two (threadmap/regroup.h).
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/regroup.h"
#include "common/base.h"
#include "regroup/mem.h"

/* perm: threads stably sorted by the rank of the element they read
 * (a counting sort: rank r's threads start after the accesses of ranks
 * before it). */
static tmap_status sort_threads(const tmap_memref *r, const uint32_t *index, uint32_t *perm,
                                tmap_error *err)
{
    size_t ne = r->nelems, n = r->nthreads, nref = 0;
    uint32_t *freq = calloc(ne, sizeof *freq), *first = malloc(ne * sizeof *first);
    uint32_t *start = first; /* first[e] is read before start[e] is written */
    tmap_memre_keyed *e = malloc(ne * sizeof *e);
    if (!freq || !first || !e) {
        free(freq), free(first), free(e);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t t = n; t-- > 0;)
        freq[index[t]]++, first[index[t]] = (uint32_t)t;
    for (size_t x = 0; x < ne; x++) /* most accesses first, then the earliest first access */
        if (freq[x])
            e[nref++] = (tmap_memre_keyed){(uint64_t)(UINT32_MAX - freq[x]) << 32 | first[x],
                                           (uint32_t)x};
    tmap_memre_sort(e, nref);
    for (size_t i = 0, at = 0; i < nref; at += freq[e[i].id], i++)
        start[e[i].id] = (uint32_t)at;
    for (size_t t = 0; t < n; t++)
        perm[start[index[t]]++] = (uint32_t)t;
    free(freq), free(first), free(e);
    return TMAP_OK;
}

typedef struct packer {
    uint32_t *from, *where; /* from[slot]; where[element]: its latest copy */
    size_t pos, seg;        /* next free slot; elements per segment */
} packer;

/* One warp's working set u[0..nu) (distinct, in order). */
static void pack_warp(packer *p, const uint32_t *u, size_t nu)
{
    size_t seg_start = p->pos - p->pos % p->seg, fresh = 0;
    for (size_t i = 0; i < nu; i++)
        fresh += p->where[u[i]] == TMAP_MEMRE_EMPTY || p->where[u[i]] < seg_start;
    if (!fresh)
        return; /* all in the current segment already */
    int fits = nu <= p->seg - p->pos % p->seg;
    while (!fits && p->pos % p->seg)
        p->from[p->pos++] = TMAP_MEMRE_EMPTY;
    seg_start = p->pos - p->pos % p->seg;
    for (size_t i = 0; i < nu; i++)
        if (p->where[u[i]] == TMAP_MEMRE_EMPTY || p->where[u[i]] < seg_start) {
            p->from[p->pos] = u[i];
            p->where[u[i]] = (uint32_t)p->pos++;
        }
}

tmap_status tmap_memre_pad(const tmap_memref *r, const uint32_t *index, tmap_memre *out,
                           tmap_error *err)
{
    size_t w = r ? tmap_memre_warp(r) : 1, s = r ? tmap_memre_segment(r) : 1;
    size_t n = r ? r->nthreads : 0, bound = (n + w - 1) / w * (w + s); /* a set + a pad each */
    if (bound > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "tmap_memre_pad: %zu threads: the padded "
                         "layout may need more slots than 32-bit indices number", n);
    tmap_status st = tmap_memre_begin(r, index, "tmap_memre_pad", 1, 1, bound, 1, out, err);
    if (st)
        return st;
    packer p = {out->from, malloc(r->nelems * sizeof *p.where), 0, s};
    uint32_t *u = malloc(w * sizeof *u);
    if (!p.where || !u || (st = sort_threads(r, index, out->perm, err))) {
        free(p.where), free(u), tmap_memre_free(out);
        return st ? st : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    memset(p.where, 0xff, r->nelems * sizeof *p.where);
    for (size_t first = 0; first < n; first += w) {
        size_t lanes = n - first < w ? n - first : w, nu = 0;
        for (size_t l = 0; l < lanes; l++) { /* a warp's equal elements are adjacent */
            uint32_t e = index[out->perm[first + l]];
            if (!nu || u[nu - 1] != e)
                u[nu++] = e;
        }
        pack_warp(&p, u, nu);
        for (size_t l = 0; l < lanes; l++)
            out->index[out->perm[first + l]] = p.where[index[out->perm[first + l]]];
    }
    out->nout = p.pos;
    uint32_t *shrunk = realloc(out->from, (p.pos ? p.pos : 1) * sizeof *shrunk);
    out->from = shrunk ? shrunk : out->from;
    free(p.where), free(u);
    return TMAP_OK;
}

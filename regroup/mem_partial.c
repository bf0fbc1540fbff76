/*
 * mem_partial.c -- partial duplication (zhang2011 sec. 5.3, wu2013 sec. 3.1:
 * a fraction r of the data transformed) and sharing (wu2013 sec. 3.4: a
 * thread block's working set staged in shared memory)
 * (threadmap/regroup.h, docs/memory.md).
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/regroup.h"
#include "common/base.h"
#include "regroup/mem.h"

/* Sectors a duplicated request of `lanes` lanes reads: its copies are
 * consecutive and start on a sector. */
static uint32_t packed(const tmap_memref *r, size_t lanes)
{
    size_t sb = r->sector_bytes ? r->sector_bytes : 32;
    return (uint32_t)((lanes * r->elem_bytes + sb - 1) / sb);
}

/* chosen[q] = 1 for the first ceil(fraction x requests) requests ranked
 * by the sectors duplication saves (most first, ties by request number),
 * those that save none excluded. */
static tmap_status rank(const tmap_memref *r, const uint32_t *index, double fraction,
                        uint8_t *chosen, tmap_error *err)
{
    size_t w = tmap_memre_warp(r), k = r->per_thread, warps = (r->nthreads + w - 1) / w;
    size_t nq = warps * k, take = (size_t)(fraction * (double)nq + 0.999999);
    uint32_t *each = malloc(nq * sizeof *each);
    tmap_memre_keyed *v = malloc(nq * sizeof *v);
    tmap_sector_counts c;
    tmap_status st = each && v ? tmap_sectors_each(r, index, NULL, each, &c, err)
                               : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t q = 0; st == TMAP_OK && q < nq; q++) {
        size_t lanes = q / k + 1 < warps ? w : r->nthreads - (q / k) * w;
        uint32_t pk = packed(r, lanes), saved = each[q] > pk ? each[q] - pk : 0;
        v[q] = (tmap_memre_keyed){(uint64_t)(UINT32_MAX - saved) << 1 | (saved == 0),
                                  (uint32_t)q};
    }
    if (st == TMAP_OK) {
        tmap_memre_sort(v, nq);
        memset(chosen, 0, nq);
        for (size_t i = 0; i < take && i < nq && !(v[i].key & 1); i++)
            chosen[v[i].id] = 1;
    }
    free(each), free(v);
    return st;
}

tmap_status tmap_memre_partial(const tmap_memref *r, const uint32_t *index, double fraction,
                               tmap_memre *out, tmap_error *err)
{
    const char *fn = "tmap_memre_partial";
    if (r && (r->nthreads * r->per_thread > UINT32_MAX / 2 || r->nelems > UINT32_MAX / 2))
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: %zu accesses over %zu elements: the "
                         "copies follow A, both below 2^31", fn,
                         r->nthreads * r->per_thread, r->nelems);
    if (!(fraction >= 0 && fraction <= 1))
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: fraction %g: 0 to 1", fn, fraction);
    size_t ne = r ? r->nelems : 1, head = r ? tmap_memre_partial_head(r) : 1;
    size_t n = r ? r->nthreads * r->per_thread : 1;
    tmap_status st = tmap_memre_begin(r, index, fn, 1, 0, head + n, 0, out, err);
    if (st)
        return st;
    size_t w = tmap_memre_warp(r), k = r->per_thread, nq = (r->nthreads + w - 1) / w * k;
    uint8_t *chosen = malloc(nq);
    if (!chosen || (st = rank(r, index, fraction, chosen, err))) {
        free(chosen), tmap_memre_free(out);
        return st ? st : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t x = 0; x < head; x++) /* A itself, then the padding to a segment */
        out->from[x] = x < ne ? (uint32_t)x : TMAP_MEMRE_EMPTY;
    size_t next = head;
    for (size_t q = 0; q < nq; q++) { /* the chosen requests' copies, in request order */
        size_t first = q / k * w, j = q % k, lanes = r->nthreads - first < w ? r->nthreads - first : w;
        for (size_t l = 0; l < lanes; l++) {
            size_t i = (first + l) * k + j;
            out->index[i] = chosen[q] ? (uint32_t)next : index[i];
            if (chosen[q])
                out->from[next++] = index[i];
        }
    }
    out->nout = next;
    free(chosen);
    return TMAP_OK;
}

tmap_status tmap_memre_share(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                             size_t block_size, size_t smem_bytes, tmap_memre *out,
                             uint32_t **start, tmap_error *err)
{
    const char *fn = "tmap_memre_share";
    tmap_status st = TMAP_NEED(err, start);
    if (st)
        return st;
    *start = NULL;
    size_t n = r ? r->nthreads * r->per_thread : 1;
    if (n > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: %zu accesses: at most 2^32 - 1", fn, n);
    if (!block_size || (r && block_size % tmap_memre_warp(r)))
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: blocks of %zu threads: a positive "
                         "multiple of the warp", fn, block_size);
    if ((st = tmap_memre_begin(r, index, fn, 1, 0, n, perm != NULL, out, err)))
        return st;
    if (perm && (st = tmap_perm_check(perm, r->nthreads, "tmap_memre_share: perm", err)))
        return tmap_memre_free(out), st;
    size_t k = r->per_thread, nb = (r->nthreads + block_size - 1) / block_size;
    tmap_memre_keyed *v = malloc(block_size * k * sizeof *v);
    *start = malloc((nb + 1) * sizeof **start);
    if (!v || !*start) {
        free(v), free(*start), *start = NULL, tmap_memre_free(out);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    if (perm)
        memcpy(out->perm, perm, r->nthreads * sizeof *perm);
    size_t next = 0;
    for (size_t b = 0; b < nb && st == TMAP_OK; b++) {
        size_t s0 = b * block_size, s1 = s0 + block_size < r->nthreads ? s0 + block_size
                                                                         : r->nthreads, m = 0;
        for (size_t s = s0; s < s1; s++)
            for (size_t j = 0; j < k; j++) {
                size_t i = (perm ? perm[s] : s) * k + j;
                v[m++] = (tmap_memre_keyed){index[i], (uint32_t)i};
            }
        tmap_memre_sort(v, m); /* the block's elements ascending: U_b */
        (*start)[b] = (uint32_t)next;
        for (size_t x = 0; x < m; x++) {
            if (!x || v[x].key != v[x - 1].key)
                out->from[next++] = (uint32_t)v[x].key;
            out->index[v[x].id] = (uint32_t)(next - 1);
        }
        if ((next - (*start)[b]) * r->elem_bytes > smem_bytes)
            st = tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: block %zu reads %zu distinct "
                           "elements of %zu bytes: more than %zu bytes of shared memory", fn, b,
                           next - (*start)[b], r->elem_bytes, smem_bytes);
    }
    (*start)[nb] = (uint32_t)next;
    out->nout = next;
    free(v);
    if (st)
        free(*start), *start = NULL, tmap_memre_free(out);
    return st;
}

tmap_status tmap_memre_share_sectors(const tmap_memref *r, const tmap_memre *m,
                                     const uint32_t *start, size_t block_size,
                                     tmap_sector_counts *out, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, r, m, start, out);
    if (st)
        return st;
    if (!m->from)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_share_sectors: not a shared layout "
                         "(it has no list of elements)");
    size_t nb = block_size ? (r->nthreads + block_size - 1) / block_size : 0;
    tmap_memref q = *r;
    q.per_thread = 1, q.write = 0;
    memset(out, 0, sizeof *out);
    for (size_t b = 0; b < nb && st == TMAP_OK; b++) { /* warps of a block load its list */
        tmap_sector_counts c;
        q.nthreads = start[b + 1] - start[b];
        if ((st = tmap_sectors_count(&q, m->from + start[b], NULL, &c, err)))
            break;
        out->requests += c.requests, out->sectors += c.sectors;
        out->min_sectors += c.min_sectors, out->footprint += c.footprint;
        out->block_sectors += c.footprint; /* a block loads its list (distinct elements) */
    }
    return st;
}

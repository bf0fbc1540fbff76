/*
 * sectors.c -- the transaction model of an irregular reference
 * (threadmap/model.h, docs/memory.md): the distinct sectors of every warp
 * request and of every thread block, on the CPU, and the same counted on
 * the GPU by the runtime's kernels (runtime/gpu_sectors.cu) after the
 * arguments are checked here.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/model.h"
#include "common/base.h"

enum { MAX_WARP = 1024 };

static int pow2(size_t v) { return v && !(v & (v - 1)); }
static size_t warp_of(const tmap_memref *r) { return r->warp ? r->warp : 32; }
static size_t sector_of(const tmap_memref *r) { return r->sector_bytes ? r->sector_bytes : 32; }
/* 0: 256 threads, rounded down to whole warps (at least one) */
static size_t block_of(const tmap_memref *r)
{
    size_t w = warp_of(r);
    return r->block ? r->block : w < 256 ? 256 / w * w : w;
}

static tmap_status check_ref(const tmap_memref *r, const char *fn, tmap_error *err)
{
    if (!r->nthreads || r->nthreads > (1ull << 32) || !r->per_thread ||
        r->per_thread > (1ull << 40) / r->nthreads)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu threads x %zu per thread: threads must "
                         "be in [1, 2^32], per_thread >= 1, their product at most 2^40", fn,
                         r->nthreads, r->per_thread);
    if (!pow2(r->elem_bytes) || !pow2(sector_of(r)) || warp_of(r) > MAX_WARP)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: element (%zu) and sector (%zu) bytes must be "
                         "powers of two, the warp (%zu) at most %d lanes", fn, r->elem_bytes,
                         sector_of(r), warp_of(r), MAX_WARP);
    if (block_of(r) % warp_of(r))
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: thread blocks of %zu threads: must be whole "
                         "warps of %zu", fn, block_of(r), warp_of(r));
    if (!r->nelems || r->nelems > (1ull << 32))
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu elements, must be in [1, 2^32]", fn,
                         r->nelems);
    return TMAP_OK;
}

tmap_status tmap_sectors_check(const tmap_memref *r, const uint32_t *index, const char *fn,
                               tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, r);
    if (st || (st = check_ref(r, fn, err)))
        return st;
    size_t n = r->nthreads * r->per_thread;
    for (size_t i = 0; index && i < n; i++)
        if (index[i] >= r->nelems)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: index[%zu] = %u is not below the %zu "
                             "elements", fn, i, index[i], r->nelems);
    if (!index && n > r->nelems)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: without an index array the %zu accesses "
                         "need as many elements (%zu)", fn, n, r->nelems);
    return TMAP_OK;
}

/* Distinct values of v[0..n) (n small: a warp), sorting v in place. */
static size_t distinct(uint64_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) /* insertion sort: n <= MAX_WARP, mostly 32 */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    size_t d = n > 0;
    for (size_t i = 1; i < n; i++)
        d += v[i] != v[i - 1];
    return d;
}

/* One warp request (lanes slots [first, first + lanes), request j): adds
 * its sectors to *out and marks its sectors in the footprint bitmap. */
static void request(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                    size_t first, size_t lanes, size_t j, uint64_t *elem, uint64_t *sect,
                    uint64_t *bitmap, tmap_sector_counts *out)
{
    size_t eb = r->elem_bytes, sb = sector_of(r), per = eb >= sb ? eb / sb : 1;
    for (size_t l = 0; l < lanes; l++) {
        size_t t = perm ? perm[first + l] : first + l, i = t * r->per_thread + j;
        elem[l] = index ? index[i] : i;
        sect[l] = eb >= sb ? elem[l] * per : elem[l] * eb / sb;
        for (uint64_t b = sect[l]; b < sect[l] + per; b++)
            bitmap[b / 64] |= 1ull << (b % 64);
    }
    size_t de = distinct(elem, lanes), ds = distinct(sect, lanes);
    out->sectors += eb >= sb ? de * per : ds;
    out->min_sectors += (de * eb + sb - 1) / sb;
}

/* Access i's key: its element when an element covers whole sectors (per
 * of them), else its sector. */
static uint64_t key_of(const tmap_memref *r, const uint32_t *index, size_t i)
{
    uint64_t e = index ? index[i] : i;
    size_t eb = r->elem_bytes, sb = sector_of(r);
    return eb >= sb ? e : e * eb / sb;
}

/* The distinct sectors of each thread block (block_of(r) consecutive
 * slots, all of their requests), summed: a block's keys are marked in
 * `mark` (one bit per key, zero on entry), counted when new, then cleared
 * by a second walk over the same accesses, so mark is zero again on
 * return and the blocks cost their accesses, not the array. */
static uint64_t block_sectors(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                              uint64_t *mark)
{
    size_t b = block_of(r), k = r->per_thread, eb = r->elem_bytes, sb = sector_of(r);
    uint64_t distinct = 0;
    for (size_t first = 0; first < r->nthreads; first += b) {
        size_t end = r->nthreads - first < b ? r->nthreads : first + b;
        for (int clear = 0; clear < 2; clear++)
            for (size_t s = first; s < end; s++)
                for (size_t j = 0, t = perm ? perm[s] : s; j < k; j++) {
                    uint64_t key = key_of(r, index, t * k + j), bit = 1ull << (key % 64);
                    if (clear)
                        mark[key / 64] &= ~bit;
                    else if (!(mark[key / 64] & bit))
                        mark[key / 64] |= bit, distinct++;
                }
    }
    return distinct * (eb >= sb ? eb / sb : 1);
}

/* The counts, and each request's sectors into each[request] when each is
 * not NULL (request w * k + j: warp w's j-th). */
static tmap_status count(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                         tmap_sector_counts *out, uint32_t *each, const char *fn, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, out);
    char what[96];
    snprintf(what, sizeof what, "%s: perm", fn);
    if (st || (st = tmap_sectors_check(r, index, fn, err)) ||
        (perm && (st = tmap_perm_check(perm, r->nthreads, what, err))))
        return st;
    size_t w = warp_of(r), sb = sector_of(r);
    size_t nsectors = (r->nelems * r->elem_bytes + sb - 1) / sb;
    uint64_t *bitmap = calloc((nsectors + 63) / 64, sizeof *bitmap);
    uint64_t *elem = malloc(w * sizeof *elem), *sect = malloc(w * sizeof *sect);
    if (!bitmap || !elem || !sect) {
        free(bitmap), free(elem), free(sect);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    memset(out, 0, sizeof *out);
    for (size_t first = 0; first < r->nthreads; first += w) {
        size_t lanes = r->nthreads - first < w ? r->nthreads - first : w;
        for (size_t j = 0; j < r->per_thread; j++, out->requests++) {
            uint64_t before = out->sectors;
            request(r, index, perm, first, lanes, j, elem, sect, bitmap, out);
            if (each)
                each[out->requests] = (uint32_t)(out->sectors - before);
        }
    }
    for (size_t i = 0; i < (nsectors + 63) / 64; i++)
        out->footprint += (uint64_t)__builtin_popcountll(bitmap[i]);
    memset(bitmap, 0, (nsectors + 63) / 64 * sizeof *bitmap); /* keys: at most nsectors */
    out->block_sectors = block_sectors(r, index, perm, bitmap);
    assert(out->block_sectors <= out->sectors);
    free(bitmap), free(elem), free(sect);
    return TMAP_OK;
}

tmap_status tmap_sectors_count_gpu(tmap_cuda *c, const tmap_memref *r, uint64_t index,
                                   uint64_t perm, tmap_sector_counts *out, uint64_t *l2_bytes,
                                   tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, c, r, out);
    if (st || (st = check_ref(r, "tmap_sectors_count_gpu", err)))
        return st;
    if (warp_of(r) != 32)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "tmap_sectors_count_gpu: warps of %zu lanes: "
                         "the GPU counts warps of 32 (tmap_sectors_count takes any)", warp_of(r));
    if (!index && r->nthreads * r->per_thread > r->nelems)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_sectors_count_gpu: without an index array "
                         "the accesses need as many elements");
    return tmap_gpu_sectors(c, index, perm, r->nthreads, r->per_thread, r->elem_bytes, r->nelems,
                            sector_of(r), block_of(r), out, l2_bytes, err);
}

tmap_status tmap_sectors_count(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                               tmap_sector_counts *out, tmap_error *err)
{
    return count(r, index, perm, out, NULL, "tmap_sectors_count", err);
}

tmap_status tmap_sectors_each(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                              uint32_t *each, tmap_sector_counts *out, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, each);
    return st ? st : count(r, index, perm, out, each, "tmap_sectors_each", err);
}

double tmap_sectors_per_request(const tmap_sector_counts *s)
{
    return s && s->requests ? (double)s->sectors / (double)s->requests : 0;
}

int tmap_sectors_fit_l2(const tmap_sector_counts *s, const tmap_memref *r, uint64_t l2_bytes)
{
    return s && r && s->footprint * sector_of(r) <= l2_bytes;
}

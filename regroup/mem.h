/*
 * mem.h (regroup) -- what the memory transformations (mem_*.c) share: the
 * checked start of a result, and the job-swapping core on categories.
 */
#ifndef TMAP_REGROUP_MEM_H
#define TMAP_REGROUP_MEM_H

#include "threadmap/regroup.h"

/* A sort record: ascending key, ties by ascending id. */
typedef struct tmap_memre_keyed {
    uint64_t key;
    uint32_t id;
} tmap_memre_keyed;
void tmap_memre_sort(tmap_memre_keyed *v, size_t n);

/* Lanes per warp and elements per segment (at least 1) of a reference. */
size_t tmap_memre_warp(const tmap_memref *r);
size_t tmap_memre_segment(const tmap_memref *r);
/* Slots at the head of partial duplication's A': A in place, padded to a
 * whole segment (the copies start on a sector). */
size_t tmap_memre_partial_head(const tmap_memref *r);

/* Checks r and index (required: fn's name leads every message), that the
 * reference reads when `copies` (the layout may hold an element twice) and
 * that k == 1 when `single`; then allocates out: from[nout] when nout > 0
 * (else from NULL, nout = nelems), index[nthreads * k], perm[nthreads]
 * when `perm`.  On failure out is empty. */
tmap_status tmap_memre_begin(const tmap_memref *r, const uint32_t *index, const char *fn,
                             int copies, int single, size_t nout, int perm, tmap_memre *out,
                             tmap_error *err);

/* Job swapping on categories: key[i] is job i's category (the sector it
 * reads); perm[0..n) receives slot -> job for warps of `warp` slots (the
 * last may be partial), as tmap_memre_swap describes. */
tmap_status tmap_memre_swap_keys(const uint64_t *key, size_t n, size_t warp, uint32_t *perm,
                                 tmap_error *err);

#endif

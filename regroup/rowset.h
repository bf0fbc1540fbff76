/*
 * rowset.h -- a hash set of fixed-width u32 vectors named by u32 ids.  The
 * set stores only ids and hashes; the vectors stay where the caller keeps
 * them (key_of(ctx, id)), so BBV rows are never copied.
 */
#ifndef TMAP_REGROUP_ROWSET_H
#define TMAP_REGROUP_ROWSET_H

#include <stddef.h>
#include <stdint.h>

typedef const uint32_t *(*tmap_regroup_key_fn)(const void *ctx, uint32_t id);

typedef struct tmap_regroup_rowset {
    uint32_t *slot;      /* id + 1, 0 = empty; cap entries, cap a power of 2 */
    uint64_t *hash;      /* hash of the vector in each occupied slot */
    size_t cap, count;   /* count <= cap / 2 */
    size_t width;        /* u32 per vector */
    tmap_regroup_key_fn key_of;
    const void *ctx;
} tmap_regroup_rowset;

uint64_t tmap_regroup_hash(const uint32_t *v, size_t width);

/* 0 or -1 (no memory). */
int tmap_regroup_rowset_init(tmap_regroup_rowset *s, size_t width,
                             tmap_regroup_key_fn key_of, const void *ctx);
void tmap_regroup_rowset_free(tmap_regroup_rowset *s);

/* Looks v (hash h) up: if present, *id = its id and returns 0; otherwise
 * adds it as new_id, *id = new_id and returns 1.  -1: no memory. */
int tmap_regroup_rowset_add(tmap_regroup_rowset *s, const uint32_t *v,
                            uint64_t h, uint32_t new_id, uint32_t *id);

#endif

/*
 * rowset.h -- a hash set of fixed-width u32 vectors named by u32 ids.  The
 * set stores only ids and hashes; vector `id` stays where the caller keeps
 * it, at keys + id * width (keys is passed to each lookup, so the caller may
 * move its vectors), so BBV rows are never copied.  The lookup is inline: it
 * runs once per thread in the classes pass.
 */
#ifndef TMAP_REGROUP_ROWSET_H
#define TMAP_REGROUP_ROWSET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tmap_regroup_slot {
    uint64_t hash;       /* hash of the vector, if occupied */
    uint32_t id;         /* id + 1, 0 = empty */
} tmap_regroup_slot;

typedef struct tmap_regroup_rowset {
    tmap_regroup_slot *slot; /* cap entries, cap a power of 2 */
    size_t cap, count;       /* count <= cap / 2 */
    size_t width;            /* u32 per vector */
} tmap_regroup_rowset;

static inline uint64_t tmap_regroup_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static inline uint64_t tmap_regroup_rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

/* Four independent multiply-add lanes over 64-bit words, so that the loop
 * is not one long dependency chain; inline, as it runs once per BBV row. */
static inline uint64_t tmap_regroup_hash(const uint32_t *v, size_t width)
{
    const uint64_t k = 0x9E3779B97F4A7C15ULL;
    uint64_t a = 1, b = 2, c = 3, d = 4;
    size_t i = 0;
    for (; i + 8 <= width; i += 8) {
        uint64_t w0, w1, w2, w3; /* not an array: it would go via memory */
        memcpy(&w0, v + i, 8);
        memcpy(&w1, v + i + 2, 8);
        memcpy(&w2, v + i + 4, 8);
        memcpy(&w3, v + i + 6, 8);
        a = (a ^ w0) * k;
        b = (b ^ w1) * k;
        c = (c ^ w2) * k;
        d = (d ^ w3) * k;
    }
    for (; i < width; i++)
        a = (a ^ v[i]) * k + i;
    /* rotations keep the lanes apart; one finalizer mixes them all */
    return tmap_regroup_mix(a ^ tmap_regroup_rotl(b, 17) ^
                            tmap_regroup_rotl(c, 31) ^
                            tmap_regroup_rotl(d, 47) ^ width);
}

/* 0 or -1 (no memory). */
int tmap_regroup_rowset_init(tmap_regroup_rowset *s, size_t width);
void tmap_regroup_rowset_free(tmap_regroup_rowset *s);

/* Fills the empty slot j (where the probe for h ended) with id; 1, or -1
 * (no memory). */
int tmap_regroup_rowset_put(tmap_regroup_rowset *s, size_t j, uint64_t h,
                            uint32_t id);

/* a[0..n) == b[0..n), n >= 1; most unequal rows differ in their first
 * word, which is compared without a call. */
static inline int tmap_regroup_same(const uint32_t *a, const uint32_t *b,
                                    size_t n)
{
    return a[0] == b[0] && !memcmp(a + 1, b + 1, (n - 1) * sizeof *a);
}

/* Looks v (hash h) up among the vectors at keys: if present, *id = its id
 * and returns 0; otherwise adds it as new_id, *id = new_id and returns 1.
 * -1: no memory. */
static inline int tmap_regroup_rowset_add(tmap_regroup_rowset *s,
                                          const uint32_t *keys,
                                          const uint32_t *v, uint64_t h,
                                          uint32_t new_id, uint32_t *id)
{
    size_t mask = s->cap - 1, j = h & mask;
    for (; s->slot[j].id; j = (j + 1) & mask) {
        uint32_t cand = s->slot[j].id - 1;
        if (s->slot[j].hash == h &&
            tmap_regroup_same(keys + (size_t)cand * s->width, v, s->width)) {
            *id = cand;
            return 0;
        }
    }
    *id = new_id;
    return tmap_regroup_rowset_put(s, j, h, new_id);
}

#endif

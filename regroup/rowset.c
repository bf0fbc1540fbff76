/*
 * rowset.c -- open-addressing hash set of u32 vectors (linear probing,
 * load <= 1/2, doubling).
 */
#include "regroup/rowset.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* Four independent multiply-add lanes over 64-bit words, so that the loop
 * is not one long dependency chain. */
uint64_t tmap_regroup_hash(const uint32_t *v, size_t width)
{
    const uint64_t k = 0x9E3779B97F4A7C15ULL;
    uint64_t a = 1, b = 2, c = 3, d = 4;
    size_t i = 0;
    for (; i + 8 <= width; i += 8) {
        uint64_t w[4];
        memcpy(w, v + i, sizeof w);
        a = (a ^ w[0]) * k;
        b = (b ^ w[1]) * k;
        c = (c ^ w[2]) * k;
        d = (d ^ w[3]) * k;
    }
    for (; i < width; i++)
        a = (a ^ v[i]) * k + i;
    return mix(a ^ mix(b) ^ (mix(c) >> 1) ^ (mix(d) << 1) ^ width);
}

int tmap_regroup_rowset_init(tmap_regroup_rowset *s, size_t width,
                             tmap_regroup_key_fn key_of, const void *ctx)
{
    memset(s, 0, sizeof *s);
    s->cap = 1024;
    s->width = width;
    s->key_of = key_of;
    s->ctx = ctx;
    s->slot = calloc(s->cap, sizeof *s->slot);
    s->hash = malloc(s->cap * sizeof *s->hash);
    return s->slot && s->hash ? 0 : -1;
}

void tmap_regroup_rowset_free(tmap_regroup_rowset *s)
{
    free(s->slot);
    free(s->hash);
    memset(s, 0, sizeof *s);
}

static int grow(tmap_regroup_rowset *s)
{
    size_t cap = s->cap * 2;
    uint32_t *slot = calloc(cap, sizeof *slot);
    uint64_t *hash = malloc(cap * sizeof *hash);
    if (!slot || !hash) {
        free(slot);
        free(hash);
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slot[i])
            continue;
        size_t j = s->hash[i] & (cap - 1);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = s->slot[i];
        hash[j] = s->hash[i];
    }
    free(s->slot);
    free(s->hash);
    s->slot = slot;
    s->hash = hash;
    s->cap = cap;
    return 0;
}

int tmap_regroup_rowset_add(tmap_regroup_rowset *s, const uint32_t *v,
                            uint64_t h, uint32_t new_id, uint32_t *id)
{
    size_t j = h & (s->cap - 1);
    for (; s->slot[j]; j = (j + 1) & (s->cap - 1)) {
        if (s->hash[j] != h)
            continue;
        uint32_t cand = s->slot[j] - 1;
        if (!memcmp(s->key_of(s->ctx, cand), v, s->width * sizeof *v)) {
            *id = cand;
            return 0;
        }
    }
    s->slot[j] = new_id + 1;
    s->hash[j] = h;
    *id = new_id;
    if (++s->count > s->cap / 2 && grow(s))
        return -1;
    return 1;
}

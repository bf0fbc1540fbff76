/*
 * rowset.c -- open-addressing hash set of u32 vectors (linear probing,
 * load <= 1/2, doubling).
 */
#include "regroup/rowset.h"

#include <stdlib.h>
#include <string.h>

int tmap_regroup_rowset_init(tmap_regroup_rowset *s, size_t width)
{
    memset(s, 0, sizeof *s);
    s->cap = 1024;
    s->width = width;
    s->slot = calloc(s->cap, sizeof *s->slot);
    return s->slot ? 0 : -1;
}

void tmap_regroup_rowset_free(tmap_regroup_rowset *s)
{
    free(s->slot);
    memset(s, 0, sizeof *s);
}

static int grow(tmap_regroup_rowset *s)
{
    size_t cap = s->cap * 2;
    tmap_regroup_slot *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slot[i].id)
            continue;
        size_t j = s->slot[i].hash & (cap - 1);
        while (slot[j].id)
            j = (j + 1) & (cap - 1);
        slot[j] = s->slot[i];
    }
    free(s->slot);
    s->slot = slot;
    s->cap = cap;
    return 0;
}

int tmap_regroup_rowset_put(tmap_regroup_rowset *s, size_t j, uint64_t h,
                            uint32_t id)
{
    s->slot[j] = (tmap_regroup_slot){h, id + 1};
    if (++s->count > s->cap / 2 && grow(s))
        return -1;
    return 1;
}

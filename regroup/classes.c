/*
 * classes.c -- distinct rows by hashing, in one streaming pass over the
 * matrix; members by a counting sort.
 */
#include "regroup/classes.h"

#include <stdlib.h>
#include <string.h>

#include "instrument/base.h"
#include "regroup/rowset.h"

/* Rows this many bytes ahead are prefetched: while a row is hashed, the
 * hardware prefetcher alone leaves memory bandwidth unused. */
#define AHEAD 4096
/* The hint cache: direct-mapped, from the hash of a row's first HINT_WORDS
 * words to the first member (+ 1, 0 = empty) of the last class seen with
 * that hash, tagged with the hash's high half.  A hint is only a guess,
 * checked against the whole row, so a stale or colliding one costs one
 * comparison and never names a wrong class; the tag spares most of those
 * comparisons, each a likely cache miss on an old row, when rows rarely
 * repeat.  On a miss the exact set (rowset.h) decides.  Rows of different
 * classes nearly always differ in their first cache line, so the whole row
 * is hashed only for the first thread of each class (64 blocks: a quarter
 * of the multiplies).  Rows that share their first words fall back to the
 * set each time: one short hash and one comparison more than without. */
typedef struct hint_slot {
    uint32_t first; /* first member + 1, 0 = empty */
    uint32_t tag;   /* the high half of the prefix hash */
} hint_slot;
#define HINT_WORDS 16
#define HINT_SLOTS 4096 /* 32 KiB: stays in L1/L2 */
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

void tmap_regroup_classes_free(tmap_regroup_classes *c)
{
    free(c->of);
    free(c->first);
    free(c->size);
    free(c->start);
    free(c->member);
    memset(c, 0, sizeof *c);
}

/* Appends thread t as the first member of class c->count (cap: the room
 * in first[] and in size[]).  0 or -1 (no memory). */
static int new_class(tmap_regroup_classes *c, size_t cap[2], uint32_t t)
{
    if (tmap_grow(&c->first, &cap[0], c->count + 1, sizeof *c->first) ||
        tmap_grow(&c->size, &cap[1], c->count + 1, sizeof *c->size))
        return -1;
    c->first[c->count] = t;
    c->size[c->count++] = 0;
    return 0;
}

/* Whether hint g, for prefix hash ph, names row r's class. */
static inline int hint_names(const hint_slot *g, uint64_t ph, const uint32_t *rows,
                             const uint32_t *r, size_t nb)
{
    return g->first && g->tag == (uint32_t)(ph >> 32) &&
           tmap_regroup_same(rows + (size_t)(g->first - 1) * nb, r, nb);
}

tmap_status tmap_regroup_classes_find(const tmap_regroup_part *p,
                                      tmap_regroup_classes *c,
                                      tmap_error *err)
{
    memset(c, 0, sizeof *c);
    c->n = p->n;
    size_t nb = p->nblocks, cap[2] = {0, 0};
    size_t hw = nb < HINT_WORDS ? nb : HINT_WORDS;
    tmap_regroup_rowset set = {0}; /* freeable if init is not reached */
    c->of = malloc(p->n * sizeof *c->of);
    hint_slot *hint = calloc(HINT_SLOTS, sizeof *hint);
    int bad = !c->of || !hint || tmap_regroup_rowset_init(&set, nb);
    size_t rb = nb * sizeof *p->rows, total = p->n * rb;
    /* the set names a class by its first member, translated through of[] */
    for (size_t t = 0; t < p->n && !bad; t++) {
        const uint32_t *r = p->rows + t * nb;
        if (t * rb + AHEAD + rb <= total)
            for (size_t o = 0; o < rb; o += 64)
                PREFETCH((const char *)r + AHEAD + o);
        /* inside a run of equal rows (a warp's threads often take one
         * path), compare with the previous row before hashing */
        uint32_t k;
        if (t >= 2 && c->of[t - 1] == c->of[t - 2] &&
            tmap_regroup_same(r, r - nb, nb)) {
            k = c->of[t - 1];
        } else {
            uint64_t ph = tmap_regroup_hash(r, hw);
            hint_slot *guess = &hint[ph & (HINT_SLOTS - 1)];
            if (hint_names(guess, ph, p->rows, r, nb)) {
                k = c->of[guess->first - 1];
            } else {
                /* tmap_regroup_hash(r, nb) == ph when the prefix is the row */
                uint32_t first;
                int added = tmap_regroup_rowset_add(
                    &set, p->rows, r, hw == nb ? ph : tmap_regroup_hash(r, nb),
                    (uint32_t)t, &first);
                if (added < 0 || (added && new_class(c, cap, (uint32_t)t))) {
                    bad = 1;
                    break;
                }
                k = added ? (uint32_t)c->count - 1 : c->of[first];
                *guess = (hint_slot){first + 1, (uint32_t)(ph >> 32)};
            }
        }
        c->of[t] = k;
        c->size[k]++;
    }
    tmap_regroup_rowset_free(&set);
    free(hint);
    if (bad) {
        tmap_regroup_classes_free(c);
        return tmap_fail(err, TMAP_ERR_NOMEM, "regroup: class table");
    }
    return TMAP_OK;
}

tmap_status tmap_regroup_classes_build(const tmap_regroup_part *p,
                                       tmap_regroup_classes *c,
                                       tmap_error *err)
{
    tmap_status st = tmap_regroup_classes_find(p, c, err);
    if (st != TMAP_OK)
        return st;
    c->start = calloc(c->count + 1, sizeof *c->start);
    c->member = malloc(c->n * sizeof *c->member);
    if (!c->start || !c->member) {
        tmap_regroup_classes_free(c);
        return tmap_fail(err, TMAP_ERR_NOMEM, "regroup: class table");
    }
    for (size_t k = 0; k < c->count; k++)
        c->start[k + 1] = c->start[k] + c->size[k];
    /* start[k] runs ahead while class k is filled, then is restored */
    for (size_t t = 0; t < c->n; t++)
        c->member[c->start[c->of[t]]++] = (uint32_t)t;
    for (size_t k = c->count; k > 0; k--)
        c->start[k] = c->start[k - 1];
    c->start[0] = 0;
    return TMAP_OK;
}

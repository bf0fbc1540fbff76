/*
 * greedy_max.c -- Greedy-Max (Algorithm 2, eq. 11), fast and exact: it
 * returns the permutation of greedy_max_literal.c.
 *
 * Readings of the pseudo-code (docs/regroup.md):
 *   - a group starts from the remaining thread of maximal Lat_t, ties to the
 *     lowest thread index; groups are emitted in the order they are built,
 *     so their first threads have non-increasing Lat;
 *   - a thread whose BBV equals a member's is added before any other; among
 *     several, the lowest thread index (the scan of line 11 stops there);
 *   - otherwise the thread of maximal Gain(g, t) (eq. 10 on g + {t}), ties
 *     to the lowest index (strict ">" on line 18, scan in thread order);
 *   - the last group takes what is left and may be partial.
 *
 * How it is fast: threads with equal rows (classes) are interchangeable but
 * for their index, and every rule above takes a class's threads in
 * ascending index order.  So each class keeps a cursor on its sorted
 * members; the group's "present" classes (rows already in g) are served
 * first, lowest cursor first, in bulk when only one remains; only when they
 * run dry is the gain evaluated, once per remaining class (not per thread).
 * The start thread comes from a heap of classes keyed (Lat desc, cursor
 * asc) with lazy refresh of moved cursors.
 * Cost: O(N * nblocks) to find classes, O(N + C log C) for the cursors and
 * the heap, plus O(P * C * nblocks) for P gain picks.  A gain pick happens
 * only when a group has taken all remaining threads of every row it holds,
 * so P is about C + K when rows repeat; with all rows distinct P ~ N and the
 * cost is the paper's O(N^2 * nblocks).
 */
#include "threadmap/regroup.h"

#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/classes.h"
#include "regroup/gain.h"

typedef struct start_entry {
    double lat;
    uint32_t head;  /* the class's lowest remaining thread when pushed */
    uint32_t k;
} start_entry;

typedef struct gm_state {
    const tmap_regroup_part *p;
    tmap_regroup_classes c;
    uint32_t *pos;       /* [C] cursor into member[]: next thread to take */
    double *lat;         /* [C] Lat of the class row */
    uint32_t *live;      /* classes with threads left, in any order */
    uint32_t *live_at;   /* [C] index of a class in live[] */
    size_t nlive;
    start_entry *heap;   /* one entry per class with threads left */
    size_t nheap;
    uint32_t *present;   /* classes with a member in g */
    size_t npresent;
    uint32_t *mn, *mx;   /* Min_b g, Max_b g */
    uint32_t *out;       /* next slot */
    size_t gsize;
} gm_state;

static uint32_t rem(const gm_state *s, uint32_t k)
{
    return s->c.start[k + 1] - s->pos[k];
}

static uint32_t head(const gm_state *s, uint32_t k)
{
    return s->c.member[s->pos[k]];
}

static int before(const start_entry *a, const start_entry *b)
{
    return a->lat > b->lat || (a->lat == b->lat && a->head < b->head);
}

static void heap_push(gm_state *s, start_entry e)
{
    size_t i = s->nheap++;
    while (i > 0 && before(&e, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = e;
}

static void heap_pop(gm_state *s)
{
    start_entry e = s->heap[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, best = l;
        if (l >= s->nheap)
            break;
        if (l + 1 < s->nheap && before(&s->heap[l + 1], &s->heap[l]))
            best = l + 1;
        if (!before(&s->heap[best], &e))
            break;
        s->heap[i] = s->heap[best];
        i = best;
    }
    s->heap[i] = e;
}

/* The class of maximal (Lat, -lowest thread).  Invariant: each class with
 * threads left has one entry whose head is <= its current head, so a valid
 * top beats every class. */
static uint32_t start_class(gm_state *s)
{
    for (;;) {
        start_entry top = s->heap[0];
        if (rem(s, top.k) == 0) {
            heap_pop(s);
        } else if (head(s, top.k) != top.head) {
            heap_pop(s);
            heap_push(s, (start_entry){top.lat, head(s, top.k), top.k});
        } else {
            return top.k;
        }
    }
}

/* Moves m threads of class k (m <= rem) into the group. */
static void take(gm_state *s, uint32_t k, uint32_t m)
{
    memcpy(s->out + s->gsize, s->c.member + s->pos[k], m * sizeof *s->out);
    s->gsize += m;
    s->pos[k] += m;
    if (rem(s, k) == 0) {
        uint32_t last = s->live[--s->nlive];
        s->live[s->live_at[k]] = last;
        s->live_at[last] = s->live_at[k];
    }
}

/* Adds a class not yet in g; mn/mx keep the rows of dry classes too. */
static void join(gm_state *s, uint32_t k)
{
    const uint32_t *r = tmap_regroup_class_row(s->p, &s->c, k);
    size_t nb = s->p->nblocks;
    for (size_t b = 0; b < nb; b++) {
        if (s->gsize == 0 || r[b] < s->mn[b])
            s->mn[b] = r[b];
        if (s->gsize == 0 || r[b] > s->mx[b])
            s->mx[b] = r[b];
    }
    s->present[s->npresent++] = k;
    take(s, k, 1);
}

/* The present class with the lowest remaining thread, or UINT32_MAX;
 * drops present classes that ran dry. */
static uint32_t identical_class(gm_state *s, size_t *nwith)
{
    uint32_t best = UINT32_MAX;
    size_t w = 0;
    for (size_t i = 0; i < s->npresent; i++) {
        uint32_t k = s->present[i];
        if (rem(s, k) == 0)
            continue;
        s->present[w++] = k;
        if (best == UINT32_MAX || head(s, k) < head(s, best))
            best = k;
    }
    /* dry classes leave the list but stay in mn/mx */
    *nwith = w;
    s->npresent = w;
    return best;
}

/* The class of maximal Gain(g, t), ties to the lowest thread. */
static uint32_t gain_class(const gm_state *s)
{
    const tmap_regroup_part *p = s->p;
    uint32_t best = UINT32_MAX;
    double best_gain = 0;
    for (size_t i = 0; i < s->nlive; i++) {
        uint32_t k = s->live[i];
        const uint32_t *r = tmap_regroup_class_row(p, &s->c, k);
        double g = tmap_regroup_gain(s->mn, s->mx, r, r, p->lat, p->nblocks);
        if (best == UINT32_MAX || g > best_gain ||
            (g == best_gain && head(s, k) < head(s, best))) {
            best = k;
            best_gain = g;
        }
    }
    return best;
}

static void build_group(gm_state *s, size_t left)
{
    size_t gs = s->p->groupsize < left ? s->p->groupsize : left;
    s->gsize = 0;
    s->npresent = 0;
    join(s, start_class(s));
    while (s->gsize < gs) {
        size_t nwith;
        uint32_t k = identical_class(s, &nwith);
        if (k == UINT32_MAX) {
            join(s, gain_class(s));
            continue;
        }
        uint32_t want = (uint32_t)(gs - s->gsize);
        take(s, k, nwith == 1 && rem(s, k) < want ? rem(s, k)
                   : nwith == 1                   ? want
                                                  : 1);
    }
    s->out += s->gsize;
}

static void gm_free(gm_state *s)
{
    tmap_regroup_classes_free(&s->c);
    free(s->pos);
    free(s->lat);
    free(s->live);
    free(s->live_at);
    free(s->heap);
    free(s->present);
    free(s->mn);
    free(s->mx);
}

static tmap_status gm_init(gm_state *s, const tmap_regroup_part *p,
                           uint32_t *out, tmap_error *err)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->out = out;
    tmap_status st = tmap_regroup_classes_build(p, &s->c, err);
    if (st != TMAP_OK)
        return st;
    size_t C = s->c.count;
    if (C > TMAP_REGROUP_GREEDY_MAX_CLASSES) {
        tmap_regroup_classes_free(&s->c);
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "greedy-max: %zu distinct BBV rows, over the %d this quadratic "
                         "algorithm takes; use block scope, or Sorting",
                         C, TMAP_REGROUP_GREEDY_MAX_CLASSES);
    }
    s->pos = malloc(C * sizeof *s->pos);
    s->lat = malloc(C * sizeof *s->lat);
    s->live = malloc(C * sizeof *s->live);
    s->live_at = malloc(C * sizeof *s->live_at);
    s->heap = malloc(C * sizeof *s->heap);
    s->present = malloc((p->groupsize < C ? p->groupsize : C) *
                        sizeof *s->present);
    s->mn = malloc(p->nblocks * sizeof *s->mn);
    s->mx = malloc(p->nblocks * sizeof *s->mx);
    if (!s->pos || !s->lat || !s->live || !s->live_at || !s->heap ||
        !s->present || !s->mn || !s->mx) {
        gm_free(s);
        return tmap_fail(err, TMAP_ERR_NOMEM, "greedy_max: %zu classes", C);
    }
    for (uint32_t k = 0; k < C; k++) {
        s->pos[k] = s->c.start[k];
        s->lat[k] = tmap_regroup_latency(tmap_regroup_class_row(p, &s->c, k),
                                         p->lat, p->nblocks);
        s->live[k] = s->live_at[k] = k;
        heap_push(s, (start_entry){s->lat[k], head(s, k), k});
    }
    s->nlive = C;
    return TMAP_OK;
}

static tmap_status gm_part(const tmap_regroup_part *p, uint32_t *out,
                           tmap_error *err)
{
    gm_state s;
    tmap_status st = gm_init(&s, p, out, err);
    if (st != TMAP_OK)
        return st;
    for (size_t done = 0; done < p->n; done += s.gsize)
        build_group(&s, p->n - done);
    gm_free(&s);
    return TMAP_OK;
}

tmap_status tmap_regroup_greedy_max(const tmap_bbv *bbv, const double *lat,
                                    const tmap_regroup_opts *opts,
                                    uint32_t *perm, tmap_error *err)
{
    tmap_regroup_input in = {.bbv = bbv, .lat = lat, .need_bbv = 1,
                             .need_lat = 1, .name = "greedy_max"};
    return tmap_regroup_run(gm_part, &in, opts, perm, err);
}

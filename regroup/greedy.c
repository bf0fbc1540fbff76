/*
 * greedy.c -- Greedy (Algorithm 1, eq. 6-10), fast and exact: it returns
 * the permutation of greedy_literal.c, whose header lists the readings of
 * the pseudo-code (ids, ties, merge order, emission, the K-1 bound).
 *
 * How it is fast.  Gain(g1, g2) depends only on the Min/Max vectors of the
 * two groups (eq. 6-10), so groups with equal (Min, Max) pairs -- "types"
 * -- are interchangeable except for their ids.  Types are hashed; each
 * keeps a min-heap of its groups' ids and the gain of each pair of types is
 * cached (computed on first use).  The best edge is then the best pair of
 * types: for two types, the edge between their lowest ids; for one type
 * with two groups, its two lowest ids.
 * Bounds: each live type keeps an upper bound on the gain of its best edge,
 * exact unless an edge that attained it went away (a type emptied, a type
 * down to one group); a type that comes alive raises the others' bounds.
 * A step finds the best gain G from the highest exact bound (recomputing
 * inexact rows above it, O(T) each), then scans only the rows whose bound
 * reaches G: O(T) per row at G, instead of all O(T^2) pairs.
 * Runs: when the best edge joins two groups of one type S, the merged group
 * has type S again and no gain changes, so the same choice repeats while
 * the pair (lowest id of S, second lowest) beats the best other edge of
 * equal gain; that edge is found once per run (plus an O(T) refresh of the
 * edges at S after each emission), so a run of m merges costs one step
 * plus O(m log N + emissions * T).  With repeated rows nearly every merge is
 * inside such a run.
 * Cost: O(N * nblocks) for the classes, O(N log N) for the heaps, per step
 * O(T * (1 + rows at G + inexact rows recomputed)) (O(T^2) at worst: ties
 * everywhere), O(T) per type that dies or comes alive, O(nblocks) per new
 * type and per cached gain.  Memory: the
 * T_total x T_total gain cache over all types ever created, bounded by
 * TMAP_REGROUP_GREEDY_MAX_TYPES (TMAP_ERR_UNSUPPORTED beyond: rows that are
 * nearly all distinct at large N; use block scope or Greedy-Max there).
 */
#include "threadmap/regroup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/classes.h"
#include "regroup/gain.h"
#include "regroup/rowset.h"

#define NONE UINT32_MAX

typedef struct id_heap {
    uint32_t *a;
    size_t n, cap;
} id_heap;

/* An edge: its gain and the ids it joins, lo < hi. */
typedef struct edge {
    double gain;
    uint32_t lo, hi;
    int valid;
} edge;

typedef struct gr_state {
    const tmap_regroup_part *p;
    size_t nb;
    /* groups, by id (= lowest thread); size 0: no group has this id */
    uint32_t *next, *head, *tail, *size, *type;
    /* types */
    size_t ntypes, tcap;
    uint32_t *vec;        /* [tcap][2 nb]: Min then Max */
    id_heap *ids;         /* [tcap] */
    double *gain;         /* [tcap][tcap], NAN = not computed yet */
    uint32_t *live, *live_at;
    size_t nlive;
    /* per type: bound >= the gain of its best edge (-inf: none); exact:
     * bound is that gain */
    double *bound;
    unsigned char *exact;
    tmap_regroup_rowset set;
    /* output */
    uint32_t *out;
    size_t finished, K;
    uint32_t *scratch;    /* [2 nb] */
    uint32_t filed;       /* type of the group the last merge filed, or NONE */
} gr_state;

static int better(const edge *a, const edge *b)
{
    if (!b->valid)
        return a->valid;
    if (!a->valid)
        return 0;
    if (a->gain != b->gain)
        return a->gain > b->gain;
    return a->lo < b->lo || (a->lo == b->lo && a->hi < b->hi);
}

/* ------------------------------------------------------------ id heaps */

static int heap_push(id_heap *h, uint32_t id)
{
    if (tmap_grow(&h->a, &h->cap, h->n + 1, sizeof *h->a))
        return -1;
    size_t i = h->n++;
    while (i > 0 && id < h->a[(i - 1) / 2]) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = id;
    return 0;
}

static uint32_t heap_pop(id_heap *h)
{
    uint32_t top = h->a[0], e = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, c = l;
        if (l >= h->n)
            break;
        if (l + 1 < h->n && h->a[l + 1] < h->a[l])
            c = l + 1;
        if (h->a[c] >= e)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = e;
    return top;
}

static uint32_t heap_second(const id_heap *h)
{
    if (h->n < 3)
        return h->a[1];
    return h->a[1] < h->a[2] ? h->a[1] : h->a[2];
}

/* --------------------------------------------------------------- types */

static const uint32_t *type_vec(const gr_state *s, uint32_t t)
{
    return s->vec + (size_t)t * 2 * s->nb;
}

static double type_gain(gr_state *s, uint32_t i, uint32_t j)
{
    double *g = &s->gain[(size_t)i * s->tcap + j];
    if (isnan(*g)) {
        const uint32_t *vi = type_vec(s, i), *vj = type_vec(s, j);
        *g = tmap_regroup_gain(vi, vi + s->nb, vj, vj + s->nb, s->p->lat,
                               s->nb);
        s->gain[(size_t)j * s->tcap + i] = *g;
    }
    return *g;
}

static int grow_types(gr_state *s)
{
    size_t cap = s->tcap ? 2 * s->tcap : 64;
    if (cap > TMAP_REGROUP_GREEDY_MAX_TYPES)
        cap = TMAP_REGROUP_GREEDY_MAX_TYPES;
    uint32_t *vec = realloc(s->vec, cap * 2 * s->nb * sizeof *vec);
    if (vec)
        s->vec = vec;
    id_heap *ids = realloc(s->ids, cap * sizeof *ids);
    if (ids)
        s->ids = ids;
    uint32_t *live = realloc(s->live, cap * sizeof *live);
    if (live)
        s->live = live;
    uint32_t *live_at = realloc(s->live_at, cap * sizeof *live_at);
    if (live_at)
        s->live_at = live_at;
    double *bound = realloc(s->bound, cap * sizeof *bound);
    if (bound)
        s->bound = bound;
    unsigned char *exact = realloc(s->exact, cap * sizeof *exact);
    if (exact)
        s->exact = exact;
    double *gain = malloc(cap * cap * sizeof *gain);
    if (!vec || !ids || !live || !live_at || !bound || !exact || !gain) {
        free(gain);
        return -1;
    }
    for (size_t i = 0; i < cap * cap; i++)
        gain[i] = NAN;
    for (size_t i = 0; i < s->ntypes; i++)
        memcpy(gain + i * cap, s->gain + i * s->tcap,
               s->ntypes * sizeof *gain);
    memset(s->ids + s->tcap, 0, (cap - s->tcap) * sizeof *s->ids);
    free(s->gain);
    s->gain = gain;
    s->tcap = cap;
    return 0;
}

/* The type of the (Min, Max) pair in s->scratch, created if new. */
static tmap_status find_type(gr_state *s, uint32_t *t, tmap_error *err)
{
    size_t w = 2 * s->nb;
    if (s->ntypes == s->tcap) {
        if (s->tcap == TMAP_REGROUP_GREEDY_MAX_TYPES)
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                             "greedy: more than %d distinct (Min, Max) group "
                             "vectors; use block scope or greedy_max",
                             TMAP_REGROUP_GREEDY_MAX_TYPES);
        if (grow_types(s))
            return tmap_fail(err, TMAP_ERR_NOMEM, "greedy: type table");
    }
    memcpy(s->vec + s->ntypes * w, s->scratch, w * sizeof *s->vec);
    int added = tmap_regroup_rowset_add(&s->set, s->vec, s->scratch,
                                        tmap_regroup_hash(s->scratch, w),
                                        (uint32_t)s->ntypes, t);
    if (added < 0)
        return tmap_fail(err, TMAP_ERR_NOMEM, "greedy: type table");
    s->ntypes += (size_t)added;
    return TMAP_OK;
}

/* ---------------------------------------------------------------- bounds */

/* The gain of type i's best edge, made its exact bound. */
static void exact_row(gr_state *s, uint32_t i)
{
    double b = s->ids[i].n >= 2 ? type_gain(s, i, i) : -INFINITY;
    for (size_t x = 0; x < s->nlive; x++) {
        uint32_t j = s->live[x];
        if (j != i && type_gain(s, i, j) > b)
            b = type_gain(s, i, j);
    }
    s->bound[i] = b;
    s->exact[i] = 1;
}

/* Type t came alive: its row exact, every other bound raised to its edge. */
static void came_alive(gr_state *s, uint32_t t)
{
    for (size_t x = 0; x < s->nlive; x++) {
        uint32_t j = s->live[x];
        if (j != t && type_gain(s, j, t) > s->bound[j])
            s->bound[j] = type_gain(s, j, t);
    }
    exact_row(s, t);
}

/* The edges of type t went away (t died): the bounds they attained are no
 * longer known to be exact. */
static void edges_gone(gr_state *s, uint32_t t)
{
    for (size_t x = 0; x < s->nlive; x++) {
        uint32_t j = s->live[x];
        if (s->bound[j] == type_gain(s, j, t))
            s->exact[j] = 0;
    }
}

/* Files group id under its type. */
static tmap_status file_group(gr_state *s, uint32_t id, uint32_t t,
                              tmap_error *err)
{
    id_heap *h = &s->ids[t];
    if (heap_push(h, id))
        return tmap_fail(err, TMAP_ERR_NOMEM, "greedy: id heap");
    s->type[id] = t;
    if (h->n == 1) {
        s->live_at[t] = (uint32_t)s->nlive;
        s->live[s->nlive++] = t;
        came_alive(s, t);
    } else if (h->n == 2 && type_gain(s, t, t) > s->bound[t]) {
        s->bound[t] = type_gain(s, t, t); /* its self edge appeared */
    }
    return TMAP_OK;
}

/* Takes the lowest id off type t. */
static uint32_t unfile_lowest(gr_state *s, uint32_t t)
{
    uint32_t id = heap_pop(&s->ids[t]);
    if (s->ids[t].n == 1 && s->bound[t] == type_gain(s, t, t))
        s->exact[t] = 0; /* its self edge went away */
    if (s->ids[t].n == 0) {
        uint32_t last = s->live[--s->nlive];
        s->live[s->live_at[t]] = last;
        s->live_at[last] = s->live_at[t];
        edges_gone(s, t);
    }
    return id;
}

/* ---------------------------------------------------------------- edges */

static edge self_edge(gr_state *s, uint32_t t)
{
    const id_heap *h = &s->ids[t];
    if (h->n < 2)
        return (edge){0};
    return (edge){type_gain(s, t, t), h->a[0], heap_second(h), 1};
}

static edge cross_edge(gr_state *s, uint32_t i, uint32_t j)
{
    uint32_t a = s->ids[i].a[0], b = s->ids[j].a[0];
    return (edge){type_gain(s, i, j), a < b ? a : b, a < b ? b : a, 1};
}

/* The gain of the best edge into *g; 0 when there is no edge. */
static int best_gain(gr_state *s, double *g)
{
    for (;;) {
        uint32_t top = NONE;
        for (size_t x = 0; x < s->nlive; x++) {
            uint32_t i = s->live[x];
            if (top == NONE || s->bound[i] > s->bound[top])
                top = i;
        }
        if (top == NONE || s->bound[top] == -INFINITY)
            return 0;
        if (s->exact[top]) {
            *g = s->bound[top];
            return 1;
        }
        exact_row(s, top);
    }
}

/* The best edge; with skip != NONE, the best edge of gain `gain` among
 * those not touching type skip.  Either way every edge it can return has
 * one gain, so only rows whose bound reaches it are read. */
static edge scan(gr_state *s, uint32_t skip, double gain)
{
    edge best = {0};
    if (skip == NONE && !best_gain(s, &gain))
        return best;
    for (size_t x = 0; x < s->nlive; x++) {
        uint32_t i = s->live[x];
        if (i == skip || s->bound[i] < gain)
            continue;
        if (!s->exact[i] && (exact_row(s, i), s->bound[i] < gain))
            continue;
        edge e = self_edge(s, i);
        if (e.valid && e.gain == gain && better(&e, &best))
            best = e;
        for (size_t y = 0; y < s->nlive; y++) {
            uint32_t j = s->live[y];
            if (j == i || j == skip)
                continue;
            e = cross_edge(s, i, j);
            if (e.gain == gain && better(&e, &best))
                best = e;
        }
    }
    return best;
}

/* The best edge of gain `gain` between type t and another type. */
static edge scan_at(gr_state *s, uint32_t t, double gain)
{
    edge best = {0};
    for (size_t x = 0; x < s->nlive; x++) {
        uint32_t j = s->live[x];
        if (j == t)
            continue;
        edge e = cross_edge(s, t, j);
        if (e.gain == gain && better(&e, &best))
            best = e;
    }
    return best;
}

/* ---------------------------------------------------------------- merge */

/* Min/Max of the threads of the list from `first` into scratch; returns
 * the lowest thread. */
static uint32_t describe(gr_state *s, uint32_t first)
{
    uint32_t *mn = s->scratch, *mx = s->scratch + s->nb, low = first;
    for (uint32_t t = first; t != NONE; t = s->next[t]) {
        const uint32_t *r = s->p->rows + (size_t)t * s->nb;
        for (size_t b = 0; b < s->nb; b++) {
            if (t == first || r[b] < mn[b])
                mn[b] = r[b];
            if (t == first || r[b] > mx[b])
                mx[b] = r[b];
        }
        if (t < low)
            low = t;
    }
    return low;
}

/* Merges group hi (already unfiled) into group lo (already unfiled) and
 * files the result, after emitting a finished group if it is full. */
static tmap_status merge(gr_state *s, uint32_t lo, uint32_t hi, int *emitted,
                         tmap_error *err)
{
    uint32_t tl = s->type[lo], th = s->type[hi];
    s->filed = NONE;
    s->next[s->tail[lo]] = s->head[hi];
    s->tail[lo] = s->tail[hi];
    s->size[lo] += s->size[hi];
    s->size[hi] = 0;
    *emitted = s->size[lo] >= s->p->groupsize;
    if (!*emitted) {
        const uint32_t *a = type_vec(s, tl), *b = type_vec(s, th);
        for (size_t k = 0; k < s->nb; k++) {
            s->scratch[k] = a[k] < b[k] ? a[k] : b[k];
            s->scratch[s->nb + k] = a[s->nb + k] > b[s->nb + k]
                                        ? a[s->nb + k] : b[s->nb + k];
        }
        uint32_t t;
        tmap_status st = find_type(s, &t, err);
        s->filed = t;
        return st != TMAP_OK ? st : file_group(s, lo, t, err);
    }
    uint32_t t = s->head[lo];
    for (size_t k = 0; k < s->p->groupsize; k++, t = s->next[t])
        *s->out++ = t;
    s->finished++;
    uint32_t rest = s->size[lo] - (uint32_t)s->p->groupsize;
    uint32_t tail = s->tail[lo];
    s->size[lo] = 0;
    if (!rest)
        return TMAP_OK;
    uint32_t id = describe(s, t), rt;
    s->head[id] = t;
    s->tail[id] = tail;
    s->size[id] = rest;
    tmap_status st = find_type(s, &rt, err);
    s->filed = rt;
    return st != TMAP_OK ? st : file_group(s, id, rt, err);
}

/* Takes the groups of edge e off their types and merges them. */
static tmap_status take_edge(gr_state *s, const edge *e, int *emitted,
                             tmap_error *err)
{
    uint32_t tl = s->type[e->lo], th = s->type[e->hi];
    /* e joins the lowest ids of its types (the two lowest if tl == th) */
    unfile_lowest(s, tl);
    unfile_lowest(s, th);
    return merge(s, e->lo, e->hi, emitted, err);
}

/* Repeats merges inside type t while they stay the best edge. */
static tmap_status run(gr_state *s, uint32_t t, double gain, tmap_error *err)
{
    edge other = scan(s, t, gain);
    edge at = scan_at(s, t, gain);
    while (s->finished + 1 < s->K) {
        edge e = self_edge(s, t);
        if (!e.valid || better(&other, &e) || better(&at, &e))
            return TMAP_OK;
        int emitted;
        tmap_status st = take_edge(s, &e, &emitted, err);
        if (st != TMAP_OK)
            return st;
        if (!emitted)
            continue; /* the merged group is of type t, lowest id e.lo */
        /* a residual of another type changes the edges of that type */
        if (s->filed != NONE && s->filed != t)
            return TMAP_OK;
        if (s->ids[t].n == 0)
            return TMAP_OK;
        at = scan_at(s, t, gain); /* the lowest id of t moved */
    }
    return TMAP_OK;
}

/* ----------------------------------------------------------- the driver */

static void gr_free(gr_state *s)
{
    free(s->next);
    free(s->head);
    free(s->tail);
    free(s->size);
    free(s->type);
    for (size_t t = 0; t < s->tcap; t++)
        free(s->ids[t].a);
    free(s->ids);
    free(s->vec);
    free(s->gain);
    free(s->live);
    free(s->live_at);
    free(s->bound);
    free(s->exact);
    free(s->scratch);
    tmap_regroup_rowset_free(&s->set);
}

/* One group per thread, one type per class. */
static tmap_status gr_init(gr_state *s, const tmap_regroup_part *p,
                           uint32_t *out, tmap_error *err)
{
    size_t n = p->n;
    memset(s, 0, sizeof *s);
    s->p = p;
    s->nb = p->nblocks;
    s->out = out;
    s->K = (n + p->groupsize - 1) / p->groupsize;
    s->next = malloc(n * sizeof *s->next);
    s->head = malloc(n * sizeof *s->head);
    s->tail = malloc(n * sizeof *s->tail);
    s->size = malloc(n * sizeof *s->size);
    s->type = malloc(n * sizeof *s->type);
    s->scratch = malloc(2 * s->nb * sizeof *s->scratch);
    int bad = !s->next || !s->head || !s->tail || !s->size || !s->type ||
              !s->scratch ||
              tmap_regroup_rowset_init(&s->set, 2 * s->nb);
    if (bad) {
        gr_free(s);
        return tmap_fail(err, TMAP_ERR_NOMEM, "greedy: %zu threads", n);
    }
    tmap_regroup_classes c;
    tmap_status st = tmap_regroup_classes_build(p, &c, err);
    for (size_t k = 0; k < c.count && st == TMAP_OK; k++) {
        const uint32_t *r = tmap_regroup_class_row(p, &c, k);
        memcpy(s->scratch, r, s->nb * sizeof *r);
        memcpy(s->scratch + s->nb, r, s->nb * sizeof *r);
        uint32_t t;
        st = find_type(s, &t, err);
        for (uint32_t m = c.start[k]; m < c.start[k + 1] && st == TMAP_OK;
             m++) {
            uint32_t id = c.member[m];
            s->next[id] = NONE;
            s->head[id] = s->tail[id] = id;
            s->size[id] = 1;
            st = file_group(s, id, t, err);
        }
    }
    tmap_regroup_classes_free(&c);
    if (st != TMAP_OK)
        gr_free(s);
    return st;
}

static tmap_status greedy_part(const tmap_regroup_part *p, uint32_t *out,
                               tmap_error *err)
{
    gr_state s;
    tmap_status st = gr_init(&s, p, out, err);
    if (st != TMAP_OK)
        return st;
    while (st == TMAP_OK && s.finished + 1 < s.K) {  /* groups < K - 1 */
        edge e = scan(&s, NONE, 0);
        int emitted;
        uint32_t t = s.type[e.lo];
        int self = t == s.type[e.hi];
        st = take_edge(&s, &e, &emitted, err);
        if (st == TMAP_OK && self && !emitted)
            st = run(&s, t, e.gain, err);
    }
    /* the last group: the remaining groups in ascending id */
    for (uint32_t id = 0; id < p->n && st == TMAP_OK; id++)
        if (s.size[id])
            for (uint32_t m = s.head[id]; m != NONE; m = s.next[m])
                *s.out++ = m;
    gr_free(&s);
    return st;
}

tmap_status tmap_regroup_greedy(const tmap_bbv *bbv, const double *lat,
                                const tmap_regroup_opts *opts, uint32_t *perm,
                                tmap_error *err)
{
    tmap_regroup_input in = {.bbv = bbv, .lat = lat, .need_bbv = 1,
                             .need_lat = 1, .name = "greedy"};
    return tmap_regroup_run(greedy_part, &in, opts, perm, err);
}

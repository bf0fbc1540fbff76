/*
 * class_runs.c -- Greedy and Greedy-Max on a table of value classes, for
 * the GPU path: the GPU sorts the threads stably by class and sends only
 * the class sizes; the algorithm's permutation of the class-sorted problem
 * (position j of the class-sorted order is a thread whose one-block BBV
 * row is its class + 1, latency 1) is computed here from the sizes alone,
 * as runs of consecutive positions, which the GPU expands.
 *
 * Greedy-Max, O(R): the classes in descending order, each in ascending
 * position.  A group starts at the highest class left (Lat = count), takes
 * its threads (identical first, lowest position first); when the class
 * runs dry every other class left is lower, so the largest gain 2 min -
 * max is the next class down, which the group then takes the same way;
 * the next group starts where this one stopped.
 *
 * Greedy, O(R log R + runs): below (docs/regroup.md has the derivation).
 * Both are tested against the CPU algorithms on the expanded rows
 * (tests/test_class_runs.c).
 */
#include "threadmap/regroup.h"

#include <assert.h>
#include <stdlib.h>

#include "common/base.h"

/* Runs being written: slots from `slot` on take the positions put next. */
typedef struct run_out {
    uint32_t *runs;
    size_t n;      /* runs written */
    uint32_t slot; /* the next slot */
    int full;      /* a run did not fit in TMAP_REGROUP_MAX_RUNS */
} run_out;

/* The next len slots take positions pos..pos + len - 1: the last run
 * continued when its positions lead to pos, else a new run. */
static void put(run_out *o, uint32_t pos, uint32_t len)
{
    if (!len)
        return;
    if (o->n && o->runs[2 * o->n - 1] + (o->slot - o->runs[2 * o->n - 2]) == pos) {
        o->slot += len;
        return;
    }
    if (o->n == TMAP_REGROUP_MAX_RUNS)
        o->full = 1;
    else
        o->runs[2 * o->n] = o->slot, o->runs[2 * o->n + 1] = pos, o->n++;
    o->slot += len;
}

/* Greedy-Max's runs: the non-empty classes, highest first. */
static void descending(const uint32_t *size, size_t nclasses, run_out *o)
{
    uint32_t start = 0;
    for (size_t c = 0; c < nclasses; c++)
        start += size[c];
    for (size_t c = nclasses; c-- > 0;) {
        start -= size[c];
        put(o, start, size[c]);
    }
}

/* ------------------------------------------------- Greedy on the table
 *
 * A group of threads is an interval [m, M] of values (v = class + 1), and
 * two groups merge at gain 2 min - max.  What holds, G = groupsize:
 *
 * - While class c has two threads never merged ("pending"), its self edge
 *   (gain v_c) beats every edge touching a class <= c but itself (gain <
 *   v_c), and wins ties with edges among higher classes (their ids are
 *   higher): so c's threads merge only among themselves, lowest id first,
 *   into warps of consecutive positions and a residual of size mod G.
 *   Pending classes run highest first, and no group spans a pending class.
 * - Groups' intervals are disjoint; of X < Y < Z the edge X-Z (2 m_X -
 *   M_Z) loses to X-Y (2 m_X - M_Y): only neighbours in value order merge,
 *   the lower one's threads first.
 * - A group holds, in ascending position, the unemitted threads of every
 *   class of its interval, and an emission takes its lowest G; so each
 *   class's unemitted threads are its positions from a cursor lo[c] on,
 *   and the last group (ascending ids) is every unemitted position in
 *   ascending order.
 *
 * The state: nodes in value order (a pending class, or a group named by
 * its top class), a heap of the edges between neighbouring groups keyed
 * (gain desc, lower id asc) whose stale entries are dropped when popped,
 * and the cursors.  Each merge removes a node and pushes at most two
 * edges; each emission walks the classes it empties once. */

#define NONE UINT16_MAX
#define MAXC TMAP_REGROUP_LAM_MAX_CLASSES

typedef struct edge {
    int gain;
    uint32_t lo;   /* the lower group's id: its lowest unemitted position */
    uint16_t x, y; /* the lower and the upper group */
} edge;

typedef struct table {
    size_t groupsize, K, finished, nheap;
    uint32_t lo[MAXC], end[MAXC]; /* class c's unemitted positions: [lo, end) */
    uint32_t size[MAXC];          /* node c's unemitted threads; 0: not a node */
    uint16_t bot[MAXC];           /* node c's lowest class with threads */
    uint16_t prev[MAXC], next[MAXC];
    unsigned char pending[MAXC];
    edge heap[5 * MAXC];          /* pushes: < R at start, 2 per pending class and merge */
    run_out out;
} table;

static int before(const edge *a, const edge *b)
{
    return a->gain > b->gain || (a->gain == b->gain && a->lo < b->lo);
}

static void heap_push(table *t, edge e)
{
    assert(t->nheap < sizeof t->heap / sizeof t->heap[0]);
    size_t i = t->nheap++;
    for (; i > 0 && before(&e, &t->heap[(i - 1) / 2]); i = (i - 1) / 2)
        t->heap[i] = t->heap[(i - 1) / 2];
    t->heap[i] = e;
}

static edge heap_pop(table *t)
{
    edge top = t->heap[0], e = t->heap[--t->nheap];
    size_t i = 0;
    for (size_t c; (c = 2 * i + 1) < t->nheap; i = c) {
        if (c + 1 < t->nheap && before(&t->heap[c + 1], &t->heap[c]))
            c++;
        if (!before(&t->heap[c], &e))
            break;
        t->heap[i] = t->heap[c];
    }
    t->heap[i] = e;
    return top;
}

static edge edge_of(const table *t, uint16_t x, uint16_t y)
{
    return (edge){2 * (t->bot[x] + 1) - (y + 1), t->lo[t->bot[x]], x, y};
}

static int is_group(const table *t, uint16_t c)
{
    return c != NONE && t->size[c] && !t->pending[c];
}

/* The edge x-y, if both are groups (x the lower neighbour of y). */
static void push_edge(table *t, uint16_t x, uint16_t y)
{
    if (is_group(t, x) && is_group(t, y))
        heap_push(t, edge_of(t, x, y));
}

/* e still joins two neighbouring groups as they are now. */
static int current(const table *t, const edge *e)
{
    if (!is_group(t, e->x) || !is_group(t, e->y) || t->next[e->x] != e->y)
        return 0;
    edge now = edge_of(t, e->x, e->y);
    return now.gain == e->gain && now.lo == e->lo;
}

/* Takes node c out of the list; its neighbours become neighbours. */
static void unlink_node(table *t, uint16_t c, int edge)
{
    uint16_t p = t->prev[c], n = t->next[c];
    if (p != NONE)
        t->next[p] = n;
    if (n != NONE)
        t->prev[n] = p;
    t->size[c] = 0;
    if (edge)
        push_edge(t, p, n);
}

/* After node c changed: it goes, or its edges are pushed. */
static void settle(table *t, uint16_t c)
{
    if (!t->size[c])
        return unlink_node(t, c, 1);
    push_edge(t, t->prev[c], c);
    push_edge(t, c, t->next[c]);
}

/* Group y's lowest G threads, ascending, become the next finished group. */
static void emit(table *t, uint16_t y)
{
    uint32_t want = (uint32_t)t->groupsize;
    uint16_t c = t->bot[y];
    while (want) {
        assert(c <= y);
        uint32_t k = t->end[c] - t->lo[c] < want ? t->end[c] - t->lo[c] : want;
        put(&t->out, t->lo[c], k);
        t->lo[c] += k, want -= k;
        if (t->lo[c] == t->end[c])
            c++;
    }
    while (c < y && t->lo[c] == t->end[c])
        c++;
    t->bot[y] = c, t->size[y] -= (uint32_t)t->groupsize, t->finished++;
}

/* Pending class c's merges: whole warps (while the loop lasts), then its
 * residual is a group. */
static void pure(table *t, uint16_t c)
{
    size_t warps = t->size[c] / t->groupsize, left = t->K - 1 - t->finished;
    if (warps > left)
        warps = left;
    uint32_t n = (uint32_t)(warps * t->groupsize);
    put(&t->out, t->lo[c], n);
    t->lo[c] += n, t->size[c] -= n, t->finished += warps;
    t->pending[c] = 0;
    settle(t, c);
}

/* Edge x-y: x's threads join y's, the lowest G emitted if they fill it. */
static void merge(table *t, uint16_t x, uint16_t y)
{
    uint32_t s = t->size[x] + t->size[y];
    t->bot[y] = t->bot[x];
    unlink_node(t, x, 0);
    t->size[y] = s;
    if (s >= t->groupsize)
        emit(t, y);
    settle(t, y);
}

static void greedy_init(table *t, const uint32_t *size, size_t R, size_t groupsize, size_t n)
{
    t->groupsize = groupsize, t->K = (n + groupsize - 1) / groupsize;
    uint16_t last = NONE;
    uint32_t start = 0;
    for (uint16_t c = 0; c < R; c++) {
        t->lo[c] = start, t->end[c] = start += size[c];
        t->size[c] = size[c], t->bot[c] = c, t->pending[c] = size[c] >= 2;
        t->prev[c] = t->next[c] = NONE;
        if (!size[c])
            continue;
        t->prev[c] = last;
        if (last != NONE)
            t->next[last] = c;
        last = c;
    }
    for (uint16_t c = 0; c < R; c++)
        if (t->size[c])
            push_edge(t, c, t->next[c]);
}

static void greedy(table *t, const uint32_t *size, size_t R, size_t groupsize, size_t n)
{
    greedy_init(t, size, R, groupsize, n);
    int top = (int)R - 1; /* pending classes above it: none */
    while (t->finished + 1 < t->K) { /* the literal's loop bound */
        while (top >= 0 && !t->pending[top])
            top--;
        while (t->nheap && !current(t, &t->heap[0]))
            heap_pop(t);
        assert(top >= 0 || t->nheap); /* two groups remain to merge */
        if (top >= 0 && (!t->nheap || top + 1 >= t->heap[0].gain)) {
            pure(t, (uint16_t)top);
        } else {
            edge e = heap_pop(t);
            merge(t, e.x, e.y);
        }
    }
    for (size_t c = 0; c < R; c++)
        put(&t->out, t->lo[c], t->end[c] - t->lo[c]);
}

tmap_status tmap_regroup_class_runs(tmap_algo algo, const uint32_t *size, size_t nclasses,
                                    size_t groupsize, uint32_t *runs, size_t *nruns,
                                    tmap_error *err)
{
    if (!size || !runs || !nruns || !nclasses || nclasses > TMAP_REGROUP_LAM_MAX_CLASSES)
        return tmap_fail(err, TMAP_ERR_INVALID, "class runs: %s",
                         nclasses ? "an argument is NULL" : "no classes");
    if (algo != TMAP_ALGO_GREEDY && algo != TMAP_ALGO_GREEDY_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID, "class runs: %s is not Greedy or Greedy-Max",
                         tmap_algo_name(algo));
    if (!groupsize || groupsize % 32)
        return tmap_fail(err, TMAP_ERR_INVALID, "class runs: group size %zu (a multiple of 32)",
                         groupsize);
    size_t n = 0;
    for (size_t c = 0; c < nclasses; c++)
        n += size[c];
    if (!n || n > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID, "class runs: %zu threads", n);
    run_out o = {.runs = runs};
    if (algo == TMAP_ALGO_GREEDY_MAX) {
        descending(size, nclasses, &o);
    } else {
        table *t = calloc(1, sizeof *t);
        if (!t)
            return tmap_fail(err, TMAP_ERR_NOMEM, "class runs: out of memory");
        t->out = o;
        greedy(t, size, nclasses, groupsize, n);
        o = t->out;
        free(t);
    }
    assert(o.slot == n);
    if (o.full)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "class runs: %s needs more than %d runs",
                         tmap_algo_name(algo), TMAP_REGROUP_MAX_RUNS);
    *nruns = o.n;
    return TMAP_OK;
}

/*
 * greedy_literal.c -- Greedy, Algorithm 1, transcribed for tests: every
 * group is a node, every pair an edge with its gain; each step scans all
 * edges for the maximum.  O(N^3) for N threads.  The readings below are
 * shared with greedy.c and explained in docs/regroup.md:
 *   - a group's id is its lowest thread index;
 *   - the edge of maximal gain wins; ties go to the pair whose lower id is
 *     lowest, then whose higher id is lowest;
 *   - merge(gm, gn) lists the lower-id group's threads, then the other's;
 *   - when the merged size is >= groupsize, its first groupsize threads (in
 *     that list order) are a finished group, emitted to the next slots; the
 *     rest, if any, is a group again (id: its lowest thread);
 *   - the loop runs while fewer than K-1 groups are finished (K =
 *     ceil(N / groupsize)); then the remaining groups, in ascending id,
 *     form the last group.
 */
#include "tests/literal.h"

#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/gain.h"
#include "regroup/part.h"

#define NONE UINT32_MAX

/* Groups live in slots 0..n-1 (slot t starts as thread t); a group is a
 * linked list of threads in its merge order. */
typedef struct lit_state {
    const tmap_regroup_part *p;
    uint32_t *next;          /* [n] next thread of the same group */
    uint32_t *head, *tail;   /* [n] per slot */
    uint32_t *size;          /* [n] per slot, 0 = no group */
    uint32_t *id;            /* [n] per slot: lowest thread */
    uint32_t *mn, *mx;       /* [n][nblocks] per slot (eq. 6-7) */
    double *gain;            /* [n][n] per pair of slots (eq. 10) */
} lit_state;

/* Min/Max vectors and id of slot s, from its members. */
static void describe(lit_state *s, size_t slot)
{
    size_t nb = s->p->nblocks;
    uint32_t *mn = s->mn + slot * nb, *mx = s->mx + slot * nb;
    s->id[slot] = NONE;
    for (uint32_t t = s->head[slot]; t != NONE; t = s->next[t]) {
        const uint32_t *r = s->p->rows + (size_t)t * nb;
        for (size_t b = 0; b < nb; b++) {
            if (t == s->head[slot] || r[b] < mn[b])
                mn[b] = r[b];
            if (t == s->head[slot] || r[b] > mx[b])
                mx[b] = r[b];
        }
        if (t < s->id[slot])
            s->id[slot] = t;
    }
}

static void edges_of(lit_state *s, size_t a)
{
    size_t n = s->p->n, nb = s->p->nblocks;
    for (size_t x = 0; x < n; x++) {
        if (!s->size[x] || x == a)
            continue;
        double g = tmap_regroup_gain(s->mn + a * nb, s->mx + a * nb,
                                     s->mn + x * nb, s->mx + x * nb,
                                     s->p->lat, nb);
        s->gain[a * n + x] = s->gain[x * n + a] = g;
    }
}

/* The edge of maximal gain; *a gets the lower-id slot. */
static void best_edge(const lit_state *s, size_t *a, size_t *b)
{
    size_t n = s->p->n;
    int found = 0;
    double bg = 0;
    uint32_t blo = 0, bhi = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n && s->size[i]; j++) {
            if (!s->size[j])
                continue;
            double g = s->gain[i * n + j];
            uint32_t lo = s->id[i] < s->id[j] ? s->id[i] : s->id[j];
            uint32_t hi = s->id[i] < s->id[j] ? s->id[j] : s->id[i];
            if (!found || g > bg ||
                (g == bg && (lo < blo || (lo == blo && hi < bhi)))) {
                found = 1;
                bg = g;
                blo = lo;
                bhi = hi;
                *a = s->id[i] == lo ? i : j;
                *b = s->id[i] == lo ? j : i;
            }
        }
    }
}

/* Merges slot b into slot a; emits the first groupsize threads if the
 * result is large enough.  Returns 1 when a group was finished. */
static int merge(lit_state *s, size_t a, size_t b, uint32_t **out)
{
    s->next[s->tail[a]] = s->head[b];
    s->tail[a] = s->tail[b];
    s->size[a] += s->size[b];
    s->size[b] = 0;
    int finished = s->size[a] >= s->p->groupsize;
    if (finished) {
        uint32_t t = s->head[a];
        for (size_t k = 0; k < s->p->groupsize; k++, t = s->next[t])
            *(*out)++ = t;
        s->head[a] = t;
        s->size[a] -= (uint32_t)s->p->groupsize;
    }
    if (s->size[a]) {
        describe(s, a);
        edges_of(s, a);
    }
    return finished;
}

static void lit_free(lit_state *s)
{
    free(s->next);
    free(s->head);
    free(s->tail);
    free(s->size);
    free(s->id);
    free(s->mn);
    free(s->mx);
    free(s->gain);
}

static tmap_status literal_part(const tmap_regroup_part *p, uint32_t *out,
                                tmap_error *err)
{
    size_t n = p->n, nb = p->nblocks;
    lit_state s = {.p = p};
    s.next = malloc(n * sizeof *s.next);
    s.head = malloc(n * sizeof *s.head);
    s.tail = malloc(n * sizeof *s.tail);
    s.size = malloc(n * sizeof *s.size);
    s.id = malloc(n * sizeof *s.id);
    s.mn = malloc(n * nb * sizeof *s.mn);
    s.mx = malloc(n * nb * sizeof *s.mx);
    s.gain = malloc(n * n * sizeof *s.gain);
    if (!s.next || !s.head || !s.tail || !s.size || !s.id || !s.mn ||
        !s.mx || !s.gain) {
        lit_free(&s);
        return tmap_fail(err, TMAP_ERR_NOMEM, "greedy_literal: %zu threads",
                         n);
    }
    for (size_t t = 0; t < n; t++) {
        s.next[t] = NONE;
        s.head[t] = s.tail[t] = (uint32_t)t;
        s.size[t] = 1;
        describe(&s, t);
    }
    for (size_t t = 0; t < n; t++)
        edges_of(&s, t);
    size_t K = (n + p->groupsize - 1) / p->groupsize, groups = 0;
    while (groups + 1 < K) {  /* groups < K - 1 */
        size_t a = 0, b = 0;
        best_edge(&s, &a, &b);
        groups += (size_t)merge(&s, a, b, &out);
    }
    /* the last group: the remaining groups in ascending id */
    for (uint32_t t = 0; t < n; t++)
        for (size_t slot = 0; slot < n; slot++)
            if (s.size[slot] && s.id[slot] == t)
                for (uint32_t m = s.head[slot]; m != NONE; m = s.next[m])
                    *out++ = m;
    lit_free(&s);
    return TMAP_OK;
}

tmap_status tmap_regroup_greedy_literal(const tmap_bbv *bbv, const double *lat,
                                        const tmap_regroup_opts *opts,
                                        uint32_t *perm, tmap_error *err)
{
    tmap_regroup_input in = {.bbv = bbv, .lat = lat, .need_bbv = 1,
                             .need_lat = 1, .name = "greedy_literal"};
    return tmap_regroup_run(literal_part, &in, opts, perm, err);
}

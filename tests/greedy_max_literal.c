/*
 * greedy_max_literal.c -- Greedy-Max, Algorithm 2, transcribed line by line
 * for tests: the remaining threads T are scanned in thread order for every
 * pick, and "matches any j in g" compares the candidate's row with every
 * member's row.  O(N^2 * groupsize * nblocks).  Readings of the pseudo-code
 * (shared with greedy_max.c, see there and docs/regroup.md):
 *   - the group starts from the remaining thread of maximal Lat_t (eq. 11),
 *     ties to the lowest thread index;
 *   - max_gain starts at -infinity: some thread is always added; a later
 *     thread replaces the best only with a strictly larger gain, so ties go
 *     to the lowest thread index;
 *   - the scan stops at the first identical thread (lowest index);
 *   - the last group stops when T is empty (it may be partial).
 */
#include "tests/literal.h"

#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/gain.h"
#include "regroup/part.h"

typedef struct lit_state {
    const tmap_regroup_part *p;
    unsigned char *used;  /* [n] thread removed from T */
    uint32_t *mn, *mx;    /* Min_b g and Max_b g (eq. 6-7) */
    const uint32_t *g;    /* the members of the group being built */
    size_t gsize;
} lit_state;

static const uint32_t *row(const tmap_regroup_part *p, size_t t)
{
    return p->rows + t * p->nblocks;
}

static int matches_member(const lit_state *s, size_t t)
{
    for (size_t j = 0; j < s->gsize; j++)
        if (!tmap_regroup_row_cmp(row(s->p, s->g[j]), row(s->p, t),
                                  s->p->nblocks))
            return 1;
    return 0;
}

/* Lines 11-23: the thread to add to g. */
static size_t pick(const lit_state *s)
{
    const tmap_regroup_part *p = s->p;
    size_t best = p->n;
    double best_gain = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (s->used[i])
            continue;
        if (matches_member(s, i))
            return i;
        double cur = tmap_regroup_gain(s->mn, s->mx, row(p, i), row(p, i),
                                       p->lat, p->nblocks);
        if (best == p->n || cur > best_gain) {
            best = i;
            best_gain = cur;
        }
    }
    return best;
}

/* Line 5: the remaining thread of maximal Lat_t. */
static size_t max_latency(const lit_state *s)
{
    const tmap_regroup_part *p = s->p;
    size_t best = p->n;
    double best_lat = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (s->used[i])
            continue;
        double l = tmap_regroup_latency(row(p, i), p->lat, p->nblocks);
        if (best == p->n || l > best_lat) {
            best = i;
            best_lat = l;
        }
    }
    return best;
}

static void add(lit_state *s, uint32_t *g, size_t t)
{
    const uint32_t *r = row(s->p, t);
    for (size_t b = 0; b < s->p->nblocks; b++) {
        if (s->gsize == 0 || r[b] < s->mn[b])
            s->mn[b] = r[b];
        if (s->gsize == 0 || r[b] > s->mx[b])
            s->mx[b] = r[b];
    }
    g[s->gsize++] = (uint32_t)t;
    s->used[t] = 1;
}

static tmap_status literal_part(const tmap_regroup_part *p, uint32_t *out,
                                tmap_error *err)
{
    lit_state s = {.p = p};
    s.used = calloc(p->n, 1);
    s.mn = malloc(p->nblocks * sizeof *s.mn);
    s.mx = malloc(p->nblocks * sizeof *s.mx);
    if (!s.used || !s.mn || !s.mx) {
        free(s.used);
        free(s.mn);
        free(s.mx);
        return tmap_fail(err, TMAP_ERR_NOMEM, "greedy_max_literal");
    }
    size_t done = 0;
    while (done < p->n) {               /* size(G) < K */
        uint32_t *g = out + done;       /* groups are emitted in order */
        s.g = g;
        s.gsize = 0;
        add(&s, g, max_latency(&s));
        while (s.gsize < p->groupsize && done + s.gsize < p->n)
            add(&s, g, pick(&s));
        done += s.gsize;
    }
    free(s.used);
    free(s.mn);
    free(s.mx);
    return TMAP_OK;
}

tmap_status tmap_regroup_greedy_max_literal(const tmap_bbv *bbv,
                                            const double *lat,
                                            const tmap_regroup_opts *opts,
                                            uint32_t *perm, tmap_error *err)
{
    tmap_regroup_input in = {.bbv = bbv, .lat = lat, .need_bbv = 1,
                             .need_lat = 1, .name = "greedy_max_literal"};
    return tmap_regroup_run(literal_part, &in, opts, perm, err);
}

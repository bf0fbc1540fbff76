/*
 * sched.c -- the thread-block scheduling simulation behind
 * BBV-weighted-scheduled (Liang et al. section IV-B2, Fig. 4 and 5):
 * dynamic round robin over nsms * blocks_per_sm resident-block slots, and
 * static round robin for comparison.
 *
 * Choice: the resident slots of one SM run independently (a block's cost,
 * eq. 4, already adds up all its warps, so it is a serialized issue cost;
 * the paper models each resident block this way and does not split an SM's
 * throughput between co-resident blocks).  Under that choice the makespan
 * does not depend on which of several equally free slots a block takes.
 */
#include "threadmap/model.h"

#include <stdlib.h>
#include <string.h>

#include "common/base.h"

/* A resident-block slot; the heap orders by (free, sm, slot). */
typedef struct sched_server {
    double free; /* time the slot becomes free */
    uint32_t sm, slot;
} sched_server;

static int sched_before(const sched_server *a, const sched_server *b)
{
    if (a->free != b->free)
        return a->free < b->free;
    if (a->sm != b->sm)
        return a->sm < b->sm;
    return a->slot < b->slot;
}

/* Restores the heap property below index i (min-heap by sched_before). */
static void sched_sift_down(sched_server *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && sched_before(&h[l], &h[m]))
            m = l;
        if (r < n && sched_before(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        sched_server t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static tmap_status sched_check(const double *cost, size_t nblocks, size_t nsms,
                               size_t blocks_per_sm, tmap_error *err)
{
    if (!nsms || !blocks_per_sm)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "scheduling needs at least one SM and one block per SM (got %zu, %zu)",
                         nsms, blocks_per_sm);
    if (nsms > UINT32_MAX || blocks_per_sm > UINT32_MAX ||
        nsms > ((size_t)-1) / sizeof(sched_server) / blocks_per_sm)
        return tmap_fail(err, TMAP_ERR_INVALID, "too many SMs or slots (%zu x %zu)", nsms,
                         blocks_per_sm);
    for (size_t k = 0; k < nblocks; k++)
        if (!(cost[k] >= 0))
            return tmap_fail(err, TMAP_ERR_INVALID, "thread block %zu has cost %g (< 0 or NaN)",
                             k, cost[k]);
    return TMAP_OK;
}

/* Runs blocks [k for k in order] on the servers of heap h (n servers). */
static double sched_run(sched_server *h, size_t n, const double *cost, size_t nblocks,
                        size_t first, size_t stride, tmap_sched_slot *where)
{
    double end = 0;
    for (size_t k = first; k < nblocks; k += stride) {
        sched_server *s = &h[0]; /* the slot that frees first */
        double finish = s->free + cost[k];
        if (where)
            where[k] = (tmap_sched_slot){s->sm, s->slot, s->free, finish};
        s->free = finish;
        if (finish > end)
            end = finish;
        sched_sift_down(h, n, 0);
    }
    return end;
}

tmap_status tmap_sched_dynamic(const double *cost, size_t nblocks, size_t nsms,
                               size_t blocks_per_sm, double *makespan,
                               tmap_sched_slot *where, tmap_error *err)
{
    tmap_status s = sched_check(cost, nblocks, nsms, blocks_per_sm, err);
    if (s)
        return s;
    /* Only min(servers, nblocks) servers can ever be used. */
    size_t n = nsms * blocks_per_sm;
    if (n > nblocks)
        n = nblocks ? nblocks : 1;
    sched_server *h = malloc(n * sizeof *h);
    if (!h)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu scheduler slots", n);
    /* Sorted by (sm, slot) with equal free times, so already a heap.  The
     * first n servers in (sm, slot) order are the ones ties would pick. */
    for (size_t i = 0; i < n; i++)
        h[i] = (sched_server){0, (uint32_t)(i / blocks_per_sm), (uint32_t)(i % blocks_per_sm)};
    *makespan = sched_run(h, n, cost, nblocks, 0, 1, where);
    free(h);
    return TMAP_OK;
}

tmap_status tmap_sched_static(const double *cost, size_t nblocks, size_t nsms,
                              size_t blocks_per_sm, double *makespan,
                              tmap_sched_slot *where, tmap_error *err)
{
    tmap_status s = sched_check(cost, nblocks, nsms, blocks_per_sm, err);
    if (s)
        return s;
    sched_server *h = malloc(blocks_per_sm * sizeof *h);
    if (!h)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu scheduler slots",
                         blocks_per_sm);
    double end = 0;
    for (size_t sm = 0; sm < nsms && sm < nblocks; sm++) {
        for (size_t i = 0; i < blocks_per_sm; i++)
            h[i] = (sched_server){0, (uint32_t)sm, (uint32_t)i};
        double e = sched_run(h, blocks_per_sm, cost, nblocks, sm, nsms, where);
        if (e > end)
            end = e;
    }
    free(h);
    *makespan = end;
    return TMAP_OK;
}

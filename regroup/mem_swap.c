/*
 * mem_swap.c -- zhang2011's job swapping (sec. 4.1) and the hybrid (sec.
 * 3.2.3): threads exchange whole jobs so that each warp reads as few
 * sectors as possible; the hybrid first moves a few elements so that the
 * jobs of each segment fill whole warps (threadmap/regroup.h).
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/regroup.h"
#include "common/base.h"
#include "regroup/mem.h"

/* The residues: sets of jobs (a run of the sorted jobs) in lists by size,
 * each list in category order; the packing takes from both ends. */
typedef struct residues {
    const tmap_memre_keyed *jobs;
    size_t *start, *size, *next; /* per set; next: the list link */
    size_t *head;                /* [warp]: first set of each size, or NONE */
    size_t warp;
} residues;
#define NONE ((size_t)-1)

static void push(residues *r, size_t set)
{
    r->next[set] = r->head[r->size[set]];
    r->head[r->size[set]] = set;
}

/* The first set of the largest (largest != 0) or smallest size, or NONE. */
static size_t pop(residues *r, int largest)
{
    for (size_t i = 1; i < r->warp; i++) {
        size_t s = largest ? r->warp - i : i, set = r->head[s];
        if (set != NONE) {
            r->head[s] = r->next[set];
            return set;
        }
    }
    return NONE;
}

/* Puts `take` jobs of the set into bucket b. */
static void take_jobs(residues *r, size_t set, size_t take, size_t b, uint32_t *bucket_of)
{
    for (size_t i = 0; i < take; i++)
        bucket_of[r->jobs[r->start[set] + i].id] = (uint32_t)b;
    r->start[set] += take, r->size[set] -= take;
    if (r->size[set])
        push(r, set);
}

/* Residue packing: the largest set into an empty bucket, topped up from
 * the smallest sets; returns the next bucket number. */
static size_t pack_residues(residues *r, size_t b, uint32_t *bucket_of)
{
    for (size_t set; (set = pop(r, 1)) != NONE; b++) {
        size_t room = r->warp - r->size[set];
        take_jobs(r, set, r->size[set], b, bucket_of);
        for (size_t small; room && (small = pop(r, 0)) != NONE;) {
            size_t take = r->size[small] < room ? r->size[small] : room;
            room -= take;
            take_jobs(r, small, take, b, bucket_of);
        }
    }
    return b;
}

/* Buckets: each category's first jobs in whole warps, then the residues;
 * bucket_of[job].  All but the last bucket hold `warp` jobs. */
static tmap_status make_buckets(const tmap_memre_keyed *jobs, size_t n, size_t warp,
                                uint32_t *bucket_of, tmap_error *err)
{
    residues r = {jobs, malloc(n * sizeof(size_t)), malloc(n * sizeof(size_t)),
                  malloc(n * sizeof(size_t)), malloc(warp * sizeof(size_t)), warp};
    if (!r.start || !r.size || !r.next || !r.head) {
        free(r.start), free(r.size), free(r.next), free(r.head);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t s = 0; s < warp; s++)
        r.head[s] = NONE;
    size_t b = 0, nsets = 0;
    for (size_t a = 0, e; a < n; a = e) {
        for (e = a; e < n && jobs[e].key == jobs[a].key; e++)
            ;
        size_t full = (e - a) / warp * warp;
        for (size_t i = 0; i < full; i++)
            bucket_of[jobs[a + i].id] = (uint32_t)(b + i / warp);
        b += full / warp;
        if (full < e - a)
            r.start[nsets] = a + full, r.size[nsets] = e - a - full, nsets++;
    }
    for (size_t set = nsets; set-- > 0;) /* each list in category order */
        push(&r, set);
    pack_residues(&r, b, bucket_of);
    free(r.start), free(r.size), free(r.next), free(r.head);
    return TMAP_OK;
}

/* An overlap of a warp and a bucket, sorted most shared jobs first, then
 * by warp, then by bucket: key = (UINT32_MAX - shared) << 32 | warp. */
#define SHARED_ONE (1ull << 32)
static uint32_t warp_of_key(uint64_t key) { return (uint32_t)key; }

/* bucket_for[w]: warps take the buckets they share most jobs with
 * (greedy, ties by warp then bucket), a partial last warp the partial last
 * bucket, the rest in order. */
static tmap_status match_warps(const uint32_t *bucket_of, size_t n, size_t warp,
                               uint32_t *bucket_for, tmap_error *err)
{
    size_t nw = (n + warp - 1) / warp, no = 0;
    tmap_memre_keyed *o = malloc(n * sizeof *o);
    uint8_t *taken = calloc(nw, 1);
    if (!o || !taken) {
        free(o), free(taken);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    size_t forced = n % warp ? nw - 1 : nw; /* a partial warp takes the partial bucket */
    for (size_t w = 0; w < nw; w++)
        bucket_for[w] = UINT32_MAX;
    if (forced < nw)
        bucket_for[forced] = (uint32_t)forced, taken[forced] = 1;
    for (size_t w = 0; w < forced; w++) {
        size_t first = no;
        for (size_t s = w * warp; s < (w + 1) * warp; s++) {
            size_t i = first;
            while (i < no && o[i].id != bucket_of[s])
                i++;
            if (i == no)
                o[no++] = (tmap_memre_keyed){(uint64_t)UINT32_MAX << 32 | w, bucket_of[s]};
            o[i].key -= SHARED_ONE;
        }
    }
    tmap_memre_sort(o, no);
    for (size_t i = 0; i < no; i++) {
        uint32_t w = warp_of_key(o[i].key), b = o[i].id;
        if (bucket_for[w] == UINT32_MAX && !taken[b])
            bucket_for[w] = b, taken[b] = 1;
    }
    for (size_t w = 0, b = 0; w < forced; w++)
        if (bucket_for[w] == UINT32_MAX) {
            while (taken[b])
                b++;
            bucket_for[w] = (uint32_t)b, taken[b] = 1;
        }
    free(o), free(taken);
    return TMAP_OK;
}

/* perm: a warp keeps the slots of its bucket's jobs that are already in
 * it; the bucket's other jobs fill its other slots, both in order. */
static tmap_status place_jobs(const uint32_t *bucket_of, const uint32_t *bucket_for, size_t n,
                              size_t warp, uint32_t *perm, tmap_error *err)
{
    size_t nw = (n + warp - 1) / warp;
    uint32_t *members = malloc(n * sizeof *members), *at = calloc(nw + 1, sizeof *at);
    if (!members || !at) {
        free(members), free(at);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t j = 0; j < n; j++) /* a counting sort of the jobs by bucket */
        at[bucket_of[j] + 1]++;
    for (size_t b = 0; b < nw; b++)
        at[b + 1] += at[b];
    for (size_t j = 0; j < n; j++)
        members[at[bucket_of[j]]++] = (uint32_t)j; /* at[b]: the end of bucket b */
    for (size_t w = 0; w < nw; w++) {
        size_t b = bucket_for[w], lo = w * warp, hi = lo + warp < n ? lo + warp : n;
        size_t m = b ? at[b - 1] : 0, free_slot = lo;
        for (size_t s = lo; s < hi; s++)
            perm[s] = bucket_of[s] == b ? (uint32_t)s : UINT32_MAX;
        for (; m < at[b]; m++) {
            if (members[m] >= lo && members[m] < hi)
                continue;
            while (perm[free_slot] != UINT32_MAX)
                free_slot++;
            perm[free_slot] = members[m];
        }
    }
    free(members), free(at);
    return TMAP_OK;
}

tmap_status tmap_memre_swap_keys(const uint64_t *key, size_t n, size_t warp, uint32_t *perm,
                                 tmap_error *err)
{
    size_t nw = (n + warp - 1) / warp;
    tmap_memre_keyed *jobs = malloc(n * sizeof *jobs);
    uint32_t *bucket_of = malloc(n * sizeof *bucket_of);
    uint32_t *bucket_for = malloc(nw * sizeof *bucket_for);
    tmap_status st = jobs && bucket_of && bucket_for
                         ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t j = 0; st == TMAP_OK && j < n; j++)
        jobs[j] = (tmap_memre_keyed){key[j], (uint32_t)j};
    if (st == TMAP_OK)
        tmap_memre_sort(jobs, n);
    if (st == TMAP_OK && !(st = make_buckets(jobs, n, warp, bucket_of, err)) &&
        !(st = match_warps(bucket_of, n, warp, bucket_for, err)))
        st = place_jobs(bucket_of, bucket_for, n, warp, perm, err);
    free(jobs), free(bucket_of), free(bucket_for);
    return st;
}

static int same_segments(const uint32_t *a, const uint32_t *b, size_t k, size_t seg)
{
    for (size_t j = 0; j < k; j++)
        if (a[j] / seg != b[j] / seg)
            return 0;
    return 1;
}

/* Job categories of the m jobs at index (k accesses each): the rank of
 * the tuple of the segments a job's accesses read, in lexicographic order
 * (with k = 1, the order of the segment read).  An LSD sort: one pass per
 * access, last first, ties kept in the previous pass's order. */
static tmap_status categories(const tmap_memref *r, const uint32_t *index, size_t m,
                              uint64_t *key, tmap_error *err)
{
    size_t k = r->per_thread, seg = tmap_memre_segment(r);
    tmap_memre_keyed *v = malloc(m * sizeof *v);
    uint32_t *order = malloc(m * sizeof *order), *prev = malloc(m * sizeof *prev);
    if (!v || !order || !prev) {
        free(v), free(order), free(prev);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < m; i++)
        order[i] = (uint32_t)i;
    for (size_t j = k; j-- > 0;) {
        for (size_t i = 0; i < m; i++)
            v[i] = (tmap_memre_keyed){index[order[i] * k + j] / seg, (uint32_t)i};
        tmap_memre_sort(v, m);
        for (size_t i = 0; i < m; i++)
            prev[i] = order[v[i].id];
        memcpy(order, prev, m * sizeof *order);
    }
    for (size_t i = 0, rank = 0; i < m; i++) {
        rank += i && !same_segments(index + (size_t)order[i] * k,
                                    index + (size_t)order[i - 1] * k, k, seg);
        key[order[i]] = rank;
    }
    free(v), free(order), free(prev);
    return TMAP_OK;
}

/* Swaps jobs within each thread block (block_size 0: the grid). */
static tmap_status swap_blocks(const tmap_memref *r, size_t block_size, tmap_memre *out,
                               tmap_error *err)
{
    size_t n = r->nthreads, bs = block_size ? block_size : n, w = tmap_memre_warp(r);
    uint64_t *key = malloc(bs * sizeof *key);
    tmap_status st = key ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t lo = 0; st == TMAP_OK && lo < n; lo += bs) {
        size_t m = n - lo < bs ? n - lo : bs;
        if ((st = categories(r, out->index + lo * r->per_thread, m, key, err)))
            break;
        st = tmap_memre_swap_keys(key, m, w, out->perm + lo, err);
        for (size_t s = 0; st == TMAP_OK && s < m; s++)
            out->perm[lo + s] += (uint32_t)lo;
    }
    free(key);
    return st;
}

static tmap_status swap_begin(const tmap_memref *r, const uint32_t *index, size_t block_size,
                              const char *fn, size_t nout, tmap_memre *out, tmap_error *err)
{
    tmap_status st = tmap_memre_begin(r, index, fn, 0, 0, nout, 1, out, err);
    if (st == TMAP_OK && block_size % tmap_memre_warp(r)) {
        tmap_memre_free(out);
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: block_size %zu is not a multiple of the "
                         "warp (%zu)", fn, block_size, tmap_memre_warp(r));
    }
    return st;
}

tmap_status tmap_memre_swap(const tmap_memref *r, const uint32_t *index, size_t block_size,
                            tmap_memre *out, tmap_error *err)
{
    tmap_status st = swap_begin(r, index, block_size, "tmap_memre_swap", 0, out, err);
    if (st)
        return st;
    memcpy(out->index, index, r->nthreads * r->per_thread * sizeof *index);
    if ((st = swap_blocks(r, block_size, out, err)))
        tmap_memre_free(out);
    return st;
}

/* One block's m jobs by category (ties by job): each category's whole
 * warps first, then the residues, both in category order. */
static tmap_status sorted_block(const tmap_memref *r, const uint32_t *index, size_t m,
                                uint32_t *perm, tmap_error *err)
{
    size_t w = tmap_memre_warp(r), f = 0;
    uint64_t *key = malloc(m * sizeof *key);
    tmap_memre_keyed *jobs = malloc(m * sizeof *jobs);
    tmap_status st = key && jobs ? categories(r, index, m, key, err)
                                 : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t j = 0; st == TMAP_OK && j < m; j++)
        jobs[j] = (tmap_memre_keyed){key[j], (uint32_t)j};
    if (st == TMAP_OK)
        tmap_memre_sort(jobs, m);
    for (int residues = 0; st == TMAP_OK && residues < 2; residues++)
        for (size_t a = 0, e; a < m; a = e) {
            for (e = a; e < m && jobs[e].key == jobs[a].key; e++)
                ;
            size_t full = a + (e - a) / w * w;
            for (size_t i = residues ? full : a; i < (residues ? e : full); i++)
                perm[f++] = jobs[i].id;
        }
    free(key), free(jobs);
    return st;
}

tmap_status tmap_memre_swap_sorted(const tmap_memref *r, const uint32_t *index,
                                   size_t block_size, tmap_memre *out, tmap_error *err)
{
    tmap_status st = swap_begin(r, index, block_size, "tmap_memre_swap_sorted", 0, out, err);
    if (st)
        return st;
    size_t n = r->nthreads, k = r->per_thread, bs = block_size ? block_size : n;
    memcpy(out->index, index, n * k * sizeof *index);
    for (size_t lo = 0; st == TMAP_OK && lo < n; lo += bs) {
        size_t m = n - lo < bs ? n - lo : bs;
        st = sorted_block(r, index + lo * k, m, out->perm + lo, err);
        for (size_t s = 0; st == TMAP_OK && s < m; s++)
            out->perm[lo + s] += (uint32_t)lo;
    }
    if (st)
        tmap_memre_free(out);
    return st;
}

/* ------------------------------------------------------------ the hybrid */

/* Segments by the remainder of their accesses beyond whole warps: a stack
 * per remainder, checked when read (remainders change). */
typedef struct balance {
    const uint32_t *freq;
    uint32_t *at, *where;   /* at[slot] = element; where[element] = slot */
    size_t *rem, seg, nelems, warp;
    size_t **stack, *depth; /* stack[v][0..depth[v]) */
} balance;

/* An element nobody reads in segment b, or NONE. */
static size_t free_slot_in(const balance *g, size_t b)
{
    for (size_t p = b * g->seg; p < (b + 1) * g->seg && p < g->nelems; p++)
        if (!g->freq[g->at[p]])
            return p;
    return NONE;
}

/* A segment other than a whose remainder is v, with a free slot: its slot. */
static size_t target(balance *g, size_t v, size_t a)
{
    for (size_t i = g->depth[v]; i-- > 0;) {
        size_t b = g->stack[v][i], p = b != a && g->rem[b] == v ? free_slot_in(g, b) : NONE;
        if (p != NONE)
            return p;
        if (b != a) /* stale: drop it */
            g->stack[v][i] = g->stack[v][--g->depth[v]];
    }
    return NONE;
}

static void push_rem(balance *g, size_t b)
{
    if (g->rem[b])
        g->stack[g->rem[b]][g->depth[g->rem[b]]++] = b;
}

/* Moves elements of segment a that make up its remainder into segments
 * whose remainder they complete to a warp, exchanging them with elements
 * nobody reads. */
static void settle(balance *g, size_t a)
{
    for (size_t p = a * g->seg; g->rem[a] && p < (a + 1) * g->seg && p < g->nelems; p++) {
        size_t f = g->freq[g->at[p]], q;
        if (!f || f > g->rem[a] || (q = target(g, g->warp - f, a)) == NONE)
            continue;
        uint32_t e = g->at[p], u = g->at[q];
        g->at[p] = u, g->at[q] = e, g->where[u] = (uint32_t)p, g->where[e] = (uint32_t)q;
        g->rem[q / g->seg] = 0;
        g->rem[a] -= f;
        push_rem(g, a);
    }
}

tmap_status tmap_memre_hybrid(const tmap_memref *r, const uint32_t *index, size_t block_size,
                              tmap_memre *out, tmap_error *err)
{
    size_t ne = r ? r->nelems : 1;
    tmap_status st = swap_begin(r, index, block_size, "tmap_memre_hybrid", ne, out, err);
    if (st)
        return st;
    size_t seg = tmap_memre_segment(r), w = tmap_memre_warp(r), nseg = (ne + seg - 1) / seg;
    size_t nacc = r->nthreads * r->per_thread;
    uint32_t *freq = calloc(ne, sizeof *freq), *where = malloc(ne * sizeof *where);
    balance g = {freq, out->from, where, calloc(nseg, sizeof(size_t)), seg, ne, w,
                 calloc(w, sizeof(size_t *)), calloc(w, sizeof(size_t))};
    for (size_t v = 1; g.stack && v < w; v++)
        g.stack[v] = malloc(nseg * sizeof(size_t));
    int ok = freq && where && g.rem && g.stack && g.depth;
    for (size_t v = 1; ok && v < w; v++)
        ok = g.stack[v] != NULL;
    if (ok) {
        for (size_t i = 0; i < nacc; i++)
            freq[index[i]]++, g.rem[index[i] / seg]++;
        for (size_t e = 0; e < ne; e++)
            out->from[e] = where[e] = (uint32_t)e;
        for (size_t b = nseg; b-- > 0;) /* the lowest segment on top */
            g.rem[b] %= w, push_rem(&g, b);
        for (size_t a = 0; a < nseg; a++)
            settle(&g, a);
        for (size_t i = 0; i < nacc; i++)
            out->index[i] = where[index[i]];
        st = swap_blocks(r, block_size, out, err);
    } else {
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t v = 1; g.stack && v < w; v++)
        free(g.stack[v]);
    free(freq), free(where), free(g.rem), free(g.stack), free(g.depth);
    if (st)
        tmap_memre_free(out);
    return st;
}

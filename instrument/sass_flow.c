/*
 * sass_flow.c -- which SASS instructions a warp may issue once per group of
 * its threads.  Since Volta, a warp whose threads branch apart runs the
 * parts one after the other, and they go on together again only at a
 * BSYNC (or WARPSYNC) that waits for them.  ptxas leaves the BSSY/BSYNC
 * pair out where the paths meet only shortly before an exit or a return
 * (device_call: the Collatz loop's exit in a .func; local_array: the loop
 * before the store), and then the code after the meeting point runs once
 * per part, and so does the BSYNC that waits further on.
 *
 * So a SASS block s runs once per group of threads that came by one path
 * since the warp was last whole (the kernel's entry, or the block after a
 * BSYNC that no branch goes to): threads whose counts agree on the blocks
 * from there to s.  Left out of that key are the blocks on a cycle through
 * s (a loop's remaining threads run its body together, only its exit parts
 * them; and totals over iterations say nothing about one iteration) and
 * s's own CFG block.
 * docs/model.md, "SIMD efficiency".
 */
#include "instrument/sass_flow.h"

#include <stdlib.h>
#include <string.h>

#include "threadmap/instrument.h"
#include "common/base.h"

void tmap_sass_splits_free(tmap_sass_splits *s)
{
    if (!s)
        return;
    free(s->v);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

/* Where a return goes: back after a call into function `func`. */
typedef struct call_site {
    int func;
    size_t back; /* the block after the call */
} call_site;

static int cmp_site(const void *a, const void *b)
{
    const call_site *x = a, *y = b;
    if (x->func != y->func)
        return (x->func > y->func) - (x->func < y->func);
    return (x->back > y->back) - (x->back < y->back);
}

/* The call sites of blocks b[0..n), sorted by callee, into *out (malloc'ed);
 * returns how many, or SIZE_MAX when out of memory. */
static size_t call_sites(const tmap_sass_block *b, size_t n, call_site **out)
{
    size_t k = 0;
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!*out)
        return SIZE_MAX;
    for (size_t j = 0; j + 1 < n; j++)
        if (b[j].end == SASS_CALL && b[j].target != SIZE_MAX)
            (*out)[k++] = (call_site){b[b[j].target].func, j + 1};
    qsort(*out, k, sizeof **out, cmp_site);
    return k;
}

/* The successors of block i into out (NULL: only counted); calls go into
 * the callee, returns back after every call to their function (sites:
 * the call sites by callee). */
static size_t succ_of(const tmap_sass_block *b, size_t n, size_t i, const call_site *sites,
                      size_t nsites, size_t *out)
{
    size_t k = 0;
    int next = i + 1 < n && b[i + 1].func == b[i].func;
    int falls = b[i].cond || b[i].end == SASS_NONE || b[i].end == SASS_FALL ||
                b[i].end == SASS_SYNC;
    if ((b[i].end == SASS_BRA || b[i].end == SASS_CALL) && b[i].target != SIZE_MAX) {
        if (out)
            out[k] = b[i].target;
        k++;
    } else if (b[i].end == SASS_CALL) {
        falls = 1; /* a subroutine outside the listing's functions */
    } else if (b[i].end == SASS_RET) {
        size_t lo = 0, hi = nsites; /* the first site into b[i].func */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (sites[mid].func < b[i].func)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < nsites && sites[lo].func == b[i].func; lo++) {
            if (out)
                out[k] = sites[lo].back;
            k++;
        }
    }
    if (falls && next) { /* a repeated edge does not change what is reached */
        if (out)
            out[k] = i + 1;
        k++;
    }
    return k;
}

/* Successor and predecessor lists (CSR). */
typedef struct flow_graph {
    size_t *so, *sv; /* successors of i: sv[so[i] .. so[i+1]) */
    size_t *po, *pv; /* predecessors likewise */
} flow_graph;

static void graph_free(flow_graph *g)
{
    free(g->so);
    free(g->sv);
    free(g->po);
    free(g->pv);
}

static int graph_build(const tmap_sass_block *b, size_t n, flow_graph *g)
{
    memset(g, 0, sizeof *g);
    call_site *sites;
    size_t nsites = call_sites(b, n, &sites);
    g->so = calloc(n + 1, sizeof *g->so);
    g->po = calloc(n + 1, sizeof *g->po);
    if (nsites == SIZE_MAX || !g->so || !g->po) {
        free(sites);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        g->so[i + 1] = g->so[i] + succ_of(b, n, i, sites, nsites, NULL);
    size_t m = g->so[n];
    g->sv = malloc((m ? m : 1) * sizeof *g->sv);
    g->pv = malloc((m ? m : 1) * sizeof *g->pv);
    for (size_t i = 0; g->sv && i < n; i++)
        succ_of(b, n, i, sites, nsites, g->sv + g->so[i]);
    free(sites);
    if (!g->sv || !g->pv)
        return -1;
    for (size_t e = 0; e < m; e++)
        g->po[g->sv[e] + 1]++;
    for (size_t i = 0; i < n; i++)
        g->po[i + 1] += g->po[i];
    /* po[j] runs ahead while j's predecessors are filled, then moves back */
    for (size_t i = 0; i < n; i++)
        for (size_t e = g->so[i]; e < g->so[i + 1]; e++)
            g->pv[g->po[g->sv[e]]++] = i;
    for (size_t j = n; j > 0; j--)
        g->po[j] = g->po[j - 1];
    g->po[0] = 0;
    return 0;
}

/* The strongly connected components of the graph (Tarjan's, without
 * recursion): comp[i] for each of the n blocks; -1 when out of memory. */
static int components(const flow_graph *g, size_t n, size_t *comp)
{
    const size_t unset = SIZE_MAX;
    size_t *idx = malloc(n * sizeof *idx), *low = malloc(n * sizeof *low);
    size_t *stk = malloc(n * sizeof *stk), *fv = malloc(n * sizeof *fv);
    size_t *fe = malloc(n * sizeof *fe), next = 0, ncomp = 0, sp = 0;
    int ok = idx && low && stk && fv && fe;
    for (size_t i = 0; ok && i < n; i++)
        idx[i] = unset, comp[i] = unset;
    for (size_t r = 0; ok && r < n; r++) {
        if (idx[r] != unset)
            continue;
        size_t fp = 0; /* frames: block fv[k], its next edge fe[k] */
        fv[fp] = r, fe[fp++] = g->so[r];
        idx[r] = low[r] = next++, stk[sp++] = r;
        while (fp) {
            size_t v = fv[fp - 1];
            if (fe[fp - 1] < g->so[v + 1]) {
                size_t w = g->sv[fe[fp - 1]++];
                if (idx[w] == unset) {
                    idx[w] = low[w] = next++, stk[sp++] = w;
                    fv[fp] = w, fe[fp++] = g->so[w];
                } else if (comp[w] == unset && idx[w] < low[v]) {
                    low[v] = idx[w]; /* w is on the stack */
                }
                continue;
            }
            if (low[v] == idx[v]) {
                size_t w;
                do
                    comp[w = stk[--sp]] = ncomp;
                while (w != v);
                ncomp++;
            }
            if (--fp && low[v] < low[fv[fp - 1]])
                low[fv[fp - 1]] = low[v];
        }
    }
    free(idx);
    free(low);
    free(stk);
    free(fv);
    free(fe);
    return ok ? 0 : -1;
}

/* Marks with `gen` the blocks reachable from s (not s itself unless on a
 * cycle) along edges (o, v), not entering blocks with stop[] set (NULL:
 * none); lists them in list, returns how many. */
static size_t reach(size_t s, const size_t *o, const size_t *v, const unsigned char *stop,
                    size_t *mark, size_t gen, size_t *list, size_t *stack)
{
    size_t nl = 0, sp = 0;
    stack[sp++] = s;
    while (sp) {
        size_t x = stack[--sp];
        for (size_t e = o[x]; e < o[x + 1]; e++) {
            size_t y = v[e];
            if (mark[y] != gen && !(stop && stop[y])) {
                mark[y] = gen;
                list[nl++] = y;
                stack[sp++] = y;
            }
        }
    }
    return nl;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Scratch of the search, one array per purpose. */
typedef struct flow_scratch {
    unsigned char *whole; /* the warp is whole on entering the block */
    size_t *back;         /* reach marks, backwards */
    size_t *comp;         /* the strongly connected component of each block */
    size_t *drop;         /* marks on CFG blocks */
    uint64_t *inkey;      /* a bit per CFG block: in the key being made */
    size_t *list, *stack;
    uint32_t *key;
    size_t *koff; /* offset of each split's key in out->keys */
    size_t kcap, vcap, ocap;
    size_t *slot, nslot; /* hash of the splits: index + 1, 0 empty; nslot a
                            power of 2 over twice the splits */
    size_t steps;        /* blocks the searches visited, against the budget */
    size_t ncfg;         /* CFG blocks (drop and key hold as many) */
} flow_scratch;

/* The search's budget in blocks visited: each block's search may go back
 * to the kernel's entry, so branches that never rejoin cost n^2 / 2. */
#define SASS_FLOW_MAX_STEPS ((size_t)1 << 24)

/* FNV-1a of a split's owner and key. */
static size_t split_hash(uint32_t owner, const uint32_t *key, uint32_t nk)
{
    uint64_t h = 1469598103934665603ull;
    h = (h ^ owner) * 1099511628211ull;
    for (uint32_t j = 0; j < nk; j++)
        h = (h ^ key[j]) * 1099511628211ull;
    return (size_t)h;
}

/* The slot of split (owner, key): the one holding an equal split, or the
 * empty one where it goes. */
static size_t *split_slot(const tmap_sass_splits *out, const flow_scratch *sc, uint32_t owner,
                          const uint32_t *key, uint32_t nk)
{
    size_t mask = sc->nslot - 1, h = split_hash(owner, key, nk) & mask;
    for (;; h = (h + 1) & mask) {
        size_t i = sc->slot[h];
        if (!i)
            return &sc->slot[h];
        const tmap_sass_split *v = &out->v[i - 1];
        if (v->block == owner && v->nkey == nk &&
            !memcmp(out->keys + sc->koff[i - 1], key, nk * sizeof *key))
            return &sc->slot[h];
    }
}

/* Doubles the hash to hold the splits and one more at half load. */
static int split_rehash(const tmap_sass_splits *out, flow_scratch *sc)
{
    if (2 * (out->n + 1) <= sc->nslot)
        return 0;
    size_t n = sc->nslot ? 2 * sc->nslot : 64;
    free(sc->slot);
    if (!(sc->slot = calloc(n, sizeof *sc->slot)))
        return -1;
    sc->nslot = n;
    for (size_t i = 0; i < out->n; i++)
        *split_slot(out, sc, out->v[i].block, out->keys + sc->koff[i], out->v[i].nkey) = i + 1;
    return 0;
}

/* Adds split (owner, ninstr, key[0..nk)) to out, merged with an equal one. */
static int add_split(tmap_sass_splits *out, flow_scratch *sc, size_t *nkeys, uint32_t owner,
                     uint32_t ninstr, const uint32_t *key, uint32_t nk)
{
    if (split_rehash(out, sc))
        return -1;
    size_t *at = split_slot(out, sc, owner, key, nk);
    if (*at) {
        out->v[*at - 1].ninstr += ninstr;
        return 0;
    }
    if (tmap_grow(&out->v, &sc->vcap, out->n + 1, sizeof *out->v) ||
        tmap_grow(&sc->koff, &sc->ocap, out->n + 1, sizeof *sc->koff) ||
        tmap_grow(&out->keys, &sc->kcap, *nkeys + nk, sizeof *out->keys))
        return -1;
    memcpy(out->keys + *nkeys, key, nk * sizeof *key);
    sc->koff[out->n] = *nkeys;
    out->v[out->n++] = (tmap_sass_split){owner, ninstr, nk, NULL};
    *at = out->n;
    *nkeys += nk;
    return 0;
}

/* Sorts the key sc->key[0..nk) and clears its bits: a short key by qsort,
 * a long one read off the bits in order, whichever costs less. */
static uint32_t sorted_key(flow_scratch *sc, uint32_t nk)
{
    size_t words = (sc->ncfg + 63) / 64;
    if ((size_t)nk * 16 < words) {
        qsort(sc->key, nk, sizeof *sc->key, cmp_u32);
        for (uint32_t j = 0; j < nk; j++)
            sc->inkey[sc->key[j] / 64] = 0;
        return nk;
    }
    nk = 0;
    for (size_t w = 0; w < words; w++)
        for (; sc->inkey[w]; sc->inkey[w] &= sc->inkey[w] - 1)
            sc->key[nk++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(sc->inkey[w]));
    return nk;
}

/* The key of block s into sc->key: the CFG blocks of the blocks reached
 * backwards from s before the warp was whole, less those on a cycle
 * through s (its component's) and s's own.  Returns its length. */
static uint32_t key_of(const tmap_sass_block *b, const flow_graph *g, size_t s,
                       flow_scratch *sc)
{
    size_t gen = s + 1; /* marks of earlier blocks are older */
    size_t nb = reach(s, g->po, g->pv, sc->whole, sc->back, gen, sc->list, sc->stack);
    sc->steps += nb;
    sc->drop[b[s].owner] = gen;
    for (size_t i = 0; i < nb; i++)
        if (sc->comp[sc->list[i]] == sc->comp[s] && b[sc->list[i]].owner != SIZE_MAX)
            sc->drop[b[sc->list[i]].owner] = gen;
    uint32_t nk = 0;
    for (size_t i = 0; i < nb; i++) {
        size_t o = b[sc->list[i]].owner;
        if (o != SIZE_MAX && sc->drop[o] != gen && !(sc->inkey[o / 64] >> (o % 64) & 1)) {
            sc->inkey[o / 64] |= (uint64_t)1 << (o % 64);
            sc->key[nk++] = (uint32_t)o;
        }
    }
    return sorted_key(sc, nk);
}

static void scratch_free(flow_scratch *sc)
{
    free(sc->whole);
    free(sc->back);
    free(sc->comp);
    free(sc->drop);
    free(sc->inkey);
    free(sc->list);
    free(sc->stack);
    free(sc->key);
    free(sc->koff);
    free(sc->slot);
}

tmap_status tmap_sass_find_splits(const tmap_sass_block *b, size_t n, size_t kernel_first,
                                  tmap_sass_splits *out, tmap_error *err)
{
    memset(out, 0, sizeof *out);
    size_t ncfg = 1, m = n ? n : 1, nkeys = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i].owner != SIZE_MAX && b[i].owner + 1 > ncfg)
            ncfg = b[i].owner + 1;
    flow_graph g;
    flow_scratch sc = {
        .whole = calloc(m, 1),
        .back = calloc(m, sizeof *sc.back),
        .comp = malloc(m * sizeof *sc.comp),
        .drop = calloc(ncfg, sizeof *sc.drop),
        .inkey = calloc((ncfg + 63) / 64, sizeof *sc.inkey),
        .list = malloc(m * sizeof *sc.list),
        .stack = malloc((m + 1) * sizeof *sc.stack),
        .key = malloc(ncfg * sizeof *sc.key),
        .ncfg = ncfg,
    };
    int bad = graph_build(b, n, &g) || !sc.whole || !sc.back || !sc.comp || !sc.drop ||
              !sc.inkey || !sc.list || !sc.stack || !sc.key || components(&g, n, sc.comp);
    for (size_t i = 0; i < n && !bad; i++)
        sc.whole[i] = i == kernel_first || (i > 0 && b[i - 1].end == SASS_SYNC &&
                                            b[i - 1].func == b[i].func && !b[i].branched_to);
    for (size_t s = 0; s < n && !bad; s++) {
        if (sc.whole[s] || b[s].owner == SIZE_MAX || !b[s].ninstr)
            continue;
        uint32_t nk = key_of(b, &g, s, &sc);
        if (nk && add_split(out, &sc, &nkeys, (uint32_t)b[s].owner, b[s].ninstr, sc.key, nk))
            bad = 1;
        else if (sc.steps > SASS_FLOW_MAX_STEPS)
            bad = 2;
    }
    for (size_t i = 0; i < out->n && !bad; i++)
        out->v[i].key = out->keys + sc.koff[i];
    graph_free(&g);
    scratch_free(&sc);
    if (bad) {
        tmap_sass_splits_free(out);
        if (bad == 2)
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                             "sass: %zu SASS blocks whose branches rejoin too late: finding "
                             "which run once per group of threads takes over %zu steps",
                             n, SASS_FLOW_MAX_STEPS);
        return tmap_fail(err, TMAP_ERR_NOMEM, "sass: the flow of %zu blocks", n);
    }
    return TMAP_OK;
}

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

/* The successors of block i into out (NULL: only counted); calls go into
 * the callee, returns back after every call to their function. */
static size_t succ_of(const tmap_sass_block *b, size_t n, size_t i, size_t *out)
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
        for (size_t j = 0; j + 1 < n; j++)
            if (b[j].end == SASS_CALL && b[j].target != SIZE_MAX &&
                b[b[j].target].func == b[i].func) {
                if (out)
                    out[k] = j + 1;
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
    g->so = calloc(n + 1, sizeof *g->so);
    g->po = calloc(n + 1, sizeof *g->po);
    if (!g->so || !g->po)
        return -1;
    for (size_t i = 0; i < n; i++)
        g->so[i + 1] = g->so[i] + succ_of(b, n, i, NULL);
    size_t m = g->so[n];
    g->sv = malloc((m ? m : 1) * sizeof *g->sv);
    g->pv = malloc((m ? m : 1) * sizeof *g->pv);
    if (!g->sv || !g->pv)
        return -1;
    for (size_t i = 0; i < n; i++)
        succ_of(b, n, i, g->sv + g->so[i]);
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
    size_t *back, *fwd;   /* reach marks, backwards and forwards */
    size_t *drop, *inkey; /* marks on CFG blocks */
    size_t *list, *stack;
    uint32_t *key;
    size_t *koff; /* offset of each split's key in out->keys */
    size_t kcap, vcap, ocap;
} flow_scratch;

/* Adds split (owner, ninstr, key[0..nk)) to out, merged with an equal one. */
static int add_split(tmap_sass_splits *out, flow_scratch *sc, size_t *nkeys, uint32_t owner,
                     uint32_t ninstr, const uint32_t *key, uint32_t nk)
{
    for (size_t i = 0; i < out->n; i++)
        if (out->v[i].block == owner && out->v[i].nkey == nk &&
            !memcmp(out->keys + sc->koff[i], key, nk * sizeof *key)) {
            out->v[i].ninstr += ninstr;
            return 0;
        }
    if (tmap_grow(&out->v, &sc->vcap, out->n + 1, sizeof *out->v) ||
        tmap_grow(&sc->koff, &sc->ocap, out->n + 1, sizeof *sc->koff) ||
        tmap_grow(&out->keys, &sc->kcap, *nkeys + nk, sizeof *out->keys))
        return -1;
    memcpy(out->keys + *nkeys, key, nk * sizeof *key);
    sc->koff[out->n] = *nkeys;
    out->v[out->n++] = (tmap_sass_split){owner, ninstr, nk, NULL};
    *nkeys += nk;
    return 0;
}

/* The key of block s into sc->key: the CFG blocks of the blocks reached
 * backwards from s before the warp was whole, less those on a cycle
 * through s and s's own.  Returns its length. */
static uint32_t key_of(const tmap_sass_block *b, const flow_graph *g, size_t s,
                       flow_scratch *sc)
{
    size_t gen = s + 1; /* marks of earlier blocks are older */
    size_t nb = reach(s, g->po, g->pv, sc->whole, sc->back, gen, sc->list, sc->stack);
    reach(s, g->so, g->sv, NULL, sc->fwd, gen, sc->list + nb, sc->stack);
    sc->drop[b[s].owner] = gen;
    for (size_t i = 0; i < nb; i++)
        if (sc->fwd[sc->list[i]] == gen && b[sc->list[i]].owner != SIZE_MAX)
            sc->drop[b[sc->list[i]].owner] = gen;
    uint32_t nk = 0;
    for (size_t i = 0; i < nb; i++) {
        size_t o = b[sc->list[i]].owner;
        if (o != SIZE_MAX && sc->drop[o] != gen && sc->inkey[o] != gen) {
            sc->inkey[o] = gen;
            sc->key[nk++] = (uint32_t)o;
        }
    }
    qsort(sc->key, nk, sizeof *sc->key, cmp_u32);
    return nk;
}

static void scratch_free(flow_scratch *sc)
{
    free(sc->whole);
    free(sc->back);
    free(sc->fwd);
    free(sc->drop);
    free(sc->inkey);
    free(sc->list);
    free(sc->stack);
    free(sc->key);
    free(sc->koff);
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
        .fwd = calloc(m, sizeof *sc.fwd),
        .drop = calloc(ncfg, sizeof *sc.drop),
        .inkey = calloc(ncfg, sizeof *sc.inkey),
        .list = malloc(2 * m * sizeof *sc.list),
        .stack = malloc((m + 1) * sizeof *sc.stack),
        .key = malloc(ncfg * sizeof *sc.key),
    };
    int bad = graph_build(b, n, &g) || !sc.whole || !sc.back || !sc.fwd || !sc.drop ||
              !sc.inkey || !sc.list || !sc.stack || !sc.key;
    for (size_t i = 0; i < n && !bad; i++)
        sc.whole[i] = i == kernel_first || (i > 0 && b[i - 1].end == SASS_SYNC &&
                                            b[i - 1].func == b[i].func && !b[i].branched_to);
    for (size_t s = 0; s < n && !bad; s++) {
        if (sc.whole[s] || b[s].owner == SIZE_MAX || !b[s].ninstr)
            continue;
        uint32_t nk = key_of(b, &g, s, &sc);
        if (nk && add_split(out, &sc, &nkeys, (uint32_t)b[s].owner, b[s].ninstr, sc.key, nk))
            bad = 1;
    }
    for (size_t i = 0; i < out->n && !bad; i++)
        out->v[i].key = out->keys + sc.koff[i];
    graph_free(&g);
    scratch_free(&sc);
    if (bad) {
        tmap_sass_splits_free(out);
        return tmap_fail(err, TMAP_ERR_NOMEM, "sass: the flow of %zu blocks", n);
    }
    return TMAP_OK;
}

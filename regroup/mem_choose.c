/*
 * mem_choose.c -- choosing a layout by the transaction model: every
 * transformation that applies is built, its sectors counted, and its time
 * predicted as sectors x the cost of a sector (an L2 hit when the
 * launch's footprint fits in L2, a DRAM sector otherwise), plus the gather
 * of A' and the build spread over the launches that reuse the layout
 * (threadmap/regroup.h, docs/memory.md).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/mem.h"

/* Defaults: the H100's L2 and the per-sector costs fitted to
 * benchmarks/results/memirr.txt (SpMV, original against duplicated: the
 * time saved over the sectors saved, at 96^3 in L2 and 192^3 beyond it). */
#define L2_BYTES (50ull << 20)
#define L2_SECTOR_NS 0.0095
#define DRAM_SECTOR_NS 0.0235
/* An L1 wavefront a cycle per SM (Nsight Compute's profiling guide; the
 * sm90 model's wavefronts, docs/model.md), a scattered request's sectors
 * one wavefront each: 1 / (132 SMs x 1.98 GHz), the H100 SXM's
 * specification, not fitted. */
#define L1_SECTOR_NS (1.0 / (132 * 1.98))
/* An H100 SM's L1 (its 256 KiB of L1 and shared memory, none taken by
 * shared memory) and the threads resident on it at full occupancy: the
 * sm_90 specification, not fitted. */
#define L1_BYTES (256ull << 10)
#define SM_THREADS 2048

static const char *const kind_names[TMAP_MEMRE_KINDS] = {
    "original", "duplicate", "reorder", "pad", "swap", "hybrid", "locality", "share", "partial",
    "symmetric"};

const char *tmap_memre_kind_name(tmap_memre_kind k)
{
    return (unsigned)k < TMAP_MEMRE_KINDS ? kind_names[k] : "?";
}

static double pick(double v, double dflt) { return v > 0 ? v : dflt; }

/* Sharing over the locality layout *loc (empty without an order: over A):
 * *lists holds the blocks' lists as positions in loc's A', *start where
 * each begins. */
static tmap_status share_build(const tmap_memref *r, const uint32_t *index,
                               const tmap_memre_costs *c, tmap_memre *loc, tmap_memre *lists,
                               uint32_t **start, tmap_error *err)
{
    memset(loc, 0, sizeof *loc);
    if (!c->share_block)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "no share_block given");
    tmap_status st = c->order ? tmap_memre_relabel(r, index, c->order, c->permute_threads, loc,
                                                   err) : TMAP_OK;
    if (st)
        return st;
    if ((st = tmap_memre_share(r, c->order ? loc->index : index, loc->perm, c->share_block,
                               c->smem_bytes, lists, start, err)))
        tmap_memre_free(loc);
    return st;
}

/* The lists' positions in loc's A' as elements of A. */
static void share_compose(tmap_memre *lists, const tmap_memre *loc)
{
    for (size_t x = 0; loc->from && x < lists->nout; x++)
        lists->from[x] = loc->from[lists->from[x]];
}

tmap_status tmap_memre_build(tmap_memre_kind kind, const tmap_memref *r, const uint32_t *index,
                         const tmap_memre_costs *c, tmap_memre *m, tmap_error *err)
{
    switch (kind) {
    case TMAP_MEMRE_DUPLICATE: return tmap_memre_duplicate(r, index, m, err);
    case TMAP_MEMRE_REORDER: return tmap_memre_reorder(r, index, m, err);
    case TMAP_MEMRE_PAD: return tmap_memre_pad(r, index, m, err);
    case TMAP_MEMRE_SWAP: return tmap_memre_swap(r, index, c->block_size, m, err);
    case TMAP_MEMRE_HYBRID: return tmap_memre_hybrid(r, index, c->block_size, m, err);
    case TMAP_MEMRE_ORIGINAL: return tmap_fail(err, TMAP_ERR_INVALID, "the original is no layout");
    case TMAP_MEMRE_SHARE: {
        tmap_memre loc;
        uint32_t *start = NULL;
        tmap_status st = share_build(r, index, c, &loc, m, &start, err);
        if (st == TMAP_OK)
            share_compose(m, &loc), tmap_memre_free(&loc);
        free(start);
        return st;
    }
    case TMAP_MEMRE_PARTIAL:
        if (!(c->partial_fraction > 0))
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "no partial_fraction given");
        return tmap_memre_partial(r, index, c->partial_fraction, m, err);
    case TMAP_MEMRE_LOCALITY:
        if (!c->order)
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "no locality order given");
        return tmap_memre_relabel(r, index, c->order, c->permute_threads, m, err);
    case TMAP_MEMRE_SYMMETRIC:
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "tmap_memre_build: a symmetric renumbering "
                         "(rows and columns together) changes the kernel's other arrays and "
                         "vectors; the caller builds it");
    default: return tmap_fail(err, TMAP_ERR_INVALID, "unknown layout %d", (int)kind);
    }
}

/* Sectors of one gather of A' (A[from[x]] for its filled slots from
 * `skip` on, one thread each, then those slots written in order); 0 when
 * the data does not move.  skip: slots that hold A in place (partial
 * duplication's head), not gathered. */
static tmap_status gather_sectors(const tmap_memref *r, const tmap_memre *m, size_t skip,
                                  uint64_t *out, tmap_error *err)
{
    *out = 0;
    if (!m->from || skip >= m->nout)
        return TMAP_OK;
    uint32_t *filled = malloc(m->nout * sizeof *filled);
    if (!filled)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t x = skip; x < m->nout; x++)
        if (m->from[x] != TMAP_MEMRE_EMPTY)
            filled[n++] = m->from[x];
    tmap_memref g = *r;
    g.nthreads = n, g.per_thread = 1, g.write = 0;
    tmap_sector_counts s = {0};
    tmap_status st = n ? tmap_sectors_count(&g, filled, NULL, &s, err) : TMAP_OK;
    size_t sb = r->sector_bytes ? r->sector_bytes : 32;
    *out = s.sectors + ((m->nout - skip) * r->elem_bytes + sb - 1) / sb;
    free(filled);
    return st;
}

double tmap_memre_l1_keeps(const tmap_memref *r, const tmap_memre_costs *c,
                           const tmap_sector_counts *s)
{
    size_t warp = r->warp ? r->warp : 32, sb = r->sector_bytes ? r->sector_bytes : 32;
    size_t block = r->block ? r->block : warp < 256 ? 256 / warp * warp : warp;
    size_t blocks = (r->nthreads + block - 1) / block;
    unsigned sm_threads = c->sm_threads ? c->sm_threads : SM_THREADS;
    size_t resident = sm_threads / block ? sm_threads / block : 1;
    double l1 = (double)(c->l1_bytes ? c->l1_bytes : L1_BYTES);
    double set = blocks ? (double)s->block_sectors * (double)sb / (double)blocks * (double)resident
                        : 0;
    return set > l1 ? l1 / set : 1;
}

void tmap_memre_score(const tmap_memref *r, const tmap_memre_costs *c, uint64_t gather_sectors,
                      tmap_memre_choice *v)
{
    uint64_t l2 = c->l2_bytes ? c->l2_bytes : L2_BYTES;
    double dram = pick(c->dram_sector_ns, DRAM_SECTOR_NS);
    /* the L1's wavefronts: the requests' sectors; the L2's traffic: what the
     * blocks' L1s pass on, their distinct sectors, plus the reuse the L1 does
     * not keep when the resident blocks' sectors exceed it (block_sectors not
     * counted: no reuse) */
    double passed = (double)v->counts.sectors;
    if (v->counts.block_sectors) {
        double keeps = tmap_memre_l1_keeps(r, c, &v->counts);
        double reuse = (double)v->counts.sectors - (double)v->counts.block_sectors;
        passed = (double)v->counts.block_sectors + (1 - keeps) * (reuse > 0 ? reuse : 0);
    }
    v->fits_l2 = tmap_sectors_fit_l2(&v->counts, r, l2);
    v->launch_ms = 1e-6 * ((double)v->counts.sectors * pick(c->l1_sector_ns, L1_SECTOR_NS) +
                           passed *
                               (v->fits_l2 ? pick(c->l2_sector_ns, L2_SECTOR_NS) : dram));
    double gather_ms = 1e-6 * (double)gather_sectors * dram;
    v->once_ms = v->build_ms + (c->data_changes ? 0 : gather_ms);
    v->launch_ms += c->data_changes ? gather_ms : 0;
    v->total_ms = v->launch_ms * (c->launches > 1 ? c->launches : 1) + v->once_ms;
}

/* The model's times for a built layout (kind ORIGINAL: m->index NULL). */
static tmap_status score(const tmap_memref *r, const uint32_t *index, const tmap_memre_costs *c,
                         tmap_memre_choice *v, tmap_error *err)
{
    tmap_memref q = *r;
    const tmap_memre *m = &v->layout;
    q.nelems = m->index ? m->nout : r->nelems;
    tmap_status st = tmap_sectors_count(&q, m->index ? m->index : index, m->perm, &v->counts,
                                        err);
    uint64_t gather = 0;
    size_t skip = v->kind == TMAP_MEMRE_PARTIAL ? tmap_memre_partial_head(r) : 0;
    if (st || (st = gather_sectors(r, m, skip, &gather, err)))
        return st;
    tmap_memre_score(r, c, gather, v);
    return TMAP_OK;
}

/* Sharing's times: the staged loads' sectors, the locality layout's
 * gather; then its lists composed to elements of A. */
static tmap_status score_share(const tmap_memref *r, const tmap_memre_costs *c,
                               const tmap_memre *loc, tmap_memre_choice *v, tmap_error *err)
{
    uint64_t gather = 0;
    tmap_status st = tmap_memre_share_sectors(r, &v->layout, v->start, c->share_block,
                                              &v->counts, err);
    if (st || (st = gather_sectors(r, loc, 0, &gather, err)))
        return st;
    share_compose(&v->layout, loc);
    tmap_memre_score(r, c, gather, v);
    return TMAP_OK;
}

/* Builds and scores kind into v; *applies 0 when it does not apply. */
static tmap_status candidate(tmap_memre_kind kind, const tmap_memref *r, const uint32_t *index,
                             const tmap_memre_costs *c, tmap_memre_choice *v, int *applies,
                             tmap_error *err)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
    *applies = 1;
    double t0 = tmap_clock_seconds();
    tmap_memre loc = {0};
    tmap_error e = {0};
    tmap_status st = TMAP_OK;
    if (kind == TMAP_MEMRE_SHARE)
        st = share_build(r, index, c, &loc, &v->layout, &v->start, &e);
    else if (kind != TMAP_MEMRE_ORIGINAL)
        st = tmap_memre_build(kind, r, index, c, &v->layout, &e);
    if (st == TMAP_ERR_UNSUPPORTED || st == TMAP_ERR_INVALID)
        return *applies = 0, TMAP_OK;
    if (st)
        return err ? (*err = e, st) : st;
    v->build_ms = c->build_ms[kind] > 0 ? c->build_ms[kind] : 1e3 * (tmap_clock_seconds() - t0);
    if (kind == TMAP_MEMRE_ORIGINAL)
        v->build_ms = 0;
    st = kind == TMAP_MEMRE_SHARE ? score_share(r, c, &loc, v, err) : score(r, index, c, v, err);
    tmap_memre_free(&loc);
    if (st)
        tmap_memre_choices_free(v, 1);
    return st;
}

void tmap_memre_choices_free(tmap_memre_choice *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        tmap_memre_free(&v[i].layout), free(v[i].start), v[i].start = NULL;
}

static int by_total(const void *a, const void *b)
{
    const tmap_memre_choice *x = a, *y = b;
    if (x->total_ms != y->total_ms)
        return x->total_ms < y->total_ms ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

tmap_status tmap_memre_propose(const tmap_memref *r, const uint32_t *index,
                               const tmap_memre_costs *c, tmap_memre_choice *out, size_t *n,
                               tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, index, c, out, n);
    if (st || (st = tmap_sectors_check(r, index, "tmap_memre_propose", err)))
        return st;
    if (!(c->threshold >= 0 && c->threshold < 1) || !(c->launches >= 0))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_propose: threshold must be in "
                         "[0, 1), launches >= 0");
    *n = 0;
    double bar = 0; /* the original's total less the threshold, once known (k = 0 first) */
    for (int k = 0; k < TMAP_MEMRE_KINDS; k++) {
        int applies;
        if (k && c->build_ms[k] > 0 && c->build_ms[k] >= bar && !(c->keep >> k & 1))
            /* total >= build: cannot pay */
            continue;
        if ((st = candidate((tmap_memre_kind)k, r, index, c, &out[*n], &applies, err))) {
            tmap_memre_choices_free(out, *n);
            return *n = 0, st;
        }
        *n += applies;
        bar = k ? bar : out[0].total_ms * (1 - c->threshold); /* out[0]: the original */
    }
    *n = tmap_memre_rank(out, *n, c);
    return TMAP_OK;
}

size_t tmap_memre_rank(tmap_memre_choice *v, size_t n, const tmap_memre_costs *c)
{
    assert(n >= 1 && v[0].kind == TMAP_MEMRE_ORIGINAL);
    double bar = v[0].total_ms * (1 - c->threshold);
    size_t kept = 1;
    for (size_t i = 1; i < n; i++) {
        if (v[i].total_ms < bar || (c->keep >> v[i].kind & 1))
            v[kept++] = v[i];
        else
            tmap_memre_choices_free(&v[i], 1);
    }
    qsort(v + 1, kept - 1, sizeof *v, by_total);
    return kept;
}

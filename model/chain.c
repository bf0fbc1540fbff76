/*
 * chain.c -- one warp's time through each basic block when it runs alone:
 * instructions issue in order, at most one a cycle, and each waits for the
 * registers it reads (and its guard predicate) to be written by the
 * instructions before it in the block, each taking its latency from the
 * table.  Registers written before the block are ready when it starts.
 * This is the latency chain of the sub-partition model (sm.c): the sum of
 * every instruction's latency (tmap_lat_blocks) is far longer than the
 * path a warp really waits on, because independent instructions overlap.
 */
#include "threadmap/model.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "instrument/ptx.h"

/* When each register of the block becomes ready: open addressing on the
 * register's name; a cleared slot has name NULL. */
typedef struct ready_map {
    const char **name;
    double *at;
    size_t cap; /* a power of two */
} ready_map;

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static double *ready_slot(ready_map *r, const char *reg)
{
    size_t i = name_hash(reg) & (r->cap - 1);
    while (r->name[i] && strcmp(r->name[i], reg))
        i = (i + 1) & (r->cap - 1);
    if (!r->name[i])
        r->name[i] = reg, r->at[i] = 0;
    return &r->at[i];
}

/* Opcodes that write no register: their first operand is read too. */
static int writes_nothing(const char *op)
{
    static const char *const none[] = {"st.", "red.", "bar", "bra", "ret", "exit", "membar",
                                       "fence", "call", "prefetch", "trap", "brkpt", "brx."};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (!strncmp(op, none[i], strlen(none[i])))
            return 1;
    return 0;
}

/* The issue time of s: in order after `prev`, once its sources are ready. */
static double issue_time(ready_map *r, const tmap_ptx_stmt *s, uint32_t first_src, double prev)
{
    double t = prev;
    if (s->guard && *ready_slot(r, s->guard) > t)
        t = *ready_slot(r, s->guard);
    for (uint32_t k = first_src; k < s->ntoks; k++)
        if (s->toks[k].kind == TMAP_TOK_REG) {
            double at = *ready_slot(r, s->toks[k].text);
            if (at > t)
                t = at;
        }
    return t;
}

/* Empties the map, grown so that the block's register tokens fill at most
 * half of it (so a probe always ends at an empty slot). */
static int ready_reset(ready_map *r, const tmap_ptx_func *f, uint32_t at, uint32_t ninstr)
{
    size_t regs = 1;
    for (size_t i = at, seen = 0; i < f->nbody && seen < ninstr; i++)
        if (f->body[i].kind == TMAP_ST_INSTR)
            seen++, regs += f->body[i].ntoks + 1;
    if (2 * regs > r->cap) {
        size_t cap = r->cap ? r->cap : 64;
        while (cap < 2 * regs)
            cap *= 2;
        const char **name = realloc(r->name, cap * sizeof *name);
        if (name)
            r->name = name;
        double *a = realloc(r->at, cap * sizeof *a);
        if (a)
            r->at = a;
        if (!name || !a)
            return -1;
        r->cap = cap;
    }
    memset(r->name, 0, r->cap * sizeof *r->name);
    return 0;
}

/* The latency of the load on PTX line `line` when acc lists it as a
 * data-dependent global load, else -1: a gather waits for the L2
 * (l2_latency); a load of one level of indirection walks the lane's own
 * segment, so one load in 32 / bytes starts a sector at the L2 and the
 * others hit the L1 (the table's latency, l1). */
static double data_load(const tmap_access *acc, size_t nacc, double l2_latency, double l1,
                        uint32_t line)
{
    for (size_t i = 0; l2_latency > 0 && i < nacc; i++)
        if (acc[i].line == line && acc[i].cls >= TMAP_ACCESS_DATA &&
            acc[i].space == TMAP_SPACE_GLOBAL && !acc[i].store) {
            if (acc[i].cls == TMAP_ACCESS_GATHER || l2_latency < l1)
                return l2_latency;
            double share = acc[i].bytes < 32 ? acc[i].bytes / 32.0 : 1;
            return l1 + (l2_latency - l1) * share;
        }
    return -1;
}

/* Issues instruction s at the earliest after `next` once the registers it
 * reads are ready; returns when it issued and raises *end to when it
 * completes. */
static tmap_status issue_one(const tmap_lat_table *t, const tmap_ptx_stmt *s,
                             const tmap_access *acc, size_t nacc, double l2_latency,
                             ready_map *r, double next, double *end, double *at,
                             tmap_error *err)
{
    tmap_lat_lookup how;
    tmap_status st = tmap_lat_lookup_opcode(t, s->text, &how, err);
    if (st)
        return st;
    double mem = data_load(acc, nacc, l2_latency, how.latency, s->line);
    if (mem > 0)
        how.latency = mem;
    uint32_t dst_end = 0;
    if (!writes_nothing(s->text) && s->nopnd > 1)
        dst_end = s->opnd[1];
    double start = issue_time(r, s, dst_end, next);
    for (uint32_t k = 0; k < dst_end; k++)
        if (s->toks[k].kind == TMAP_TOK_REG)
            *ready_slot(r, s->toks[k].text) = start + how.latency;
    if (start + how.latency > *end)
        *end = start + how.latency;
    *at = start;
    return TMAP_OK;
}

/* Whether s is a load whose registers are all ready by `from`. */
static int hoistable(ready_map *r, const tmap_ptx_stmt *s, double from)
{
    if (strncmp(s->text, "ld.", 3) && strncmp(s->text, "ldu.", 4))
        return 0;
    uint32_t dst_end = s->nopnd > 1 ? s->opnd[1] : 0;
    return issue_time(r, s, dst_end, from) <= from;
}

/* Marks the registers s writes as not ready, so that a load reading them
 * later in the block does not go first; saved[*n] keeps what they held. */
typedef struct saved_reg {
    double *slot, at;
} saved_reg;

static void mark_pending(ready_map *r, const tmap_ptx_stmt *s, saved_reg *saved, size_t *n,
                         size_t cap)
{
    uint32_t dst_end = !writes_nothing(s->text) && s->nopnd > 1 ? s->opnd[1] : 0;
    for (uint32_t k = 0; k < dst_end && *n < cap; k++)
        if (s->toks[k].kind == TMAP_TOK_REG) {
            double *slot = ready_slot(r, s->toks[k].text);
            saved[(*n)++] = (saved_reg){slot, *slot};
            *slot = TMAP_LAT_MAX;
        }
}

/* One run of the block's ninstr instructions from body[at] on, as ptxas
 * schedules them and a warp issues them: the loads that depend on nothing
 * computed in the block first, then the others in order; each issues a
 * cycle after the one before at the earliest, once the registers (and
 * guard) it reads are ready.  Returns when the last completes.  (The loads
 * that go first are found before the block's other instructions have
 * written anything: a load whose address the block computes goes first
 * too.)  dataflow: a load goes first only if no instruction before it in
 * the block writes what it reads, and every instruction issues once what
 * it reads is ready, in no order (ptxas's reordering, unbounded). */
static tmap_status chain_pass(const tmap_lat_table *t, const tmap_ptx_func *f, uint32_t at,
                              const tmap_cfg_block *blk, const tmap_access *acc, size_t nacc,
                              double l2_latency, int dataflow, ready_map *r,
                              unsigned char *early, double from, double *out, double *last,
                              tmap_error *err)
{
    double end = from, next = from, when = from;
    size_t cap = 1, npend = 0;
    for (size_t i = at, seen = 0; dataflow && i < f->nbody && seen < blk->ninstr; i++)
        if (f->body[i].kind == TMAP_ST_INSTR)
            seen++, cap += f->body[i].ntoks;
    saved_reg *saved = dataflow ? malloc(cap * sizeof *saved) : NULL;
    if (dataflow && !saved)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the latency chains");
    tmap_status st = TMAP_OK;
    for (int sweep = 0; sweep < 2 && !st; sweep++) {
        uint32_t seen = 0;
        for (size_t i = at; !st && i < f->nbody && seen < blk->ninstr; i++) {
            const tmap_ptx_stmt *s = &f->body[i];
            if (s->kind != TMAP_ST_INSTR)
                continue;
            uint32_t j = seen++;
            if (sweep == 0)
                early[j] = (unsigned char)hoistable(r, s, from);
            if (sweep == 0 && !early[j] && dataflow)
                mark_pending(r, s, saved, &npend, cap);
            if (early[j] != (sweep == 0))
                continue;
            st = issue_one(t, s, acc, nacc, l2_latency, r, dataflow ? from : next, &end, &when,
                           err);
            next = when + 1 > next ? when + 1 : next;
        }
        while (sweep == 0 && npend > 0) /* undone last first: a register written twice */
            npend--, *saved[npend].slot = saved[npend].at;
    }
    free(saved);
    *out = end;
    *last = next;
    return st;
}

/* The chain of block b: its critical path, at least one cycle per
 * instruction.  A block that is its own loop runs twice, the second run
 * reading what the first wrote when the first wrote it: the steady state,
 * where iterations overlap as far as they do not depend on each other. */
static tmap_status block_chain(const tmap_lat_table *t, const tmap_ptx_func *f, uint32_t at,
                               const tmap_cfg *cfg, size_t b, const tmap_access *acc,
                               size_t nacc, double l2_latency, int dataflow, ready_map *r,
                               double *out, tmap_error *err)
{
    const tmap_cfg_block *blk = &cfg->blocks[b];
    if (ready_reset(r, f, at, blk->ninstr))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the latency chains");
    int self = 0;
    for (uint32_t k = 0; k < blk->nsucc; k++)
        self |= blk->succ[k] == b;
    double e1 = 0, e2 = 0, l1 = 0, l2 = 0;
    unsigned char *early = malloc(blk->ninstr + 1);
    tmap_status st = early ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (!st)
        st = chain_pass(t, f, at, blk, acc, nacc, l2_latency, dataflow, r, early, 0, &e1, &l1,
                        err);
    if (!st && self)
        st = chain_pass(t, f, at, blk, acc, nacc, l2_latency, dataflow, r, early, l1, &e2, &l2,
                        err);
    free(early);
    double v = self ? e2 - e1 : e1;
    *out = v > blk->ninstr ? v : blk->ninstr;
    return st;
}

static tmap_status chains(const tmap_lat_table *t, const tmap_ptx_module *m, const char *kernel,
                          const tmap_access *acc, size_t nacc, double data_latency,
                          int dataflow, double **chain, tmap_error *err)
{
    if (!t || !m || !chain)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_lat_chains: an argument is NULL");
    tmap_cfg *cfg = NULL;
    uint32_t *at = NULL;
    tmap_status st = tmap_cfg_build_at(m, kernel, &cfg, &at, err);
    if (st)
        return st;
    ready_map r = {NULL, NULL, 0};
    double *v = calloc(cfg->nblocks + 1, sizeof *v);
    if (!v)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the latency chains");
    for (size_t b = 0; !st && b < cfg->nblocks; b++) {
        const tmap_cfg_block *blk = &cfg->blocks[b];
        const tmap_ptx_func *f = tmap_ptx_find_func(m, cfg->funcs[blk->func].name);
        assert(f != NULL); /* the CFG was built from this module */
        st = block_chain(t, f, at[b], cfg, b, acc, nacc, data_latency, dataflow, &r, &v[b], err);
        if (st)
            tmap_error_prefix(err, "block %zu (PTX line %u)", b, blk->line);
    }
    free(r.name), free(r.at), free(at);
    tmap_cfg_free(cfg);
    if (st) {
        free(v);
        return st;
    }
    *chain = v;
    return TMAP_OK;
}

tmap_status tmap_lat_chains(const tmap_lat_table *t, const tmap_ptx_module *m,
                            const char *kernel, const tmap_access *acc, size_t nacc,
                            double data_latency, double **chain, tmap_error *err)
{
    return chains(t, m, kernel, acc, nacc, data_latency, 0, chain, err);
}

tmap_status tmap_lat_chains_dataflow(const tmap_lat_table *t, const tmap_ptx_module *m,
                                     const char *kernel, const tmap_access *acc, size_t nacc,
                                     double data_latency, double **chain, tmap_error *err)
{
    return chains(t, m, kernel, acc, nacc, data_latency, 1, chain, err);
}

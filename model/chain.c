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

/* The chain of one block: its ninstr instructions from body[at] on. */
static tmap_status block_chain(const tmap_lat_table *t, const tmap_ptx_func *f, uint32_t at,
                               const tmap_cfg_block *blk, ready_map *r, double *out,
                               tmap_error *err)
{
    if (ready_reset(r, f, at, blk->ninstr))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the latency chains");
    double next = 0, end = 0;
    uint32_t seen = 0;
    for (size_t i = at; i < f->nbody && seen < blk->ninstr; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        if (s->kind != TMAP_ST_INSTR)
            continue;
        seen++;
        tmap_lat_lookup how;
        tmap_status st = tmap_lat_lookup_opcode(t, s->text, &how, err);
        if (st)
            return st;
        uint32_t dst_end = 0;
        if (!writes_nothing(s->text) && s->nopnd > 1)
            dst_end = s->opnd[1];
        double start = issue_time(r, s, dst_end, next);
        for (uint32_t k = 0; k < dst_end; k++)
            if (s->toks[k].kind == TMAP_TOK_REG)
                *ready_slot(r, s->toks[k].text) = start + how.latency;
        next = start + 1;
        if (start + how.latency > end)
            end = start + how.latency;
    }
    *out = end;
    return TMAP_OK;
}

tmap_status tmap_lat_chains(const tmap_lat_table *t, const tmap_ptx_module *m,
                            const char *kernel, double **chain, tmap_error *err)
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
        st = block_chain(t, f, at[b], blk, &r, &v[b], err);
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

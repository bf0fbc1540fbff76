/*
 * bbv_plan.c -- decides which blocks the counter pass counts in registers:
 * blocks in loops (cycles of their function's CFG, found as strongly
 * connected components) first, then the others, up to a budget per
 * function (the rule is in bbv.h).
 */
#include "instrument/bbv.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* Tarjan's SCC algorithm, iterative, over blocks [first, first+n). */
typedef struct scc {
    const tmap_cfg *cfg;
    uint32_t first, n;
    uint32_t *index, *low, *comp_size; /* per local block */
    uint32_t *stack, *call, *next;     /* SCC stack; DFS stack and edge cursor */
    uint8_t *on_stack;
    uint32_t counter, top;
} scc;

static int scc_alloc(scc *s)
{
    size_t n = s->n ? s->n : 1;
    s->index = malloc(n * sizeof *s->index);
    s->low = malloc(n * sizeof *s->low);
    s->comp_size = calloc(n, sizeof *s->comp_size);
    s->stack = malloc(n * sizeof *s->stack);
    s->call = malloc(n * sizeof *s->call);
    s->next = calloc(n, sizeof *s->next);
    s->on_stack = calloc(n, 1);
    if (!s->index || !s->low || !s->comp_size || !s->stack || !s->call || !s->next ||
        !s->on_stack)
        return -1;
    for (uint32_t i = 0; i < s->n; i++)
        s->index[i] = NONE;
    return 0;
}

static void scc_free(scc *s)
{
    free(s->index), free(s->low), free(s->comp_size), free(s->stack);
    free(s->call), free(s->next), free(s->on_stack);
}

static void scc_visit(scc *s, uint32_t v)
{
    s->index[v] = s->low[v] = s->counter++;
    s->stack[s->top++] = v;
    s->on_stack[v] = 1;
}

/* Pops v's component when v is its root; comp_size of each member = size. */
static void scc_close(scc *s, uint32_t v)
{
    if (s->low[v] != s->index[v])
        return;
    uint32_t start = s->top;
    do
        start--;
    while (s->stack[start] != v);
    uint32_t size = s->top - start;
    for (uint32_t k = start; k < s->top; k++) {
        s->comp_size[s->stack[k]] = size;
        s->on_stack[s->stack[k]] = 0;
    }
    s->top = start;
}

static void scc_from(scc *s, uint32_t root)
{
    uint32_t depth = 0;
    scc_visit(s, root);
    s->call[depth++] = root;
    while (depth) {
        uint32_t v = s->call[depth - 1];
        const tmap_cfg_block *blk = &s->cfg->blocks[s->first + v];
        if (s->next[v] < blk->nsucc) {
            uint32_t w = blk->succ[s->next[v]++] - s->first;
            if (s->index[w] == NONE) {
                scc_visit(s, w);
                s->call[depth++] = w;
            } else if (s->on_stack[w] && s->index[w] < s->low[v]) {
                s->low[v] = s->index[w];
            }
            continue;
        }
        scc_close(s, v);
        depth--;
        if (depth && s->low[v] < s->low[s->call[depth - 1]])
            s->low[s->call[depth - 1]] = s->low[v];
    }
}

static int self_edge(const tmap_cfg_block *blk, uint32_t b)
{
    for (uint32_t k = 0; k < blk->nsucc; k++)
        if (blk->succ[k] == b)
            return 1;
    return 0;
}

/* in_loop[b] for the blocks of function f. */
static int mark_loops(const tmap_cfg *cfg, const tmap_cfg_func *f, uint8_t *in_loop)
{
    scc s = {0};
    s.cfg = cfg;
    s.first = f->first_block;
    s.n = f->nblocks;
    if (scc_alloc(&s)) {
        scc_free(&s);
        return -1;
    }
    for (uint32_t v = 0; v < s.n; v++)
        if (s.index[v] == NONE)
            scc_from(&s, v);
    for (uint32_t v = 0; v < s.n; v++) {
        uint32_t b = s.first + v;
        in_loop[b] = s.comp_size[v] > 1 || self_edge(&cfg->blocks[b], b);
    }
    scc_free(&s);
    return 0;
}

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

/* Whether f's body has an instruction with opcode `base`. */
static int has_opcode(const tmap_ptx_func *f, const char *base)
{
    for (size_t i = 0; f && i < f->nbody; i++)
        if (f->body[i].kind == TMAP_ST_INSTR && opcode_is(f->body[i].text, base))
            return 1;
    return 0;
}

/* Some .func of the CFG executes exit (then callers must not hold counts). */
static int callee_may_exit(const tmap_ptx_module *m, const tmap_cfg *cfg)
{
    for (size_t i = 1; i < cfg->nfuncs; i++)
        if (has_opcode(tmap_ptx_find_func(m, cfg->funcs[i].name), "exit"))
            return 1;
    return 0;
}

/* Registers for function f's loop blocks, in order, up to the budget.  A
 * block outside loops runs at most once per call, so a register would only
 * move its one memory operation to the exit while costing a register and
 * occupancy (measured on an H200: every block in registers gave float_math
 * 40 registers and 6 blocks/SM, loop blocks only 26 and 8; the median
 * overhead over 14 kernels went from 1.52x to 1.46x); it counts directly. */
static void assign(const tmap_cfg_func *f, uint32_t budget, tmap_bbv_plan *p, uint32_t fi)
{
    uint32_t k = 0, end = f->first_block + f->nblocks;
    for (uint32_t b = f->first_block; b < end && k < budget; b++)
        if (p->in_loop[b])
            p->reg[b] = k++;
    p->nregs[fi] = k;
}

tmap_status tmap_bbv_plan_make(const tmap_ptx_module *m, const tmap_cfg *cfg, uint32_t budget,
                               tmap_bbv_plan *p, tmap_error *err)
{
    size_t nb = cfg->nblocks ? cfg->nblocks : 1, nf = cfg->nfuncs ? cfg->nfuncs : 1;
    p->reg = malloc(nb * sizeof *p->reg);
    p->in_loop = calloc(nb, 1);
    p->nregs = calloc(nf, sizeof *p->nregs);
    if (!p->reg || !p->in_loop || !p->nregs) {
        tmap_bbv_plan_free(p);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory planning counters", m->file);
    }
    for (size_t b = 0; b < cfg->nblocks; b++)
        p->reg[b] = TMAP_BBV_DIRECT;
    int exits_below = callee_may_exit(m, cfg);
    for (size_t i = 0; i < cfg->nfuncs; i++) {
        const tmap_cfg_func *f = &cfg->funcs[i];
        if (mark_loops(cfg, f, p->in_loop)) {
            tmap_bbv_plan_free(p);
            return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory planning counters",
                             m->file);
        }
        int calls = has_opcode(tmap_ptx_find_func(m, f->name), "call");
        assign(f, exits_below && calls ? 0 : budget, p, (uint32_t)i);
    }
    return TMAP_OK;
}

void tmap_bbv_plan_free(tmap_bbv_plan *p)
{
    free(p->reg);
    free(p->in_loop);
    free(p->nregs);
    memset(p, 0, sizeof *p);
}

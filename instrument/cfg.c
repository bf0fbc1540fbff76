/*
 * cfg.c -- basic blocks, edges, immediate (post-)dominators and loop depths of
 * a kernel and of every .func it reaches through call.
 *
 * Block rule: a block starts at the function's first label-or-instruction,
 * at every label that a bra or a .branchtargets table names, and at the
 * first instruction after a bra/brx/ret/exit/trap (guarded or not).  A
 * targeted label followed directly by another targeted label is a block of
 * zero instructions that falls through; the counter pass counts it like any
 * other.  Labels nobody jumps to do not start blocks.
 */
#include "instrument/ptx.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

typedef struct builder {
    const tmap_ptx_module *m;
    tmap_error *err;
    tmap_cfg *cfg;
    size_t capblocks, capfuncs;
    uint32_t *at;          /* per block: where its counter goes */
    uint32_t *term_stmt;   /* per block: statement of its last instruction */
    size_t capat, capterm;
    const tmap_ptx_func **queue; /* functions to include, in order */
    size_t nqueue, capqueue;
} builder;

typedef struct label_ref {
    const char *name;
    uint32_t stmt;
} label_ref;

/* Per-function scratch: scopes of statements and which labels are targets. */
typedef struct fscan {
    const tmap_ptx_func *f;
    uint32_t *scope;   /* per statement: id of the innermost { } around it */
    uint32_t *parent;  /* per scope id: enclosing scope (0 is the body) */
    uint8_t *target;   /* per statement: a label that is jumped to */
    uint32_t *block;   /* per statement: the block a leading label starts */
    label_ref *labels; /* the labels, sorted by (name, statement) */
    size_t nlabels;
} fscan;

static tmap_status nomem(builder *b)
{
    return tmap_fail(b->err, TMAP_ERR_NOMEM, "%s: out of memory building the CFG", b->m->file);
}

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

static tmap_term term_of(const char *op)
{
    if (opcode_is(op, "bra"))
        return TMAP_TERM_BRA;
    if (opcode_is(op, "brx"))
        return TMAP_TERM_BRX;
    if (opcode_is(op, "ret"))
        return TMAP_TERM_RET;
    if (opcode_is(op, "exit"))
        return TMAP_TERM_EXIT;
    if (opcode_is(op, "trap"))
        return TMAP_TERM_TRAP;
    return TMAP_TERM_FALL;
}

/* ------------------------------------------------------- labels, scopes */

static int cmp_label(const void *a, const void *b)
{
    const label_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->stmt > y->stmt) - (x->stmt < y->stmt);
}

static tmap_status scan_scopes(builder *b, fscan *fs)
{
    const tmap_ptx_func *f = fs->f;
    size_t n = f->nbody ? f->nbody : 1;
    fs->scope = calloc(n, sizeof *fs->scope);
    fs->parent = calloc(n + 1, sizeof *fs->parent);
    fs->target = calloc(n, 1);
    fs->block = malloc(n * sizeof *fs->block);
    fs->labels = malloc(n * sizeof *fs->labels);
    if (!fs->scope || !fs->parent || !fs->target || !fs->block || !fs->labels)
        return nomem(b);
    uint32_t cur = 0, next = 1;
    for (size_t i = 0; i < f->nbody; i++) {
        fs->block[i] = NONE;
        if (f->body[i].kind == TMAP_ST_OPEN) {
            fs->parent[next] = cur;
            cur = next++;
        } else if (f->body[i].kind == TMAP_ST_CLOSE) {
            cur = fs->parent[cur];
        } else if (f->body[i].kind == TMAP_ST_LABEL) {
            fs->labels[fs->nlabels++] = (label_ref){f->body[i].text, (uint32_t)i};
        }
        fs->scope[i] = cur;
    }
    qsort(fs->labels, fs->nlabels, sizeof *fs->labels, cmp_label);
    return TMAP_OK;
}

static void fscan_free(fscan *fs)
{
    free(fs->scope);
    free(fs->parent);
    free(fs->target);
    free(fs->block);
    free(fs->labels);
}

/* Steps from scope s up to its ancestor a, or NONE if a is not one. */
static uint32_t scope_distance(const fscan *fs, uint32_t s, uint32_t a)
{
    for (uint32_t d = 0;; d++) {
        if (s == a)
            return d;
        if (s == 0)
            return NONE;
        s = fs->parent[s];
    }
}

/* The labels named `name`: fs->labels[*first .. *first + count), in
 * statement order; returns count. */
static size_t labels_named(const fscan *fs, const char *name, size_t *first)
{
    size_t lo = 0, hi = fs->nlabels; /* the first label not below name */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(fs->labels[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t e = lo;
    while (e < fs->nlabels && !strcmp(fs->labels[e].name, name))
        e++;
    *first = lo;
    return e - lo;
}

/* The label `name` visible from statement `from` (innermost scope wins;
 * among equals, the first). */
static tmap_status resolve_label(builder *b, const fscan *fs, size_t from, const char *name,
                                 uint32_t line, uint32_t *out)
{
    uint32_t best = NONE, bestd = NONE;
    size_t lo, n = labels_named(fs, name, &lo);
    for (size_t k = lo; k < lo + n; k++) {
        uint32_t i = fs->labels[k].stmt, d = scope_distance(fs, fs->scope[from], fs->scope[i]);
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    if (best == NONE)
        return tmap_fail(b->err, TMAP_ERR_PARSE, "%s:%u: label '%s' is not defined in %s",
                         b->m->file, line, name, fs->f->name);
    *out = best;
    return TMAP_OK;
}

/* The statement of the .branchtargets table named by operand 1 of brx. */
static tmap_status brx_table(builder *b, const fscan *fs, size_t i, const tmap_ptx_stmt **tbl)
{
    const tmap_ptx_stmt *s = &fs->f->body[i];
    uint32_t first, n, lab;
    if (s->nopnd < 2)
        return tmap_fail(b->err, TMAP_ERR_PARSE, "%s:%u: brx.idx needs an index and a table",
                         b->m->file, s->line);
    tmap_ptx_operand(s, 1, &first, &n);
    if (n != 1 || s->toks[first].kind != TMAP_TOK_IDENT)
        return tmap_fail(b->err, TMAP_ERR_PARSE, "%s:%u: brx.idx table must be a label",
                         b->m->file, s->line);
    tmap_status st = resolve_label(b, fs, i, s->toks[first].text, s->line, &lab);
    if (st != TMAP_OK)
        return st;
    for (size_t j = lab + 1; j < fs->f->nbody; j++) {
        const tmap_ptx_stmt *d = &fs->f->body[j];
        if (d->kind == TMAP_ST_LINE)
            continue;
        if (d->kind == TMAP_ST_DIRECTIVE && !strcmp(d->toks[0].text, ".branchtargets")) {
            *tbl = d;
            return TMAP_OK;
        }
        break;
    }
    return tmap_fail(b->err, TMAP_ERR_PARSE, "%s:%u: label '%s' is not a .branchtargets table",
                     b->m->file, s->line, s->toks[first].text);
}

/* Calls fn(label statement) for each target of the branch at statement i. */
typedef tmap_status (*target_fn)(builder *b, fscan *fs, uint32_t label, void *ctx);

static tmap_status for_each_target(builder *b, fscan *fs, size_t i, target_fn fn, void *ctx)
{
    const tmap_ptx_stmt *s = &fs->f->body[i];
    tmap_term t = term_of(s->text);
    uint32_t lab;
    tmap_status st;
    if (t == TMAP_TERM_BRA) {
        const tmap_ptx_tok *last = s->ntoks ? &s->toks[s->ntoks - 1] : NULL;
        if (!last || last->kind != TMAP_TOK_IDENT)
            return tmap_fail(b->err, TMAP_ERR_PARSE, "%s:%u: bra needs a label",
                             b->m->file, s->line);
        if ((st = resolve_label(b, fs, i, last->text, s->line, &lab)) != TMAP_OK)
            return st;
        return fn(b, fs, lab, ctx);
    }
    if (t != TMAP_TERM_BRX)
        return TMAP_OK;
    const tmap_ptx_stmt *tbl = NULL;
    if ((st = brx_table(b, fs, i, &tbl)) != TMAP_OK)
        return st;
    for (uint32_t k = 1; k < tbl->ntoks; k++) {
        if (tbl->toks[k].kind != TMAP_TOK_IDENT)
            continue;
        if ((st = resolve_label(b, fs, i, tbl->toks[k].text, tbl->line, &lab)) != TMAP_OK ||
            (st = fn(b, fs, lab, ctx)) != TMAP_OK)
            return st;
    }
    return TMAP_OK;
}

static tmap_status mark_target(builder *b, fscan *fs, uint32_t label, void *ctx)
{
    fs->target[label] = 1;
    return TMAP_OK;
}

/* --------------------------------------------------------------- blocks */

static tmap_status add_block(builder *b, fscan *fs, uint32_t fidx, size_t stmt)
{
    tmap_cfg *cfg = b->cfg;
    if (tmap_grow(&cfg->blocks, &b->capblocks, cfg->nblocks + 1, sizeof *cfg->blocks) ||
        tmap_grow(&b->at, &b->capat, cfg->nblocks + 1, sizeof *b->at) ||
        tmap_grow(&b->term_stmt, &b->capterm, cfg->nblocks + 1, sizeof *b->term_stmt))
        return nomem(b);
    tmap_cfg_block *blk = &cfg->blocks[cfg->nblocks];
    memset(blk, 0, sizeof *blk);
    blk->func = fidx;
    blk->ipdom = -1;
    const tmap_ptx_stmt *s = stmt < fs->f->nbody ? &fs->f->body[stmt] : NULL;
    blk->line = s ? s->line : fs->f->line;
    int is_label = s && s->kind == TMAP_ST_LABEL;
    b->at[cfg->nblocks] = (uint32_t)(is_label ? stmt + 1 : stmt);
    b->term_stmt[cfg->nblocks] = NONE;
    if (is_label)
        fs->block[stmt] = (uint32_t)cfg->nblocks;
    cfg->nblocks++;
    return TMAP_OK;
}

static tmap_status add_opcode(builder *b, tmap_cfg_block *blk, const char *op, uint32_t line)
{
    size_t cap = blk->ninstr; /* opcodes grows one at a time; ninstr is small */
    char **v = realloc(blk->opcodes, (cap + 1) * sizeof *v);
    if (!v)
        return nomem(b);
    blk->opcodes = v;
    if (!(v[blk->ninstr] = strdup(op)))
        return nomem(b);
    if (blk->ninstr == 0)
        blk->line = line;
    blk->ninstr++;
    return TMAP_OK;
}

/* Splits function fs->f into blocks appended to the CFG. */
static tmap_status split_blocks(builder *b, fscan *fs, uint32_t fidx)
{
    const tmap_ptx_func *f = fs->f;
    size_t first = b->cfg->nblocks;
    int need_new = 1;
    tmap_status st;
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        if (s->kind == TMAP_ST_LABEL && fs->target[i]) {
            if ((st = add_block(b, fs, fidx, i)) != TMAP_OK)
                return st;
            need_new = 0;
        } else if (s->kind == TMAP_ST_INSTR) {
            if (need_new && (st = add_block(b, fs, fidx, i)) != TMAP_OK)
                return st;
            need_new = 0;
            size_t bi = b->cfg->nblocks - 1;
            tmap_cfg_block *blk = &b->cfg->blocks[bi];
            if ((st = add_opcode(b, blk, s->text, s->line)) != TMAP_OK)
                return st;
            tmap_term t = term_of(s->text);
            if (t != TMAP_TERM_FALL) {
                blk->term = t == TMAP_TERM_BRA && s->guard ? TMAP_TERM_CBRA : t;
                blk->predicated_term = s->guard != NULL;
                b->term_stmt[bi] = (uint32_t)i;
                need_new = 1;
            }
        }
    }
    if (b->cfg->nblocks == first) /* no instruction at all: one empty block */
        return add_block(b, fs, fidx, 0);
    return TMAP_OK;
}

static tmap_status add_succ(builder *b, tmap_cfg_block *blk, uint32_t to)
{
    for (uint32_t k = 0; k < blk->nsucc; k++)
        if (blk->succ[k] == to)
            return TMAP_OK;
    uint32_t *v = realloc(blk->succ, (blk->nsucc + 1) * sizeof *v);
    if (!v)
        return nomem(b);
    blk->succ = v;
    v[blk->nsucc++] = to;
    return TMAP_OK;
}

typedef struct succ_ctx {
    tmap_cfg_block *blk;
} succ_ctx;

static tmap_status succ_target(builder *b, fscan *fs, uint32_t label, void *ctx)
{
    return add_succ(b, ((succ_ctx *)ctx)->blk, fs->block[label]);
}

/* Edges of blocks [first, end) of one function: targets, then fall-through. */
static tmap_status link_blocks(builder *b, fscan *fs, size_t first, size_t end)
{
    for (size_t i = first; i < end; i++) {
        tmap_cfg_block *blk = &b->cfg->blocks[i];
        tmap_status st;
        if (b->term_stmt[i] != NONE) {
            succ_ctx ctx = {blk};
            if ((st = for_each_target(b, fs, b->term_stmt[i], succ_target, &ctx)) != TMAP_OK)
                return st;
        }
        int falls = blk->term == TMAP_TERM_FALL || blk->predicated_term;
        if (blk->term == TMAP_TERM_BRA)
            falls = 0;
        if (falls && i + 1 < end && (st = add_succ(b, blk, (uint32_t)(i + 1))) != TMAP_OK)
            return st;
    }
    return TMAP_OK;
}

/* ------------------------------------------------------ dominators */

/* Whether block i (of a function ending at `end`) has an edge to the exit. */
static int exits(const tmap_cfg *cfg, size_t i, size_t end)
{
    const tmap_cfg_block *blk = &cfg->blocks[i];
    if (blk->term == TMAP_TERM_RET || blk->term == TMAP_TERM_EXIT ||
        blk->term == TMAP_TERM_TRAP)
        return 1;
    /* falling off the end of the body returns */
    int falls = blk->term == TMAP_TERM_FALL || (blk->predicated_term && blk->term != TMAP_TERM_BRA);
    return falls && i + 1 == end;
}

/* A graph of nodes [0, n] rooted at node n, its edges both ways as CSR. */
typedef struct dgraph {
    size_t n;
    uint32_t *ofs_out, *out; /* out[ofs_out[v] .. ofs_out[v + 1]): v's successors */
    uint32_t *ofs_in, *in;   /* the same for its predecessors */
} dgraph;

static void dgraph_free(dgraph *g)
{
    free(g->ofs_out), free(g->out), free(g->ofs_in), free(g->in);
}

/* Edges e[2k] -> e[2k + 1] into CSR form: ofs counts, then prefix sums,
 * then each edge placed at its source's cursor (ofs shifted back after). */
static void csr_fill(size_t n, const uint32_t *e, size_t ne, int dir, uint32_t *ofs,
                     uint32_t *adj)
{
    for (size_t k = 0; k < ne; k++)
        ofs[e[2 * k + dir] + 1]++;
    for (size_t v = 0; v <= n; v++)
        ofs[v + 1] += ofs[v];
    for (size_t k = 0; k < ne; k++)
        adj[ofs[e[2 * k + dir]]++] = e[2 * k + 1 - dir];
    memmove(ofs + 1, ofs, (n + 1) * sizeof *ofs);
    ofs[0] = 0;
}

static int dgraph_make(dgraph *g, size_t n, const uint32_t *e, size_t ne)
{
    g->n = n;
    g->ofs_out = calloc(n + 2, sizeof *g->ofs_out), g->ofs_in = calloc(n + 2, sizeof *g->ofs_in);
    g->out = malloc((ne + 1) * sizeof *g->out), g->in = malloc((ne + 1) * sizeof *g->in);
    if (!g->ofs_out || !g->ofs_in || !g->out || !g->in)
        return -1;
    csr_fill(n, e, ne, 0, g->ofs_out, g->out);
    csr_fill(n, e, ne, 1, g->ofs_in, g->in);
    return 0;
}

/* Postorder numbers po[] (NONE: not reached from the root) and the nodes by
 * postorder; returns how many were reached, -1 without memory. */
static int dgraph_postorder(const dgraph *g, uint32_t *po, uint32_t *order)
{
    size_t n = g->n, top = 0, count = 0;
    uint32_t *stack = malloc((n + 1) * sizeof *stack), *next = malloc((n + 1) * sizeof *next);
    if (!stack || !next)
        return free(stack), free(next), -1;
    for (size_t v = 0; v <= n; v++)
        po[v] = NONE, next[v] = g->ofs_out[v];
    stack[top++] = (uint32_t)n, po[n] = 0; /* po 0 while on the stack: seen */
    while (top) {
        uint32_t v = stack[top - 1];
        if (next[v] < g->ofs_out[v + 1]) {
            uint32_t w = g->out[next[v]++];
            if (po[w] == NONE)
                po[w] = 0, stack[top++] = w;
            continue;
        }
        po[v] = (uint32_t)count, order[count++] = v, top--;
    }
    free(stack), free(next);
    return (int)count;
}

static uint32_t intersect(const uint32_t *po, const uint32_t *idom, uint32_t a, uint32_t b)
{
    while (a != b) {
        while (po[a] < po[b])
            a = idom[a];
        while (po[b] < po[a])
            b = idom[b];
    }
    return a;
}

/* Cooper, Harvey and Kennedy's iteration: idom[v] of every node reached from
 * the root n (idom[n] = n), NONE for the others; -1 without memory. */
static int dgraph_dominators(const dgraph *g, uint32_t *idom)
{
    size_t n = g->n;
    uint32_t *po = malloc((n + 1) * sizeof *po), *order = malloc((n + 1) * sizeof *order);
    int count = po && order ? dgraph_postorder(g, po, order) : -1;
    for (size_t v = 0; count >= 0 && v <= n; v++)
        idom[v] = NONE;
    if (count >= 0)
        idom[n] = (uint32_t)n;
    for (int changed = count > 0; changed;) {
        changed = 0;
        for (int k = count - 2; k >= 0; k--) { /* reverse postorder, the root excluded */
            uint32_t v = order[k], nd = NONE;
            for (uint32_t j = g->ofs_in[v]; j < g->ofs_in[v + 1]; j++) {
                uint32_t w = g->in[j];
                if (idom[w] != NONE)
                    nd = nd == NONE ? w : intersect(po, idom, w, nd);
            }
            if (nd != idom[v])
                idom[v] = nd, changed = 1;
        }
    }
    free(po), free(order);
    return count < 0 ? -1 : 0;
}

/* The dominators of blocks [first, end) of one function, forward from its
 * first block or (reverse) back from its exit: dom[i] for block first + i,
 * -1 for the root and blocks it does not reach; -1 without memory. */
static int func_dominators(const tmap_cfg *cfg, size_t first, size_t end, int reverse,
                           int32_t *dom)
{
    size_t n = end - first, ne = 0;
    for (size_t i = first; i < end; i++)
        ne += cfg->blocks[i].nsucc + 1;
    uint32_t *e = malloc((2 * ne + 2) * sizeof *e), *idom = malloc((n + 1) * sizeof *idom);
    dgraph g = {0};
    size_t k = 0;
    for (size_t i = 0; e && i < n; i++) {
        const tmap_cfg_block *blk = &cfg->blocks[first + i];
        for (uint32_t j = 0; j < blk->nsucc; j++) {
            uint32_t s = blk->succ[j] - (uint32_t)first;
            e[2 * k + reverse] = (uint32_t)i, e[2 * k + 1 - reverse] = s, k++;
        }
        if (reverse ? exits(cfg, first + i, end) : i == 0)
            e[2 * k] = (uint32_t)n, e[2 * k + 1] = (uint32_t)i, k++;
    }
    int rc = e && idom && !dgraph_make(&g, n, e, k) ? dgraph_dominators(&g, idom) : -1;
    for (size_t i = 0; !rc && i < n; i++)
        dom[i] = idom[i] == NONE || idom[i] == n ? -1 : (int32_t)(first + idom[i]);
    dgraph_free(&g), free(e), free(idom);
    return rc;
}

static tmap_status post_dominators(builder *b, size_t first, size_t end)
{
    int32_t *dom = malloc((end - first + 1) * sizeof *dom);
    if (!dom || func_dominators(b->cfg, first, end, 1, dom))
        return free(dom), nomem(b);
    for (size_t i = first; i < end; i++)
        b->cfg->blocks[i].ipdom = dom[i - first];
    free(dom);
    return TMAP_OK;
}

tmap_status tmap_cfg_dominators(const tmap_cfg *cfg, int32_t *idom, tmap_error *err)
{
    if (!cfg || !idom)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_cfg_dominators: NULL argument");
    for (size_t f = 0; f < cfg->nfuncs; f++) {
        const tmap_cfg_func *fn = &cfg->funcs[f];
        if (func_dominators(cfg, fn->first_block, fn->first_block + fn->nblocks, 0,
                            idom + fn->first_block))
            return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the dominators of %s",
                             fn->name);
    }
    return TMAP_OK;
}

/* ------------------------------------------------------ calls and names */

static int queued(const builder *b, const tmap_ptx_func *f)
{
    for (size_t i = 0; i < b->nqueue; i++)
        if (b->queue[i] == f)
            return 1;
    return 0;
}

static tmap_status enqueue(builder *b, const tmap_ptx_func *f)
{
    if (!f->has_body || queued(b, f))
        return TMAP_OK;
    if (tmap_grow(&b->queue, &b->capqueue, b->nqueue + 1, sizeof *b->queue))
        return nomem(b);
    b->queue[b->nqueue++] = f;
    return TMAP_OK;
}

/* Index in s->toks of the callee operand of a call, or NONE. */
static uint32_t callee_tok(const tmap_ptx_stmt *s)
{
    if (!s->nopnd)
        return NONE;
    uint32_t first, n;
    tmap_ptx_operand(s, 0, &first, &n);
    if (s->toks[first].kind == TMAP_TOK_PUNCT && s->toks[first].text[0] == '(') {
        if (s->nopnd < 2)
            return NONE;
        tmap_ptx_operand(s, 1, &first, &n);
    }
    return first;
}

static int func_taken(const tmap_ptx_module *m, const char *name)
{
    for (size_t i = 0; i < m->nitems; i++) {
        const tmap_ptx_item *it = &m->items[i];
        if (it->kind == TMAP_IT_DECL)
            for (uint32_t k = 0; k < it->ntoks; k++)
                if (it->toks[k].kind == TMAP_TOK_IDENT && !strcmp(it->toks[k].text, name))
                    return 1;
    }
    for (size_t i = 0; i < m->nfuncs; i++) {
        const tmap_ptx_func *f = &m->funcs[i];
        for (size_t j = 0; j < f->nbody; j++) {
            const tmap_ptx_stmt *s = &f->body[j];
            if (s->kind != TMAP_ST_INSTR)
                continue;
            uint32_t callee = opcode_is(s->text, "call") ? callee_tok(s) : NONE;
            for (uint32_t k = 0; k < s->ntoks; k++)
                if (k != callee && s->toks[k].kind == TMAP_TOK_IDENT &&
                    !strcmp(s->toks[k].text, name))
                    return 1;
        }
    }
    return 0;
}

static tmap_status enqueue_callees(builder *b, const tmap_ptx_func *f)
{
    for (size_t j = 0; j < f->nbody; j++) {
        const tmap_ptx_stmt *s = &f->body[j];
        if (s->kind != TMAP_ST_INSTR || !opcode_is(s->text, "call"))
            continue;
        uint32_t k = callee_tok(s);
        if (k == NONE)
            return tmap_fail(b->err, TMAP_ERR_PARSE, "%s:%u: call without a callee",
                             b->m->file, s->line);
        const tmap_ptx_tok *t = &s->toks[k];
        tmap_status st = TMAP_OK;
        if (t->kind == TMAP_TOK_IDENT) {
            const tmap_ptx_func *g = tmap_ptx_find_func(b->m, t->text);
            if (!g)
                return tmap_fail(b->err, TMAP_ERR_PARSE, "%s:%u: call to undeclared '%s'",
                                 b->m->file, s->line, t->text);
            st = enqueue(b, g);
        } else { /* indirect: any function whose address is taken */
            for (size_t i = 0; i < b->m->nfuncs && st == TMAP_OK; i++)
                if (!b->m->funcs[i].is_entry && b->m->funcs[i].has_body &&
                    func_taken(b->m, b->m->funcs[i].name))
                    st = enqueue(b, &b->m->funcs[i]);
        }
        if (st != TMAP_OK)
            return st;
    }
    return TMAP_OK;
}

/* Names blocks [first, end): "<f>/<label>", "<f>/<label>#<k>" if the label
 * is defined more than once, else "<f>/+<k>" (k: index within f). */
static tmap_status name_blocks(builder *b, const fscan *fs, size_t first, size_t end)
{
    for (size_t i = first; i < end; i++) {
        const char *label = NULL;
        size_t dup = 0, lo;
        size_t lead = b->at[i] ? b->at[i] - 1 : 0;
        if (lead < fs->f->nbody && fs->block[lead] == i) {
            label = fs->f->body[lead].text;
            dup = labels_named(fs, label, &lo) > 1;
        }
        tmap_buf nb = {0};
        if (label && !dup)
            tmap_buf_printf(&nb, "%s/%s", fs->f->name, label);
        else if (label)
            tmap_buf_printf(&nb, "%s/%s#%zu", fs->f->name, label, i - first);
        else
            tmap_buf_printf(&nb, "%s/+%zu", fs->f->name, i - first);
        if (nb.oom || !nb.data) {
            tmap_buf_free(&nb);
            return nomem(b);
        }
        b->cfg->blocks[i].name = nb.data;
    }
    return TMAP_OK;
}

/* ------------------------------------------------------------ interface */

static tmap_status build_func(builder *b, const tmap_ptx_func *f)
{
    tmap_cfg *cfg = b->cfg;
    if (tmap_grow(&cfg->funcs, &b->capfuncs, cfg->nfuncs + 1, sizeof *cfg->funcs))
        return nomem(b);
    uint32_t fidx = (uint32_t)cfg->nfuncs;
    tmap_cfg_func *cf = &cfg->funcs[cfg->nfuncs++];
    memset(cf, 0, sizeof *cf);
    cf->is_entry = f->is_entry;
    cf->first_block = (uint32_t)cfg->nblocks;
    if (!(cf->name = strdup(f->name)))
        return nomem(b);
    fscan fs = {.f = f};
    tmap_status st = scan_scopes(b, &fs);
    for (size_t i = 0; i < f->nbody && st == TMAP_OK; i++)
        if (f->body[i].kind == TMAP_ST_INSTR)
            st = for_each_target(b, &fs, i, mark_target, NULL);
    size_t first = cfg->nblocks;
    if (st == TMAP_OK)
        st = split_blocks(b, &fs, fidx);
    size_t end = cfg->nblocks;
    cfg->funcs[fidx].nblocks = (uint32_t)(end - first);
    if (st == TMAP_OK)
        st = link_blocks(b, &fs, first, end);
    if (st == TMAP_OK)
        st = name_blocks(b, &fs, first, end);
    if (st == TMAP_OK)
        st = post_dominators(b, first, end);
    if (st == TMAP_OK)
        st = enqueue_callees(b, f);
    fscan_free(&fs);
    return st;
}

tmap_status tmap_cfg_names(const tmap_cfg *cfg, const char ***names, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, cfg, names);
    if (st)
        return st;
    if (!(*names = malloc((cfg->nblocks + 1) * sizeof **names)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu block names", cfg->nblocks);
    for (size_t b = 0; b < cfg->nblocks; b++)
        (*names)[b] = cfg->blocks[b].name;
    return TMAP_OK;
}

void tmap_cfg_free(tmap_cfg *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->nblocks; i++) {
        tmap_cfg_block *blk = &cfg->blocks[i];
        free(blk->name);
        for (uint32_t k = 0; k < blk->ninstr; k++)
            free(blk->opcodes[k]);
        free(blk->opcodes);
        free(blk->succ);
        free(blk->src_file);
    }
    for (size_t i = 0; i < cfg->nfuncs; i++)
        free(cfg->funcs[i].name);
    free(cfg->blocks);
    free(cfg->funcs);
    free(cfg);
}

tmap_status tmap_cfg_build_at(const tmap_ptx_module *m, const char *kernel,
                              tmap_cfg **out, uint32_t **at, tmap_error *err)
{
    if (!m || !kernel || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_cfg_build: NULL argument");
    *out = NULL;
    const tmap_ptx_func *k = tmap_ptx_find_func(m, kernel);
    if (!k || !k->is_entry || !k->has_body)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no kernel (.entry with a body) named '%s'",
                         m->file, kernel);
    builder b = {0};
    b.m = m;
    b.err = err;
    b.cfg = calloc(1, sizeof *b.cfg);
    tmap_status st = b.cfg ? enqueue(&b, k) : nomem(&b);
    for (size_t i = 0; st == TMAP_OK && i < b.nqueue; i++) /* the queue grows */
        st = build_func(&b, b.queue[i]);
    free(b.queue);
    free(b.term_stmt);
    if (st == TMAP_OK)
        st = tmap_ptx_loc_blocks(m, b.cfg, b.at, err);
    if (st != TMAP_OK) {
        tmap_cfg_free(b.cfg);
        free(b.at);
        return st;
    }
    *out = b.cfg;
    if (at)
        *at = b.at;
    else
        free(b.at);
    return TMAP_OK;
}

tmap_status tmap_cfg_build(const tmap_ptx_module *m, const char *kernel, tmap_cfg **out,
                           tmap_error *err)
{
    return tmap_cfg_build_at(m, kernel, out, NULL, err);
}

/* ---------------------------------------------------------------- loops */

/* The body of the loop headed by h, each block once with in[u] = tag:
 * the blocks that reach one of h's latches (back[2x], where back[2x + 1]
 * is h, from x = e on) without passing h, into body[]; returns how many. */
typedef struct {
    const uint32_t *first, *pred, *back; /* predecessors as CSR; latch, header pairs */
    size_t nback;
    uint32_t *in, *work;
} loop_walk;

static size_t loop_body(loop_walk *w, size_t e, uint32_t tag, uint32_t *body)
{
    uint32_t h = w->back[2 * e + 1];
    size_t nw = 0, nbody = 0;
    w->in[h] = tag, body[nbody++] = h;
    for (size_t x = e; x < w->nback; x++)
        if (w->back[2 * x + 1] == h)
            w->work[nw++] = w->back[2 * x];
    while (nw) {
        uint32_t u = w->work[--nw];
        if (w->in[u] == tag)
            continue;
        w->in[u] = tag, body[nbody++] = u;
        for (uint32_t k = w->first[u]; k < w->first[u + 1]; k++)
            if (w->in[w->pred[k]] != tag)
                w->work[nw++] = w->pred[k];
    }
    return nbody;
}

/* A loop is a back edge u -> h of a depth-first search from each
 * function's first block (h on the search's stack), with the blocks that
 * reach u without passing h; back edges to one header make one loop.
 * (nvcc's PTX is reducible: these are its natural loops, nested or
 * disjoint.)  depth[b]: how many hold b; outer[b]: 1 + the header of the
 * outermost, the one whose header no other loop holds. */
tmap_status tmap_cfg_loops(const tmap_cfg *cfg, uint32_t *depth, uint32_t *outer,
                           tmap_error *err)
{
    size_t n = cfg->nblocks, ne = 0, nback = 0;
    for (size_t b = 0; b < n; b++)
        ne += cfg->blocks[b].nsucc;
    uint32_t *first = calloc(n + 2, sizeof *first), *pred = malloc((ne + 1) * sizeof *pred);
    uint32_t *stack = malloc((n + 1) * sizeof *stack), *edge = calloc(n + 1, sizeof *edge);
    uint32_t *in = calloc(n + 1, sizeof *in), *work = malloc((2 * ne + 1) * sizeof *work);
    uint32_t *back = malloc((2 * ne + 1) * sizeof *back); /* latch, header pairs */
    unsigned char *state = calloc(n + 1, 1);
    if (!first || !pred || !stack || !edge || !in || !work || !back || !state) {
        free(first), free(pred), free(stack), free(edge), free(in), free(work), free(back),
            free(state);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the loops of %zu blocks", n);
    }
    memset(depth, 0, n * sizeof *depth);
    if (outer)
        memset(outer, 0, n * sizeof *outer);
    for (size_t b = 0; b < n; b++) /* predecessors as CSR: pred[first[v] .. first[v + 1]) */
        for (uint32_t k = 0; k < cfg->blocks[b].nsucc; k++)
            first[cfg->blocks[b].succ[k] + 1]++;
    for (size_t b = 0; b < n; b++)
        first[b + 1] += first[b];
    for (size_t b = 0; b < n; b++)
        for (uint32_t k = 0; k < cfg->blocks[b].nsucc; k++) {
            uint32_t v = cfg->blocks[b].succ[k];
            pred[first[v] + edge[v]++] = (uint32_t)b;
        }
    memset(edge, 0, (n + 1) * sizeof *edge);
    for (size_t f = 0; f < cfg->nfuncs; f++) { /* state 1: on the stack, 2: done */
        size_t top = 0;
        uint32_t root = cfg->funcs[f].first_block;
        if (!cfg->funcs[f].nblocks || state[root])
            continue;
        stack[top++] = root, state[root] = 1;
        while (top) {
            uint32_t u = stack[top - 1];
            if (edge[u] == cfg->blocks[u].nsucc) {
                state[u] = 2, top--;
                continue;
            }
            uint32_t v = cfg->blocks[u].succ[edge[u]++];
            if (state[v] == 1)
                back[2 * nback] = u, back[2 * nback + 1] = v, nback++;
            else if (!state[v])
                stack[top++] = v, state[v] = 1;
        }
    }
    loop_walk w = {first, pred, back, nback, in, work};
    for (size_t e = 0; e < nback; e++) { /* each header once, with all its latches */
        uint32_t h = back[2 * e + 1];
        if (state[h] == 3)
            continue;
        state[h] = 3;
        for (size_t i = 0, nb = loop_body(&w, e, h + 1, stack); i < nb; i++)
            depth[stack[i]]++;
    }
    memset(in, 0, (n + 1) * sizeof *in); /* the outermost loops, their headers at depth 1 */
    for (size_t e = 0; outer && e < nback; e++) {
        uint32_t h = back[2 * e + 1];
        if (state[h] != 3 || depth[h] != 1)
            continue;
        state[h] = 4;
        for (size_t i = 0, nb = loop_body(&w, e, h + 1, stack); i < nb; i++)
            outer[stack[i]] = h + 1;
    }
    free(first), free(pred), free(stack), free(edge), free(in), free(work), free(back),
        free(state);
    return TMAP_OK;
}

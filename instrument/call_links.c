/*
 * call_links.c -- the values that cross direct calls among the functions a
 * kernel reaches, so that the id taint follows an id into a .func and back
 * (-G keeps as calls what -O3 inlines: __umul24(blockIdx.x, blockDim.x)).
 *
 * A call `call (r), f, (a0, a1)` is matched by position with f's header
 * `.func (.param r') f(.param p0, .param p1)`: the register the caller
 * stores into [a_k] (the last st.param before the call) flows into every
 * register f loads from [p_k]; every register f stores into [r'] flows into
 * the register the caller loads from [r] (the first ld.param after the
 * call).  Calls through a pointer, to a function without a body or with
 * more than MAX_PARAMS parameters are not linked: their arguments stay
 * uses of their own (conservative).
 */
#include "instrument/call_links.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 64

typedef struct names {
    const char *v[MAX_PARAMS];
    size_t n;
    int full;
} names;

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

static int punct(const tmap_ptx_tok *t, char c)
{
    return t->kind == TMAP_TOK_PUNCT && t->text[0] == c;
}

static void add_name(names *n, const char *s)
{
    if (n->n < MAX_PARAMS)
        n->v[n->n++] = s;
    else
        n->full = 1;
}

/* The identifiers of toks[0..n) inside ( ) before and after the token `at`
 * (the function's name): returns and parameters. */
static void split_names(const tmap_ptx_tok *t, uint32_t n, uint32_t at, names *before,
                        names *after)
{
    int depth = 0;
    for (uint32_t k = 0; k < n; k++) {
        depth += punct(&t[k], '(') - punct(&t[k], ')');
        if (depth > 0 && t[k].kind == TMAP_TOK_IDENT)
            add_name(k < at ? before : after, t[k].text);
    }
}

/* The index of the callee token of a call (the first identifier outside
 * parentheses), or UINT32_MAX. */
static uint32_t callee_of(const tmap_ptx_stmt *s)
{
    int depth = 0;
    for (uint32_t k = 0; k < s->ntoks; k++) {
        depth += punct(&s->toks[k], '(') - punct(&s->toks[k], ')');
        if (!depth && s->toks[k].kind == TMAP_TOK_IDENT)
            return k;
    }
    return UINT32_MAX;
}

/* The .param named in the address of s (ld.param / st.param), or NULL. */
static const char *param_of(const tmap_ptx_stmt *s)
{
    if (s->kind != TMAP_ST_INSTR || !strstr(s->text, ".param"))
        return NULL;
    for (uint32_t k = 0; k + 1 < s->ntoks; k++)
        if (punct(&s->toks[k], '[') && s->toks[k + 1].kind == TMAP_TOK_IDENT)
            return s->toks[k + 1].text;
    return NULL;
}

typedef struct finder {
    tmap_call_links *out;
    const tmap_ptx_func *const *funcs;
    size_t n;
    int oom;
} finder;

static void add_link(finder *fd, size_t from, const char *from_reg, size_t to, const char *to_reg)
{
    tmap_call_links *l = fd->out;
    if (tmap_grow(&l->link, &l->cap, l->n + 1, sizeof *l->link)) {
        fd->oom = 1;
        return;
    }
    l->link[l->n++] = (tmap_call_link){from, to, from_reg, to_reg};
}

static void add_pass(finder *fd, const tmap_ptx_stmt *s)
{
    tmap_call_links *l = fd->out;
    if (tmap_grow(&l->passes, &l->cappasses, l->npasses + 1, sizeof *l->passes))
        fd->oom = 1;
    else
        l->passes[l->npasses++] = s;
}

/* Calls fn(fd, reg) for each register of s that ld.param writes (dest) or
 * st.param stores (!dest), i.e. outside the brackets. */
static void each_reg(const tmap_ptx_stmt *s, int dest, void (*fn)(void *, const char *), void *ctx)
{
    int depth = 0, after = 0;
    for (uint32_t k = 0; k < s->ntoks; k++) {
        depth += punct(&s->toks[k], '[') - punct(&s->toks[k], ']');
        after |= punct(&s->toks[k], ']');
        if (!depth && s->toks[k].kind == TMAP_TOK_REG && after != dest)
            fn(ctx, s->toks[k].text);
    }
}

typedef struct pending {
    finder *fd;
    size_t from, to;
    const char *reg; /* the other end, fixed */
    int reg_is_from;
} pending;

static void link_one(void *ctx, const char *r)
{
    pending *p = ctx;
    if (p->reg_is_from)
        add_link(p->fd, p->from, p->reg, p->to, r);
    else
        add_link(p->fd, p->from, r, p->to, p->reg);
}

/* Links register `reg` of funcs[a] with every register of funcs[b] that
 * ld.param loads from `param` (into_callee) or st.param stores into it. */
static void link_callee(finder *fd, size_t a, const char *reg, size_t b, const char *param,
                        int into_callee)
{
    const tmap_ptx_func *f = fd->funcs[b];
    pending p = {fd, into_callee ? a : b, into_callee ? b : a, reg, into_callee};
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        const char *pn = param_of(s);
        if (!pn || strcmp(pn, param))
            continue;
        int load = opcode_is(s->text, "ld");
        if (load == into_callee)
            each_reg(s, load, link_one, &p);
        if (!into_callee && !load)
            add_pass(fd, s);
    }
}

typedef struct caller_end {
    const char *reg;
} caller_end;

static void take_reg(void *ctx, const char *r)
{
    ((caller_end *)ctx)->reg = r;
}

/* The register the caller stores into (before the call at i) or loads from
 * (after it) the .param `name`, nearest to the call; NULL if none. */
static const char *caller_reg(finder *fd, const tmap_ptx_func *f, size_t i, const char *name,
                              int before)
{
    caller_end e = {NULL};
    for (size_t j = i; before ? j-- > 0 : ++j < f->nbody;) {
        const tmap_ptx_stmt *s = &f->body[j];
        if (s->kind == TMAP_ST_INSTR && opcode_is(s->text, "call"))
            break;
        const char *pn = param_of(s);
        if (!pn || strcmp(pn, name) || opcode_is(s->text, "ld") == before)
            continue;
        each_reg(s, !before, take_reg, &e);
        if (before && e.reg)
            add_pass(fd, s);
        if (e.reg)
            break;
    }
    return e.reg;
}

static size_t func_index(const finder *fd, const char *name)
{
    for (size_t b = 0; b < fd->n; b++)
        if (!strcmp(fd->funcs[b]->name, name) && fd->funcs[b]->has_body)
            return b;
    return SIZE_MAX;
}

/* Links the call at body[i] of funcs[a]. */
static void link_call(finder *fd, size_t a, size_t i)
{
    const tmap_ptx_stmt *s = &fd->funcs[a]->body[i];
    uint32_t at = callee_of(s);
    size_t b = at == UINT32_MAX ? SIZE_MAX : func_index(fd, s->toks[at].text);
    if (b == SIZE_MAX)
        return;
    const tmap_ptx_func *g = fd->funcs[b];
    names rets = {0}, args = {0}, grets = {0}, gparams = {0};
    split_names(s->toks, s->ntoks, at, &rets, &args);
    uint32_t name_at = 0;
    while (name_at < g->nhead && strcmp(g->head[name_at].text, g->name))
        name_at++;
    split_names(g->head, g->nhead, name_at, &grets, &gparams);
    if (rets.full || args.full || grets.full || gparams.full || rets.n != grets.n ||
        args.n != gparams.n)
        return;
    for (size_t k = 0; k < args.n; k++) {
        const char *r = caller_reg(fd, fd->funcs[a], i, args.v[k], 1);
        if (r)
            link_callee(fd, a, r, b, gparams.v[k], 1);
    }
    for (size_t k = 0; k < rets.n; k++) {
        const char *r = caller_reg(fd, fd->funcs[a], i, rets.v[k], 0);
        if (r)
            link_callee(fd, a, r, b, grets.v[k], 0);
    }
}

tmap_status tmap_call_links_find(const tmap_ptx_module *m, const tmap_ptx_func *const *funcs,
                                 size_t n, tmap_call_links *out, tmap_error *err)
{
    memset(out, 0, sizeof *out);
    finder fd = {out, funcs, n, 0};
    for (size_t a = 0; a < n && !fd.oom; a++)
        for (size_t i = 0; i < funcs[a]->nbody && !fd.oom; i++)
            if (funcs[a]->body[i].kind == TMAP_ST_INSTR &&
                opcode_is(funcs[a]->body[i].text, "call"))
                link_call(&fd, a, i);
    if (!fd.oom)
        return TMAP_OK;
    tmap_call_links_free(out);
    return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory linking calls", m->file);
}

int tmap_call_links_passes(const tmap_call_links *l, const tmap_ptx_stmt *s)
{
    for (size_t i = 0; i < l->npasses; i++)
        if (l->passes[i] == s)
            return 1;
    return 0;
}

void tmap_call_links_free(tmap_call_links *l)
{
    free(l->link);
    free(l->passes);
    memset(l, 0, sizeof *l);
}

/*
 * expr.c -- per-thread expressions (grammar and bounds in expr.h): the
 * recursive-descent parser that builds the tree, and the host back end
 * over a manifest's arrays.  The recursion of parser and evaluator is
 * bounded by TMAP_EXPR_MAX_DEPTH: a chain of operands is one node, walked
 * by a loop.
 */
#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/expr.h"
#include "common/base.h"
#include "runtime/manifest.h"

typedef struct parser {
    const char *p;   /* the next character */
    tmap_expr *x;
    int depth;       /* open parentheses and unary minuses around p */
    tmap_error *err;
    tmap_status st;  /* first failure; parsing stops at it */
} parser;

tmap_status tmap_expr_fail(const char *src, size_t pos, tmap_error *err, const char *what)
{
    return tmap_fail(err, TMAP_ERR_INVALID, "expression '%.60s%s' at column %zu: %s", src,
                     strlen(src) > 60 ? "..." : "", pos + 1, what);
}

static size_t pos(const parser *ps) { return (size_t)(ps->p - ps->x->src); }

static size_t fail(parser *ps, const char *what)
{
    if (ps->st == TMAP_OK)
        ps->st = tmap_expr_fail(ps->x->src, pos(ps), ps->err, what);
    return TMAP_EXPR_NONE;
}

static void skip_ws(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

/* A new node of `kind` starting at p, or TMAP_EXPR_NONE (out of memory). */
static size_t add(parser *ps, tmap_expr_kind kind, size_t start)
{
    tmap_expr *x = ps->x;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        tmap_expr_node *node = realloc(x->node, cap * sizeof *node);
        if (!node) {
            if (ps->st == TMAP_OK)
                ps->st = tmap_fail(ps->err, TMAP_ERR_NOMEM, "out of memory for an expression");
            return TMAP_EXPR_NONE;
        }
        x->node = node;
        x->cap = cap;
    }
    x->node[x->n] = (tmap_expr_node){.kind = kind, .kid = TMAP_EXPR_NONE,
                                     .next = TMAP_EXPR_NONE, .pos = start, .id = -1};
    return x->n++;
}

static void close_node(parser *ps, size_t i)
{
    if (i != TMAP_EXPR_NONE)
        ps->x->node[i].end = pos(ps);
}

/* [t], [t+k] or [t-k] of REF node r; p at '['. */
static void index_part(parser *ps, size_t r)
{
    ps->x->node[r].indexed = 1;
    ps->p++;
    skip_ws(ps);
    if (*ps->p != 't')
        return (void)fail(ps, "an index must be t, t+k or t-k");
    ps->p++;
    skip_ws(ps);
    if (*ps->p == '+' || *ps->p == '-') {
        int neg = *ps->p++ == '-';
        skip_ws(ps);
        char *end;
        long k = isdigit((unsigned char)*ps->p) ? strtol(ps->p, &end, 10) : -1;
        if (k < 0 || k > TMAP_EXPR_MAX_OFFSET)
            return (void)fail(ps, "expected an integer offset (up to 2^40)");
        ps->p = end;
        ps->x->node[r].offset = neg ? -k : k;
    }
    skip_ws(ps);
    if (*ps->p != ']')
        return (void)fail(ps, "expected ']'");
    ps->p++;
}

/* NAME[:TYPE][index] */
static size_t reference(parser *ps)
{
    size_t r = add(ps, TMAP_EXPR_REF, pos(ps));
    if (r == TMAP_EXPR_NONE)
        return r;
    const char *start = ps->p;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
        ps->p++;
    tmap_expr_node *n = &ps->x->node[r];
    n->name_len = (size_t)(ps->p - start);
    if (n->name_len > TMAP_EXPR_MAX_NAME) {
        ps->p = start;
        return fail(ps, "a name longer than 127 characters");
    }
    if (*ps->p == ':') {
        n->typed = 1;
        n->type = pos(ps) + 1;
        while (isalnum((unsigned char)*++ps->p))
            n->type_len++;
    }
    skip_ws(ps);
    n->index = pos(ps);
    if (*ps->p == '[')
        index_part(ps, r);
    close_node(ps, r);
    return r;
}

static size_t number(parser *ps)
{
    char *end;
    double v = tmap_strtod(ps->p, &end);
    if (end == ps->p || !isfinite(v))
        return fail(ps, "expected a finite number");
    size_t i = add(ps, TMAP_EXPR_NUM, pos(ps));
    ps->p = end;
    if (i != TMAP_EXPR_NONE)
        ps->x->node[i].num = v;
    close_node(ps, i);
    return i;
}

static size_t chain(parser *ps, int product);
static size_t primary(parser *ps);

/* ( expr ) or - primary: one level deeper. */
static size_t nested(parser *ps)
{
    if (ps->depth >= TMAP_EXPR_MAX_DEPTH)
        return fail(ps, "nested more than 256 deep (parentheses and unary minus)");
    int paren = *ps->p == '(';
    size_t i = add(ps, paren ? TMAP_EXPR_PAREN : TMAP_EXPR_NEG, pos(ps));
    if (i == TMAP_EXPR_NONE)
        return i;
    ps->p++;
    ps->depth++;
    size_t kid = paren ? chain(ps, 0) : primary(ps);
    ps->depth--;
    ps->x->node[i].kid = kid;
    if (paren && ps->st == TMAP_OK) {
        skip_ws(ps);
        if (*ps->p != ')')
            return fail(ps, "expected ')'");
        ps->p++;
    }
    close_node(ps, i);
    return i;
}

static size_t primary(parser *ps)
{
    skip_ws(ps);
    if (*ps->p == '(' || *ps->p == '-')
        return nested(ps);
    if (isdigit((unsigned char)*ps->p) || *ps->p == '.')
        return number(ps);
    if (isalpha((unsigned char)*ps->p) || *ps->p == '_')
        return reference(ps);
    return fail(ps, *ps->p ? "unexpected character" : "unexpected end");
}

/* Operands joined by + - (a sum of products) or * / (a product of
 * primaries); one operand is itself, several a SUM or PRODUCT node. */
static size_t chain(parser *ps, int product)
{
    const char *ops = product ? "*/" : "+-";
    size_t first = product ? primary(ps) : chain(ps, 1), c = TMAP_EXPR_NONE, last = first;
    for (;;) {
        skip_ws(ps);
        if (ps->st != TMAP_OK || !*ps->p || !strchr(ops, *ps->p))
            break;
        char op = *ps->p++;
        if (c == TMAP_EXPR_NONE) {
            c = add(ps, product ? TMAP_EXPR_PRODUCT : TMAP_EXPR_SUM, ps->x->node[first].pos);
            if (c == TMAP_EXPR_NONE)
                break;
            ps->x->node[c].kid = first;
        }
        size_t next = product ? primary(ps) : chain(ps, 1);
        if (next == TMAP_EXPR_NONE)
            break;
        ps->x->node[next].join = op;
        ps->x->node[last].next = next;
        last = next;
    }
    if (c == TMAP_EXPR_NONE)
        return first;
    ps->x->node[c].end = ps->x->node[last].end;
    return c;
}

tmap_status tmap_expr_parse(const char *src, tmap_expr *x, tmap_error *err)
{
    *x = (tmap_expr){.src = src, .root = TMAP_EXPR_NONE};
    parser ps = {src, x, 0, err, TMAP_OK};
    x->root = chain(&ps, 0);
    skip_ws(&ps);
    if (ps.st == TMAP_OK && *ps.p)
        fail(&ps, "unexpected text after the expression");
    if (ps.st != TMAP_OK)
        tmap_expr_free(x);
    assert(ps.st != TMAP_OK || x->root < x->n);
    return ps.st;
}

void tmap_expr_free(tmap_expr *x)
{
    free(x->node);
    *x = (tmap_expr){.src = x->src, .root = TMAP_EXPR_NONE};
}

tmap_status tmap_expr_bind(const tmap_manifest *m, tmap_expr *x, tmap_error *err)
{
    for (size_t i = 0; i < x->n; i++) {
        tmap_expr_node *r = &x->node[i];
        if (r->kind != TMAP_EXPR_REF)
            continue;
        char name[TMAP_EXPR_MAX_NAME + 1];
        memcpy(name, x->src + r->pos, r->name_len);
        name[r->name_len] = '\0';
        r->id = tmap_manifest_find(m, name);
        if (r->id < 0)
            return tmap_expr_fail(x->src, r->pos, err, "names no array");
        if (r->typed)
            return tmap_expr_fail(x->src, r->type - 1, err,
                                  "unexpected ':' (an array's type is the manifest's)");
    }
    return TMAP_OK;
}

static tmap_status value(const tmap_manifest *m, const tmap_expr *x, size_t i, size_t t,
                         double *v, tmap_error *err);

/* A SUM or PRODUCT: its operands left to right. */
static tmap_status chain_value(const tmap_manifest *m, const tmap_expr *x, const tmap_expr_node *c,
                               size_t t, double *v, tmap_error *err)
{
    tmap_status st = value(m, x, c->kid, t, v, err);
    for (size_t i = x->node[c->kid].next; i != TMAP_EXPR_NONE && st == TMAP_OK;
         i = x->node[i].next) {
        double r;
        st = value(m, x, i, t, &r, err);
        if (st != TMAP_OK)
            break;
        switch (x->node[i].join) {
        case '+': *v += r; break;
        case '-': *v -= r; break;
        case '*': *v *= r; break;
        default:
            assert(x->node[i].join == '/');
            if (r == 0)
                return tmap_expr_fail(x->src, x->node[i].end, err, "division by zero");
            *v /= r;
        }
    }
    return st;
}

static tmap_status value(const tmap_manifest *m, const tmap_expr *x, size_t i, size_t t,
                         double *v, tmap_error *err)
{
    const tmap_expr_node *n = &x->node[i];
    switch (n->kind) {
    case TMAP_EXPR_NUM:
        *v = n->num;
        return TMAP_OK;
    case TMAP_EXPR_REF: {
        assert(n->id >= 0 && (size_t)n->id < m->narrays);
        const tmap_marray *a = &m->arrays[n->id];
        long long e = (long long)t + n->offset;
        if (e < 0 || (unsigned long long)e >= a->count)
            return tmap_expr_fail(x->src, n->end, err, "index out of the array's range");
        *v = tmap_elem_get(a->kind, a->host, (size_t)e);
        return TMAP_OK;
    }
    case TMAP_EXPR_NEG: {
        tmap_status st = value(m, x, n->kid, t, v, err);
        if (st == TMAP_OK)
            *v = -*v;
        return st;
    }
    case TMAP_EXPR_PAREN:
        return value(m, x, n->kid, t, v, err);
    default:
        return chain_value(m, x, n, t, v, err);
    }
}

tmap_status tmap_expr_value(const tmap_manifest *m, const tmap_expr *x, size_t t, double *out,
                            tmap_error *err)
{
    return value(m, x, x->root, t, out, err);
}

tmap_status tmap_expr_check(const tmap_manifest *m, const char *src, tmap_error *err)
{
    tmap_expr x;
    tmap_status st = tmap_expr_parse(src, &x, err);
    if (st == TMAP_OK)
        st = tmap_expr_bind(m, &x, err);
    tmap_expr_free(&x);
    return st;
}

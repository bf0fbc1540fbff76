/*
 * expr.c -- per-thread feature expressions of a manifest: numbers, arrays
 * indexed by the thread (NAME, NAME[t], NAME[t+k], NAME[t-k]), + - * /,
 * unary minus and parentheses.  A recursive-descent evaluator; with
 * `check` set it only validates (no array is read).  Nesting (parentheses
 * and unary minus) is bounded by EXPR_MAX_DEPTH, so the recursion is too.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/manifest.h"

enum { EXPR_MAX_DEPTH = 256 };

typedef struct ev {
    const tmap_manifest *m;
    const char *s;   /* the whole expression */
    const char *p;   /* the next character */
    size_t t;        /* thread */
    int check;
    tmap_error *err;
    tmap_status st;  /* first failure; evaluation stops caring after it */
    int depth;       /* open parentheses and unary minuses around e->p */
} ev;

static double expr(ev *e);

static void skip_ws(ev *e)
{
    while (isspace((unsigned char)*e->p))
        e->p++;
}

static double fail(ev *e, const char *what)
{
    if (e->st == TMAP_OK)
        e->st = tmap_fail(e->err, TMAP_ERR_INVALID, "expression '%.60s%s' at column %td: %s", e->s,
                          strlen(e->s) > 60 ? "..." : "", e->p - e->s + 1, what);
    return 0;
}

/* [t], [t+k] or [t-k]; returns the offset k. */
static long index_offset(ev *e)
{
    e->p++; /* '[' */
    skip_ws(e);
    if (*e->p != 't')
        return (long)fail(e, "an index must be t, t+k or t-k");
    e->p++;
    skip_ws(e);
    long k = 0;
    if (*e->p == '+' || *e->p == '-') {
        int neg = *e->p == '-';
        e->p++;
        skip_ws(e);
        char *end;
        k = strtol(e->p, &end, 10);
        if (end == e->p)
            return (long)fail(e, "expected an integer offset");
        e->p = end;
        k = neg ? -k : k;
    }
    skip_ws(e);
    if (*e->p != ']')
        return (long)fail(e, "expected ']'");
    e->p++;
    return k;
}

static double array_ref(ev *e)
{
    const char *start = e->p;
    while (isalnum((unsigned char)*e->p) || *e->p == '_')
        e->p++;
    char name[128];
    size_t n = (size_t)(e->p - start);
    if (n >= sizeof name)
        return fail(e, "name too long");
    memcpy(name, start, n);
    name[n] = '\0';
    long a = tmap_manifest_find(e->m, name);
    if (a < 0) {
        e->p = start;
        return fail(e, "names no array");
    }
    skip_ws(e);
    long k = *e->p == '[' ? index_offset(e) : 0;
    if (e->check || e->st != TMAP_OK)
        return 0;
    const tmap_marray *arr = &e->m->arrays[a];
    long long i = (long long)e->t + k;
    if (i < 0 || (size_t)i >= arr->count)
        return fail(e, "index out of the array's range");
    return tmap_elem_get(arr->kind, arr->host, (size_t)i);
}

static double primary(ev *e);

/* ( expr ) or - primary: one level deeper. */
static double nested(ev *e)
{
    if (e->depth >= EXPR_MAX_DEPTH)
        return fail(e, "nested more than 256 deep (parentheses and unary minus)");
    e->depth++;
    double v;
    if (*e->p++ == '-') {
        v = -primary(e);
    } else {
        v = expr(e);
        skip_ws(e);
        if (*e->p != ')')
            v = fail(e, "expected ')'");
        else
            e->p++;
    }
    e->depth--;
    return v;
}

static double primary(ev *e)
{
    skip_ws(e);
    if (*e->p == '(' || *e->p == '-')
        return nested(e);
    if (isdigit((unsigned char)*e->p) || *e->p == '.') {
        char *end;
        double v = tmap_strtod(e->p, &end);
        e->p = end;
        return v;
    }
    if (isalpha((unsigned char)*e->p) || *e->p == '_')
        return array_ref(e);
    return fail(e, *e->p ? "unexpected character" : "unexpected end");
}

static double term(ev *e)
{
    double v = primary(e);
    for (;;) {
        skip_ws(e);
        char op = *e->p;
        if (op != '*' && op != '/')
            return v;
        e->p++;
        double r = primary(e);
        v = op == '*' ? v * r : (r != 0 ? v / r : (e->check ? 0 : fail(e, "division by zero")));
    }
}

static double expr(ev *e)
{
    double v = term(e);
    for (;;) {
        skip_ws(e);
        char op = *e->p;
        if (op != '+' && op != '-')
            return v;
        e->p++;
        double r = term(e);
        v = op == '+' ? v + r : v - r;
    }
}

static tmap_status run(ev *e, double *out)
{
    double v = expr(e);
    skip_ws(e);
    if (e->st == TMAP_OK && *e->p)
        fail(e, "unexpected text after the expression");
    if (out)
        *out = v;
    return e->st;
}

tmap_status tmap_expr_check(const tmap_manifest *m, const char *s, tmap_error *err)
{
    ev e = {m, s, s, 0, 1, err, TMAP_OK, 0};
    return run(&e, NULL);
}

tmap_status tmap_expr_eval(const tmap_manifest *m, const char *s, size_t t, double *out,
                           tmap_error *err)
{
    ev e = {m, s, s, t, 0, err, TMAP_OK, 0};
    return run(&e, out);
}

/*
 * key.c (attach) -- per-thread expressions over a launch's own arguments,
 * turned into a CUDA kernel: run mode's key (`--key 'arg0[t+1]-arg0[t]'`)
 * and the features a predictor reads.  The syntax is the manifest's
 * feature expressions (runtime/expr.c): numbers, per-thread array
 * references indexed [t], [t+k] or [t-k], + - * /, unary minus and
 * parentheses, nesting bounded; an array is pointer argument K, `argK`,
 * of element type `argK:TYPE` (i8 u8 i32 u32 i64 u64 f32 f64; i32 when
 * not given), or a feature's name (--feature NAME=argK:TYPE[t+C]), alone
 * or indexed like an array.  The
 * generated kernel reads an element only inside the allocation the
 * pointer lies in (bounds given at each launch); outside it reads 0.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/attach.h"
#include "common/base.h"

enum { KEY_MAX_DEPTH = 64 };

static const struct { const char *name, *ctype; size_t size; } types[] = {
    {"i8", "signed char", 1}, {"u8", "unsigned char", 1}, {"i32", "int", 4},
    {"u32", "unsigned", 4},   {"i64", "long long", 8},    {"u64", "unsigned long long", 8},
    {"f32", "float", 4},      {"f64", "double", 8},
};

const char *tmap_attach_key_type(const char *name, size_t *size)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(name, types[i].name)) {
            if (size)
                *size = types[i].size;
            return types[i].ctype;
        }
    return NULL;
}

typedef struct gen {
    const char *s, *p;              /* the expression, the next character */
    const tmap_attach_feature *f;   /* features the expression may name */
    size_t nf;
    tmap_attach_key *k;
    tmap_buf *out;
    int depth;
    tmap_error *err;
    tmap_status st;
} gen;

static void fail(gen *g, const char *what)
{
    if (g->st == TMAP_OK)
        g->st = tmap_fail(g->err, TMAP_ERR_INVALID, "expression '%.60s%s' at column %td: %s",
                          g->s, strlen(g->s) > 60 ? "..." : "", g->p - g->s + 1, what);
}

static void skip_ws(gen *g)
{
    while (isspace((unsigned char)*g->p))
        g->p++;
}

/* The slot of (arg, type): the kernel's parameter triple for that array. */
static size_t slot(gen *g, unsigned arg, const char *type)
{
    tmap_attach_key *k = g->k;
    for (size_t i = 0; i < k->nslots; i++)
        if (k->slot[i].arg == arg && !strcmp(k->slot[i].type, type))
            return i;
    if (k->nslots == TMAP_ATTACH_KEY_MAX_SLOTS) {
        fail(g, "more than 16 distinct arrays");
        return 0;
    }
    tmap_attach_key_slot *s = &k->slot[k->nslots];
    s->arg = arg;
    snprintf(s->type, sizeof s->type, "%s", type);
    tmap_attach_key_type(type, &s->elem_size);
    return k->nslots++;
}

/* Element t + offset of slot i, as a double. */
static void emit_ref(gen *g, unsigned arg, const char *type, long offset)
{
    size_t i = slot(g, arg, type);
    tmap_buf_printf(g->out, "ld<%s>(p%zu, (long long)t + %ldLL, lo%zu, hi%zu)",
                    tmap_attach_key_type(type, NULL), i, offset, i, i);
}

/* [t], [t+k] or [t-k] -> *offset. */
static void index_part(gen *g, long *offset)
{
    *offset = 0;
    skip_ws(g);
    if (*g->p != '[')
        return fail(g, "an array needs an index: [t], [t+k] or [t-k]");
    g->p++;
    skip_ws(g);
    if (*g->p != 't')
        return fail(g, "an index must be t, t+k or t-k");
    g->p++;
    skip_ws(g);
    if (*g->p == '+' || *g->p == '-') {
        int neg = *g->p++ == '-';
        skip_ws(g);
        char *end;
        long v = strtol(g->p, &end, 10);
        if (end == g->p || v < 0 || v > (1L << 40))
            return fail(g, "expected an integer offset (up to 2^40)");
        g->p = end;
        *offset = neg ? -v : v;
    }
    skip_ws(g);
    if (*g->p != ']')
        return fail(g, "expected ']'");
    g->p++;
}

/* argK[:TYPE]<index>, or a feature's name. */
static void reference(gen *g)
{
    const char *start = g->p;
    while (isalnum((unsigned char)*g->p) || *g->p == '_')
        g->p++;
    size_t n = (size_t)(g->p - start);
    for (size_t i = 0; i < g->nf; i++)
        if (strlen(g->f[i].name) == n && !strncmp(g->f[i].name, start, n)) {
            long offset = 0; /* NAME, or NAME[t+k]: k more than the feature's own */
            skip_ws(g);
            if (*g->p == '[')
                index_part(g, &offset);
            if (g->st == TMAP_OK)
                emit_ref(g, g->f[i].arg, g->f[i].type, g->f[i].offset + offset);
            return;
        }
    char *end;
    unsigned long arg = n > 3 && !strncmp(start, "arg", 3) ? strtoul(start + 3, &end, 10) : 0;
    if (n <= 3 || strncmp(start, "arg", 3) || end != g->p || !isdigit((unsigned char)start[3]) ||
        arg > 4096) {
        g->p = start;
        return fail(g, "names neither a pointer argument argK nor a --feature");
    }
    char type[4] = "i32";
    if (*g->p == ':') {
        const char *t = ++g->p;
        while (isalnum((unsigned char)*g->p))
            g->p++;
        size_t tn = (size_t)(g->p - t);
        if (tn < sizeof type)
            snprintf(type, sizeof type, "%.*s", (int)tn, t);
        if (tn >= sizeof type || !tmap_attach_key_type(type, NULL)) {
            g->p = t;
            return fail(g, "a type must be one of i8 u8 i32 u32 i64 u64 f32 f64");
        }
    }
    long offset = 0;
    index_part(g, &offset);
    if (g->st == TMAP_OK)
        emit_ref(g, (unsigned)arg, type, offset);
}

static void expr(gen *g);

static void primary(gen *g)
{
    skip_ws(g);
    if (g->depth >= KEY_MAX_DEPTH)
        return fail(g, "nested more than 64 deep (parentheses and unary minus)");
    if (*g->p == '(' || *g->p == '-') {
        int paren = *g->p++ == '(';
        g->depth++;
        tmap_buf_puts(g->out, paren ? "(" : "-(");
        if (paren)
            expr(g);
        else
            primary(g);
        skip_ws(g);
        if (paren && *g->p != ')')
            fail(g, "expected ')'");
        else if (paren)
            g->p++;
        tmap_buf_puts(g->out, ")");
        g->depth--;
    } else if (isdigit((unsigned char)*g->p) || *g->p == '.') {
        char *end;
        double v = tmap_strtod(g->p, &end);
        if (end == g->p || !isfinite(v))
            return fail(g, "expected a finite number");
        g->p = end;
        tmap_buf_printf(g->out, "%.17g", v);
    } else if (isalpha((unsigned char)*g->p) || *g->p == '_') {
        reference(g);
    } else {
        fail(g, *g->p ? "unexpected character" : "unexpected end");
    }
}

/* Operands joined by the operators in ops (" +-" or " * /"): level 1 a
 * term of primaries, level 0 a sum of terms. */
static void chain(gen *g, int level)
{
    const char *ops = level ? "*/" : "+-";
    for (;;) {
        if (level)
            primary(g);
        else
            chain(g, 1);
        skip_ws(g);
        if (g->st != TMAP_OK || !*g->p || !strchr(ops, *g->p))
            return;
        tmap_buf_printf(g->out, " %c ", *g->p++);
    }
}

static void expr(gen *g) { chain(g, 0); }

static const char prologue[] =
    "template <typename T>\n"
    "__device__ double ld(const void *p, long long i, long long lo, long long hi)\n"
    "{\n"
    "    return i >= lo && i < hi ? (double)((const T *)p)[i] : 0.0;\n"
    "}\n\n"
    "extern \"C\" __global__ void tmap_key(double *out, unsigned long long n";

tmap_status tmap_attach_key_make(const char *const *exprs, size_t nexprs,
                                 const tmap_attach_feature *f, size_t nf, tmap_attach_key *k,
                                 tmap_error *err)
{
    memset(k, 0, sizeof *k);
    if (!exprs || !nexprs || nexprs > TMAP_ATTACH_MAX_FEATURES)
        return tmap_fail(err, TMAP_ERR_INVALID, "a key needs 1 to %d expressions",
                         TMAP_ATTACH_MAX_FEATURES);
    tmap_buf body = {0}, src = {0};
    tmap_status st = TMAP_OK;
    for (size_t j = 0; j < nexprs && st == TMAP_OK; j++) {
        gen g = {exprs[j], exprs[j], f, nf, k, &body, 0, err, TMAP_OK};
        tmap_buf_printf(&body, "    out[t * %zuull + %zu] = (double)(", nexprs, j);
        expr(&g);
        skip_ws(&g);
        if (g.st == TMAP_OK && *g.p)
            fail(&g, "unexpected text after the expression");
        tmap_buf_puts(&body, ");\n");
        st = g.st;
    }
    tmap_buf_puts(&src, prologue);
    for (size_t i = 0; i < k->nslots; i++)
        tmap_buf_printf(&src, ",\n    const void *p%zu, long long lo%zu, long long hi%zu", i, i, i);
    tmap_buf_printf(&src, ")\n{\n    unsigned long long t = (unsigned long long)blockIdx.x * "
                          "blockDim.x + threadIdx.x;\n    if (t >= n)\n        return;\n%s}\n",
                    body.data ? body.data : "");
    k->nexprs = nexprs;
    k->source = src.data;
    if (st == TMAP_OK && (body.oom || src.oom))
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the key's kernel");
    tmap_buf_free(&body);
    if (st != TMAP_OK)
        tmap_attach_key_free(k);
    return st;
}

void tmap_attach_key_free(tmap_attach_key *k)
{
    if (!k)
        return;
    free(k->source);
    memset(k, 0, sizeof *k);
}

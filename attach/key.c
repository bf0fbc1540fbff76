/*
 * key.c (attach) -- per-thread expressions over a launch's own arguments,
 * turned into a CUDA kernel: run mode's key (`--key 'arg0[t+1]-arg0[t]'`)
 * and the features a predictor reads.  The expression is parsed by the
 * manifest's parser (runtime/expr.h: grammar, bounds, error style) and
 * written as CUDA by its CUDA back end (runtime/expr_cuda.c); this file
 * binds the references to slots.  A reference is pointer argument K, `argK`, of
 * element type `argK:TYPE` (i8 u8 i32 u32 i64 u64 f32 f64; i32 when not
 * given), indexed [t], [t+k] or [t-k], or a feature's name (--feature
 * NAME=argK:TYPE[t+C]), alone or indexed like an array.  The generated
 * kernel computes in double, reads an element only inside the allocation
 * the pointer lies in (bounds given at each launch); outside it reads 0.
 */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/key.h"
#include "common/base.h"

const char *tmap_attach_key_type(const char *name, size_t *size)
{
    int k = tmap_elem_find(name);
    if (k < 0)
        return NULL;
    if (size)
        *size = tmap_elem_size((tmap_elem)k);
    return tmap_elem_ctype((tmap_elem)k);
}

typedef struct gen {
    const tmap_expr *x;
    const tmap_attach_feature *f;   /* features the expression may name */
    size_t nf;
    tmap_attach_key *k;
    tmap_error *err;
} gen;

static tmap_status fail(const gen *g, size_t pos, const char *what)
{
    return tmap_expr_fail(g->x->src, pos, g->err, what);
}

/* The slot of (arg, type): the kernel's parameter triple for that array. */
static tmap_status slot(const gen *g, size_t pos, unsigned arg, const char *type, long *id)
{
    tmap_attach_key *k = g->k;
    for (size_t i = 0; i < k->nslots; i++)
        if (k->slot[i].arg == arg && !strcmp(k->slot[i].type, type)) {
            *id = (long)i;
            return TMAP_OK;
        }
    if (k->nslots == TMAP_ATTACH_KEY_MAX_SLOTS)
        return fail(g, pos, "more than 16 distinct arrays");
    tmap_attach_key_slot *s = &k->slot[k->nslots];
    s->arg = arg;
    snprintf(s->type, sizeof s->type, "%s", type);
    tmap_attach_key_type(type, &s->elem_size);
    *id = (long)k->nslots++;
    return TMAP_OK;
}

/* The feature a REF names, or NULL. */
static const tmap_attach_feature *feature(const gen *g, const tmap_expr_node *r)
{
    const char *name = g->x->src + r->pos;
    for (size_t i = 0; i < g->nf; i++)
        if (strlen(g->f[i].name) == r->name_len && !strncmp(g->f[i].name, name, r->name_len))
            return &g->f[i];
    return NULL;
}

tmap_status tmap_attach_key_arg(const tmap_expr *x, const tmap_expr_node *r,
                                tmap_attach_feature *f, tmap_error *err)
{
    assert(r->kind == TMAP_EXPR_REF);
    const char *name = x->src + r->pos;
    char *end = NULL;
    int digits = r->name_len > 3 && !strncmp(name, "arg", 3) && isdigit((unsigned char)name[3]);
    unsigned long arg = digits ? strtoul(name + 3, &end, 10) : 4097;
    if (arg > 4096 || end != name + r->name_len)
        return tmap_expr_fail(x->src, r->pos, err,
                              "names neither a pointer argument argK nor a --feature");
    snprintf(f->type, sizeof f->type, "%.*s", r->typed ? (int)r->type_len : 3,
             r->typed ? x->src + r->type : "i32");
    if (r->type_len >= sizeof f->type || !tmap_attach_key_type(f->type, &f->elem_size))
        return tmap_expr_fail(x->src, r->type, err,
                              "a type must be one of i8 u8 i32 u32 i64 u64 f32 f64");
    if (!r->indexed)
        return tmap_expr_fail(x->src, r->index, err,
                              "an array needs an index: [t], [t+k] or [t-k]");
    f->arg = (unsigned)arg;
    f->offset = r->offset;
    return TMAP_OK;
}

/* A REF bound to its slot (r->id) and element offset: a feature's name,
 * alone or indexed (k more than the feature's own), or argK[:TYPE]<index>. */
static tmap_status bind(const gen *g, tmap_expr_node *r)
{
    const tmap_attach_feature *f = feature(g, r);
    tmap_attach_feature arg;
    if (f && r->typed)
        return fail(g, r->type - 1, "unexpected ':' (a --feature has its type)");
    if (f) {
        r->offset += f->offset;
    } else {
        tmap_status st = tmap_attach_key_arg(g->x, r, &arg, g->err);
        if (st != TMAP_OK)
            return st;
        f = &arg;
    }
    return slot(g, r->pos, f->arg, f->type, &r->id);
}

/* Expression src parsed into x, its references bound to slots. */
static tmap_status parse_bound(const char *src, const tmap_attach_feature *f, size_t nf,
                               tmap_attach_key *k, tmap_expr *x, tmap_error *err)
{
    tmap_status st = tmap_expr_parse(src, x, err);
    gen g = {x, f, nf, k, err};
    for (size_t i = 0; i < x->n && st == TMAP_OK; i++)
        if (x->node[i].kind == TMAP_EXPR_REF)
            st = bind(&g, &x->node[i]);
    return st;
}

tmap_status tmap_attach_key_make(const char *const *exprs, size_t nexprs,
                                 const tmap_attach_feature *f, size_t nf, tmap_attach_key *k,
                                 tmap_error *err)
{
    memset(k, 0, sizeof *k);
    if (!exprs || !nexprs || nexprs > TMAP_ATTACH_MAX_FEATURES)
        return tmap_fail(err, TMAP_ERR_INVALID, "a key needs 1 to %d expressions",
                         TMAP_ATTACH_MAX_FEATURES);
    tmap_expr x[TMAP_ATTACH_MAX_FEATURES] = {0};
    tmap_elem types[TMAP_ATTACH_KEY_MAX_SLOTS];
    tmap_status st = TMAP_OK;
    for (size_t j = 0; j < nexprs && st == TMAP_OK; j++)
        st = parse_bound(exprs[j], f, nf, k, &x[j], err);
    for (size_t i = 0; i < k->nslots; i++)
        types[i] = (tmap_elem)tmap_elem_find(k->slot[i].type);
    if (st == TMAP_OK)
        st = tmap_expr_cuda_source(x, nexprs, types, k->nslots, "tmap_key", &k->source, err);
    for (size_t j = 0; j < nexprs; j++)
        tmap_expr_free(&x[j]);
    k->nexprs = nexprs;
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

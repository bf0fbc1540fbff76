/*
 * fuzz_key.c -- libFuzzer target: the expression parser (runtime/expr.h)
 * and both its back ends.  The input as one expression and lines of it as
 * a predictor's several expressions go to run mode's key
 * (tmap_attach_key_make, over two features n and x): every input is either
 * refused with a message or gives a kernel source with at most
 * TMAP_ATTACH_KEY_MAX_SLOTS arrays, each of a known type.  The input is
 * also parsed on its own (a tree whose links and spans stay inside it) and
 * evaluated by the host back end over manifest arrays n and x for a few
 * threads, and each line is tried as a --feature spec.  Seed corpus:
 * tests/fuzz/key/.
 */
#include <stdlib.h>
#include <string.h>

#include "attach/key.h"
#include "runtime/manifest.h"

static void check(const char *const *exprs, size_t n, const tmap_attach_feature *f)
{
    tmap_attach_key k;
    tmap_error err = {0};
    if (tmap_attach_key_make(exprs, n, f, 2, &k, &err) != TMAP_OK) {
        if (!err.message[0] || k.source)
            abort();
        return;
    }
    if (!k.source || k.nexprs != n || k.nslots > TMAP_ATTACH_KEY_MAX_SLOTS)
        abort();
    for (size_t i = 0; i < k.nslots; i++)
        if (!tmap_attach_key_type(k.slot[i].type, NULL) || !k.slot[i].elem_size)
            abort();
    tmap_attach_key_free(&k);
}

/* Every link inside the tree, every span inside the source. */
static void check_tree(const tmap_expr *x)
{
    size_t len = strlen(x->src);
    if (x->root >= x->n)
        abort();
    for (size_t i = 0; i < x->n; i++) {
        const tmap_expr_node *d = &x->node[i];
        if (d->pos > d->end || d->end > len ||
            (d->kind >= TMAP_EXPR_NEG && d->kid >= x->n) ||
            (d->next != TMAP_EXPR_NONE && (d->next >= x->n || !x->node[d->next].join)))
            abort();
    }
}

/* Parsed alone, then evaluated over arrays n (u32) and x (f64). */
static void host(const char *src)
{
    enum { N = 8 };
    static const uint32_t nv[N] = {0, 1, 2, 3, 4, 5, 6, 4000000000u};
    static const double xv[N] = {-1.5, 0, 2.25, 1e300, -0.0, 3, 1e-300, 7};
    tmap_marray arr[2] = {{.name = "n", .kind = TMAP_U32, .count = N, .host = (void *)nv},
                          {.name = "x", .kind = TMAP_F64, .count = N, .host = (void *)xv}};
    tmap_manifest m = {.arrays = arr, .narrays = 2, .threads = N};
    tmap_expr x;
    tmap_error err = {0};
    if (tmap_expr_parse(src, &x, &err) != TMAP_OK) {
        if (!err.message[0] || x.node)
            abort();
        return;
    }
    check_tree(&x);
    if (tmap_expr_bind(&m, &x, &err) == TMAP_OK)
        for (size_t t = 0; t < N; t++) {
            double v;
            (void)tmap_expr_value(&m, &x, t, &v, &err);
        }
    tmap_expr_free(&x);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    tmap_attach_feature f[2];
    if (tmap_attach_feature_parse("n=arg2:u32[t+1]", &f[0], NULL) ||
        tmap_attach_feature_parse("x=arg0:f64[t-2]", &f[1], NULL))
        abort();
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    const char *one = s;
    check(&one, 1, f);
    host(s);
    const char *lines[TMAP_ATTACH_MAX_FEATURES];
    size_t n = 0;
    for (char *p = s, *next; p && n < TMAP_ATTACH_MAX_FEATURES; p = next) {
        next = strchr(p, '\n');
        if (next)
            *next++ = '\0';
        lines[n++] = p;
        tmap_attach_feature g;
        if (tmap_attach_feature_parse(p, &g, NULL) == TMAP_OK &&
            (!tmap_attach_key_type(g.type, NULL) || !g.elem_size || g.arg > 4096))
            abort();
    }
    check(lines, n, f);
    free(s);
    return 0;
}

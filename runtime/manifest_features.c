/*
 * manifest_features.c -- a manifest's per-thread feature matrix: on the
 * host (tmap_expr_value thread by thread, what training reads) and on the
 * GPU (every expression in one kernel written by the CUDA back end,
 * expr_cuda.c, reading the arrays' device copies), the same values bit for
 * bit.  The GPU's kernel is compiled on first use and kept in the manifest.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/cuda.h"
#include "runtime/expr.h"
#include "runtime/manifest.h"

/* The compiled kernel and its argument list: out, n, then per slot the
 * array's device pointer and the bounds [0, count). */
struct tmap_mfeatures_gpu {
    tmap_kernel *k;
    size_t array[TMAP_EXPR_CUDA_MAX_SLOTS]; /* slot -> index into m->arrays */
    tmap_expr_cuda_args a;                  /* a.nslots: the slots in use */
};

/* Feature j parsed and bound to m's arrays; errors name it. */
static tmap_status feature_parse(const tmap_manifest *m, size_t j, tmap_expr *x, tmap_error *err)
{
    tmap_status st = tmap_expr_parse(m->features[j].expr, x, err);
    if (st == TMAP_OK && (st = tmap_expr_bind(m, x, err)) != TMAP_OK)
        tmap_expr_free(x);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "%s: features.%s", m->path, m->features[j].name);
    return st;
}

/* Feature j of every thread: x[t * q + j]. */
static tmap_status feature_column(const tmap_manifest *m, size_t j, double *x, size_t q,
                                  tmap_error *err)
{
    tmap_expr e;
    tmap_status st = feature_parse(m, j, &e, err);
    if (st != TMAP_OK)
        return st;
    size_t t = 0;
    for (; t < m->threads && st == TMAP_OK; t++)
        st = tmap_expr_value(m, &e, t, &x[t * q + j], err);
    tmap_expr_free(&e);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "%s: features.%s, thread %zu", m->path, m->features[j].name, t - 1);
    return st;
}

tmap_status tmap_manifest_features(const tmap_manifest *m, double **f, size_t *nthreads,
                                   size_t *p, const char *const **names, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m, f, nthreads, p);
    if (absent)
        return absent;
    *f = NULL;
    size_t n = m->threads, q = m->nfeatures;
    if (q == 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no 'features' given", m->path);
    double *x = malloc(n * q * sizeof *x);
    if (!x)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for features");
    for (size_t j = 0; j < q; j++) {
        tmap_status st = feature_column(m, j, x, q, err);
        if (st != TMAP_OK) {
            free(x);
            return st;
        }
    }
    *f = x;
    *nthreads = n;
    *p = q;
    if (names)
        *names = m->feature_names;
    return TMAP_OK;
}

/* The first thread whose element of REF r lies outside its array, or
 * m->threads when every thread's does not: the host refuses such a matrix
 * whatever the data, so the GPU's does too, before it runs. */
static size_t first_outside(const tmap_manifest *m, const tmap_expr_node *r)
{
    long long count = (long long)m->arrays[r->id].count, n = (long long)m->threads;
    if (n == 0)
        return 0;
    if (r->offset < 0 || r->offset >= count)
        return 0;
    return n - 1 + r->offset < count ? m->threads : (size_t)(count - r->offset);
}

/* REFs of feature j's tree x bound to slots (r->id: the array's slot, g's
 * tables extended); an index outside its array for some thread fails
 * naming the first such thread. */
static tmap_status feature_slots(const tmap_manifest *m, size_t j, tmap_expr *x,
                                 struct tmap_mfeatures_gpu *g, tmap_error *err)
{
    for (size_t i = 0; i < x->n; i++) {
        tmap_expr_node *r = &x->node[i];
        if (r->kind != TMAP_EXPR_REF)
            continue;
        size_t t = first_outside(m, r), s = 0;
        if (t < m->threads) {
            tmap_status st = tmap_expr_fail(x->src, r->end, err, "index out of the array's range");
            tmap_error_prefix(err, "%s: features.%s, thread %zu", m->path, m->features[j].name, t);
            return st;
        }
        while (s < g->a.nslots && g->array[s] != (size_t)r->id)
            s++;
        if (s == TMAP_EXPR_CUDA_MAX_SLOTS)
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: the features read more than %d "
                             "arrays", m->path, TMAP_EXPR_CUDA_MAX_SLOTS);
        if (s == g->a.nslots)
            g->array[g->a.nslots++] = (size_t)r->id;
        r->id = (long)s;
    }
    return TMAP_OK;
}

/* Every feature as one kernel's source, its slots in g. */
static tmap_status features_source(const tmap_manifest *m, struct tmap_mfeatures_gpu *g,
                                   char **source, tmap_error *err)
{
    size_t q = m->nfeatures;
    tmap_expr *x = calloc(q + 1, sizeof *x);
    tmap_elem type[TMAP_EXPR_CUDA_MAX_SLOTS];
    tmap_status st = x ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    *source = NULL;
    if (st == TMAP_OK && q == 0)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: no 'features' given", m->path);
    for (size_t j = 0; st == TMAP_OK && j < q; j++)
        if ((st = feature_parse(m, j, &x[j], err)) == TMAP_OK)
            st = feature_slots(m, j, &x[j], g, err);
    for (size_t s = 0; s < g->a.nslots; s++)
        type[s] = m->arrays[g->array[s]].kind;
    if (st == TMAP_OK)
        st = tmap_expr_cuda_source(x, q, type, g->a.nslots, "tmap_features", source, err);
    for (size_t j = 0; x && j < q; j++)
        tmap_expr_free(&x[j]); /* a tree parsed or not: zeroed ones free nothing */
    free(x);
    return st;
}

tmap_status tmap_manifest_features_source(const tmap_manifest *m, char **source,
                                          size_t *slot_array, size_t *nslots, tmap_error *err)
{
    struct tmap_mfeatures_gpu g = {0};
    tmap_status st = features_source(m, &g, source, err);
    memcpy(slot_array, g.array, g.a.nslots * sizeof *slot_array);
    *nslots = g.a.nslots;
    return st;
}

/* m's kernel compiled and loaded on its driver, once. */
static tmap_status features_kernel(tmap_manifest *m, tmap_error *err)
{
    if (m->fgpu)
        return TMAP_OK;
    struct tmap_mfeatures_gpu *g = calloc(1, sizeof *g);
    char *source = NULL, what[4200];
    if (!g)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    snprintf(what, sizeof what, "<CUDA source of the features of %s>", m->path);
    tmap_status st = features_source(m, g, &source, err);
    if (st == TMAP_OK &&
        (st = tmap_expr_cuda_load(m->bound, source, "tmap_features", what, &g->k, err))) {
        tmap_buf list = {0};
        for (size_t j = 0; j < m->nfeatures; j++)
            tmap_buf_printf(&list, "%sfeatures.%s = '%.80s'", j ? ", " : "", m->features[j].name,
                            m->features[j].expr);
        tmap_error_prefix(err, "compiling %.600s", list.data ? list.data : "");
        tmap_buf_free(&list);
    }
    free(source);
    if (st != TMAP_OK) {
        free(g);
        return st;
    }
    m->fgpu = g;
    return TMAP_OK;
}

tmap_status tmap_manifest_features_gpu(tmap_manifest *m, uint64_t out, void *stream,
                                       tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m);
    if (absent)
        return absent;
    if (!m->bound || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: features on the GPU need the arrays bound "
                         "(tmap_manifest_bind) and an output buffer", m->path);
    tmap_status st = features_kernel(m, err);
    if (st != TMAP_OK) {
        tmap_error_prefix(err, "%s: the features on the GPU", m->path);
        return st;
    }
    struct tmap_mfeatures_gpu *g = m->fgpu;
    g->a.out = out;
    g->a.n = m->threads;
    for (size_t s = 0; s < g->a.nslots; s++) {
        const tmap_marray *a = &m->arrays[g->array[s]];
        assert(a->device);
        g->a.p[s] = a->device;
        g->a.lo[s] = 0;
        g->a.hi[s] = (long long)a->count;
    }
    return tmap_expr_cuda_launch(g->k, &g->a, stream, err);
}

void tmap_manifest_features_gpu_free(tmap_manifest *m)
{
    if (!m->fgpu)
        return;
    tmap_kernel_free(m->fgpu->k);
    free(m->fgpu);
    m->fgpu = NULL;
}

/*
 * manifest.c -- kernel manifests: a JSON file that says how to build and
 * launch a kernel (source, name, geometry, arguments, arrays and how to fill
 * them, per-thread inputs/outputs and features).  The format is in
 * docs/manifest.md; every error names the file and the field.
 */
#include <assert.h>
#include <float.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/cuda.h"
#include "runtime/expr.h"
#include "runtime/manifest.h"

enum { MAX_NAME = 128 };

/* Limits of a launch (the CUDA driver's) and of what threadmap handles:
 * thread indices and permutations are 32-bit; array sizes stay far from
 * wrapping a size_t in bytes. */
#define MAX_THREADS (1ull << 32)
#define MAX_COUNT (1ull << 40)
#define MAX_SHARED_BYTES 232448u /* 227 KiB: the most any supported GPU gives a block */

/* Each type's range: integers as integers (lo, hi: JSON integers, which
 * stop at LLONG_MAX) and as doubles (dlo, dhi: the widest range of doubles
 * that converts without overflow). */
static const struct {
    const char *name, *ctype;
    tmap_elem kind;
    size_t size;
    long long lo, hi;
    double dlo, dhi;
} types[] = {
    {"i32", "int", TMAP_I32, 4, INT32_MIN, INT32_MAX, -2147483648.0, 2147483647.0},
    {"u32", "unsigned", TMAP_U32, 4, 0, UINT32_MAX, 0, 4294967295.0},
    {"i64", "long long", TMAP_I64, 8, LLONG_MIN, LLONG_MAX, -9223372036854775808.0,
     9223372036854774784.0},
    {"u64", "unsigned long long", TMAP_U64, 8, 0, LLONG_MAX, 0, 18446744073709549568.0},
    {"f32", "float", TMAP_F32, 4, 0, 0, -FLT_MAX, FLT_MAX},
    {"f64", "double", TMAP_F64, 8, 0, 0, -DBL_MAX, DBL_MAX},
    {"u8", "unsigned char", TMAP_U8, 1, 0, UINT8_MAX, 0, 255.0},
    {"i8", "signed char", TMAP_I8, 1, INT8_MIN, INT8_MAX, -128.0, 127.0},
};
#define NTYPES (sizeof types / sizeof types[0])

int tmap_elem_find(const char *name)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (!strcmp(types[i].name, name)) {
            assert(types[i].kind == (tmap_elem)i);
            return (int)i;
        }
    return -1;
}

const char *tmap_elem_name(tmap_elem k) { return types[k].name; }
const char *tmap_elem_ctype(tmap_elem k) { return types[k].ctype; }
size_t tmap_elem_size(tmap_elem k) { return types[k].size; }

double tmap_elem_get(tmap_elem k, const void *base, size_t i)
{
    switch (k) {
    case TMAP_I32: return ((const int32_t *)base)[i];
    case TMAP_U32: return ((const uint32_t *)base)[i];
    case TMAP_I64: return (double)((const int64_t *)base)[i];
    case TMAP_U64: return (double)((const uint64_t *)base)[i];
    case TMAP_F32: return ((const float *)base)[i];
    case TMAP_F64: return ((const double *)base)[i];
    case TMAP_U8: return ((const uint8_t *)base)[i];
    case TMAP_I8: return ((const int8_t *)base)[i];
    }
    return 0;
}

static int is_float(tmap_elem k) { return k == TMAP_F32 || k == TMAP_F64; }

int tmap_elem_holds(tmap_elem k, double v)
{
    assert(types[k].kind == k);
    if (is_float(k))
        return v >= types[k].dlo && v <= types[k].dhi;
    return v == floor(v) && v >= types[k].dlo && v <= types[k].dhi;
}

void tmap_manifest_free(tmap_manifest *m)
{
    if (!m)
        return;
    tmap_manifest_features_gpu_free(m);
    for (size_t i = 0; i < m->narrays; i++) {
        tmap_marray *a = &m->arrays[i];
        free(a->name), free(a->host), free(a->file);
        tmap_cuda_free(m->bound, a->device);
        tmap_cuda_free(m->bound, a->pristine);
    }
    for (size_t i = 0; i < m->nfeatures; i++)
        free(m->features[i].name), free(m->features[i].expr);
    for (size_t i = 0; i < m->noptions; i++)
        free(m->options[i]);
    free(m->arrays), free(m->args), free(m->argv), free(m->features), free(m->feature_names);
    free(m->refs);
    free(m->options), free(m->path), free(m->dir), free(m->name), free(m->source);
    free(m->ptx_file), free(m->kernel), free(m->arch), free(m->key);
    free(m);
}

/* ------------------------------------------------------------- parsing */

typedef struct ctx {
    const char *path;
    tmap_error *err;
} ctx;

static tmap_status bad(ctx *c, const char *field, const char *fmt, ...) TMAP_PRINTF(3, 4);
static tmap_status bad(ctx *c, const char *field, const char *fmt, ...)
{
    char what[TMAP_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tmap_fail(c->err, TMAP_ERR_INVALID, "%s: field '%s': %s", c->path, field, what);
}

static tmap_status get_string(ctx *c, json_t *obj, const char *key, int required, char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return required ? bad(c, key, "missing") : TMAP_OK;
    if (!json_is_string(v))
        return bad(c, key, "must be a string");
    if (!(*out = strdup(json_string_value(v))))
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
    return TMAP_OK;
}

/* An integer or [x], [x, y] or [x, y, z], each axis in [1, max[axis]]. */
static tmap_status get_dim3(ctx *c, json_t *obj, const char *key, const unsigned max[3],
                            unsigned d[3], int *present)
{
    json_t *v = json_object_get(obj, key);
    d[0] = d[1] = d[2] = 1;
    *present = v != NULL;
    if (!v)
        return TMAP_OK;
    size_t n = json_is_integer(v) ? 1 : json_array_size(v);
    if (!json_is_integer(v) && (!json_is_array(v) || n < 1 || n > 3))
        return bad(c, key, "must be an integer or an array of 1 to 3 integers");
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_is_integer(v) ? v : json_array_get(v, i);
        if (!json_is_integer(e) || json_integer_value(e) < 1)
            return bad(c, key, "entries must be positive integers");
        if (json_integer_value(e) > max[i])
            return bad(c, key, "%c is %lld, at most %u", "xyz"[i], (long long)json_integer_value(e),
                       max[i]);
        d[i] = (unsigned)json_integer_value(e);
    }
    return TMAP_OK;
}

static tmap_status parse_options(ctx *c, json_t *root, tmap_manifest *m)
{
    json_t *v = json_object_get(root, "options");
    if (!v)
        return TMAP_OK;
    if (!json_is_array(v))
        return bad(c, "options", "must be an array of strings");
    m->options = calloc(json_array_size(v) + 1, sizeof *m->options);
    if (!m->options)
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e))
            return bad(c, "options", "must be an array of strings");
        if (!(m->options[m->noptions++] = strdup(json_string_value(e))))
            return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
    }
    return TMAP_OK;
}

static int is_integral(tmap_elem k) { return !is_float(k); }

/* {"scan": "lens"}: element i is lens[0] + ... + lens[i-1] (exclusive prefix
 * sum), so count may be at most lens' count + 1 (row pointers, offsets). */
static tmap_status parse_scan(ctx *c, json_t *v, const tmap_manifest *m, tmap_marray *a,
                              const char *field)
{
    if (!json_is_string(v))
        return bad(c, field, "scan needs the name of an earlier integer array");
    size_t self = (size_t)(a - m->arrays);
    for (size_t j = 0; j < self; j++) {
        const tmap_marray *s = &m->arrays[j];
        if (strcmp(s->name, json_string_value(v)))
            continue;
        if (!is_integral(s->kind) || !is_integral(a->kind))
            return bad(c, field, "scan sums an integer array into an integer array");
        if (a->count > s->count + 1)
            return bad(c, field, "a scan's count is at most its source's count + 1");
        a->init = TMAP_INIT_SCAN;
        a->scan_of = j;
        return TMAP_OK;
    }
    return bad(c, field, "scan names no earlier array of 'arrays'");
}

/* The init's first n values (fill value, lo and hi) are values of the
 * array's type: in range, and integers for an integer type (iota's p[0]
 * is its largest value).  A powerlaw's bounds are cut and rounded down, so
 * only their range matters. */
static tmap_status init_fits(ctx *c, const char *field, const tmap_marray *a, size_t n)
{
    static const char *const bounds[] = {"lo", "hi"};
    for (size_t i = 0; i < n; i++) {
        double v = a->init == TMAP_INIT_POWERLAW ? floor(a->p[i]) : a->p[i];
        const char *what = a->init == TMAP_INIT_IOTA   ? "iota's last element"
                           : a->init == TMAP_INIT_FILL ? "the fill value"
                                                       : bounds[i];
        if (!tmap_elem_holds(a->kind, v))
            return bad(c, field, "%s (%.15g) does not fit type %s", what, a->p[i],
                       tmap_elem_name(a->kind));
    }
    return TMAP_OK;
}

static tmap_status parse_init(ctx *c, json_t *init, const tmap_manifest *m, tmap_marray *a,
                              const char *field)
{
    if (!init || (json_is_string(init) && !strcmp(json_string_value(init), "zeros"))) {
        a->init = TMAP_INIT_ZEROS;
        return TMAP_OK;
    }
    if (json_is_string(init) && !strcmp(json_string_value(init), "iota")) {
        a->init = TMAP_INIT_IOTA;
        a->p[0] = (double)(a->count - 1); /* the largest value, for init_fits */
        return init_fits(c, field, a, 1);
    }
    if (!json_is_object(init) || json_object_size(init) != 1)
        return bad(c, field, "init must be \"zeros\", \"iota\", or one of {\"fill\": v}, "
                             "{\"uniform\": [lo, hi]}, {\"powerlaw\": [lo, hi, alpha]}, "
                             "{\"npy\": file}, {\"raw\": file}, {\"scan\": array}");
    const char *kind = json_object_iter_key(json_object_iter(init));
    json_t *v = json_object_iter_value(json_object_iter(init));
    if (!strcmp(kind, "fill")) {
        if (!json_is_number(v))
            return bad(c, field, "fill needs a number");
        a->init = TMAP_INIT_FILL;
        a->p[0] = json_number_value(v);
        return init_fits(c, field, a, 1);
    }
    if (!strcmp(kind, "uniform") || !strcmp(kind, "powerlaw")) {
        size_t want = kind[0] == 'u' ? 2 : 3;
        if (!json_is_array(v) || json_array_size(v) != want)
            return bad(c, field, kind[0] == 'u' ? "uniform needs [lo, hi]"
                                                : "powerlaw needs [lo, hi, alpha]");
        for (size_t i = 0; i < want; i++) {
            if (!json_is_number(json_array_get(v, i)))
                return bad(c, field, "bounds must be numbers");
            a->p[i] = json_number_value(json_array_get(v, i));
        }
        if (a->p[1] < a->p[0])
            return bad(c, field, "hi must not be below lo");
        if (want == 3 && (a->p[0] <= 0 || a->p[2] <= 1.0))
            return bad(c, field, "powerlaw needs lo > 0 and alpha > 1");
        a->init = kind[0] == 'u' ? TMAP_INIT_UNIFORM : TMAP_INIT_POWERLAW;
        return init_fits(c, field, a, 2);
    }
    if (!strcmp(kind, "raw") || !strcmp(kind, "npy")) {
        if (!json_is_string(v))
            return bad(c, field, "a file name is needed");
        a->init = kind[0] == 'r' ? TMAP_INIT_RAW : TMAP_INIT_NPY;
        if (!(a->file = strdup(json_string_value(v))))
            return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
        return TMAP_OK;
    }
    if (!strcmp(kind, "scan"))
        return parse_scan(c, v, m, a, field);
    return bad(c, field, "unknown init kind");
}

static tmap_status parse_array(ctx *c, json_t *e, size_t i, tmap_manifest *m)
{
    char field[64 + MAX_NAME];
    snprintf(field, sizeof field, "arrays[%zu]", i);
    if (!json_is_object(e))
        return bad(c, field, "must be an object");
    tmap_marray *a = &m->arrays[i];
    tmap_status st = get_string(c, e, "name", 1, &a->name);
    if (st != TMAP_OK)
        return st;
    snprintf(field, sizeof field, "arrays.%s", a->name);
    json_t *t = json_object_get(e, "type"), *n = json_object_get(e, "count");
    if (!json_is_string(t) || tmap_elem_find(json_string_value(t)) < 0)
        return bad(c, field, "type must be one of i8 u8 i32 u32 i64 u64 f32 f64");
    a->kind = types[tmap_elem_find(json_string_value(t))].kind;
    if (json_is_string(n) && !strcmp(json_string_value(n), "threads"))
        a->count = m->threads;
    else if (json_is_integer(n) && json_integer_value(n) > 0 &&
             (uint64_t)json_integer_value(n) <= MAX_COUNT)
        a->count = (size_t)json_integer_value(n);
    else
        return bad(c, field, "count must be a positive integer (at most 2^40) or \"threads\"");
    json_t *pt = json_object_get(e, "per_thread");
    if (pt && (!json_is_integer(pt) || json_integer_value(pt) < 0))
        return bad(c, field, "per_thread must be a non-negative integer");
    a->per_thread = pt ? (size_t)json_integer_value(pt) : 0;
    json_t *role = json_object_get(e, "role");
    const char *r = role && json_is_string(role) ? json_string_value(role) : NULL;
    if (role && (!r || (strcmp(r, "input") && strcmp(r, "output") && strcmp(r, "inout"))))
        return bad(c, field, "role must be \"input\", \"output\" or \"inout\"");
    a->is_input = r && (!strcmp(r, "input") || !strcmp(r, "inout"));
    a->is_output = r && (!strcmp(r, "output") || !strcmp(r, "inout"));
    if (a->per_thread && !r)
        a->is_input = 1; /* a per-thread array the kernel reads must move with its thread */
    if (a->per_thread && a->per_thread > a->count / m->threads) /* count < per_thread * threads */
        return bad(c, field, "count is smaller than per_thread * threads");
    return parse_init(c, json_object_get(e, "init"), m, a, field);
}

static tmap_status parse_arrays(ctx *c, json_t *root, tmap_manifest *m)
{
    json_t *v = json_object_get(root, "arrays");
    if (!v)
        return TMAP_OK;
    if (!json_is_array(v))
        return bad(c, "arrays", "must be an array of objects");
    m->arrays = calloc(json_array_size(v) + 1, sizeof *m->arrays);
    if (!m->arrays)
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(v); i++) {
        m->narrays = i + 1;
        tmap_status st = parse_array(c, json_array_get(v, i), i, m);
        if (st != TMAP_OK)
            return st;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(m->arrays[j].name, m->arrays[i].name))
                return bad(c, "arrays", "two arrays have the same name");
    }
    return TMAP_OK;
}

/* An integer scalar of type k (in range) in the bytes the launch passes. */
static void store_int(tmap_marg *g, long long v)
{
    if (g->kind == TMAP_I64 || g->kind == TMAP_U64)
        g->storage.i = v;
    else if (g->kind == TMAP_U32)
        g->storage.u32 = (uint32_t)v;
    else
        g->storage.i32 = (int32_t)v; /* i32, i8, u8: the low bytes of a 32-bit slot */
}

/* Checks the value against the type and stores it; "threads" is the
 * launch's thread count.  JSON integers are taken exactly (64-bit). */
static tmap_status scalar_value(ctx *c, json_t *v, const tmap_manifest *m, tmap_marg *g,
                                const char *field)
{
    int exact = g->is_threads || json_is_integer(v);
    long long iv = g->is_threads ? (long long)m->threads : exact ? json_integer_value(v) : 0;
    g->value = exact ? (double)iv : json_real_value(v);
    if (!tmap_elem_holds(g->kind, g->value) && (!exact || is_float(g->kind)))
        return g->value != floor(g->value) && !is_float(g->kind)
                   ? bad(c, field, "an integer type needs an integer value")
                   : bad(c, field, "%.15g does not fit type %s", g->value, tmap_elem_name(g->kind));
    if (g->kind == TMAP_F32 || g->kind == TMAP_F64) {
        if (g->kind == TMAP_F32)
            g->storage.f = (float)g->value;
        else
            g->storage.d = g->value;
        return TMAP_OK;
    }
    if (!exact && g->value >= 0x1p63) { /* u64 beyond the signed range */
        g->storage.u = (uint64_t)g->value;
        return TMAP_OK;
    }
    iv = exact ? iv : (long long)g->value;
    if (iv < types[g->kind].lo || iv > types[g->kind].hi)
        return bad(c, field, "%lld does not fit type %s", iv, tmap_elem_name(g->kind));
    store_int(g, iv);
    return TMAP_OK;
}

static tmap_status parse_scalar(ctx *c, json_t *e, const tmap_manifest *m, tmap_marg *g,
                                const char *field)
{
    if (!json_is_object(e) || json_object_size(e) != 1)
        return bad(c, field, "an argument is an array name or {\"TYPE\": value}");
    const char *key = json_object_iter_key(json_object_iter(e));
    json_t *v = json_object_iter_value(json_object_iter(e));
    int ti = tmap_elem_find(key);
    if (ti < 0)
        return bad(c, field, "scalar type must be one of i8 u8 i32 u32 i64 u64 f32 f64");
    g->kind = types[ti].kind;
    g->array = -1;
    g->is_threads = json_is_string(v) && !strcmp(json_string_value(v), "threads");
    if (!g->is_threads && !json_is_number(v))
        return bad(c, field, "scalar value must be a number or \"threads\"");
    return scalar_value(c, v, m, g, field);
}

static tmap_status parse_args(ctx *c, json_t *root, tmap_manifest *m)
{
    json_t *v = json_object_get(root, "args");
    if (!v || !json_is_array(v))
        return bad(c, "args", "missing, or not an array");
    size_t n = json_array_size(v);
    m->args = calloc(n + 1, sizeof *m->args);
    m->argv = calloc(n + 1, sizeof *m->argv);
    if (!m->args || !m->argv)
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
    m->nargs = n;
    for (size_t i = 0; i < n; i++) {
        char field[32];
        snprintf(field, sizeof field, "args[%zu]", i);
        json_t *e = json_array_get(v, i);
        if (json_is_string(e)) {
            long a = tmap_manifest_find(m, json_string_value(e));
            if (a < 0)
                return bad(c, field, "names no array of 'arrays'");
            m->args[i].array = a;
            continue;
        }
        tmap_status st = parse_scalar(c, e, m, &m->args[i], field);
        if (st != TMAP_OK)
            return st;
    }
    return TMAP_OK;
}

/* ---------------------------------------------------- irregular references */

#define MAX_REF_ELEMS (1ull << 32) /* the transaction model numbers elements with 32 bits */

/* references[i].key names an array of 'arrays': its index. */
static tmap_status ref_array(ctx *c, json_t *e, const char *field, const char *key,
                             const tmap_manifest *m, size_t *out)
{
    char f[64];
    snprintf(f, sizeof f, "%s.%s", field, key);
    json_t *v = json_object_get(e, key);
    if (!json_is_string(v))
        return bad(c, f, "missing, or not an array name");
    long a = tmap_manifest_find(m, json_string_value(v));
    if (a < 0)
        return bad(c, f, "names no array of 'arrays'");
    *out = (size_t)a;
    return TMAP_OK;
}

/* references[i].key: an integer in [1, hi], dflt when absent. */
static tmap_status ref_int(ctx *c, json_t *e, const char *field, const char *key, long long hi,
                           size_t dflt, size_t *out)
{
    char f[64];
    snprintf(f, sizeof f, "%s.%s", field, key);
    json_t *v = json_object_get(e, key);
    if (v && (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > hi))
        return bad(c, f, "must be an integer in [1, %lld]", hi);
    *out = v ? (size_t)json_integer_value(v) : dflt;
    return TMAP_OK;
}

/* elem_bytes: a power of two, a multiple of the data's type size, dividing
 * its bytes; elements numbered with 32 bits. */
static tmap_status ref_elem_bytes(ctx *c, json_t *e, const char *field, const tmap_marray *d,
                                  tmap_mref *r)
{
    size_t tsize = tmap_elem_size(d->kind);
    tmap_status st = ref_int(c, e, field, "elem_bytes", 4096, tsize, &r->elem_bytes);
    if (st != TMAP_OK)
        return st;
    char f[64];
    snprintf(f, sizeof f, "%s.elem_bytes", field);
    if (r->elem_bytes & (r->elem_bytes - 1))
        return bad(c, f, "%zu is not a power of two", r->elem_bytes);
    if (r->elem_bytes % tsize || (d->count * tsize) % r->elem_bytes)
        return bad(c, f, "%zu bytes must be a multiple of %s's type (%zu bytes) and divide its "
                   "%zu bytes", r->elem_bytes, d->name, tsize, d->count * tsize);
    r->nelems = d->count * tsize / r->elem_bytes;
    if (r->nelems > MAX_REF_ELEMS)
        return bad(c, f, "%s has %zu elements, at most 2^32", d->name, r->nelems);
    return TMAP_OK;
}

/* per_thread k: thread t reads index[t*k .. t*k + k-1], all in the array. */
static tmap_status ref_per_thread(ctx *c, json_t *e, const char *field, const tmap_manifest *m,
                                  tmap_mref *r)
{
    tmap_status st = ref_int(c, e, field, "per_thread", (long long)MAX_COUNT, 1, &r->per_thread);
    const tmap_marray *ix = &m->arrays[r->index];
    if (st == TMAP_OK && r->per_thread > ix->count / m->threads) /* count < k * threads */
        return bad(c, field, "%s has %zu elements, fewer than per_thread (%zu) x threads (%zu)",
                   ix->name, ix->count, r->per_thread, m->threads);
    return st;
}

static tmap_status ref_access(ctx *c, json_t *e, const char *field, tmap_mref *r)
{
    char f[64];
    snprintf(f, sizeof f, "%s.access", field);
    json_t *v = json_object_get(e, "access");
    const char *a = v && json_is_string(v) ? json_string_value(v) : v ? "" : "read";
    r->read = !strcmp(a, "read") || !strcmp(a, "readwrite");
    r->write = !strcmp(a, "write") || !strcmp(a, "readwrite");
    if (!r->read && !r->write)
        return bad(c, f, "must be \"read\", \"write\" or \"readwrite\"");
    return TMAP_OK;
}

static tmap_status parse_reference(ctx *c, json_t *e, size_t i, tmap_manifest *m)
{
    static const char *const keys[] = {"data", "index", "per_thread", "elem_bytes", "access"};
    char field[32];
    snprintf(field, sizeof field, "references[%zu]", i);
    if (!json_is_object(e))
        return bad(c, field, "must be an object {\"data\", \"index\", \"per_thread\", "
                             "\"elem_bytes\", \"access\"}");
    const char *key;
    json_t *v;
    json_object_foreach(e, key, v) {
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k], key))
            k++;
        if (k == sizeof keys / sizeof keys[0])
            return bad(c, field, "unknown key '%.64s'", key);
    }
    tmap_mref *r = &m->refs[i];
    tmap_status st = ref_array(c, e, field, "data", m, &r->data);
    if (st == TMAP_OK)
        st = ref_array(c, e, field, "index", m, &r->index);
    if (st != TMAP_OK)
        return st;
    char f[64];
    snprintf(f, sizeof f, "%s.index", field);
    if (r->index == r->data)
        return bad(c, f, "the index array must not be the data array");
    if (!is_integral(m->arrays[r->index].kind))
        return bad(c, f, "%s is %s: an index array has an integer type", m->arrays[r->index].name,
                   tmap_elem_name(m->arrays[r->index].kind));
    if ((st = ref_per_thread(c, e, field, m, r)) ||
        (st = ref_elem_bytes(c, e, field, &m->arrays[r->data], r)))
        return st;
    return ref_access(c, e, field, r);
}

static tmap_status parse_references(ctx *c, json_t *root, tmap_manifest *m)
{
    json_t *v = json_object_get(root, "references");
    if (!v)
        return TMAP_OK;
    if (!json_is_array(v))
        return bad(c, "references", "must be an array of objects");
    m->refs = calloc(json_array_size(v) + 1, sizeof *m->refs);
    if (!m->refs)
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
    m->nrefs = json_array_size(v);
    for (size_t i = 0; i < m->nrefs; i++) {
        tmap_status st = parse_reference(c, json_array_get(v, i), i, m);
        if (st != TMAP_OK)
            return st;
    }
    return TMAP_OK;
}

static tmap_status parse_features(ctx *c, json_t *root, tmap_manifest *m)
{
    json_t *v = json_object_get(root, "features");
    if (!v)
        return TMAP_OK;
    if (!json_is_array(v))
        return bad(c, "features", "must be an array");
    size_t n = json_array_size(v);
    m->features = calloc(n + 1, sizeof *m->features);
    m->feature_names = calloc(n + 1, sizeof *m->feature_names);
    if (!m->features || !m->feature_names)
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char field[32];
        snprintf(field, sizeof field, "features[%zu]", i);
        json_t *e = json_array_get(v, i);
        tmap_mfeature *f = &m->features[i];
        m->nfeatures = i + 1;
        if (json_is_string(e)) {
            f->name = strdup(json_string_value(e));
            f->expr = strdup(json_string_value(e));
        } else if (json_is_object(e)) {
            tmap_status st = get_string(c, e, "name", 1, &f->name);
            if (st == TMAP_OK)
                st = get_string(c, e, "expr", 1, &f->expr);
            if (st != TMAP_OK)
                return st;
        } else {
            return bad(c, field, "a feature is an array name or {\"name\": ..., \"expr\": ...}");
        }
        if (!f->name || !f->expr)
            return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory");
        m->feature_names[i] = f->name;
        tmap_error e2 = {0};
        if (tmap_expr_check(m, f->expr, &e2) != TMAP_OK)
            return bad(c, field, "%s", e2.message);
    }
    return TMAP_OK;
}

/* threads = blocks x tpb for a grid given as "threads". */
static tmap_status grid_for_threads(ctx *c, json_t *t, uint64_t tpb, tmap_manifest *m)
{
    if (!json_is_integer(t) || json_integer_value(t) < 1)
        return bad(c, "threads", "must be a positive integer");
    uint64_t want = (uint64_t)json_integer_value(t);
    if (want > MAX_THREADS)
        return bad(c, "threads", "%llu threads, at most 2^32", (unsigned long long)want);
    uint64_t blocks = (want + tpb - 1) / tpb;
    if (blocks > 0x7fffffff)
        return bad(c, "threads", "%llu blocks of %llu threads: a 1-D grid has at most 2^31 - 1",
                   (unsigned long long)blocks, (unsigned long long)tpb);
    m->grid[0] = (unsigned)blocks;
    return TMAP_OK;
}

static tmap_status parse_geometry(ctx *c, json_t *root, tmap_manifest *m)
{
    static const unsigned block_max[3] = {1024, 1024, 64}, grid_max[3] = {0x7fffffff, 65535, 65535};
    int has_block, has_grid;
    tmap_status st = get_dim3(c, root, "block", block_max, m->block, &has_block);
    if (st == TMAP_OK)
        st = get_dim3(c, root, "grid", grid_max, m->grid, &has_grid);
    if (st != TMAP_OK)
        return st;
    if (!has_block)
        return bad(c, "block", "missing");
    json_t *t = json_object_get(root, "threads");
    uint64_t tpb = (uint64_t)m->block[0] * m->block[1] * m->block[2];
    if (tpb > 1024)
        return bad(c, "block", "%llu threads per block, at most 1024", (unsigned long long)tpb);
    if (has_grid == (t != NULL))
        return bad(c, "grid", "give exactly one of 'grid' and 'threads'");
    if (t && (st = grid_for_threads(c, t, tpb, m)) != TMAP_OK)
        return st;
    uint64_t blocks = (uint64_t)m->grid[0] * m->grid[1] * m->grid[2]; /* < 2^63 */
    if (blocks > MAX_THREADS / tpb)
        return bad(c, t ? "threads" : "grid", "%llu blocks of %llu threads: more than 2^32 threads",
                   (unsigned long long)blocks, (unsigned long long)tpb);
    m->threads = (size_t)(blocks * tpb);
    json_t *s = json_object_get(root, "shared_bytes");
    if (s && (!json_is_integer(s) || json_integer_value(s) < 0 ||
              json_integer_value(s) > MAX_SHARED_BYTES))
        return bad(c, "shared_bytes", "must be an integer in [0, %u] (227 KiB)", MAX_SHARED_BYTES);
    m->shared_bytes = s ? (unsigned)json_integer_value(s) : 0;
    return TMAP_OK;
}

static tmap_status parse_root(ctx *c, json_t *root, tmap_manifest *m)
{
    if (!json_is_object(root))
        return tmap_fail(c->err, TMAP_ERR_INVALID, "%s: a manifest is a JSON object", c->path);
    tmap_status st = get_string(c, root, "name", 0, &m->name);
    if (st == TMAP_OK) st = get_string(c, root, "source", 0, &m->source);
    if (st == TMAP_OK) st = get_string(c, root, "ptx", 0, &m->ptx_file);
    if (st == TMAP_OK) st = get_string(c, root, "kernel", 1, &m->kernel);
    if (st == TMAP_OK) st = get_string(c, root, "arch", 0, &m->arch);
    if (st == TMAP_OK) st = get_string(c, root, "key", 0, &m->key);
    if (st != TMAP_OK)
        return st;
    if (!m->source == !m->ptx_file)
        return bad(c, "source", "give exactly one of 'source' (.cu) and 'ptx'");
    if ((st = parse_options(c, root, m)) || (st = parse_geometry(c, root, m)) ||
        (st = parse_arrays(c, root, m)) || (st = parse_args(c, root, m)) ||
        (st = parse_references(c, root, m)) || (st = parse_features(c, root, m)))
        return st;
    for (size_t i = 0; m->key && i <= m->nfeatures; i++)
        if (i == m->nfeatures)
            return bad(c, "key", "names no feature of 'features'");
        else if (!strcmp(m->feature_names[i], m->key))
            break;
    return TMAP_OK;
}

static char *stem_of(const char *path)
{
    const char *s = strrchr(path, '/');
    s = s ? s + 1 : path;
    char *d = strdup(s);
    if (d && strrchr(d, '.'))
        *strrchr(d, '.') = '\0';
    return d;
}

tmap_status tmap_manifest_load(const char *path, tmap_manifest **out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, out);
    if (absent)
        return absent;
    *out = NULL;
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return tmap_fail(err, je.line > 0 ? TMAP_ERR_PARSE : TMAP_ERR_IO, "%s:%d: %s", path,
                         je.line, je.text);
    tmap_manifest *m = calloc(1, sizeof *m);
    char *pcopy = strdup(path);
    if (!m || !pcopy) {
        json_decref(root);
        free(m), free(pcopy);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    m->path = strdup(path);
    m->dir = strdup(dirname(pcopy));
    free(pcopy);
    ctx c = {path, err};
    tmap_status st = m->path && m->dir ? parse_root(&c, root, m)
                                       : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    json_decref(root);
    if (st == TMAP_OK && !m->name && !(m->name = stem_of(path)))
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (st != TMAP_OK) {
        tmap_manifest_free(m);
        return st;
    }
    *out = m;
    return TMAP_OK;
}

const char *tmap_manifest_name(const tmap_manifest *m) { return m ? m->name : NULL; }

long tmap_manifest_find(const tmap_manifest *m, const char *name)
{
    for (size_t i = 0; i < m->narrays; i++)
        if (!strcmp(m->arrays[i].name, name))
            return (long)i;
    return -1;
}

size_t tmap_manifest_num_arrays(const tmap_manifest *m) { return m ? m->narrays : 0; }

tmap_status tmap_manifest_array(const tmap_manifest *m, size_t i, tmap_array_view *v)
{
    if (TMAP_NEED(NULL, m, v))
        return TMAP_ERR_INVALID;
    if (i >= m->narrays)
        return TMAP_ERR_INVALID;
    const tmap_marray *a = &m->arrays[i];
    *v = (tmap_array_view){a->name, tmap_elem_name(a->kind), tmap_elem_size(a->kind), a->count,
                           a->host, a->device, a->is_input, a->is_output, a->per_thread};
    return TMAP_OK;
}

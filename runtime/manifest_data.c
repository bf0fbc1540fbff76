/*
 * manifest_data.c -- what a manifest does with its data: compile its kernel,
 * fill its arrays (generated from a seed, or read from files), put them on
 * the GPU with the argument list, and fetch results (the features:
 * manifest_features.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/cuda.h"
#include "runtime/manifest.h"

/* splitmix64: a small, well-mixed generator; the state is the caller's. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double next_unit(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1.0p-53; }

static char *resolve(const tmap_manifest *m, const char *file)
{
    tmap_buf b = {0};
    if (file[0] == '/')
        tmap_buf_puts(&b, file);
    else
        tmap_buf_printf(&b, "%s/%s", m->dir, file);
    return b.oom ? (free(b.data), NULL) : b.data;
}

static tmap_status read_raw(const tmap_manifest *m, tmap_marray *a, tmap_error *err)
{
    char *path = resolve(m, a->file), *data = NULL;
    size_t len = 0, want = a->count * tmap_elem_size(a->kind);
    if (!path)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    tmap_status st = tmap_file_read(path, &data, &len, err);
    if (st == TMAP_OK && len != want)
        st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: arrays.%s: file %s has %zu bytes, expected %zu",
                       m->path, a->name, path, len, want);
    if (st == TMAP_OK)
        memcpy(a->host, data, want);
    free(path);
    free(data);
    return st;
}

/* Stores v as element i of an array of type k (v must fit: tmap_elem_holds). */
static void elem_put(tmap_elem k, void *base, size_t i, double v)
{
    switch (k) {
    case TMAP_I32: ((int32_t *)base)[i] = (int32_t)v; break;
    case TMAP_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case TMAP_I64: ((int64_t *)base)[i] = (int64_t)v; break;
    case TMAP_U64: ((uint64_t *)base)[i] = (uint64_t)v; break;
    case TMAP_F32: ((float *)base)[i] = (float)v; break;
    case TMAP_F64: ((double *)base)[i] = v; break;
    case TMAP_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case TMAP_I8: ((int8_t *)base)[i] = (int8_t)v; break;
    }
}

/* v is exactly representable in type k (integers: integral and in range). */
static int elem_fits(tmap_elem k, double v)
{
    if (isnan(v) || isinf(v))
        return k == TMAP_F32 || k == TMAP_F64;
    return tmap_elem_holds(k, v) && (k != TMAP_F32 || (double)(float)v == v);
}

/* Exclusive prefix sum of an earlier (already generated) integer array;
 * a total the element type cannot hold (or a double cannot, exactly) is an
 * error naming the field. */
static tmap_status scan(const tmap_manifest *m, tmap_marray *a, tmap_error *err)
{
    const tmap_marray *s = &m->arrays[a->scan_of];
    double sum = 0;
    for (size_t i = 0; i < a->count; i++) {
        if (!tmap_elem_holds(a->kind, sum) || fabs(sum) > 0x1p53)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: field 'arrays.%s': the scan of %s "
                             "reaches %.0f at element %zu, which %s cannot hold", m->path, a->name,
                             s->name, sum, i, tmap_elem_name(a->kind));
        elem_put(a->kind, a->host, i, sum); /* float destinations are refused by the parser */
        if (i < s->count)
            sum += tmap_elem_get(s->kind, s->host, i);
    }
    return TMAP_OK;
}

/* The manifest element type holding an .npy dtype. */
static tmap_elem npy_elem(tmap_npy_dtype d)
{
    switch (d) {
    case TMAP_NPY_U1: return TMAP_U8;
    case TMAP_NPY_U4: return TMAP_U32;
    case TMAP_NPY_I4: return TMAP_I32;
    case TMAP_NPY_I8: return TMAP_I64;
    case TMAP_NPY_F4: return TMAP_F32;
    case TMAP_NPY_F8: return TMAP_F64;
    }
    return TMAP_F64;
}

/* An .npy file of exactly `count` elements (any shape).  The same dtype is
 * copied; another is converted only where every value survives the
 * conversion exactly (a fraction into an integer array is an error). */
static tmap_status read_npy(const tmap_manifest *m, tmap_marray *a, tmap_error *err)
{
    char *path = resolve(m, a->file);
    tmap_npy_array n = {0};
    if (!path)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    tmap_status st = tmap_npy_read(path, &n, err);
    size_t count = n.dim[0] * n.dim[1];
    tmap_elem from = npy_elem(n.dtype);
    if (!st && count != a->count)
        st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: arrays.%s: %s has %zu elements, expected %zu",
                       m->path, a->name, path, count, a->count);
    if (!st && from == a->kind)
        memcpy(a->host, n.data, count * tmap_elem_size(a->kind));
    for (size_t i = 0; !st && from != a->kind && i < count; i++) {
        double v = tmap_elem_get(from, n.data, i);
        if (!elem_fits(a->kind, v))
            st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: arrays.%s: element %zu of %s (%g) does not "
                           "fit type %s", m->path, a->name, i, path, v, tmap_elem_name(a->kind));
        else
            elem_put(a->kind, a->host, i, v);
    }
    tmap_npy_array_free(&n);
    free(path);
    return st;
}

/* Integer types draw integers in [lo, hi]; floats draw in [lo, hi). */
static void fill(tmap_marray *a, uint64_t seed)
{
    int integral = a->kind != TMAP_F32 && a->kind != TMAP_F64;
    uint64_t s = seed;
    for (size_t i = 0; i < a->count; i++) {
        double v = 0;
        switch (a->init) {
        case TMAP_INIT_IOTA: v = (double)i; break;
        case TMAP_INIT_FILL: v = a->p[0]; break;
        case TMAP_INIT_UNIFORM: /* cut to [lo, hi]: rounding may step past hi */
            v = integral ? a->p[0] + floor(next_unit(&s) * (a->p[1] - a->p[0] + 1))
                         : a->p[0] + next_unit(&s) * (a->p[1] - a->p[0]);
            v = fmin(fmax(v, a->p[0]), a->p[1]);
            break;
        case TMAP_INIT_POWERLAW: {
            /* inverse CDF of a Pareto law with exponent alpha, cut at hi */
            double u = next_unit(&s);
            v = a->p[0] * pow(1.0 - u, -1.0 / (a->p[2] - 1.0));
            v = v > a->p[1] ? a->p[1] : v;
            if (integral)
                v = floor(v);
            break;
        }
        default: v = 0; break;
        }
        elem_put(a->kind, a->host, i, v);
    }
}

tmap_status tmap_manifest_generate(tmap_manifest *m, uint64_t seed, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m);
    if (absent)
        return absent;
    for (size_t i = 0; i < m->narrays; i++) {
        tmap_marray *a = &m->arrays[i];
        if (!a->host && !(a->host = calloc(a->count, tmap_elem_size(a->kind))))
            return tmap_fail(err, TMAP_ERR_NOMEM, "%s: arrays.%s: out of memory for %zu elements",
                             m->path, a->name, a->count);
        if (a->init == TMAP_INIT_RAW || a->init == TMAP_INIT_NPY) {
            tmap_status st = a->init == TMAP_INIT_RAW ? read_raw(m, a, err) : read_npy(m, a, err);
            if (st == TMAP_ERR_IO)
                tmap_error_prefix(err, "%s: field 'arrays.%s'", m->path, a->name);
            if (st != TMAP_OK)
                return st;
        } else if (a->init == TMAP_INIT_SCAN) {
            tmap_status st = scan(m, a, err);
            if (st != TMAP_OK)
                return st;
        } else {
            /* each array gets its own stream so adding one changes no other.
             * The start is hashed from (seed, i): a start of seed + i * the
             * generator's own increment would make array i a shifted copy of
             * array 0 (element k of one = element k + i of the other). */
            uint64_t hs = seed, hi = (uint64_t)i;
            uint64_t start = next_u64(&hs) ^ (next_u64(&hi) * 0xd1342543de82ef95ull);
            fill(a, start);
        }
    }
    return TMAP_OK;
}

/* The arguments matched to the PTX's parameters; on a mismatch the PTX
 * and entry are freed. */
static tmap_status checked(const tmap_manifest *m, char **ptx, char **entry, tmap_error *err)
{
    tmap_status st = tmap_manifest_params(m, *ptx, *entry, err);
    if (st) {
        free(*ptx), free(*entry);
        *ptx = *entry = NULL;
    }
    return st;
}

const char *tmap_manifest_ptx_name(const tmap_manifest *m, char *buf, size_t size)
{
    const char *f = m->ptx_file ? m->ptx_file : m->source;
    const char *dir = f[0] == '/' ? "" : m->dir, *sep = f[0] == '/' ? "" : "/";
    if (m->ptx_file)
        snprintf(buf, size, "%s%s%s", dir, sep, f);
    else
        tmap_ptx_describe(buf, size, "PTX of %s compiled by NVRTC from %s%s%s", m->kernel, dir,
                          sep, f);
    return buf;
}

tmap_status tmap_manifest_ptx(const tmap_manifest *m, const char *arch, char **ptx,
                              char **entry, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m, ptx, entry);
    if (absent)
        return absent;
    *ptx = *entry = NULL;
    char *path = resolve(m, m->source ? m->source : m->ptx_file), *text = NULL;
    if (!path)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    tmap_status st = tmap_file_read(path, &text, NULL, err);
    if (st != TMAP_OK) {
        tmap_error_prefix(err, "%s", m->path);
        free(path);
        return st;
    }
    if (m->ptx_file) {
        *ptx = text;
        *entry = malloc(strlen(m->kernel) + 1);
        if (*entry)
            strcpy(*entry, m->kernel);
        free(path);
        return *entry ? checked(m, ptx, entry, err)
                      : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    const char *names[] = {m->kernel};
    tmap_compile_opts o = {.arch = arch ? arch : m->arch,
                           .options = (const char *const *)m->options,
                           .noptions = m->noptions,
                           .names = names,
                           .nnames = 1};
    const char *inc[] = {m->dir};
    o.include_dirs = inc;
    o.ninclude_dirs = 1;
    tmap_compiled c;
    st = tmap_compile(text, path, &o, &c, err);
    if (st == TMAP_OK) {
        const char *low = tmap_compiled_lowered(&c, m->kernel);
        *entry = malloc(strlen(low) + 1);
        if (*entry) {
            strcpy(*entry, low);
            *ptx = c.ptx;
            c.ptx = NULL;
        } else {
            st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        }
        tmap_compiled_free(&c);
    }
    free(text);
    free(path);
    return st ? st : checked(m, ptx, entry, err);
}

tmap_status tmap_manifest_bind(tmap_manifest *m, tmap_cuda *c, tmap_launch *l,
                               tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m, c, l);
    if (absent)
        return absent;
    if (m->bound && m->bound != c)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: bound to another driver handle", m->path);
    m->bound = c;
    m->saved = 0;
    for (size_t i = 0; i < m->narrays; i++) {
        tmap_marray *a = &m->arrays[i];
        size_t bytes = a->count * tmap_elem_size(a->kind);
        if (!a->host)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: arrays not generated before bind", m->path);
        tmap_status st = a->device ? TMAP_OK : tmap_cuda_alloc(c, bytes, &a->device, err);
        if (st == TMAP_OK)
            st = tmap_cuda_upload(c, a->device, a->host, bytes, err);
        if (st != TMAP_OK) {
            tmap_error_prefix(err, "%s: arrays.%s", m->path, a->name);
            return st;
        }
    }
    for (size_t i = 0; i < m->nargs; i++) {
        tmap_marg *g = &m->args[i];
        if (g->array >= 0) {
            m->argv[i] = &m->arrays[g->array].device;
        } else {
            m->argv[i] = &g->storage;
        }
    }
    memcpy(l->grid, m->grid, sizeof l->grid);
    memcpy(l->block, m->block, sizeof l->block);
    l->shared_bytes = m->shared_bytes;
    l->args = m->argv;
    l->nargs = m->nargs;
    return TMAP_OK;
}

tmap_status tmap_manifest_fetch(tmap_manifest *m, const char *array, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m, array);
    if (absent)
        return absent;
    long i = tmap_manifest_find(m, array);
    if (i < 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no array named '%s'", m->path, array);
    tmap_marray *a = &m->arrays[i];
    if (!a->device || !m->bound)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: arrays.%s is not on the GPU", m->path, array);
    return tmap_cuda_download(m->bound, a->host, a->device, a->count * tmap_elem_size(a->kind),
                              err);
}

tmap_status tmap_manifest_thread_arrays(const tmap_manifest *m, tmap_thread_array **out,
                                        size_t *n, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m, out, n);
    if (absent)
        return absent;
    *out = calloc(m->nargs + 1, sizeof **out);
    *n = 0;
    if (!*out)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < m->nargs; i++) {
        long a = m->args[i].array;
        if (a < 0 || !m->arrays[a].per_thread)
            continue;
        for (size_t j = 0; j < i; j++)
            if (m->args[j].array == a) {
                free(*out);
                *out = NULL;
                return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                                 "%s: arrays.%s is passed in arguments %zu and %zu; the layout "
                                 "transform cannot move it twice", m->path, m->arrays[a].name, j, i);
            }
        const tmap_marray *arr = &m->arrays[a];
        (*out)[(*n)++] = (tmap_thread_array){(unsigned)i, tmap_elem_size(arr->kind),
                                             arr->per_thread, arr->is_input, arr->is_output};
    }
    return TMAP_OK;
}

/*
 * npy.c -- reading and writing NumPy .npy files (format 1.0/2.0/3.0, C
 * order, 1-D or 2-D, dtypes |u1 <u4 <i4 <i8 <f4 <f8), and typed loads that
 * convert with range checks.  Every malformed input is a one-line error
 * naming the file and the problem.
 */
#include "threadmap/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static size_t npy_itemsize(tmap_npy_dtype t)
{
    switch (t) {
    case TMAP_NPY_U1: return 1;
    case TMAP_NPY_U4: case TMAP_NPY_I4: case TMAP_NPY_F4: return 4;
    case TMAP_NPY_I8: case TMAP_NPY_F8: return 8;
    }
    return 0;
}

static const char *npy_descr(tmap_npy_dtype t)
{
    switch (t) {
    case TMAP_NPY_U1: return "|u1";
    case TMAP_NPY_U4: return "<u4";
    case TMAP_NPY_I4: return "<i4";
    case TMAP_NPY_I8: return "<i8";
    case TMAP_NPY_F4: return "<f4";
    case TMAP_NPY_F8: return "<f8";
    }
    return "?";
}

/* ------------------------------------------------ header dict parsing */

/* A cursor over the header text [p, end). */
typedef struct npy_cursor {
    const char *p, *end;
    const char *name;
} npy_cursor;

static void npy_skip_ws(npy_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int npy_accept(npy_cursor *c, char ch)
{
    npy_skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A Python string literal ('..' or ".."), no escapes; copied into buf. */
static tmap_status npy_string(npy_cursor *c, char *buf, size_t size, tmap_error *err)
{
    npy_skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: expected a string", c->name);
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= size || *c->p == '\\')
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: bad string", c->name);
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: unterminated string", c->name);
    c->p++;
    buf[n] = '\0';
    return TMAP_OK;
}

static int npy_word(npy_cursor *c, const char *w)
{
    npy_skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, w, n)) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* A shape tuple "(a, b)", "(a,)" or "()"; *ndim may exceed 2 (counted). */
static tmap_status npy_shape(npy_cursor *c, int *ndim, size_t dim[2], tmap_error *err)
{
    if (!npy_accept(c, '('))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: 'shape' is not a tuple", c->name);
    *ndim = 0;
    for (;;) {
        npy_skip_ws(c);
        if (npy_accept(c, ')'))
            return TMAP_OK;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return tmap_fail(err, TMAP_ERR_FORMAT,
                             "%s: .npy header: 'shape' holds a non-integer", c->name);
        size_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            size_t d = (size_t)(*c->p - '0');
            if (v > (((size_t)-1) - d) / 10)
                return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: dimension too large",
                                 c->name);
            v = v * 10 + d;
            c->p++;
        }
        if (c->p < c->end && *c->p == 'L') /* Python 2 long */
            c->p++;
        if (*ndim < 2)
            dim[*ndim] = v;
        (*ndim)++;
        if (!npy_accept(c, ',')) {
            if (npy_accept(c, ')'))
                return TMAP_OK;
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: malformed 'shape'", c->name);
        }
    }
}

static tmap_status npy_dtype_from(const char *descr, const char *name, tmap_npy_dtype *t,
                                  tmap_error *err)
{
    static const struct { const char *s; tmap_npy_dtype t; } known[] = {
        {"|u1", TMAP_NPY_U1}, {"<u1", TMAP_NPY_U1}, {"u1", TMAP_NPY_U1},
        {"<u4", TMAP_NPY_U4}, {"<i4", TMAP_NPY_I4}, {"<i8", TMAP_NPY_I8},
        {"<f4", TMAP_NPY_F4}, {"<f8", TMAP_NPY_F8},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(descr, known[i].s)) {
            *t = known[i].t;
            return TMAP_OK;
        }
    if (descr[0] == '>')
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: big-endian dtype '%s' is not supported (use '<')", name, descr);
    return tmap_fail(err, TMAP_ERR_FORMAT,
                     "%s: dtype '%s' is not supported (|u1 <u4 <i4 <i8 <f4 <f8)", name, descr);
}

/* Parses the header dict into dtype and shape. */
static tmap_status npy_header(npy_cursor *c, tmap_npy_array *a, tmap_error *err)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!npy_accept(c, '{'))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header is not a dict", c->name);
    for (;;) {
        if (npy_accept(c, '}'))
            break;
        char key[32], val[32];
        tmap_status s = npy_string(c, key, sizeof key, err);
        if (s)
            return s;
        if (!npy_accept(c, ':'))
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: expected ':' after '%s'",
                             c->name, key);
        if (!strcmp(key, "descr") && !have_descr) {
            if ((s = npy_string(c, val, sizeof val, err)))
                return s;
            if ((s = npy_dtype_from(val, c->name, &a->dtype, err)))
                return s;
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order") && !have_order) {
            if (npy_word(c, "True"))
                return tmap_fail(err, TMAP_ERR_FORMAT,
                                 "%s: fortran-order arrays are not supported (save in C order)",
                                 c->name);
            if (!npy_word(c, "False"))
                return tmap_fail(err, TMAP_ERR_FORMAT,
                                 "%s: .npy header: 'fortran_order' is not True/False", c->name);
            have_order = 1;
        } else if (!strcmp(key, "shape") && !have_shape) {
            if ((s = npy_shape(c, &a->ndim, a->dim, err)))
                return s;
            have_shape = 1;
        } else {
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: unexpected or repeated key '%s'",
                             c->name, key);
        }
        if (!npy_accept(c, ',')) {
            if (npy_accept(c, '}'))
                break;
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: expected ',' or '}'", c->name);
        }
    }
    if (!have_descr || !have_order || !have_shape)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header lacks '%s'", c->name,
                         !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    if (a->ndim < 1 || a->ndim > 2)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: array has %d dimensions; only 1-D and 2-D are supported", c->name,
                         a->ndim);
    if (a->ndim == 1)
        a->dim[1] = 1;
    return TMAP_OK;
}

/* ------------------------------------------------------------ reading */

tmap_status tmap_npy_parse(const void *bytes, size_t len, const char *name,
                           tmap_npy_array *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, bytes, name, out);
    if (absent)
        return absent;
    const unsigned char *b = bytes;
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(b, npy_magic, sizeof npy_magic))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: not a .npy file (bad magic)", name);
    unsigned major = b[6];
    size_t hlen, off;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        off = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: truncated .npy header", name);
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        off = 12;
    } else {
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy format version %u.%u is not supported",
                         name, major, (unsigned)b[7]);
    }
    if (hlen > len - off)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: truncated .npy header (%zu bytes announced)",
                         name, hlen);
    npy_cursor c = {(const char *)b + off, (const char *)b + off + hlen, name};
    tmap_npy_array a = {0};
    tmap_status s = npy_header(&c, &a, err);
    if (s)
        return s;
    npy_skip_ws(&c);
    if (c.p != c.end)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: .npy header: text after the dict", name);
    size_t item = npy_itemsize(a.dtype), have = len - off - hlen;
    /* Bounds what callers allocate per row or column: no dimension exceeds
     * the file's size, not even that of an empty array (shape (2^32-1, 0)). */
    if (a.dim[0] > len || a.dim[1] > len ||
        (a.dim[1] && a.dim[0] > ((size_t)-1) / item / a.dim[1]))
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: shape (%zu, %zu) does not fit a file of %zu bytes", name,
                         a.dim[0], a.dim[1], len);
    size_t need = a.dim[0] * a.dim[1] * item;
    if (have < need)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: truncated data: shape needs %zu bytes, file has %zu", name, need,
                         have);
    if (have > need)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: %zu bytes of trailing data after the array", name, have - need);
    a.data = malloc(need ? need : 1);
    if (!a.data)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory (%zu bytes)", name, need);
    memcpy(a.data, b + off + hlen, need);
    *out = a;
    return TMAP_OK;
}

tmap_status tmap_npy_read(const char *path, tmap_npy_array *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, out);
    if (absent)
        return absent;
    char *bytes;
    size_t len;
    memset(out, 0, sizeof *out);
    tmap_status s = tmap_file_read(path, &bytes, &len, err);
    if (s)
        return s;
    s = tmap_npy_parse(bytes, len, path, out, err);
    free(bytes);
    return s;
}

void tmap_npy_array_free(tmap_npy_array *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ------------------------------------------------------------ writing */

tmap_status tmap_npy_encode(const char *path, tmap_npy_dtype dtype, const void *data,
                            int ndim, const size_t dim[2], tmap_buf *out, tmap_error *err)
{
    if (ndim != 1 && ndim != 2)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: cannot save a %d-D array", path, ndim);
    size_t item = npy_itemsize(dtype);
    if (!item)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: unknown dtype %d", path, (int)dtype);
    size_t rows = dim[0], cols = ndim == 2 ? dim[1] : 1;
    if (cols && rows > ((size_t)-1) / item / cols)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: array too large", path);
    char dict[160];
    if (ndim == 1)
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                 npy_descr(dtype), rows);
    else
        snprintf(dict, sizeof dict,
                 "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, %zu), }",
                 npy_descr(dtype), rows, cols);
    /* Invariant: 10 (v1 preamble) + header length is a multiple of 64, and
     * the header ends in '\n' (what numpy writes). */
    size_t dlen = strlen(dict), total = 10 + dlen + 1;
    size_t pad = (64 - total % 64) % 64, hlen = dlen + pad + 1;
    size_t nbytes = rows * cols * item;
    tmap_buf b = {0};
    tmap_buf_put(&b, npy_magic, sizeof npy_magic);
    char ver[4] = {1, 0, (char)(hlen & 0xff), (char)(hlen >> 8)};
    tmap_buf_put(&b, ver, 4);
    tmap_buf_put(&b, dict, dlen);
    for (size_t i = 0; i < pad; i++)
        tmap_buf_put(&b, " ", 1);
    tmap_buf_put(&b, "\n", 1);
    if (nbytes)
        tmap_buf_put(&b, data, nbytes);
    if (b.oom) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    }
    *out = b;
    return TMAP_OK;
}

tmap_status tmap_npy_save(const char *path, tmap_npy_dtype dtype, const void *data,
                          int ndim, const size_t dim[2], tmap_error *err)
{
    tmap_buf b = {0};
    tmap_status s = tmap_npy_encode(path, dtype, data, ndim, dim, &b, err);
    if (!s)
        s = tmap_file_write(path, b.data, b.len, err);
    tmap_buf_free(&b);
    return s;
}

tmap_status tmap_npy_save_u32(const char *path, const uint32_t *data, int ndim,
                              const size_t dim[2], tmap_error *err)
{
    return tmap_npy_save(path, TMAP_NPY_U4, data, ndim, dim, err);
}

tmap_status tmap_npy_save_i32(const char *path, const int32_t *data, int ndim,
                              const size_t dim[2], tmap_error *err)
{
    return tmap_npy_save(path, TMAP_NPY_I4, data, ndim, dim, err);
}

tmap_status tmap_npy_save_i64(const char *path, const int64_t *data, int ndim,
                              const size_t dim[2], tmap_error *err)
{
    return tmap_npy_save(path, TMAP_NPY_I8, data, ndim, dim, err);
}

tmap_status tmap_npy_save_f64(const char *path, const double *data, int ndim,
                              const size_t dim[2], tmap_error *err)
{
    return tmap_npy_save(path, TMAP_NPY_F8, data, ndim, dim, err);
}

/* ------------------------------------------------------- typed loads */

/* Element i of a as a double (exact for every integer dtype but large i8). */
static double npy_get_f64(const tmap_npy_array *a, size_t i)
{
    const unsigned char *p = (const unsigned char *)a->data + i * npy_itemsize(a->dtype);
    switch (a->dtype) {
    case TMAP_NPY_U1: return *p;
    case TMAP_NPY_U4: { uint32_t v; memcpy(&v, p, 4); return v; }
    case TMAP_NPY_I4: { int32_t v; memcpy(&v, p, 4); return v; }
    case TMAP_NPY_I8: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case TMAP_NPY_F4: { float v; memcpy(&v, p, 4); return v; }
    case TMAP_NPY_F8: { double v; memcpy(&v, p, 8); return v; }
    }
    return 0;
}

/* Element i as an integer; fails (returns 0) for non-integral or huge
 * floats. */
static int npy_get_i64(const tmap_npy_array *a, size_t i, int64_t *v)
{
    if (a->dtype == TMAP_NPY_I8) {
        memcpy(v, (const unsigned char *)a->data + i * 8, 8);
        return 1;
    }
    double d = npy_get_f64(a, i);
    if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 ||
        d >= 9223372036854775808.0)
        return 0;
    *v = (int64_t)d;
    return 1;
}

/* Reads path and checks the rank the caller wants. */
static tmap_status npy_load_checked(const char *path, tmap_npy_rank rank,
                                    tmap_npy_array *a, tmap_error *err)
{
    tmap_status s = tmap_npy_read(path, a, err);
    if (s)
        return s;
    if (rank != TMAP_NPY_ANY && a->ndim != (int)rank) {
        int nd = a->ndim;
        tmap_npy_array_free(a);
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: expected a %d-D array, got %d-D", path,
                         (int)rank, nd);
    }
    return TMAP_OK;
}

static tmap_status npy_elem_error(const char *path, const tmap_npy_array *a, size_t i,
                                  const char *what, tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_FORMAT, "%s: element [%zu, %zu] = %.17g is %s", path,
                     i / a->dim[1], i % a->dim[1], npy_get_f64(a, i), what);
}

/* Converts element i of a into *out; returns NULL, or what the element is not. */
typedef const char *(*npy_convert)(const tmap_npy_array *a, size_t i, void *out);

static const char *npy_to_u32(const tmap_npy_array *a, size_t i, void *out)
{
    int64_t x;
    if (!npy_get_i64(a, i, &x) || x < 0 || x > (int64_t)UINT32_MAX)
        return "not an integer in [0, 2^32-1]";
    *(uint32_t *)out = (uint32_t)x;
    return NULL;
}

static const char *npy_to_i64(const tmap_npy_array *a, size_t i, void *out)
{
    return npy_get_i64(a, i, out) ? NULL : "not a 64-bit integer";
}

static const char *npy_to_f64(const tmap_npy_array *a, size_t i, void *out)
{
    *(double *)out = npy_get_f64(a, i);
    return NULL;
}

/* What the typed loads share: reads path, checks its rank and converts each
 * element with conv into a malloc'ed array of `size`-byte items; sets *data
 * and dim only on success. */
static tmap_status npy_load(const char *path, tmap_npy_rank rank, size_t size,
                            npy_convert conv, void **data, size_t dim[2], tmap_error *err)
{
    tmap_npy_array a;
    tmap_status s = npy_load_checked(path, rank, &a, err);
    if (s)
        return s;
    size_t n = a.dim[0] * a.dim[1];
    unsigned char *v = malloc((n ? n : 1) * size);
    if (!v) {
        tmap_npy_array_free(&a);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < n; i++) {
        const char *bad = conv(&a, i, v + i * size);
        if (bad) {
            s = npy_elem_error(path, &a, i, bad, err);
            free(v);
            tmap_npy_array_free(&a);
            return s;
        }
    }
    dim[0] = a.dim[0];
    dim[1] = a.dim[1];
    tmap_npy_array_free(&a);
    *data = v;
    return TMAP_OK;
}

tmap_status tmap_npy_load_u32(const char *path, tmap_npy_rank rank, uint32_t **data,
                              size_t dim[2], tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, data, dim);
    if (absent)
        return absent;
    void *v = NULL;
    tmap_status s = npy_load(path, rank, sizeof **data, npy_to_u32, &v, dim, err);
    return s ? s : (*data = v, TMAP_OK);
}

tmap_status tmap_npy_load_i64(const char *path, tmap_npy_rank rank, int64_t **data,
                              size_t dim[2], tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, data, dim);
    if (absent)
        return absent;
    void *v = NULL;
    tmap_status s = npy_load(path, rank, sizeof **data, npy_to_i64, &v, dim, err);
    return s ? s : (*data = v, TMAP_OK);
}

tmap_status tmap_npy_load_f64(const char *path, tmap_npy_rank rank, double **data,
                              size_t dim[2], tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, data, dim);
    if (absent)
        return absent;
    void *v = NULL;
    tmap_status s = npy_load(path, rank, sizeof **data, npy_to_f64, &v, dim, err);
    return s ? s : (*data = v, TMAP_OK);
}

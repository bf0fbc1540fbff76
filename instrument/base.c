/*
 * base.c -- errors, growable buffers and whole-file I/O shared by all stages.
 */
#include "base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *tmap_status_string(tmap_status status)
{
    switch (status) {
    case TMAP_OK: return "ok";
    case TMAP_ERR_INVALID: return "invalid argument";
    case TMAP_ERR_NOMEM: return "out of memory";
    case TMAP_ERR_IO: return "i/o error";
    case TMAP_ERR_PARSE: return "parse error";
    case TMAP_ERR_FORMAT: return "bad file format";
    case TMAP_ERR_NVRTC: return "NVRTC compilation failed";
    case TMAP_ERR_CUDA: return "CUDA driver error";
    case TMAP_ERR_NO_DEVICE: return "no CUDA device";
    case TMAP_ERR_UNSUPPORTED: return "unsupported";
    case TMAP_ERR_NUMERIC: return "numerical error";
    }
    return "unknown status";
}

tmap_status tmap_fail(tmap_error *err, tmap_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

void tmap_error_prefix(tmap_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char head[TMAP_ERROR_MAX], old[TMAP_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    snprintf(err->message, sizeof err->message, "%s: %s", head, old);
}

int tmap_grow(void *array, size_t *cap, size_t need, size_t elem)
{
    void **p = (void **)array;
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > ((size_t)-1) / 2 / elem)
            return -1;
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

void tmap_buf_put(tmap_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (tmap_grow(&b->data, &b->cap, b->len + n + 1, 1)) {
        b->oom = 1;
        return;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tmap_buf_puts(tmap_buf *b, const char *s) { tmap_buf_put(b, s, strlen(s)); }

void tmap_buf_printf(tmap_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        tmap_buf_put(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tmap_buf_put(b, big, (size_t)n);
    free(big);
}

void tmap_buf_free(tmap_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

tmap_status tmap_file_read(const char *path, char **data, size_t *len,
                           tmap_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot open: %s", path,
                         strerror(errno));
    tmap_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        tmap_buf_put(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_IO, "%s: read error", path);
    }
    if (b.oom) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory reading file", path);
    }
    if (!b.data)
        tmap_buf_put(&b, "", 0);
    *data = b.data;
    if (len)
        *len = b.len;
    return TMAP_OK;
}

tmap_status tmap_file_write(const char *path, const void *data, size_t n,
                            tmap_error *err)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    snprintf(tmp, plen + 16, "%s.tmp~", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        tmap_status s = tmap_fail(err, TMAP_ERR_IO, "%s: cannot create: %s", path,
                                  strerror(errno));
        free(tmp);
        return s;
    }
    int ok = fwrite(data, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        free(tmp);
        return tmap_fail(err, TMAP_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    free(tmp);
    return TMAP_OK;
}

tmap_status tmap_dir_make(const char *dir, tmap_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: path too long", dir);
    /* each prefix ending at a '/' (and the whole path) is created in turn */
    for (char *p = path + 1;; p++) {
        int end = *p == '\0';
        if (*p != '/' && !end)
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return tmap_fail(err, TMAP_ERR_IO, "%s: cannot create folder: %s", path,
                             strerror(errno));
        if (end)
            return TMAP_OK;
        *p = '/';
    }
}

tmap_status tmap_bbv_create(tmap_bbv *bbv, size_t nthreads, size_t nblocks,
                            tmap_error *err)
{
    memset(bbv, 0, sizeof *bbv);
    if (nblocks && nthreads > ((size_t)-1) / sizeof(uint32_t) / nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID, "BBV matrix %zu x %zu is too large",
                         nthreads, nblocks);
    size_t n = nthreads * nblocks;
    bbv->counts = calloc(n ? n : 1, sizeof(uint32_t));
    if (!bbv->counts)
        return tmap_fail(err, TMAP_ERR_NOMEM, "cannot allocate a %zu x %zu BBV matrix",
                         nthreads, nblocks);
    bbv->nthreads = nthreads;
    bbv->nblocks = nblocks;
    return TMAP_OK;
}

void tmap_bbv_free(tmap_bbv *bbv)
{
    if (!bbv)
        return;
    free(bbv->counts);
    memset(bbv, 0, sizeof *bbv);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tmap_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

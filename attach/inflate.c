/*
 * inflate.c (attach) -- inflating compressed fatbin entries.  nvcc
 * compresses PTX in fatbins by default (CUDA 13: Zstandard, flag 0x8000;
 * older toolkits: LZ4, flag 0x2000).  The system's libzstd / liblz4 are
 * loaded at run time, so nothing is needed to build; without them the
 * caller falls back to cuobjdump.
 */
#include <dlfcn.h>

#include "attach/image.h"
#include "common/base.h"

typedef size_t (*zstd_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_err_fn)(size_t);
typedef int (*lz4_fn)(const char *, char *, int, int);

static void *symbol(const char *lib, const char *name, tmap_error *err)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, name) : NULL;
    if (!f)
        tmap_fail(err, TMAP_ERR_UNSUPPORTED, "compressed fatbin entry: no %s in %s", name, lib);
    return f;
}

static tmap_status inflate_zstd(const void *in, size_t n, char *out, size_t cap,
                                tmap_error *err)
{
    void *f = symbol("libzstd.so.1", "ZSTD_decompress", err);
    void *e = f ? symbol("libzstd.so.1", "ZSTD_isError", err) : NULL;
    if (!f || !e)
        return TMAP_ERR_UNSUPPORTED;
    zstd_fn dec;
    zstd_err_fn is_error;
    *(void **)&dec = f;
    *(void **)&is_error = e;
    size_t got = dec(out, cap, in, n);
    if (is_error(got) || got != cap)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "compressed fatbin entry: Zstandard data is damaged");
    return TMAP_OK;
}

static tmap_status inflate_lz4(const void *in, size_t n, char *out, size_t cap,
                               tmap_error *err)
{
    void *f = symbol("liblz4.so.1", "LZ4_decompress_safe", err);
    if (!f)
        return TMAP_ERR_UNSUPPORTED;
    lz4_fn dec;
    *(void **)&dec = f;
    int got = dec(in, out, (int)n, (int)cap);
    if (got < 0 || (size_t)got != cap)
        return tmap_fail(err, TMAP_ERR_INVALID, "compressed fatbin entry: LZ4 data is damaged");
    return TMAP_OK;
}

tmap_status tmap_inflate_entry(uint64_t flags, const void *in, size_t n, char *out,
                                size_t cap, tmap_error *err)
{
    if (n > (size_t)1 << 30 || cap > (size_t)1 << 30)
        return tmap_fail(err, TMAP_ERR_INVALID, "compressed fatbin entry: %zu -> %zu bytes", n,
                         cap);
    if (flags & TMAP_FATBIN_ZSTD)
        return inflate_zstd(in, n, out, cap, err);
    if (flags & TMAP_FATBIN_LZ4)
        return inflate_lz4(in, n, out, cap, err);
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                     "compressed fatbin entry: unknown compression (flags 0x%llx)",
                     (unsigned long long)flags);
}

/*
 * image.c (attach) -- finding PTX in module images.  A fatbin is a 16-byte
 * header (magic 0xBA55ED50, version, header size, size of the entries)
 * followed by entries, each with its own header: kind (1 PTX, 2 cubin),
 * header size, padded payload size, compressed size, the architecture
 * (90 for sm_90 / compute_90), flags (compression) and, for compressed
 * entries, the inflated size.  The runtime hands the driver a wrapper
 * (magic 0x466243B1) that points at the fatbin.  Layout as nvcc 12 and 13
 * write it, checked against cuobjdump in tests/test_attach.c.
 */
#include <stdlib.h>
#include <string.h>

#include "attach/image.h"
#include "common/base.h"

enum {
    FATBIN_MAGIC = 0xBA55ED50u,
    WRAPPER_MAGIC = 0x466243B1u,
    KIND_PTX = 1,
    KIND_SASS = 2,
    ENTRY_MIN_HEADER = 64,
    MAX_TEXT = 1 << 30, /* the largest inflated PTX taken (a damaged header says more) */
};

static uint16_t u16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static tmap_status add_ptx(tmap_image *img, tmap_image_ptx m, tmap_error *err)
{
    if ((!m.text && !m.packed) || tmap_grow(&img->ptx, &img->cap, img->nptx + 1, sizeof *img->ptx)) {
        free(m.text);
        free(m.packed);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for PTX modules");
    }
    img->ptx[img->nptx++] = m;
    return TMAP_OK;
}

static void *copy_bytes(const void *p, size_t n)
{
    char *t = malloc(n + 1);
    if (t) {
        memcpy(t, p, n);
        t[n] = '\0';
    }
    return t;
}

static void unread(tmap_image *img, const char *why)
{
    if (!img->nopaque++)
        snprintf(img->opaque_why, sizeof img->opaque_why, "%s", why);
}

/* A PTX entry: its text, or its compressed bytes, inflated only when a
 * kernel is looked for (tmap_image_find).  An entry with a bad header is
 * counted as unread, not an error: cuobjdump may still read it. */
static tmap_status ptx_entry(tmap_image *img, const unsigned char *h, size_t hsize,
                             const unsigned char *payload, size_t padded, tmap_error *err)
{
    tmap_image_ptx m = {.flags = u64(h + 40), .arch = u32(h + 28)};
    if (!(m.flags & (TMAP_FATBIN_LZ4 | TMAP_FATBIN_ZSTD))) {
        m.text = copy_bytes(payload, strnlen((const char *)payload, padded));
        return add_ptx(img, m, err);
    }
    m.packed_size = u32(h + 16);
    m.full = hsize >= 64 ? (size_t)u64(h + 56) : 0;
    if (!m.full || m.full > MAX_TEXT || m.packed_size > padded) {
        unread(img, "compressed entry with a bad header");
        return TMAP_OK;
    }
    m.packed = copy_bytes(payload, m.packed_size);
    return add_ptx(img, m, err);
}

/* Inflates module i if still compressed; 0 when its text is there. */
static int inflated(tmap_image *img, size_t i)
{
    tmap_image_ptx *m = &img->ptx[i];
    if (m->text || !m->packed)
        return m->text ? 0 : -1;
    tmap_error why = {0};
    char *text = malloc(m->full + 1);
    if (text && tmap_inflate_entry(m->flags, m->packed, m->packed_size, text, m->full, &why) == TMAP_OK) {
        text[m->full] = '\0';
        m->text = text;
    } else {
        free(text);
        unread(img, why.message[0] ? why.message : "out of memory inflating PTX");
    }
    free(m->packed);
    m->packed = NULL;
    return m->text ? 0 : -1;
}

static tmap_status entry_at(tmap_image *img, const unsigned char *h, size_t left,
                            size_t *used, tmap_error *err)
{
    if (left < ENTRY_MIN_HEADER)
        return tmap_fail(err, TMAP_ERR_INVALID, "fatbin: entry header cut short");
    uint16_t kind = u16(h);
    size_t hsize = u32(h + 4);
    uint64_t padded = u64(h + 8);
    if (hsize < ENTRY_MIN_HEADER || hsize > left || padded > left - hsize)
        return tmap_fail(err, TMAP_ERR_INVALID, "fatbin: entry of %llu bytes overruns the fatbin",
                         (unsigned long long)padded);
    *used = hsize + (size_t)padded;
    if (kind == KIND_SASS) {
        img->nsass++;
        if (u32(h + 28) > img->sass_arch)
            img->sass_arch = u32(h + 28);
        return TMAP_OK;
    }
    return kind == KIND_PTX ? ptx_entry(img, h, hsize, h + hsize, (size_t)padded, err) : TMAP_OK;
}

/* One fatbin at p; *size receives its whole size.  avail 0: unknown. */
static tmap_status fatbin_at(tmap_image *img, const unsigned char *p, size_t avail,
                             size_t *size, tmap_error *err)
{
    size_t hsize = u16(p + 6);
    uint64_t body = u64(p + 8);
    if (hsize < 16 || (avail && (hsize > avail || body > avail - hsize)))
        return tmap_fail(err, TMAP_ERR_INVALID, "fatbin: header says %llu bytes, %zu present",
                         (unsigned long long)body, avail);
    *size = hsize + (size_t)body;
    const unsigned char *e = p + hsize;
    tmap_status st = TMAP_OK;
    for (size_t left = (size_t)body, used = 0; st == TMAP_OK && left; left -= used, e += used)
        st = entry_at(img, e, left, &used, err);
    return st;
}

tmap_status tmap_image_scan_fatbins(tmap_image *img, const unsigned char *p, size_t n,
                                    tmap_error *err)
{
    size_t off = 0, size = 0;
    while (off + 16 <= n) {
        if (u32(p + off) != FATBIN_MAGIC) {
            off += 8; /* fatbins are 8-byte aligned; padding between them */
            continue;
        }
        tmap_status st = fatbin_at(img, p + off, n - off, &size, err);
        if (st != TMAP_OK)
            return st;
        off += size;
    }
    return TMAP_OK;
}

tmap_status tmap_image_scan(tmap_image *img, const void *data, size_t avail, tmap_error *err)
{
    const unsigned char *p = data;
    size_t size;
    if (!p)
        return tmap_fail(err, TMAP_ERR_INVALID, "module image: NULL");
    if (u32(p) == WRAPPER_MAGIC) {
        const void *inner;
        memcpy(&inner, p + 8, sizeof inner);
        return tmap_image_scan(img, inner, 0, err);
    }
    if (u32(p) == FATBIN_MAGIC)
        return fatbin_at(img, p, avail, &size, err);
    if (!memcmp(p, "\177ELF", 4)) {
        img->nsass++;
        return TMAP_OK;
    }
    size_t n = avail ? strnlen(data, avail) : strlen(data);
    return add_ptx(img, (tmap_image_ptx){.text = copy_bytes(p, n)}, err);
}

/* Does the text define `.entry name(`? */
static int defines(const char *ptx, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = strstr(ptx, ".entry"); s; s = strstr(s + 6, ".entry")) {
        const char *q = s + 6;
        while (*q == ' ' || *q == '\t')
            q++;
        if (!strncmp(q, name, n) && (q[n] == '(' || q[n] == ' ' || q[n] == '\n' ||
                                     q[n] == '\r' || q[n] == '\t'))
            return 1;
    }
    return 0;
}

const char *tmap_image_find(tmap_image *img, const char *entry, unsigned max_arch)
{
    const char *best = NULL;
    unsigned best_arch = 0;
    for (size_t i = 0; i < img->nptx; i++) {
        unsigned a = img->ptx[i].arch;
        if ((max_arch && a > max_arch) || (best && a < best_arch) || inflated(img, i) ||
            !defines(img->ptx[i].text, entry))
            continue;
        best = img->ptx[i].text;
        best_arch = a;
    }
    return best;
}

tmap_status tmap_image_missing(const tmap_image *img, const char *entry, const char *where,
                               unsigned arch, tmap_error *err)
{
    if (img->nopaque)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: kernel '%s': PTX present but unread: %s",
                         where, entry, img->opaque_why);
    if (img->nsass) {
        unsigned a = img->sass_arch ? img->sass_arch : arch ? arch : 90;
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: kernel '%s' has SASS only (sm_%u), no PTX, which threadmap needs "
                         "to instrument it; rebuild it with PTX kept, e.g. nvcc -gencode "
                         "arch=compute_%u,code=sm_%u -gencode arch=compute_%u,code=compute_%u",
                         where, entry, a, a, a, a, a);
    }
    return tmap_fail(err, TMAP_ERR_INVALID, "%s: no PTX defines kernel '%s'", where, entry);
}

void tmap_image_free(tmap_image *img)
{
    for (size_t i = 0; i < img->nptx; i++) {
        free(img->ptx[i].text);
        free(img->ptx[i].packed);
    }
    free(img->ptx);
    memset(img, 0, sizeof *img);
}

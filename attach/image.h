/*
 * image.h (attach) -- the PTX inside a module image as the CUDA driver is
 * handed it (a fatbin, the runtime's fatbin wrapper, PTX text or a cubin)
 * or as an executable or shared library carries it (its .nv_fatbin
 * sections): image.c walks the fatbin headers, inflate.c inflates the
 * compressed entries.  Private to attach/.
 */
#ifndef TMAP_ATTACH_IMAGE_H
#define TMAP_ATTACH_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "threadmap/attach.h"

/* One PTX module: its text (NUL-terminated, owned), or, until a kernel is
 * looked for in it, its compressed bytes (owned); and its architecture
 * (90 for compute_90; 0 when the image was bare PTX). */
typedef struct tmap_image_ptx {
    char *text;
    unsigned char *packed;
    size_t packed_size, full;   /* compressed and inflated sizes */
    uint64_t flags;             /* the fatbin entry's: the compression */
    unsigned arch;
} tmap_image_ptx;

/* What one image, or several, hold. */
typedef struct tmap_image {
    tmap_image_ptx *ptx;  /* the PTX modules */
    size_t nptx, cap;
    size_t nsass;         /* cubin (SASS) entries seen */
    unsigned sass_arch;   /* the highest of them (0: unknown) */
    size_t nopaque;       /* PTX entries found unreadable (bad header, inflation failed) */
    char opaque_why[160]; /* why, for the first of them */
} tmap_image;

/* Adds what the image at `data` holds: a fatbin wrapper, a fatbin, a cubin
 * (ELF) or PTX text.  avail: bytes readable at data, or 0 when the caller
 * cannot tell (an image handed to cuModuleLoadData: its headers say). */
tmap_status tmap_image_scan(tmap_image *img, const void *data, size_t avail, tmap_error *err);
/* Adds every fatbin of a buffer of back-to-back fatbins (an .nv_fatbin). */
tmap_status tmap_image_scan_fatbins(tmap_image *img, const unsigned char *p, size_t n,
                                    tmap_error *err);
/* The PTX module defining `.entry entry(`, of the highest architecture at
 * most max_arch (0: any); NULL when none does.  Inflates the candidates
 * still compressed (those that fail count as unread). */
const char *tmap_image_find(tmap_image *img, const char *entry, unsigned max_arch);
void tmap_image_free(tmap_image *img);

/* The message for a kernel found nowhere as PTX: SASS only (how to rebuild
 * with PTX, for the SASS's architecture, else `arch`, else sm_90), or
 * compressed beyond reach, or absent.  `where` names the binary or image. */
tmap_status tmap_image_missing(const tmap_image *img, const char *entry, const char *where,
                               unsigned arch, tmap_error *err);

/* cuobjdump.c: adds the PTX modules that `cuobjdump -ptx path` prints. */
tmap_status tmap_cuobjdump_scan(tmap_image *img, const char *cuobjdump, const char *path,
                                tmap_error *err);

/* inflate.c: inflates a fatbin entry compressed with LZ4 (flag 0x2000)
 * or Zstandard (flag 0x8000) into out[0..cap), with the system's liblz4 /
 * libzstd loaded at run time; TMAP_ERR_UNSUPPORTED without them. */
enum { TMAP_FATBIN_LZ4 = 0x2000, TMAP_FATBIN_ZSTD = 0x8000 };
tmap_status tmap_inflate_entry(uint64_t flags, const void *in, size_t n, char *out,
                               size_t cap, tmap_error *err);

#endif

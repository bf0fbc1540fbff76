/*
 * dl.h -- a table of function pointers filled from a library loaded with
 * dlopen: libcuda's (runtime/cuda.c) and NVRTC's (instrument/nvrtc.c).
 */
#ifndef TMAP_COMMON_DL_H
#define TMAP_COMMON_DL_H

#include <stddef.h>

/* One entry: where its pointer lies in the table, and the symbol names to
 * try in order (a versioned name first; the second may be NULL). */
typedef struct tmap_dl_sym {
    size_t offset;
    const char *names[2];
} tmap_dl_sym;

#define TMAP_DL_SYM(type, field, a, b) {offsetof(type, field), {a, b}}

/* Fills each entry's pointer in api from lib: NULL when every entry was
 * found, else the first name of the first entry lib lacks (the entries
 * before it are filled). */
const char *tmap_dl_resolve(void *lib, const tmap_dl_sym *table, size_t n, void *api);

#endif

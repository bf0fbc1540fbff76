/*
 * common/base.h -- what every stage shares, private to the library: setting
 * errors (error.c), growable buffers (buf.c), whole files (file.c), the
 * median (median.c), a monotonic clock (clock.c) and numbers in the "C"
 * locale (locale.c).  The public part of
 * common/ is threadmap/common.h.
 */
#ifndef TMAP_COMMON_BASE_H
#define TMAP_COMMON_BASE_H

#include <locale.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "threadmap/common.h"

#if defined(__GNUC__)
#define TMAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TMAP_PRINTF(f, a)
#endif

/* Fills *err (if not NULL) and returns status: `return tmap_fail(err, ...)`. */
tmap_status tmap_fail(tmap_error *err, tmap_status status, const char *fmt, ...)
    TMAP_PRINTF(3, 4);

/* TMAP_NEED(err, a, b, ...): TMAP_ERR_INVALID ("FUNCTION: argument 'b' is
 * NULL") for the first of the pointers a public function requires that is
 * NULL, else TMAP_OK: `if ((s = TMAP_NEED(err, out, path))) return s;`. */
#define TMAP_NEED(err, ...)                                                          \
    tmap_need(err, __func__, #__VA_ARGS__,                                           \
              sizeof((const void *const[]){__VA_ARGS__}) / sizeof(const void *),     \
              (const void *const[]){__VA_ARGS__})
tmap_status tmap_need(tmap_error *err, const char *func, const char *names, size_t n,
                      const void *const *ptrs);

/* Prepends "context: " to an error already set (e.g. a file name). */
void tmap_error_prefix(tmap_error *err, const char *fmt, ...) TMAP_PRINTF(2, 3);

/* A growable byte buffer that stays NUL-terminated. */
typedef struct tmap_buf {
    char *data;
    size_t len;
    size_t cap;
    int oom; /* set once an allocation failed; later appends are ignored */
} tmap_buf;

void tmap_buf_put(tmap_buf *b, const char *s, size_t n);
void tmap_buf_puts(tmap_buf *b, const char *s);
void tmap_buf_printf(tmap_buf *b, const char *fmt, ...) TMAP_PRINTF(2, 3);
void tmap_buf_free(tmap_buf *b);

/* The most bytes an input file may have (8 GiB) unless the environment
 * variable THREADMAP_MAX_INPUT_MB says otherwise (tmap_file_max): endless
 * inputs (/dev/zero, a pipe) fail instead of exhausting memory. */
#define TMAP_FILE_MAX ((size_t)8 << 30)
size_t tmap_file_max(void);

/* Reads a whole file into *data (NUL-terminated); *len excludes the NUL.
 * Fails (TMAP_ERR_IO) for a file of more than tmap_file_max() bytes. */
tmap_status tmap_file_read(const char *path, char **data, size_t *len,
                           tmap_error *err);
/* The same with the bound `max` in bytes. */
tmap_status tmap_file_read_max(const char *path, size_t max, char **data, size_t *len,
                               tmap_error *err);
/* Writes n bytes to path: through a temporary beside it (unique name)
 * renamed into place, keeping the mode of a file it replaces; "-" is
 * stdout, and an existing non-regular file (/dev/null, a FIFO) is written
 * in place. */
tmap_status tmap_file_write(const char *path, const void *data, size_t n,
                            tmap_error *err);

/* Files written together: each _add writes a temporary (as tmap_file_write
 * does), _commit renames them all into place (and frees the set), _abort
 * removes them.  No file is replaced unless every _add succeeded. */
#define TMAP_FILE_SET_MAX 8
typedef struct tmap_file_set {
    size_t n;
    char *tmp[TMAP_FILE_SET_MAX], *path[TMAP_FILE_SET_MAX];
} tmap_file_set;
tmap_status tmap_file_set_add(tmap_file_set *set, const char *path, const void *data,
                              size_t n, tmap_error *err);
tmap_status tmap_file_set_commit(tmap_file_set *set, tmap_error *err);
void tmap_file_set_abort(tmap_file_set *set);

/* The bytes of tmap_npy_save's file into *out (path names the file in
 * messages); the caller frees out. */
tmap_status tmap_npy_encode(const char *path, tmap_npy_dtype dtype, const void *data,
                            int ndim, const size_t dim[2], tmap_buf *out, tmap_error *err);

/* mkdir -p: creates dir and any missing parents (existing ones are fine). */
tmap_status tmap_dir_make(const char *dir, tmap_error *err);

/* Sorts v[0..n) ascending and returns its median, the mean of the two
 * middle values when n is even; n >= 1. */
double tmap_median(double *v, size_t n);

/* Grows *array (of *cap elements of size elem) to hold at least need. */
int tmap_grow(void *array, size_t *cap, size_t need, size_t elem);

/* The calling thread uses the "C" locale (numbers with '.') until
 * tmap_locale_restore(the value returned); (locale_t)0 if it could not. */
locale_t tmap_locale_c(void);
void tmap_locale_restore(locale_t old);
/* strtod in the "C" locale, whatever the process's. */
double tmap_strtod(const char *s, char **end);

/* Seconds on CLOCK_MONOTONIC: for intervals, never for dates. */
double tmap_clock_seconds(void);

/* FNV-1a 64 of data[0..n). */
uint64_t tmap_fnv1a(const void *data, size_t n);

#endif

/*
 * threadmap/common.h -- what every stage of threadmap shares (stable): the version, status codes
 * and errors, the BBV matrix, NumPy .npy I/O and BBV files.
 *
 * Conventions, true of every function of the API:
 *   - Functions that can fail return a tmap_status and take a last argument
 *     `tmap_error *err` (may be NULL).  On failure err->message holds one
 *     printable line naming the problem and the place (file, PTX line, CUDA
 *     call).  On success *err is left untouched.
 *   - Objects are created by tmap_X_create/load/... and released by
 *     tmap_X_free (which accepts NULL).  Output arrays the library allocates
 *     are released with free().
 *   - A pointer argument that a function requires (one not documented as
 *     "may be NULL") given as NULL fails with TMAP_ERR_INVALID and the
 *     message "FUNCTION: argument 'NAME' is NULL"; functions that cannot
 *     fail return 0, NULL or nothing for a NULL object.
 *   - There is no global mutable state; distinct objects may be used from
 *     distinct threads at the same time.  One object must not be used from
 *     two threads at once.
 */
#ifndef THREADMAP_COMMON_H
#define THREADMAP_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TMAP_VERSION_MAJOR 0
#define TMAP_VERSION_MINOR 1
#define TMAP_VERSION_PATCH 0

/* ---------------------------------------------------------------- errors */

typedef enum tmap_status {
    TMAP_OK = 0,
    TMAP_ERR_INVALID,     /* a bad argument or a bad value in an input   */
    TMAP_ERR_NOMEM,       /* an allocation failed                        */
    TMAP_ERR_IO,          /* a file could not be read or written         */
    TMAP_ERR_PARSE,       /* PTX, a table, a manifest... is malformed    */
    TMAP_ERR_FORMAT,      /* a file is of the wrong kind or version      */
    TMAP_ERR_NVRTC,       /* NVRTC refused to compile (log in message)   */
    TMAP_ERR_CUDA,        /* a CUDA driver call failed                   */
    TMAP_ERR_NO_DEVICE,   /* no CUDA driver or no GPU on this machine    */
    TMAP_ERR_UNSUPPORTED, /* valid, but threadmap cannot do it (yet)     */
    TMAP_ERR_NUMERIC      /* a numerical method failed (GSL)             */
} tmap_status;

#define TMAP_ERROR_MAX 2048

/* No member before message is an enum, so `tmap_error e = {0};` is also C++. */
typedef struct tmap_error {
    char message[TMAP_ERROR_MAX];
    tmap_status status;
} tmap_error;

/* A short constant name for a status ("invalid argument", ...). */
const char *tmap_status_string(tmap_status status);

/* ------------------------------------------------------------ BBV matrix */

/*
 * Per-thread basic block vectors: counts[t * nblocks + b] is how many times
 * thread t executed basic block b.  Thread t is the linear global id
 * (blockIdx linear * threads per block + threadIdx linear).
 */
typedef struct tmap_bbv {
    size_t nthreads;
    size_t nblocks;
    uint32_t *counts; /* [nthreads][nblocks], owned */
} tmap_bbv;

/* Allocates a zeroed matrix. */
tmap_status tmap_bbv_create(tmap_bbv *bbv, size_t nthreads, size_t nblocks,
                            tmap_error *err);
/* Frees the counts and zeroes the struct; accepts a zeroed struct. */
void tmap_bbv_free(tmap_bbv *bbv);



/* ------------------------------------------------------------- .npy I/O */

/* The element types threadmap reads and writes (little-endian only). */
typedef enum tmap_npy_dtype {
    TMAP_NPY_U1, /* "|u1" */
    TMAP_NPY_U4, /* "<u4" */
    TMAP_NPY_I4, /* "<i4" */
    TMAP_NPY_I8, /* "<i8" */
    TMAP_NPY_F4, /* "<f4" */
    TMAP_NPY_F8  /* "<f8" */
} tmap_npy_dtype;

/* Shape requirement of a load: exactly 1-D, exactly 2-D, or either (a 1-D
 * array of n elements is then read as one column, shape [n, 1]). */
typedef enum tmap_npy_rank { TMAP_NPY_ANY = 0, TMAP_NPY_1D = 1, TMAP_NPY_2D = 2 } tmap_npy_rank;

/* A parsed .npy array: C order, native (little-endian) element bytes. */
typedef struct tmap_npy_array {
    void *data;     /* dim[0] * dim[1] elements, owned */
    tmap_npy_dtype dtype;
    int ndim;       /* 1 or 2 */
    size_t dim[2];  /* dim[1] == 1 for a 1-D array */
} tmap_npy_array;

/* Parses .npy bytes (format 1.0, 2.0 or 3.0).  `name` names the source in
 * messages.  Rejects: bad magic or version, a malformed header dict, unknown
 * or big-endian dtypes, fortran_order True, 0-D or >2-D shapes, and data
 * that is shorter or longer than the shape says. */
tmap_status tmap_npy_parse(const void *bytes, size_t len, const char *name,
                           tmap_npy_array *out, tmap_error *err);
/* Reads and parses a .npy file. */
tmap_status tmap_npy_read(const char *path, tmap_npy_array *out, tmap_error *err);
void tmap_npy_array_free(tmap_npy_array *a);
/* Writes `ndim` (1 or 2) -D data of `dtype` in format 1.0 (2.0 if the header
 * needs it), header padded so the data starts on a 64-byte boundary. */
tmap_status tmap_npy_save(const char *path, tmap_npy_dtype dtype, const void *data,
                          int ndim, const size_t dim[2], tmap_error *err);

/* Typed loads: read any supported dtype and convert, with range checks
 * (u32: integers in [0, 2^32-1], floats must be integral; i64: floats must
 * be integral and in range; f64: any).  dim[1] == 1 for 1-D arrays. */
tmap_status tmap_npy_load_u32(const char *path, tmap_npy_rank rank, uint32_t **data,
                              size_t dim[2], tmap_error *err);
tmap_status tmap_npy_load_i64(const char *path, tmap_npy_rank rank, int64_t **data,
                              size_t dim[2], tmap_error *err);
tmap_status tmap_npy_load_f64(const char *path, tmap_npy_rank rank, double **data,
                              size_t dim[2], tmap_error *err);
/* Typed saves (ndim 1: dim[0] elements; ndim 2: dim[0] x dim[1]). */
tmap_status tmap_npy_save_u32(const char *path, const uint32_t *data, int ndim,
                              const size_t dim[2], tmap_error *err);
tmap_status tmap_npy_save_i32(const char *path, const int32_t *data, int ndim,
                              const size_t dim[2], tmap_error *err);
tmap_status tmap_npy_save_i64(const char *path, const int64_t *data, int ndim,
                              const size_t dim[2], tmap_error *err);
tmap_status tmap_npy_save_f64(const char *path, const double *data, int ndim,
                              const size_t dim[2], tmap_error *err);

/* --------------------------------------------------------- BBV files */

/*
 * A BBV file is PATH (.npy, uint32 [threads, blocks]) plus a sidecar
 * PATH.json: {"format": "threadmap-bbv", "version": 1, "nthreads": N,
 * "nblocks": B, "blocks": ["kernel/label", ...] or null}.
 * Saving writes both (names may be NULL: "blocks": null).  Loading accepts a
 * missing sidecar (*names = NULL) but rejects one that disagrees with the
 * matrix.  *names (optional) receives nblocks malloc'ed strings or NULL.
 */
tmap_status tmap_bbv_save(const char *path, const tmap_bbv *bbv,
                          const char *const *names, tmap_error *err);
tmap_status tmap_bbv_load(const char *path, tmap_bbv *bbv, char ***names,
                          tmap_error *err);
/* The sidecar's path PATH.json (malloc'ed; NULL when out of memory). */
char *tmap_bbv_sidecar_path(const char *path);
/* Frees n strings and the array (accepts NULL). */
void tmap_names_free(char **names, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_COMMON_H */

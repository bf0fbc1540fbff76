/*
 * manifest.h (runtime) -- the parsed form of a kernel manifest, shared by
 * its parser (manifest.c), the array generators and binding
 * (manifest_data.c) and the features (manifest_features.c, expr.c, expr.h).
 */
#ifndef TMAP_RUNTIME_MANIFEST_H
#define TMAP_RUNTIME_MANIFEST_H

#include "threadmap/runtime.h"

typedef enum tmap_elem { TMAP_I32, TMAP_U32, TMAP_I64, TMAP_U64, TMAP_F32, TMAP_F64, TMAP_U8, TMAP_I8 } tmap_elem;

const char *tmap_elem_name(tmap_elem k);
/* The type named name ("i32" ... "i8", as tmap_elem_name), or -1. */
int tmap_elem_find(const char *name);
/* Its C type ("int" ... "signed char"). */
const char *tmap_elem_ctype(tmap_elem k);
size_t tmap_elem_size(tmap_elem k);
double tmap_elem_get(tmap_elem k, const void *base, size_t i);
/* v converts to type k without overflow: integers integral and in range,
 * floats finite and in range (rounded). */
int tmap_elem_holds(tmap_elem k, double v);

typedef enum tmap_init {
    TMAP_INIT_ZEROS, TMAP_INIT_IOTA, TMAP_INIT_FILL, TMAP_INIT_UNIFORM,
    TMAP_INIT_POWERLAW, TMAP_INIT_RAW, TMAP_INIT_NPY, TMAP_INIT_SCAN
} tmap_init;

typedef struct tmap_marray {
    char *name;
    tmap_elem kind;
    size_t count;
    size_t per_thread;
    int is_input, is_output;
    tmap_init init;
    double p[3];      /* fill value / uniform lo, hi / powerlaw lo, hi, alpha */
    char *file;       /* raw or npy, relative to the manifest's folder */
    size_t scan_of;   /* scan: index of the (earlier, integer) array summed */
    void *host;       /* count elements once generated */
    uint64_t device;  /* device copy once bound (0 before) */
    uint64_t pristine; /* the device copy as bound, for restoring (0 before) */
} tmap_marray;

typedef struct tmap_marg {
    long array;       /* index into arrays, or -1 for a scalar */
    tmap_elem kind;   /* scalar type */
    double value;
    int is_threads;   /* the value is the launch's thread count */
    union { int64_t i; uint64_t u; double d; float f; int32_t i32; uint32_t u32; } storage;
} tmap_marg;

/* An irregular reference data[index[t*k + j]] (j < k) of thread t. */
typedef struct tmap_mref {
    size_t data, index;   /* indices into arrays */
    size_t per_thread;    /* k >= 1; per_thread * threads <= index's count */
    size_t elem_bytes;    /* a power of two, a multiple of data's type size */
    size_t nelems;        /* data's bytes / elem_bytes, at most 2^32 */
    int read, write;
} tmap_mref;

typedef struct tmap_mfeature {
    char *name;
    char *expr;       /* e.g. "rowptr[t+1] - rowptr[t]" */
} tmap_mfeature;

struct tmap_manifest {
    char *path, *dir, *name;
    char *source, *ptx_file, *kernel, *arch;
    char *key;        /* a feature to sort by (the key baseline), or NULL */
    char **options;
    size_t noptions;
    unsigned grid[3], block[3], shared_bytes;
    size_t threads;   /* grid * block */
    tmap_marray *arrays;
    size_t narrays;
    tmap_marg *args;
    void **argv;      /* argv[i] points at args[i].storage or arrays[a].device */
    size_t nargs;
    tmap_mref *refs;
    size_t nrefs;
    tmap_mfeature *features;
    const char **feature_names;
    size_t nfeatures;
    tmap_cuda *bound; /* the driver the device copies belong to */
    struct tmap_mfeatures_gpu *fgpu; /* the features' kernel once compiled (manifest_features.c) */
    int saved;        /* the pristine copies hold this bind's arrays */
};

/* The name of the PTX of tmap_manifest_ptx for tmap_ptx_parse and messages
 * (manifest_data.c): the path of its "ptx" file, or, compiled from its
 * "source", "<PTX of KERNEL compiled by NVRTC from PATH>".  Returns buf. */
const char *tmap_manifest_ptx_name(const tmap_manifest *m, char *buf, size_t size);

/* Matches the manifest's arguments to the .param list of kernel `entry`
 * of the PTX text: count, sizes, pointers and scalars (manifest_params.c). */
tmap_status tmap_manifest_params(const tmap_manifest *m, const char *ptx, const char *entry,
                                 tmap_error *err);

/* The source of the features' kernel (tmap_expr_cuda_source, named
 * tmap_features): slot s reads m->arrays[slot_array[s]] (slot_array has
 * TMAP_EXPR_CUDA_MAX_SLOTS entries); *source malloc'ed.  An index outside
 * its array for some thread fails, naming the first such thread, as the
 * host does (manifest_features.c). */
tmap_status tmap_manifest_features_source(const tmap_manifest *m, char **source,
                                          size_t *slot_array, size_t *nslots, tmap_error *err);
/* Frees the features' kernel (tmap_manifest_free). */
void tmap_manifest_features_gpu_free(tmap_manifest *m);

/* Before a launch of a series on one input: the first call after a bind
 * saves every array as bound (device copies, allocated once), each later
 * call puts them back, so each launch sees the input the first one saw
 * (manifest_launch.c).  Call it before the series' first launch too. */
tmap_status tmap_manifest_restore(tmap_manifest *m, tmap_error *err);
/* tmap_kernel_time on restored inputs: warmup untimed launches, then reps
 * timed ones (ms[reps]), each after tmap_manifest_restore. */
tmap_status tmap_manifest_time(tmap_manifest *m, tmap_kernel *k, const tmap_launch *l,
                               int warmup, int reps, float *ms, tmap_error *err);

#endif

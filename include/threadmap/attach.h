/*
 * threadmap/attach.h -- the attach stage (experimental): profiling kernels
 * of an unmodified CUDA application.  `threadmap profile [options] -- ./app`
 * runs the application with libthreadmap_attach.so preloaded; the library
 * intercepts the CUDA driver API (also as the runtime reaches it, through
 * cuGetProcAddress), finds each selected kernel's PTX in the loaded image,
 * launches it instrumented with the counter pass in place of the original
 * and writes its BBVs (docs/attach.md).  This header holds what the command
 * and the tests use: the options, finding a kernel's PTX in a binary, and a
 * kernel's parameter layout.
 */
#ifndef THREADMAP_ATTACH_H
#define THREADMAP_ATTACH_H

#include "threadmap/pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One per-thread feature read from a launch's own arguments, from a spec
 * `NAME=argK:TYPE[t]` (or [t+C], [t-C]): thread t's value is element t + C
 * of the array that pointer parameter K points at, TYPE one of i8 u8 i32
 * u32 i64 u64 f32 f64. */
typedef struct tmap_attach_feature {
    char name[64];
    unsigned arg;
    char type[4];
    size_t elem_size;
    long offset;
} tmap_attach_feature;

tmap_status tmap_attach_feature_parse(const char *spec, tmap_attach_feature *f,
                                      tmap_error *err);

enum { TMAP_ATTACH_MAX_FEATURES = 16 };

/* Per-thread expressions over a launch's arguments as a CUDA kernel (run
 * mode's --key, a predictor's features): the manifest's expression syntax
 * (numbers, + - * /, unary minus, parentheses) over arrays argK[t],
 * argK[t+C], argK[t-C] (pointer argument K; argK:TYPE[...] gives the
 * element type, i32 when not given) and the names of features.  The
 * kernel, extern "C" tmap_key(double *out, unsigned long long n, then per
 * slot const void *p, long long lo, long long hi), writes out[t * nexprs
 * + j] for t < n; an element outside [lo, hi) of its slot reads as 0. */
enum { TMAP_ATTACH_KEY_MAX_SLOTS = 16 };

typedef struct tmap_attach_key_slot {
    unsigned arg;               /* pointer argument */
    char type[4];
    size_t elem_size;
} tmap_attach_key_slot;

typedef struct tmap_attach_key {
    char *source;               /* CUDA C (malloc'ed) */
    size_t nexprs;
    size_t nslots;
    tmap_attach_key_slot slot[TMAP_ATTACH_KEY_MAX_SLOTS];
} tmap_attach_key;

tmap_status tmap_attach_key_make(const char *const *exprs, size_t nexprs,
                                 const tmap_attach_feature *f, size_t nf, tmap_attach_key *k,
                                 tmap_error *err);
void tmap_attach_key_free(tmap_attach_key *k);
/* The C type of an element type name (i8 ... f64) and its size; NULL when
 * unknown. */
const char *tmap_attach_key_type(const char *name, size_t *size);

/* What to profile, as Nsight Compute selects: launches of kernels whose
 * mangled or demangled name matches kernel_regex (POSIX extended; NULL:
 * every kernel), the first launch_skip of them skipped, then launch_count
 * profiled (-1: all). */
typedef struct tmap_attach_opts {
    const char *out;            /* output folder */
    const char *kernel_regex;
    long launch_skip, launch_count;
    const char *features[TMAP_ATTACH_MAX_FEATURES];  /* specs, as given */
    size_t nfeatures;
    int quiet;
    const char *library;        /* libthreadmap_attach.so (NULL: the one built or
                                   installed with this library) */
    /* run mode (`threadmap run -- ./app`): the selected kernels regrouped */
    int run;
    const char *key;            /* the key: an expression over the launch's arrays
                                   (tmap_attach_key_make), larger: more work; or */
    const char *predictor;      /* a predictor (`threadmap train` on what profile --
                                   wrote) reading the features, in their order */
    int trial_launches;         /* timed launches per candidate; 0: 3 */
    double threshold;           /* a regrouping is kept when this much faster; 0: 0.03 */
} tmap_attach_opts;

/* Checks the options (the regex compiles, every feature parses; in run
 * mode, the key parses). */
tmap_status tmap_attach_opts_check(const tmap_attach_opts *o, tmap_error *err);

/* Runs argv (the application and its arguments) with the attach library
 * preloaded and the options in its environment, and waits.  *app_exit: the
 * application's exit status (128 + signal when killed).  Fails when the
 * library reported a selected launch it could not profile (the message
 * says which and why) or when none was selected. */
tmap_status tmap_attach_profile(const tmap_attach_opts *o, char *const argv[], int *app_exit,
                                tmap_error *err);

/* Runs argv like tmap_attach_profile, in run mode: each selected kernel
 * that the safety analysis allows is launched through the regrouper
 * (redirected, key from its arguments, measured trial); *summary
 * (malloc'ed): a line per kernel, launches seen, regrouped, the candidate
 * kept and the time saved.  Fails, after the run, when a selected kernel
 * could not be regrouped (the message says why) or none was launched. */
tmap_status tmap_attach_run(const tmap_attach_opts *o, char *const argv[], int *app_exit,
                            char **summary, tmap_error *err);

/* The PTX module (malloc'ed) of `.entry entry` in an executable or shared
 * library: its embedded fatbins, the PTX of the highest architecture at
 * most max_arch (0: any), inflated here or, failing that, extracted with
 * `cuobjdump` (the tool's path; NULL: never).  A binary holding the kernel
 * as SASS only is an error that names the kernel and says how to rebuild
 * with PTX. */
tmap_status tmap_attach_file_ptx(const char *path, const char *entry, unsigned max_arch,
                                 const char *cuobjdump, char **ptx, tmap_error *err);

/* A kernel parameter as cuLaunchKernel packs it. */
typedef struct tmap_param {
    char name[128];
    size_t offset, size, align;
} tmap_param;

/* The parameters of `.entry entry` in order (malloc'ed array of *n). */
tmap_status tmap_attach_params(const char *ptx, const char *entry, tmap_param **out,
                               size_t *n, tmap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_ATTACH_H */

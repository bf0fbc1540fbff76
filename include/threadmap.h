/*
 * threadmap.h -- the public C API of threadmap.
 *
 * threadmap measures, models and removes control-flow divergence in CUDA
 * kernels by regrouping threads (Liang et al., TCAD 2016).  The data flow is
 *
 *   kernel.cu --NVRTC--> PTX --parse--> CFG --counter pass--> instrumented PTX
 *     --profiling launch--> BBV[thread][block] --regression--> predictor
 *     new input --> predicted BBVs --> candidate regroupings --> model scores
 *     --> apply the winner (redirection or layout transform) or leave it alone
 *
 * Conventions, true of every function here:
 *   - Functions that can fail return a tmap_status and take a last argument
 *     `tmap_error *err` (may be NULL).  On failure err->message holds one
 *     printable line naming the problem and the place (file, PTX line, CUDA
 *     call).  On success *err is left untouched.
 *   - Objects are created by tmap_X_create/load/... and released by
 *     tmap_X_free (which accepts NULL).  Output arrays the library allocates
 *     are released with free().
 *   - There is no global mutable state; distinct objects may be used from
 *     distinct threads at the same time.  One object must not be used from
 *     two threads at once.
 */
#ifndef THREADMAP_H
#define THREADMAP_H

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

typedef struct tmap_error {
    tmap_status status;
    char message[TMAP_ERROR_MAX];
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


/* ------------------------------------------------------ NVRTC front end */

typedef struct tmap_compile_opts {
    const char *arch;                 /* "compute_90"; NULL: the GPU's if one is
                                         present, else compute_90 */
    const char *const *options;       /* extra NVRTC options, e.g. "-lineinfo" */
    size_t noptions;
    const char *const *include_dirs;  /* passed as -I<dir> */
    size_t ninclude_dirs;
    const char *const *names;         /* kernel names to resolve: extern "C"
                                         names or C++ expressions ("ns::k<int>") */
    size_t nnames;
} tmap_compile_opts;

typedef struct tmap_compiled {
    char *ptx;       /* NUL-terminated PTX text */
    char *log;       /* NVRTC's log, possibly empty */
    size_t nnames;
    char **names;    /* copies of opts->names */
    char **lowered;  /* lowered (mangled) entry name of each */
} tmap_compiled;

/* Compiles CUDA source with NVRTC to PTX.  `filename` names the source in
 * messages.  On a compile error, err->message holds NVRTC's log. */
tmap_status tmap_compile(const char *source, const char *filename,
                         const tmap_compile_opts *opts, tmap_compiled *out,
                         tmap_error *err);
/* The lowered name for a name given in opts->names, or NULL. */
const char *tmap_compiled_lowered(const tmap_compiled *c, const char *name);
void tmap_compiled_free(tmap_compiled *c);

/* ----------------------------------------------- PTX module and its CFG */

/* A parsed PTX module (opaque).  Line numbers refer to the text parsed. */
typedef struct tmap_ptx_module tmap_ptx_module;

/* Parses PTX text; `filename` is used in error messages ("f.ptx:12: ..."). */
tmap_status tmap_ptx_parse(const char *text, size_t len, const char *filename,
                           tmap_ptx_module **out, tmap_error *err);
void tmap_ptx_free(tmap_ptx_module *m);
/* Prints the module as PTX text (malloc'ed, NUL-terminated). */
tmap_status tmap_ptx_print(const tmap_ptx_module *m, char **text,
                           tmap_error *err);
/* Number and names of the .entry functions (kernels) of the module. */
size_t tmap_ptx_num_kernels(const tmap_ptx_module *m);
const char *tmap_ptx_kernel_name(const tmap_ptx_module *m, size_t i);
/* The module's .version (e.g. 9, 0) and a way to lower it: instructions
 * are kept, only the directive changes. */
void tmap_ptx_version(const tmap_ptx_module *m, int *major, int *minor);
void tmap_ptx_set_version(tmap_ptx_module *m, int major, int minor);

/* How a basic block ends. */
typedef enum tmap_term {
    TMAP_TERM_FALL,   /* falls through to the next block              */
    TMAP_TERM_BRA,    /* unconditional bra                            */
    TMAP_TERM_CBRA,   /* predicated bra: taken target + fall-through  */
    TMAP_TERM_BRX,    /* brx.idx jump table                           */
    TMAP_TERM_RET,    /* ret (possibly predicated: then also falls)   */
    TMAP_TERM_EXIT,   /* exit (possibly predicated)                   */
    TMAP_TERM_TRAP    /* trap                                         */
} tmap_term;

typedef struct tmap_cfg_block {
    char *name;          /* "<function>/<label>" or "<function>/+<n>" */
    uint32_t func;       /* index into tmap_cfg.funcs */
    uint32_t line;       /* PTX line of the block's first instruction */
    uint32_t ninstr;     /* instructions (not labels or directives) */
    char **opcodes;      /* ninstr opcodes with modifiers and type, without
                            guard or operands: "ld.global.nc.f32", "bra.uni" */
    tmap_term term;
    int predicated_term; /* the terminator has a guard (@%p / @!%p) */
    uint32_t nsucc;
    uint32_t *succ;      /* successor blocks (indices into tmap_cfg.blocks) */
    int32_t ipdom;       /* immediate post-dominator, -1: the virtual exit */
} tmap_cfg_block;

typedef struct tmap_cfg_func {
    char *name;
    int is_entry;          /* .entry (kernel) rather than .func */
    uint32_t first_block;  /* its blocks are [first_block, first_block+nblocks) */
    uint32_t nblocks;
} tmap_cfg_func;

/* The CFG of one kernel and every .func it calls, directly or not.  The
 * kernel is funcs[0] and its entry block is blocks[0].  Block indices are
 * the BBV columns. */
typedef struct tmap_cfg {
    size_t nfuncs;
    tmap_cfg_func *funcs;
    size_t nblocks;
    tmap_cfg_block *blocks;
} tmap_cfg;

tmap_status tmap_cfg_build(const tmap_ptx_module *m, const char *kernel,
                           tmap_cfg **out, tmap_error *err);
void tmap_cfg_free(tmap_cfg *cfg);

/* ------------------------------------------------------ BBV counter pass */

/* Module-scope variables the counter pass adds; the runtime sets them with
 * cuModuleGetGlobal before a profiling launch. */
#define TMAP_BBV_BASE_SYMBOL "__tmap_bbv_base"     /* .u64: device pointer */
#define TMAP_BBV_STRIDE_SYMBOL "__tmap_bbv_sample" /* .u32: profile thread
                                   blocks whose linear id % sample == 0     */

/*
 * Instruments `kernel` (and every .func it reaches) in place so that each
 * thread counts its executions of each block of tmap_cfg_build(m, kernel):
 *   counter[b * nslots + slot] += 1, u32, no atomics,
 * where slot = (ctaid_linear / sample) * threads_per_block + tid_linear and
 * nslots = ceil(nctaid_total / sample) * threads_per_block, computed in the
 * kernel.  Thread blocks with ctaid_linear % sample != 0 count nothing.
 * The kernel's parameters are unchanged.  *cfg_out (optional) receives the
 * CFG whose block indices are the counter rows.
 */
tmap_status tmap_bbv_instrument(tmap_ptx_module *m, const char *kernel,
                                tmap_cfg **cfg_out, tmap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_H */

/*
 * threadmap/core.h -- the core of threadmap's public C API: errors, BBV
 * matrices, NVRTC, PTX modules and CFGs, the counter pass, redirection,
 * safety, the CUDA driver, profiling runs, manifests and the layout
 * transform.  Include threadmap.h, which includes this and the rest.
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
#ifndef THREADMAP_CORE_H
#define THREADMAP_CORE_H

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
    const char *arch;                 /* "compute_90" or "sm_90"; NULL: compute_90
                                         (tmap_cuda_arch gives the GPU's) */
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

/* ------------------------------------------------- SASS instruction counts */

/* SASS instructions that a warp may issue once per group of its threads:
 * no reconvergence barrier (BSYNC, WARPSYNC) lies between them and a
 * branch where the warp's threads may have parted, so threads that came by
 * different paths issue them apart (docs/model.md, "SIMD efficiency").
 * Threads whose BBV counts agree on every block of `key` came by one path. */
typedef struct tmap_sass_split {
    uint32_t block;      /* the CFG block they run with: part of counts[block] */
    uint32_t ninstr;     /* how many */
    uint32_t nkey;
    const uint32_t *key; /* CFG blocks, ascending; points into the keys */
} tmap_sass_split;

typedef struct tmap_sass_splits {
    size_t n;
    tmap_sass_split *v;
    uint32_t *keys; /* storage of every v[i].key */
} tmap_sass_splits;

void tmap_sass_splits_free(tmap_sass_splits *s);

/*
 * counts[b] = the SASS instructions of CFG block b, for cfg = the CFG of
 * `ptx` (the text it was built from: lines must match).  ptxas -arch=ARCH
 * (NULL: sm_90) assembles the PTX with -lineinfo and loop unrolling off (a
 * module-scope .pragma "nounroll", so each block's count is per execution),
 * nvdisasm -gp lists the SASS with the PTX line of each instruction, and
 * each SASS basic block counts for the CFG block holding most of its lines
 * (docs/model.md says how hoisted instructions are told).  Not counted: NOPs,
 * the padding loop after the last instruction, and ptxas's own subroutines
 * (e.g. the slow path of a division), which run rarely.  `splits` (may be
 * NULL) receives the instructions among those that a warp may issue once
 * per group of its threads (tmap_sass_split); free it with
 * tmap_sass_splits_free.  The tools are found by tmap_sass_tool_find.
 * Without them: TMAP_ERR_UNSUPPORTED.
 */
tmap_status tmap_sass_block_counts(const char *ptx, const tmap_cfg *cfg, const char *arch,
                                   double *counts, tmap_sass_splits *splits, tmap_error *err);
/* The counting of tmap_sass_block_counts on a listing of `nvdisasm -gp`. */
tmap_status tmap_sass_count_listing(const char *listing, const tmap_cfg *cfg, double *counts,
                                    tmap_sass_splits *splits, tmap_error *err);
/* Finds a CUDA tool ("ptxas", "nvdisasm"): $TMAP_PTXAS / $TMAP_NVDISASM,
 * $CUDA_HOME/bin, $CUDA_PATH/bin, the toolkit threadmap was built with,
 * then PATH. */
tmap_status tmap_sass_tool_find(const char *name, char *path, size_t size, tmap_error *err);

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
 * kernel; nslots must be below 2^32 (the slot arithmetic is 32-bit;
 * tmap_counting_load refuses larger launches).  Thread blocks with
 * ctaid_linear % sample != 0 count nothing.  Counts are kept in registers
 * and added to memory when each function returns or the thread exits
 * (docs/instrumentation.md).  The kernel's parameters are unchanged.  *cfg_out (optional) receives the
 * CFG whose block indices are the counter rows.
 */
tmap_status tmap_bbv_instrument(tmap_ptx_module *m, const char *kernel,
                                tmap_cfg **cfg_out, tmap_error *err);

/* --------------------------------------------------- reference redirection */

/* Module-scope .u64 the redirection adds: the device pointer to D (N u32). */
#define TMAP_REDIRECT_SYMBOL "__tmap_perm"

/*
 * Rewrites `kernel` (and every .func it reaches that reads %tid/%ctaid) in
 * place so that the thread in slot i does the work of original thread D[i]:
 * a preamble computes slot = ctaid_linear * threads_per_block + tid_linear,
 * loads j = D[slot] from the u32 array at __tmap_perm (0 there: j = slot),
 * and every read of %tid.{x,y,z} / %ctaid.{x,y,z} then sees thread j's ids
 * (%ntid, %nctaid unchanged).  The kernel's parameters are unchanged.  The
 * launch must have at most 2^32 threads.  Apply it before tmap_bbv_instrument
 * (the counters then count per hardware slot); the reverse order and a second
 * redirection are refused.  Reads of the ids other than by mov/cvt of a 32-bit
 * type, and .address_size 32, give TMAP_ERR_UNSUPPORTED naming the PTX line;
 * on any error the module is unchanged.  __tmap_perm is module-wide: several
 * redirected kernels of one module share it.
 */
tmap_status tmap_redirect_instrument(tmap_ptx_module *m, const char *kernel, tmap_error *err);

/* ------------------------------------------------------- safety analysis */

/* Which regroupings keep a kernel correct, most permissive first. */
typedef enum tmap_scope_advice {
    TMAP_SAFE_GRID,   /* any permutation of the launch's threads          */
    TMAP_SAFE_BLOCK,  /* only within thread blocks: D[i] / tpb == i / tpb  */
    TMAP_SAFE_WARPS,  /* only whole warps, lanes in order: D[i] % 32 == i % 32
                         and D maps each aligned warp onto one warp (and
                         within blocks when barriers/shared_memory are set) */
    TMAP_SAFE_NONE    /* no regrouping is known to be safe                */
} tmap_scope_advice;

/* What tmap_safety_analyze found in a kernel and the .funcs it reaches.
 * Counts are numbers of instructions (or declarations) found; 0: none. */
typedef struct tmap_safety {
    int barriers;         /* bar.sync, barrier.*, bar.red, bar.arrive        */
    int shared_memory;    /* .shared variables/accesses, %dynamic_smem_size  */
    int warp_collectives; /* shfl, vote, match, redux, mma, ..., %laneid,
                             %lanemask_*, %warpid                          */
    int hardware_ids;     /* %smid, %nsmid, %clock*, %globaltimer           */
    int tid_as_value;     /* an id reaches a value (store, call argument,
                             float, a compare of a non-index...)           */
    int tid_in_control;   /* an id used as an index also decides a branch  */
    int atomics;          /* atom/red on global or generic memory          */
    int cluster;          /* thread-block-cluster features                 */
    int unredirectable;   /* id reads the redirection cannot rewrite       */
    char reasons[2048];   /* one sentence per finding, "file:line: ...\n"   */
    tmap_scope_advice scope;
    int layout_ok;        /* the layout transform keeps the results        */
    int redirect_ok;      /* the redirection keeps the results (within scope) */
} tmap_safety;

/* Analyzes `kernel` of m (docs/safety.md states the rules and their limits). */
tmap_status tmap_safety_analyze(const tmap_ptx_module *m, const char *kernel, tmap_safety *out,
                                tmap_error *err);
/* "grid", "block", "warps", "none". */
const char *tmap_scope_advice_name(tmap_scope_advice s);

/* ------------------------------------------------------------ CUDA driver */

/* The CUDA driver (libcuda, loaded with dlopen on first use) and one GPU's
 * primary context.  Without a driver or a GPU, tmap_cuda_open returns
 * TMAP_ERR_NO_DEVICE with a message saying which. */
typedef struct tmap_cuda tmap_cuda;

tmap_status tmap_cuda_open(int ordinal, tmap_cuda **out, tmap_error *err);
void tmap_cuda_close(tmap_cuda *c);

typedef struct tmap_device_info {
    char name[256];
    int cc_major, cc_minor;     /* compute capability */
    int sms;                    /* multiprocessors */
    int clock_khz;              /* SM clock (max boost) */
    int mem_clock_khz;
    int mem_bus_width_bits;     /* global memory bus width (peak DRAM bandwidth:
                                   mem clock x bus width x 2) */
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int driver_version;         /* 13000 for CUDA 13.0 */
    int ptx_major, ptx_minor;   /* highest PTX ISA the driver loads */
} tmap_device_info;

tmap_status tmap_cuda_info(tmap_cuda *c, tmap_device_info *info, tmap_error *err);
/* "compute_XY" of the GPU, into buf (at least 16 bytes). */
void tmap_cuda_arch(const tmap_device_info *info, char *buf, size_t size);

/* Device memory (CUdeviceptr values carried as uint64_t). */
tmap_status tmap_cuda_alloc(tmap_cuda *c, size_t bytes, uint64_t *ptr, tmap_error *err);
void tmap_cuda_free(tmap_cuda *c, uint64_t ptr);
tmap_status tmap_cuda_upload(tmap_cuda *c, uint64_t dst, const void *src, size_t bytes,
                             tmap_error *err);
tmap_status tmap_cuda_download(tmap_cuda *c, void *dst, uint64_t src, size_t bytes,
                               tmap_error *err);
tmap_status tmap_cuda_copy(tmap_cuda *c, uint64_t dst, uint64_t src, size_t bytes,
                           tmap_error *err);
tmap_status tmap_cuda_zero(tmap_cuda *c, uint64_t ptr, size_t bytes, tmap_error *err);

/* A loaded module and one kernel of it. */
typedef struct tmap_kernel tmap_kernel;

/* Loads PTX (its .version lowered to what the driver takes) and looks up
 * `kernel`.  A JIT failure carries the JIT error log in the message. */
tmap_status tmap_kernel_load(tmap_cuda *c, const char *ptx, const char *kernel,
                             tmap_kernel **out, tmap_error *err);
void tmap_kernel_free(tmap_kernel *k);
/* Address and size of a module-scope variable of the kernel's module. */
tmap_status tmap_kernel_global(tmap_kernel *k, const char *name, uint64_t *ptr,
                               size_t *bytes, tmap_error *err);

/* A launch: geometry, dynamic shared memory, and the kernel's arguments as
 * cuLaunchKernel takes them (args[i] points at the i-th argument's value). */
typedef struct tmap_launch {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    void **args;
    size_t nargs;   /* entries of args; needed where threadmap rewrites them
                       (layout transform, redirection) */
} tmap_launch;

uint64_t tmap_launch_threads(const tmap_launch *l);
uint64_t tmap_launch_blocks(const tmap_launch *l);
unsigned tmap_launch_block_size(const tmap_launch *l);

/* Launches and waits for completion. */
tmap_status tmap_kernel_run(tmap_kernel *k, const tmap_launch *l, tmap_error *err);
/* Times `reps` launches (after `warmup` untimed ones) with CUDA events;
 * ms[reps] receives each launch's time. */
tmap_status tmap_kernel_time(tmap_kernel *k, const tmap_launch *l, int warmup, int reps,
                             float *ms, tmap_error *err);

typedef struct tmap_kernel_stats {
    int registers;        /* per thread */
    int local_bytes;      /* per thread */
    int static_shared_bytes;
    int blocks_per_sm;    /* occupancy API for the launch's block size */
} tmap_kernel_stats;

tmap_status tmap_kernel_stats_get(tmap_kernel *k, const tmap_launch *l,
                                  tmap_kernel_stats *s, tmap_error *err);

/* ------------------------------------------------------- profiling runs */

/* What one profiling launch measured. */
typedef struct tmap_profile {
    tmap_bbv bbv;      /* [profiled threads][cfg->nblocks]; with sample S the
                          rows are the threads of thread blocks 0, S, 2S, ...
                          in order (row r is global thread
                          (r / tpb) * S * tpb + r % tpb) */
    tmap_cfg *cfg;     /* the CFG whose blocks are the BBV columns */
    uint32_t sample;
    tmap_kernel_stats original;      /* registers, occupancy of the kernel  */
    tmap_kernel_stats instrumented;  /* ... and of its instrumented version */
} tmap_profile;

/*
 * Instruments `kernel` of the PTX module text, loads it, launches it with the
 * caller's own geometry and arguments (the kernel runs for real: its side
 * effects on the arguments happen), and returns each thread's BBV.
 * sample >= 1: profile every sample-th thread block only (1 = all).
 */
tmap_status tmap_profile_run(tmap_cuda *c, const char *ptx, const char *kernel,
                             const tmap_launch *l, uint32_t sample, tmap_profile *out,
                             tmap_error *err);
void tmap_profile_free(tmap_profile *p);

/* A kernel instrumented with the counter pass, loaded with its counters in
 * device memory: launch tmap_counting_kernel() as often as wanted (counts
 * add up), then read the BBVs. */
typedef struct tmap_counting tmap_counting;

tmap_status tmap_counting_load(tmap_cuda *c, const char *ptx, const char *kernel,
                               const tmap_launch *l, uint32_t sample, tmap_counting **out,
                               tmap_error *err);
tmap_kernel *tmap_counting_kernel(tmap_counting *k);
const tmap_cfg *tmap_counting_cfg(const tmap_counting *k);
tmap_status tmap_counting_reset(tmap_counting *k, tmap_error *err);
tmap_status tmap_counting_read(tmap_counting *k, tmap_bbv *bbv, tmap_error *err);
void tmap_counting_free(tmap_counting *k);

/* ------------------------------------------------------- kernel manifest */

/*
 * A manifest (JSON) says how to launch a kernel without host code: source,
 * kernel name, options, geometry, the arguments in order (scalars; arrays
 * generated or read from .npy / raw files), which arrays are per-thread
 * inputs and outputs, and the per-thread features.  docs/manifest.md gives
 * the format.  Errors name the manifest file and the field.
 */
typedef struct tmap_manifest tmap_manifest;
typedef struct tmap_thread_array tmap_thread_array;

tmap_status tmap_manifest_load(const char *path, tmap_manifest **out, tmap_error *err);
void tmap_manifest_free(tmap_manifest *m);
const char *tmap_manifest_name(const tmap_manifest *m);

/* Compiles the manifest's source (or reads its PTX) for `arch` (NULL: the
 * manifest's own, else compute_90).  *ptx and *entry (the PTX entry name)
 * are malloc'ed. */
tmap_status tmap_manifest_ptx(const tmap_manifest *m, const char *arch, char **ptx,
                              char **entry, tmap_error *err);

/* Fills the host copies of every array (generated ones from `seed`). */
tmap_status tmap_manifest_generate(tmap_manifest *m, uint64_t seed, tmap_error *err);

/* Uploads the arrays to the GPU (allocating on first use) and fills *l with
 * the geometry and the argument list; l->args stays valid until the next
 * bind or tmap_manifest_free. */
tmap_status tmap_manifest_bind(tmap_manifest *m, tmap_cuda *c, tmap_launch *l,
                               tmap_error *err);
/* Downloads the named array's device copy into its host copy. */
tmap_status tmap_manifest_fetch(tmap_manifest *m, const char *array, tmap_error *err);

/* Describes one array: element type name ("f32"...), element size, count,
 * and its host copy (valid after generate). */
typedef struct tmap_array_view {
    const char *name;
    const char *type;
    size_t elem_size;
    size_t count;
    void *host;
    uint64_t device;       /* 0 before bind */
    int is_input, is_output;
    size_t per_thread;     /* elements per thread for the layout transform
                              (0: not per-thread) */
} tmap_array_view;

size_t tmap_manifest_num_arrays(const tmap_manifest *m);
tmap_status tmap_manifest_array(const tmap_manifest *m, size_t i, tmap_array_view *v);
/* Index of a named array, or -1. */
long tmap_manifest_find(const tmap_manifest *m, const char *name);

/* The manifest's per-thread arrays (per_thread > 0) as layout-transform
 * descriptors (malloc'ed).  An array passed in several arguments is an
 * error: moving it twice would break it. */
tmap_status tmap_manifest_thread_arrays(const tmap_manifest *m, tmap_thread_array **out,
                                        size_t *n, tmap_error *err);

/* The per-thread feature matrix [threads][p] (row-major, malloc'ed) and the
 * feature names (owned by the manifest), after generate. */
tmap_status tmap_manifest_features(const tmap_manifest *m, double **f, size_t *nthreads,
                                   size_t *p, const char *const **names, tmap_error *err);

/* ------------------------------------------------------ applying a regrouping */

/* A regrouping is a permutation D of the launch's N threads: the thread in
 * slot i does the work of original thread D[i]. */

/* One per-thread array of a launch, for the layout transform: thread t owns
 * elements [t*per_thread, (t+1)*per_thread) of elem_size bytes each. */
struct tmap_thread_array {
    unsigned arg;        /* index of the kernel argument holding the pointer */
    size_t elem_size;
    size_t per_thread;
    int input;           /* gathered by D before the launch */
    int output;          /* scattered back by D after it */
};

/*
 * Layout transform: copies each array so that thread slot i finds the data of
 * thread D[i] (gather, on the GPU), launches the unmodified kernel on the
 * copies, and scatters outputs back, so the caller sees the results of an
 * unregrouped launch.  perm: device pointer to N u32.  Arrays neither input
 * nor output are passed through untouched.  Times in ms (NULL to skip) of
 * the gather, the kernel and the scatter, measured with CUDA events.
 */
tmap_status tmap_layout_launch(tmap_cuda *c, tmap_kernel *k, const tmap_launch *l,
                               uint64_t perm, const tmap_thread_array *arrays, size_t narrays,
                               float ms[3], tmap_error *err);

/* Reference redirection at run time: parses `ptx`, redirects `kernel`,
 * prints and loads it.  Set D with tmap_redirect_set before launching (until
 * then the kernel runs unregrouped); launch with the kernel's own arguments. */
tmap_status tmap_redirect_load(tmap_cuda *c, const char *ptx, const char *kernel,
                               tmap_kernel **out, tmap_error *err);
/* Stores perm_device_ptr (N u32, or 0 for the identity) in the module's
 * __tmap_perm. */
tmap_status tmap_redirect_set(tmap_kernel *k, uint64_t perm_device_ptr, tmap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_CORE_H */

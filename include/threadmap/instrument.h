/*
 * threadmap/instrument.h -- the instrumentation stage (stable): NVRTC, PTX modules and their
 * CFGs, SASS instruction counts, the BBV counter pass, the redirection
 * rewrite, and the safety analysis.  Nothing here needs a GPU.
 */
#ifndef THREADMAP_INSTRUMENT_H
#define THREADMAP_INSTRUMENT_H

#include "threadmap/common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* NVRTC's own version (the library NVRTC, not the driver); 0 on success,
 * -1 where libnvrtc cannot be loaded. */
int tmap_nvrtc_version(int *major, int *minor);

/* Compiles CUDA source with NVRTC to PTX.  `filename` names the source in
 * messages: the path it was read from, or for source that is no file a
 * description in angle brackets (as tmap_ptx_describe makes).  On a
 * compile error, err->message holds NVRTC's log.  libnvrtc is loaded on the
 * first call (the toolkit's it was built with, else its soname on the
 * library path; $THREADMAP_LIBNVRTC, where set, names it instead):
 * TMAP_ERR_NVRTC where it cannot be. */
tmap_status tmap_compile(const char *source, const char *filename,
                         const tmap_compile_opts *opts, tmap_compiled *out,
                         tmap_error *err);
/* The lowered name for a name given in opts->names, or NULL. */
const char *tmap_compiled_lowered(const tmap_compiled *c, const char *name);
void tmap_compiled_free(tmap_compiled *c);

/* ----------------------------------------------- PTX module and its CFG */

/* A parsed PTX module (opaque).  Line numbers refer to the text parsed. */
typedef struct tmap_ptx_module tmap_ptx_module;

/* Parses PTX text.  `filename` names it in every message ("NAME:12: ...",
 * 12 a line of the text): the path it was read from, or, for text that is
 * no file, a description from tmap_ptx_describe; NULL gives "<PTX>". */
tmap_status tmap_ptx_parse(const char *text, size_t len, const char *filename,
                           tmap_ptx_module **out, tmap_error *err);
/* The name for tmap_ptx_parse of PTX that was not read from a file: the
 * printf-formatted description in angle brackets, which no path is taken
 * for ("<PTX of k from the application's module image>"), cut to fit size
 * (at least 3) with its '>' kept.  Returns buf. */
const char *tmap_ptx_describe(char *buf, size_t size, const char *fmt, ...);
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
    char *src_file;      /* with -lineinfo: the source file of the `.loc` in effect
                            at the block's first instruction (if it says line 0: the
                            block's first .loc with a line), as `.file` gives it;
                            else NULL */
    uint32_t src_line;   /* its line; 0: none (also nvcc's line 0, generated code) */
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
/* *names = the blocks' names (nblocks pointers into cfg, in the BBV's
 * column order), as BBV files and predictors name their columns; free the
 * array (only) with free(). */
tmap_status tmap_cfg_names(const tmap_cfg *cfg, const char ***names, tmap_error *err);
/* depth[b] (nblocks entries): how many natural loops hold block b (0: none;
 * a loop's header is in it); outer[b] (nblocks entries, or NULL): 1 + the
 * header of the outermost loop holding b, 0 for none.  nvcc's PTX is
 * reducible: loops are nested or disjoint. */
tmap_status tmap_cfg_loops(const tmap_cfg *cfg, uint32_t *depth, uint32_t *outer,
                           tmap_error *err);
/* idom[b] (nblocks entries): block b's immediate dominator within its
 * function, -1 for a function's first block and blocks it does not reach
 * (the same iteration as the post-dominators, ipdom). */
tmap_status tmap_cfg_dominators(const tmap_cfg *cfg, int32_t *idom, tmap_error *err);

/* Source lines (PTX compiled with -lineinfo or -G: `.file` and `.loc`).
 * "FILE:LINE" with the file's last path component ("divergent.cu:42") into
 * buf; "" when file is NULL or line 0.  Returns buf. */
const char *tmap_ptx_loc_format(const char *file, uint32_t line, char *buf, size_t size);
/* The source line of PTX line ptx_line (the `.loc` in effect there, in the
 * function holding it) formatted as above; "" when none.  Fails on a
 * malformed `.loc` or `.file`. */
tmap_status tmap_ptx_loc_of_line(const tmap_ptx_module *m, uint32_t ptx_line, char *buf,
                                 size_t size, tmap_error *err);

/* ------------------------------------------------------ memory accesses */

typedef enum tmap_access_space {
    TMAP_SPACE_GLOBAL,  /* .global and generic addresses */
    TMAP_SPACE_LOCAL,
    TMAP_SPACE_CONST,
    TMAP_SPACE_SHARED
} tmap_access_space;

/* How an address varies over a warp's threads (instrument/values.c's value
 * numbering of the address register). */
typedef enum tmap_access_class {
    TMAP_ACCESS_UNIFORM, /* from no thread id and no loaded data: one address */
    TMAP_ACCESS_AFFINE,  /* from the thread id (and maybe loaded data): the
                            thread's own element or record, neighbouring
                            threads at neighbouring ones */
    TMAP_ACCESS_DATA,    /* from data read at an address without loaded data (a
                            row start read at the thread's index, and what
                            is computed from it): one level of indirection */
    TMAP_ACCESS_GATHER   /* from data read through loaded data (x[col[j]]) */
} tmap_access_class;

/* One memory instruction (ld, ldu, st, atom, red; not ld.param) of the CFG. */
typedef struct tmap_access {
    uint32_t block;          /* CFG block */
    uint32_t line;           /* PTX line */
    tmap_access_space space;
    tmap_access_class cls;
    uint32_t bytes;          /* per thread: type width times vector width */
    int store;               /* st, atom or red */
    int moves;               /* the address is not one fixed value per thread: it
                                follows a loop variable, loaded data or the like
                                (a local row walked by its index moves; a spill
                                slot, the depot's base plus a constant, does not) */
} tmap_access;

/* Every memory instruction of cfg's functions in module m, in body order
 * (*out malloc'ed, *n entries; NULL and 0 when there is none). */
tmap_status tmap_access_list(const tmap_ptx_module *m, const tmap_cfg *cfg, tmap_access **out,
                             size_t *n, tmap_error *err);

/* The bytes of module m's __constant__ data: its module-scope .const
 * variables but .extern ones, each its type's width times its elements
 * (an array declared [] counts its initializer's values).  Fails
 * (TMAP_ERR_PARSE, naming the PTX line) on a .const declaration it cannot
 * size. */
tmap_status tmap_access_const_bytes(const tmap_ptx_module *m, size_t *bytes, tmap_error *err);

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
 * (sm_XY; compute_XY, as tmap_cuda_arch gives it, is assembled as sm_XY)
 * assembles the PTX with -lineinfo and loop unrolling off (a
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
 * CFG whose block indices are the counter rows (named as in m before the call).
 * A .func that another kernel of m also reaches is first copied for this kernel
 * (F_tmap_KERNEL), so every kernel of a module can be instrumented and the
 * others are unchanged; a kernel that calls through a function pointer and
 * shares a .func gives TMAP_ERR_UNSUPPORTED.
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
 * redirected kernels of one module share it.  A .func that another kernel also
 * reaches is copied for this kernel first (as by tmap_bbv_instrument), so the
 * other kernels keep reading the hardware ids.
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
    int non_thread_arrays; /* pointer parameters that are not per-thread arrays
                             (x[t] and x[col[i]], row[t] and row[t+1]): the
                             layout transform is wrong for them             */
} tmap_safety;

/* Analyzes `kernel` of m (docs/safety.md states the rules and their limits). */
tmap_status tmap_safety_analyze(const tmap_ptx_module *m, const char *kernel, tmap_safety *out,
                                tmap_error *err);
/* "grid", "block", "warps", "none". */
const char *tmap_scope_advice_name(tmap_scope_advice s);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_INSTRUMENT_H */

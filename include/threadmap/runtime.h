/*
 * threadmap/runtime.h -- the runtime stage: the CUDA driver (loaded at run time), kernels and
 * launches, profiling runs, manifests (stable); applying a regrouping by
 * layout transform or redirection (experimental: these change with the
 * GPU regroup path).
 */
#ifndef THREADMAP_RUNTIME_H
#define THREADMAP_RUNTIME_H

#include "threadmap/instrument.h"

#ifdef __cplusplus
extern "C" {
#endif

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
/* {"name", "arch", "sms", "sm_clock_mhz", "mem_clock_mhz", "driver"} as one
 * line of JSON (malloc'ed; NULL when out of memory or d is NULL). */
char *tmap_device_json(const tmap_device_info *d);
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
/* Launches on `stream` (a CUstream or cudaStream_t; NULL: the legacy default
 * stream) and returns at once, without waiting: stream-ordered. */
tmap_status tmap_kernel_enqueue(tmap_kernel *k, const tmap_launch *l, void *stream,
                                tmap_error *err);
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
 * manifest's own, else compute_90) and matches the arguments to the
 * kernel's .param list (count, sizes, pointers and scalars: an error names
 * the argument and the parameter).  *ptx and *entry (the PTX entry name)
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

/* An irregular reference of the kernel, as the manifest's "references"
 * names it: thread t's j-th access (j < per_thread) is
 * data[index[t * per_thread + j]], of elem_bytes bytes (data's type size, or
 * a power-of-two multiple of it for a struct element: 16 for a float4);
 * data holds nelems such elements.  Names are owned by the manifest. */
typedef struct tmap_reference_view {
    const char *data;
    const char *index;
    size_t per_thread;
    size_t elem_bytes;
    size_t nelems;         /* at most 2^32 */
    int read, write;       /* the access: read, write, or both */
} tmap_reference_view;

size_t tmap_manifest_num_references(const tmap_manifest *m);
tmap_status tmap_manifest_reference(const tmap_manifest *m, size_t i, tmap_reference_view *v);
/* Reference i's first threads * per_thread index values as u32 (*index
 * malloc'ed, *n entries), after generate; a value that is not an element
 * of data (negative, or >= nelems) is an error naming the manifest, the
 * reference, the index array's element and the value. */
tmap_status tmap_manifest_reference_index(const tmap_manifest *m, size_t i, uint32_t **index,
                                          size_t *n, tmap_error *err);

/* The manifest's per-thread arrays (per_thread > 0) as layout-transform
 * descriptors (malloc'ed).  An array passed in several arguments is an
 * error: moving it twice would break it. */
tmap_status tmap_manifest_thread_arrays(const tmap_manifest *m, tmap_thread_array **out,
                                        size_t *n, tmap_error *err);

/* The per-thread feature matrix [threads][p] (row-major, malloc'ed) and the
 * feature names (owned by the manifest), after generate. */
tmap_status tmap_manifest_features(const tmap_manifest *m, double **f, size_t *nthreads,
                                   size_t *p, const char *const **names, tmap_error *err);
/* The same matrix computed on the GPU, bit for bit: every feature in one
 * kernel (NVRTC, compiled on the first call and kept in the manifest;
 * later calls only launch), reading the arrays' device copies as they are
 * (after tmap_manifest_bind or tmap_manifest_restore), writing device
 * double [threads][p] at `out`, enqueued on `stream` (a CUstream; NULL:
 * the legacy default stream) without waiting.  An index outside its array
 * fails here, as on the host; a division by zero, which the host refuses,
 * gives IEEE's inf or NaN. */
tmap_status tmap_manifest_features_gpu(tmap_manifest *m, uint64_t out, void *stream,
                                       tmap_error *err);

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

/*
 * The same, made once and applied many times (experimental): a tmap_layout
 * holds one pooled device allocation for the copies of every moved array of
 * a launch of this shape, and their table.  tmap_layout_apply enqueues on
 * `stream` (a CUstream or cudaStream_t; NULL: the legacy default stream) one
 * fused gather of every input array, the kernel on the copies, and one
 * fused scatter of every output; it allocates nothing and does not wait,
 * unless ms (gather, kernel, scatter, from CUDA events) is asked for.  The
 * caller's array pointers are read at create: arrays must stay where they
 * were.  tmap_layout_launch is create, apply, wait and free in one call.
 */
typedef struct tmap_layout tmap_layout;

tmap_status tmap_layout_create(tmap_cuda *c, const tmap_launch *l,
                               const tmap_thread_array *arrays, size_t narrays,
                               tmap_layout **out, tmap_error *err);
tmap_status tmap_layout_apply(tmap_layout *y, tmap_kernel *k, const tmap_launch *l,
                              uint64_t perm, void *stream, float ms[3], tmap_error *err);
void tmap_layout_free(tmap_layout *y);
/* The same in steps, for a kernel threadmap does not launch (a runtime-API
 * program's own `<<<>>>`): gather, launch the kernel with array i replaced
 * by tmap_layout_copy_ptr(y, i) (the caller's pointer for an array neither
 * input nor output; 0 for i out of range), scatter; all stream-ordered. */
tmap_status tmap_layout_gather(tmap_layout *y, uint64_t perm, void *stream, tmap_error *err);
tmap_status tmap_layout_scatter(tmap_layout *y, uint64_t perm, void *stream, tmap_error *err);
uint64_t tmap_layout_copy_ptr(const tmap_layout *y, size_t i);

/*
 * The regroup path on the GPU (experimental; runtime/gpu_regroup.cu, built
 * with nvcc and CUB; without nvcc every call is TMAP_ERR_UNSUPPORTED).  A
 * tmap_gpu_regroup holds the scratch for nthreads threads, allocated once.
 * Device arrays are CUdeviceptr / cudaMalloc pointers as uint64_t; `stream`
 * is a CUstream or cudaStream_t (NULL: the legacy default stream); nothing
 * waits unless tmap_gpu_regroup_sync is called.
 *
 * tmap_gpu_regroup_model: the regression to evaluate: coef as
 * tmap_predictor.coef ([nblocks][nfeatures + 2]) and the block latencies
 * lat[nblocks], compiled into rows r = [c0, c1..cp, ct] of weight w:
 * blocks of bitwise equal coefficients merged (w: their latencies summed
 * in block order), rows of weight 0 dropped (at most 8192 rows remain);
 * copied to the device (this call waits for the copy).
 *
 * tmap_gpu_regroup_cost: each thread's eq. 11 latency from its features
 * (device double [nthreads][nfeatures], row t = thread t, finite) into the
 * device array tmap_gpu_regroup_cost_ptr(g): sum over rows of
 * w * max(v, 0), v = eq. 1's count (neither rounded nor capped), folded
 * per tile of 256 threads (threads 256i..256i+255): from the tile's box
 * (each feature's min and max over its threads widened to floats: the
 * greatest float below the min, the least above the max; the thread range)
 * each row's lowest and highest v are bounded by fma(c, lo or hi, .) from
 * c0, then ct, then c1..cp; with s = |c0| + |ct| t_last + sum |c_j|
 * max(|lo_j|, |hi_j|) (the same fma chain) and margin = s (p+3) 2^-52, a
 * row is L (lowest > margin: never negative in the tile), Z (highest <
 * -margin: never positive) or U.  Folded form a_j = sum over L rows in
 * order of fma(w, r_j, a_j) from 0; then the key = fma(a_t, t, a_0),
 * fma(a_j, x_j, .) for j = 1..p; then the U rows in order, in runs of R =
 * 4096 / P4 rows (P4 = p+3 rounded up to a multiple of 4: R = 512 for p
 * <= 5), in single precision (c, w, x_j and t rounded to float): per run
 * u = 0, for each row v = fmaf(ct, t, c0), fmaf(c_j, x_j, .), u = fmaf(w,
 * max(v, 0), u) (NaN: 0), then key = key + (double)u.  Mathematically the
 * sum of w * max(v, 0) over all blocks; the single-precision U terms are
 * within (p + 4 + nu) 2^-24 S of it to first order (nu: the tile's U rows,
 * S: the sum over them of w (|c0| + |ct| t + sum |c_j x_j|)), far below
 * the sort's bfloat16 rounding (2^-9 of the key) unless the key is a
 * cancellation of terms 2^10 and more times larger.  The bits are those of
 * this sequence (what the tests' CPU reference computes), not those of
 * tmap_predict's rounded counts.  Features beyond float range make their
 * U terms infinite or NaN.
 *
 * tmap_gpu_regroup_sort: perm (device u32 [nthreads]) sorts the threads
 * stably by key (device double [nthreads]) rounded to single precision and
 * then to bfloat16 (8 significant bits, round to nearest even: keys within
 * about 1 part in 256 tie), descending or not, ties by thread index: over
 * the grid (block_size 0) or within each thread block of block_size
 * threads: tmap_regroup_sort_key's permutation of the rounded keys.
 *
 * tmap_gpu_regroup_run: cost then sort by it (descending: the heaviest
 * threads first), as one CUDA graph launch on `stream`.
 * tmap_gpu_regroup_run_deal: bin-and-deal as one graph launch: cost, the
 * grid sort descending, then tmap_gpu_regroup_deal's dealing to thread
 * blocks of block_size threads (into g's own grid-order buffer, allocated
 * on the first call).  A graph is captured on the first call with its
 * arguments (features, perm, scope, deal, the model) and kept: g caches 8
 * graphs, the least recently used replaced, so alternating between a few
 * argument sets captures each once.  g's scratch is shared: two launches
 * on different streams must be ordered by the caller.
 */
typedef struct tmap_gpu_regroup tmap_gpu_regroup;

tmap_status tmap_gpu_regroup_create(tmap_cuda *c, size_t nthreads, tmap_gpu_regroup **out,
                                    tmap_error *err);
void tmap_gpu_regroup_free(tmap_gpu_regroup *g);
tmap_status tmap_gpu_regroup_model(tmap_gpu_regroup *g, const double *coef, const double *lat,
                                   size_t nblocks, size_t nfeatures, tmap_error *err);
uint64_t tmap_gpu_regroup_cost_ptr(const tmap_gpu_regroup *g);
tmap_status tmap_gpu_regroup_cost(tmap_gpu_regroup *g, uint64_t features, void *stream,
                                  tmap_error *err);
tmap_status tmap_gpu_regroup_sort(tmap_gpu_regroup *g, uint64_t key, int descending,
                                  size_t block_size, uint64_t perm, void *stream,
                                  tmap_error *err);
tmap_status tmap_gpu_regroup_run(tmap_gpu_regroup *g, uint64_t features, int descending,
                                 size_t block_size, uint64_t perm, void *stream,
                                 tmap_error *err);
tmap_status tmap_gpu_regroup_run_deal(tmap_gpu_regroup *g, uint64_t features, size_t block_size,
                                      uint64_t perm, void *stream, tmap_error *err);
tmap_status tmap_gpu_regroup_sync(tmap_gpu_regroup *g, void *stream, tmap_error *err);

/* Bin-and-deal on the GPU: `sorted` (device u32 [nthreads], a grid-scope
 * order, heaviest first) cut into warps of 32 threads, dealt round-robin
 * to the thread blocks of block_size threads (warp w of the order to block
 * w mod nblocks, as its warp w / nblocks), so that every block gets a
 * balanced share and the lower blocks, dispatched first, the heavier
 * warps; inside each warp the threads in ascending index.  perm receives
 * the result: tmap_regroup_deal's permutation.  nthreads must be a
 * multiple of block_size and block_size of 32. */
tmap_status tmap_gpu_regroup_deal(tmap_gpu_regroup *g, uint64_t sorted, size_t block_size,
                                  uint64_t perm, void *stream, tmap_error *err);

/* Overlap: work enqueued on g's own stream, tmap_gpu_regroup_side(g), runs
 * beside the caller's; events order the two without the host waiting.
 * fork: the side stream waits for what `stream` holds so far; mark: records
 * what the side stream holds so far; done: whether the marked work has
 * finished (no wait); join: `stream` waits for the marked work; copy:
 * bytes from device src to dst, enqueued on `stream`. */
void *tmap_gpu_regroup_side(const tmap_gpu_regroup *g);
tmap_status tmap_gpu_regroup_fork(tmap_gpu_regroup *g, void *stream, tmap_error *err);
tmap_status tmap_gpu_regroup_mark(tmap_gpu_regroup *g, tmap_error *err);
tmap_status tmap_gpu_regroup_done(tmap_gpu_regroup *g, int *done, tmap_error *err);
tmap_status tmap_gpu_regroup_join(tmap_gpu_regroup *g, void *stream, tmap_error *err);
tmap_status tmap_gpu_regroup_copy(tmap_gpu_regroup *g, uint64_t dst, uint64_t src, size_t bytes,
                                  void *stream, tmap_error *err);

/*
 * Value classes of a per-thread key on the GPU, and the regroupings made
 * of them (experimental; runtime/gpu_classes.cu, nvcc and CUB; without
 * nvcc every call is TMAP_ERR_UNSUPPORTED).  A tmap_gpu_classes holds the
 * scratch for nthreads threads (about 40 bytes each), allocated once.
 * `key` is a device double [nthreads], finite (not checked: a NaN key
 * makes the range undefined); a thread's class is
 * tmap_regroup_value_class(key, min, max, nclasses) over the whole grid,
 * bit for bit; 1 <= nclasses <= TMAP_GPU_CLASSES_MAX.  Grid scope.
 *
 * tmap_gpu_classes_table: the classes, the threads sorted stably by class
 * (kept on the device for expand), and size[c] (host u32 [nclasses]) the
 * threads of class c: waits for `stream` (the only call that does).
 * tmap_gpu_classes_expand: perm (device u32 [nthreads]) from the runs of
 * tmap_regroup_class_runs (host, 1 to TMAP_GPU_CLASSES_MAX_RUNS):
 * slot s takes the thread at position runs[2r + 1] + s - runs[2r] of the
 * last table's class order, r the last run with runs[2r] <= s.
 * tmap_gpu_classes_lam: LAM with warp segments of 32:
 * tmap_regroup_lam's permutation of the same key (grid scope, groupsize
 * 32), nothing on the host.
 */
#define TMAP_GPU_CLASSES_MAX 256
#define TMAP_GPU_CLASSES_MAX_RUNS 65536
typedef struct tmap_gpu_classes tmap_gpu_classes;

tmap_status tmap_gpu_classes_create(tmap_cuda *c, size_t nthreads, tmap_gpu_classes **out,
                                    tmap_error *err);
void tmap_gpu_classes_free(tmap_gpu_classes *g);
tmap_status tmap_gpu_classes_table(tmap_gpu_classes *g, uint64_t key, size_t nclasses,
                                   uint32_t *size, void *stream, tmap_error *err);
tmap_status tmap_gpu_classes_expand(tmap_gpu_classes *g, const uint32_t *runs, size_t nruns,
                                    uint64_t perm, void *stream, tmap_error *err);
tmap_status tmap_gpu_classes_lam(tmap_gpu_classes *g, uint64_t key, size_t nclasses,
                                 uint64_t perm, void *stream, tmap_error *err);

/*
 * Memory transactions of an irregular reference, counted on the GPU
 * (runtime/gpu_sectors.cu; the model's tmap_sectors_count_gpu checks the
 * arguments and is the entry point; docs/memory.md).  Warps of 32 slots:
 * slot s (thread perm[s], or s when perm is 0) makes request j < per_thread
 * of element index[perm[s] * per_thread + j] (the index itself when index
 * is 0), elem_bytes bytes at a sector-aligned base; a request touches the
 * distinct sector_bytes sectors of its active lanes' elements; a thread
 * block of block_size consecutive slots, the distinct sectors of all of
 * its requests (block_sectors: sorted on the GPU by CUB, whole blocks at a
 * time, at least one block's accesses of GPU memory at once).
 */
typedef struct tmap_sector_counts {
    uint64_t requests;     /* warp requests: warps x per_thread */
    uint64_t sectors;      /* sectors touched, summed over the requests */
    uint64_t min_sectors;  /* sum over requests of ceil(distinct elements x
                              elem_bytes / sector_bytes): each request's
                              elements packed together */
    uint64_t footprint;    /* distinct sectors touched by the whole launch */
    uint64_t block_sectors; /* distinct sectors of each thread block (block
                              consecutive slots, all of their requests),
                              summed over the blocks: the sectors a block's
                              warps, sharing an L1, pass to the L2 (reuse
                              across the warps of a block); at most sectors */
} tmap_sector_counts;

/* index and perm: device u32 arrays (0: the identity), indices below
 * nelems (else TMAP_ERR_INVALID naming the first bad one's position).
 * *l2_bytes (may be NULL) receives the device's L2 size.  Waits for the
 * result.  TMAP_ERR_UNSUPPORTED without nvcc. */
tmap_status tmap_gpu_sectors(tmap_cuda *c, uint64_t index, uint64_t perm, size_t nthreads,
                             size_t per_thread, size_t elem_bytes, size_t nelems,
                             size_t sector_bytes, size_t block_size, tmap_sector_counts *out,
                             uint64_t *l2_bytes, tmap_error *err);

/*
 * The GPU builds of memory layouts (runtime/gpu_memre.cu, nvcc and CUB;
 * TMAP_ERR_UNSUPPORTED without nvcc; docs/memory.md).  Warps of 32
 * threads; index: device u32 [nthreads * per_thread], values below nelems
 * (not checked here: tmap_sectors_check on the host, or the GPU sector
 * count, says so); at most 2^32 - 1 accesses and elements.  They write the
 * arrays regroup's tmap_memre_duplicate and tmap_memre_reorder give, bit
 * for bit: from (device u32 [nout]: A'[x] = A[from[x]]) and q (device u32
 * [nthreads * per_thread]: the new index).
 *
 * tmap_gpu_memre_duplicate: nout = nthreads * per_thread; one kernel,
 * enqueued on `stream` (NULL: the legacy default stream).
 * tmap_gpu_memre_reorder: nout = nelems; an atomic minimum per element
 * places the elements at their first access's slot, a CUB radix sort and
 * scan place the rest; allocates its scratch and waits.
 * tmap_gpu_memre_gather: dst[x] = src[from[x]] (elem_bytes each; zeros
 * where from[x] is UINT32_MAX): building A' before a launch, on `stream`,
 * allocating nothing.
 */
tmap_status tmap_gpu_memre_duplicate(uint64_t index, size_t nthreads, size_t per_thread,
                                     uint64_t from, uint64_t q, void *stream, tmap_error *err);
tmap_status tmap_gpu_memre_reorder(uint64_t index, size_t nthreads, size_t per_thread,
                                   size_t nelems, uint64_t from, uint64_t q, tmap_error *err);
tmap_status tmap_gpu_memre_gather(uint64_t from, size_t nout, uint64_t src, size_t elem_bytes,
                                  uint64_t dst, void *stream, tmap_error *err);
/* tmap_gpu_memre_partial: regroup's tmap_memre_partial with 32-byte
 * sectors: from (device u32, room for nelems rounded up to a sector's
 * elements + nthreads * per_thread) and q; *nout: the slots of A' used.
 * Accesses and elements below 2^31; allocates its scratch and waits.
 * tmap_gpu_memre_share: regroup's tmap_memre_share (perm: device u32
 * [nthreads] or 0): from (room for nthreads * per_thread), q, start
 * (device u32 [nblocks + 1]); *nout: the slots of A' used.  The shared
 * memory limit is the caller's to check (start says each block's list).
 * Accesses below 2^31; allocates its scratch and waits. */
tmap_status tmap_gpu_memre_partial(uint64_t index, size_t nthreads, size_t per_thread,
                                   size_t nelems, size_t elem_bytes, double fraction,
                                   uint64_t from, uint64_t q, size_t *nout, tmap_error *err);
tmap_status tmap_gpu_memre_share(uint64_t index, uint64_t perm, size_t nthreads,
                                 size_t per_thread, size_t block_size, uint64_t from, uint64_t q,
                                 uint64_t start, size_t *nout, tmap_error *err);
/* tmap_gpu_memre_swap: regroup's tmap_memre_swap_sorted (32-byte sectors,
 * warps of 32; block_size 0 or a multiple of 32): perm (device u32
 * [nthreads]) the thread order; Q is the index itself; threads below
 * 2^31 - 1.  The category key (the block, then each access's segment, in
 * the bits that can vary) packed into as few 32-bit words as fit, one
 * stable CUB radix sort per word (the least significant first; with one
 * access and no blocks, one sort on the segment); the categories by a scan
 * of their heads, their residues by a scan over the categories, and each
 * job placed by one kernel (whole warps first, then the residues, both in
 * category order).  Its scratch (four words a thread) by cudaMalloc and
 * cudaFree (a warm round trip a third of the stream-ordered pool's, which
 * maps and unmaps it at each wait: docs/memory.md), on and for the legacy
 * default stream; waits for the device.
 * tmap_gpu_memre_swap_steps: the same build, the same perm, each step
 * between its own CUDA events and waited for (where the time goes: for
 * benchmarks), with the bytes each step must read and write at least. */
enum {
    TMAP_SWAP_ALLOC, /* the scratch (cudaMalloc) */
    TMAP_SWAP_KEYS,  /* the key words (the first also writes the ids) */
    TMAP_SWAP_SORT,  /* CUB's radix sorts, one per word */
    TMAP_SWAP_RUNS,  /* the heads' scan, the categories' starts, the residues' scan */
    TMAP_SWAP_PLACE, /* each job to its slot */
    TMAP_SWAP_FREE,  /* the scratch back (cudaFree: the device waited for) */
    TMAP_SWAP_STEPS
};
typedef struct tmap_gpu_swap_steps {
    double ms[TMAP_SWAP_STEPS];    /* each step's time */
    double bytes[TMAP_SWAP_STEPS]; /* what it reads and writes at least (0: no traffic) */
    unsigned words, passes;        /* key words sorted, CUB's 8-bit radix passes over them */
    size_t runs;                   /* the categories */
} tmap_gpu_swap_steps;
tmap_status tmap_gpu_memre_swap(uint64_t index, size_t nthreads, size_t per_thread,
                                size_t nelems, size_t elem_bytes, size_t block_size,
                                uint64_t perm, tmap_error *err);
tmap_status tmap_gpu_memre_swap_steps(uint64_t index, size_t nthreads, size_t per_thread,
                                      size_t nelems, size_t elem_bytes, size_t block_size,
                                      uint64_t perm, tmap_gpu_swap_steps *steps, tmap_error *err);

/*
 * The layouts that follow an order, built on the GPU (runtime/gpu_memorder.cu,
 * nvcc and CUB; TMAP_ERR_UNSUPPORTED without nvcc; docs/memory.md): bit for
 * bit regroup's tmap_memre_relabel, tmap_memre_morton and tmap_memre_pad,
 * warps of 32.  Each is enqueued on `stream` (NULL: the legacy default
 * stream), its scratch allocated and freed there (cudaMallocAsync), and
 * waits for nothing.  Device arrays are u32 unless said; index values below
 * nelems and orders that are permutations are not checked here (the CPU
 * functions check them).  Counts: at least 1, at most 2^32 - 2.
 *
 * tmap_gpu_memre_relabel: q[i] = the position of index[i] in order (order:
 * [nelems], order[x] = the element at x).  The layout's from is order
 * itself, and so is the thread order when threads follow their elements.
 * A locality order (tmap_memre_rcm, tmap_gpu_memre_rcm) is applied so.
 * tmap_gpu_memre_morton: order [n] = the points (xyz: device floats, point
 * i's coordinates at i * stride, stride >= 3, all finite) by Morton code:
 * the bounding box by atomics, the codes, a stable CUB radix sort.
 * tmap_gpu_memre_pad: one access per thread; from [ceil(nthreads / 32) *
 * (32 + segment)] (segment = sector_bytes / elem_bytes, at least 1; both
 * powers of two; sector_bytes 0: 32), its first *nout slots the layout
 * (UINT32_MAX: padding) and the rest UINT32_MAX; q [nthreads]; perm
 * [nthreads]: the thread order; nout: a device u32 written with the slots
 * used.  Threads sorted by a CUB radix sort, then one block walks the
 * per-warp summaries in order (where a warp's set starts depends on the
 * warps before it).
 */
tmap_status tmap_gpu_memre_relabel(uint64_t index, size_t nthreads, size_t per_thread,
                                   uint64_t order, size_t nelems, uint64_t q, void *stream,
                                   tmap_error *err);
tmap_status tmap_gpu_memre_morton(uint64_t xyz, size_t stride, size_t n, uint64_t order,
                                  void *stream, tmap_error *err);
tmap_status tmap_gpu_memre_pad(uint64_t index, size_t nthreads, size_t nelems, size_t elem_bytes,
                               size_t sector_bytes, uint64_t from, uint64_t q, uint64_t perm,
                               uint64_t nout, void *stream, tmap_error *err);
/* tmap_gpu_memre_rcm: order [n] = reverse Cuthill-McKee of the graph
 * (rowptr [n + 1], col: device CSR, a symmetric pattern; self loops
 * ignored), equal to regroup's tmap_memre_rcm: isolated vertices first,
 * then each component from the least (degree, vertex) not numbered,
 * numbered from its pseudo-peripheral vertex (George and Liu's search,
 * BFS sweeps on the GPU), level by level, each level's vertices in the
 * order (the least label of their parents in the previous level, degree,
 * vertex); the whole order reversed.  Where the device can launch
 * cooperative kernels, each sweep is one kernel (grid-wide barriers
 * between levels), and so is each component's numbering when every row
 * is at most 32 long (each parent ranks its own children, no sort; one
 * grid barrier a level, each level's claims made as its vertices are
 * placed);
 * otherwise a level is a few launches and a CUB radix sort.  Unlike the
 * others it WAITS: the host reads each sweep's level bounds (every 64
 * levels without cooperative launches) and each component's least vertex
 * (the numbering itself, whose levels' sizes the root's sweep gave, does
 * not); n at most 2^31 - 1. 
 * tmap_gpu_memre_follow: perm [nthreads] = the threads (thread t owns row
 * row[t] < nrows) by their row's position in order (order: [nrows]),
 * stably: with rows ascending, each row's threads in their order (the
 * benchmarks' threads following their rows).  It waits once, to read
 * whether row[] ascends: then each row's threads are one run, placed by a
 * scan of the runs' lengths in the new order; otherwise a CUB radix sort
 * of the threads on their row's position (the same result). */
tmap_status tmap_gpu_memre_rcm(uint64_t rowptr, uint64_t col, size_t n, uint64_t order,
                               void *stream, tmap_error *err);

/* Where a tmap_gpu_memre_rcm_timed call's time went: each step between
 * two CUDA events on the stream and waited for (the host's work between
 * them counted: the stream is idle then), in milliseconds. */
typedef struct tmap_gpu_rcm_steps {
    double alloc_ms;         /* occupancy queries, pinned and scratch allocation */
    double setup_ms;         /* degrees, the isolated vertices' selection and marks */
    double sweep_ms;         /* every pseudo-peripheral sweep (a BFS each) */
    double sweep_each_ms[4]; /* the first four sweeps, each */
    double least_ms;         /* each component's start, each sweep's far vertex */
    double number_ms;        /* every component's numbering */
    double rest_ms;          /* the numbered marked, the order reversed */
    unsigned sweeps, components;
    unsigned long long levels; /* the numbered components' levels, summed */
    int coop_sweeps;         /* the sweeps were cooperative kernels */
    int coop_number;         /* the numbering was (rows at most 32), not launches per level */
    unsigned fused_sweeps;   /* sweeps run inside a numbering's kernel (their time in number_ms) */
    unsigned discarded;      /* numberings discarded: the sweep beside them grew the eccentricity */
    unsigned long long sweep_barriers;  /* the separate sweeps' levels (a grid barrier each) */
    unsigned long long number_barriers; /* the numberings' levels (with a sweep beside, the longer) */
    unsigned long long sweep_vertices, fused_vertices, number_vertices; /* their vertices */
    /* The floors (tmap_gpu_memre_rcm_floors, after the timed call): one
     * grid barrier of the cooperative grid (0: none), and the DRAM
     * bandwidth of a device copy of the columns; each step's floor is its
     * barriers at barrier_us plus its compulsory bytes (each row pointer
     * and column read once, each vertex's own words written once) at
     * copy_gbs. */
    double barrier_us, copy_gbs;
    double barrier_one_us;   /* a grid barrier of one block (of 512) per SM, for comparison */
    double floor_setup_ms, floor_sweep_ms, floor_number_ms;
} tmap_gpu_rcm_steps;

/* tmap_gpu_memre_rcm, the same order, with its steps timed into *steps
 * (NULL: not timed, the same call).  The waits between steps add a few
 * microseconds each. */
tmap_status tmap_gpu_memre_rcm_timed(uint64_t rowptr, uint64_t col, size_t n, uint64_t order,
                                     tmap_gpu_rcm_steps *steps, void *stream, tmap_error *err);
/* The floors of a timed call's steps (its *steps, the same graph), each
 * measured here: a grid barrier, a copy's bandwidth (a few ms: call it
 * outside the window that times the build). */
tmap_status tmap_gpu_memre_rcm_floors(uint64_t rowptr, uint64_t col, size_t n,
                                      tmap_gpu_rcm_steps *steps, void *stream, tmap_error *err);
tmap_status tmap_gpu_memre_follow(uint64_t row, size_t nthreads, uint64_t order, size_t nrows,
                                  uint64_t perm, void *stream, tmap_error *err);

/* A stretch of a stream timed by two CUDA events (experimental), read
 * later without waiting: start, stop, then poll until *ready (then *ms
 * holds the time and the timer may be started again). */
typedef struct tmap_timer tmap_timer;

tmap_status tmap_timer_create(tmap_cuda *c, tmap_timer **out, tmap_error *err);
void tmap_timer_free(tmap_timer *t);
tmap_status tmap_timer_start(tmap_timer *t, void *stream, tmap_error *err);
tmap_status tmap_timer_stop(tmap_timer *t, void *stream, tmap_error *err);
/* Waits for the stop (host blocks) and reads the time, as a ready poll. */
tmap_status tmap_timer_wait(tmap_timer *t, float *ms, tmap_error *err);
tmap_status tmap_timer_poll(tmap_timer *t, int *ready, float *ms, tmap_error *err);

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

#endif /* THREADMAP_RUNTIME_H */

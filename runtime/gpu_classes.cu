/*
 * gpu_classes.cu -- value classes of a per-thread key on the GPU, and the
 * regroupings made of them (built with nvcc; CUB from the toolkit):
 *
 *   table   each thread's class among R equal-width ranges over the key's
 *           [min, max] (CUB reductions; the bits of
 *           tmap_regroup_value_class), the threads sorted stably by class
 *           (CUB radix sort), and the class sizes, the only thing the host
 *           receives (R numbers);
 *   expand  runs of that class-sorted order (from the host's Greedy or
 *           Greedy-Max on the table) written into the permutation, one
 *           thread per slot;
 *   lam     LAM (zhang2010 sec. 4.2) wholly on the GPU, warps of 32:
 *           tmap_regroup_lam's permutation.  Each sequential step of the
 *           CPU's (quotas spent in segment order, holes filled in turn)
 *           is a rank, and each rank a stable radix sort by class (CUB)
 *           and the class boundaries found by binary search, or an
 *           exclusive scan (CUB).
 *
 * Everything is enqueued on the caller's stream; the scratch is allocated
 * once, at create; only table waits (for the R sizes).  lam's two dozen
 * kernels are one CUDA graph, captured at the first call for its
 * arguments and relaunched after (their host enqueue cost more than the
 * GPU's work: about 150 us).
 */
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "runtime/gpu_util.cuh"

enum { MAX_R = TMAP_GPU_CLASSES_MAX, MAX_RUNS = TMAP_GPU_CLASSES_MAX_RUNS };
#define MIXED 0xffffffffu

typedef unsigned short ckey; /* a class, or a class-derived sort key (< 2R + 1) */

/* The small per-call tables, device u32 each: class counts, and the
 * boundaries of each sort's keys. */
enum { T_COUNT = 0, T_SEG = MAX_R + 1, T_HOLE = T_SEG + 2 * MAX_R + 2,
       T_LEAVE = T_HOLE + MAX_R + 1, T_MIX = T_LEAVE + MAX_R + 1, T_END = T_MIX + MAX_R + 1 };

struct tmap_gpu_classes {
    size_t n;
    double *minmax;        /* [2] the key's least and greatest */
    ckey *cls;             /* [n] class of each thread */
    ckey *key[2];          /* [n] sort keys in and out */
    unsigned *val[2];      /* [n] sort values in and out */
    unsigned *order;       /* [n] threads in class order (table) */
    ckey *hole_key;        /* [n] LAM: labels of leaving threads, R after them */
    unsigned *hole;        /* [n] LAM: their slots, by label then slot */
    unsigned *flag, *rank; /* [n] a scan's input and output */
    unsigned *tomix;       /* [n] LAM: threads waiting for a slot */
    unsigned *label;       /* [n / 32 + 1] LAM: each segment's label or MIXED */
    unsigned *table;       /* [T_END] */
    unsigned *runs;        /* [2 * MAX_RUNS] */
    unsigned *host_start;  /* [MAX_R + 1] */
    void *temp;            /* CUB's scratch, the largest of its calls */
    size_t temp_bytes;
    cudaStream_t capture;  /* lam's graph is captured on this stream */
    cudaGraphExec_t graph; /* lam, or NULL */
    uint64_t made_for[3];  /* the graph's key, perm and class count */
};

/* ------------------------------------------------------------- kernels */

/* tmap_regroup_value_class, each step rounded once (no contraction). */
__device__ unsigned value_class(double x, double lo, double hi, unsigned R)
{
    double w = __dsub_rn(__dmul_rn(hi, 0.5), __dmul_rn(lo, 0.5));
    if (!(w > 0) || R < 2)
        return 0;
    double d = __dsub_rn(__dmul_rn(x, 0.5), __dmul_rn(lo, 0.5));
    double r = __dmul_rn(__ddiv_rn(d, w), (double)R);
    if (!(r > 0))
        return 0;
    return r >= (double)R ? R - 1 : (unsigned)r;
}

static unsigned grid_of(size_t n) { return (unsigned)((n + 255) / 256); }

__global__ void class_kernel(const double *key, const double *minmax, unsigned R, size_t n,
                             ckey *cls, ckey *k, unsigned *v)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    ckey c = (ckey)value_class(key[t], minmax[0], minmax[1], R);
    cls[t] = c, k[t] = c, v[t] = (unsigned)t;
}

/* start[k] for k = 0..nk: the first index of sorted keys sk[0..n) not
 * below k (so keys k sit at start[k] .. start[k + 1]). */
__global__ void starts_kernel(const ckey *sk, size_t n, unsigned nk, unsigned *start)
{
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k > nk)
        return;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sk[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    start[k] = (unsigned)lo;
}

/* Slot s takes position runs[2r + 1] + s - runs[2r] of the class order,
 * r the last run starting at or before s. */
__global__ void expand_kernel(const unsigned *runs, unsigned nruns, const unsigned *order,
                              size_t n, unsigned *perm)
{
    size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (s >= n)
        return;
    unsigned lo = 0, hi = nruns; /* the first run starting after s */
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (runs[2 * mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    const unsigned *r = runs + 2 * (lo - 1);
    perm[s] = order[r[1] + (unsigned)(s - r[0])];
}

/* One warp per segment of 32 threads: its most covered class (ties: the
 * lowest) and whether it is pure, as the key class (pure), R + class
 * (not), or 2R (the partial last segment, never labelled). */
__global__ void segment_kernel(const ckey *cls, size_t n, unsigned R, ckey *k, unsigned *v)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x, g = t / 32;
    if (g * 32 >= n)
        return;
    if ((g + 1) * 32 > n) { /* the whole warp is the partial segment */
        if (t % 32 == 0)
            k[g] = (ckey)(2 * R), v[g] = (unsigned)g;
        return;
    }
    unsigned c = cls[t], same = __popc(__match_any_sync(0xffffffffu, c));
    unsigned best = same * 512 + (511 - c);
    for (int o = 16; o > 0; o >>= 1)
        best = max(best, __shfl_xor_sync(0xffffffffu, best, o));
    if (t % 32 == 0) {
        unsigned l = 511 - (best & 511);
        k[g] = (ckey)((best >> 9) == 32 ? l : R + l), v[g] = (unsigned)g;
    }
}

/* Labels from the segments sorted by key (pure ones, then the others by
 * class, each in segment order): pure segments keep their class; the
 * others get theirs while the quota floor(count / 32) less the pure ones
 * lasts. */
__global__ void label_kernel(const ckey *sk, const unsigned *sg, size_t nseg, unsigned R,
                             const unsigned *table, unsigned *label)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= nseg)
        return;
    const unsigned *count = table + T_COUNT, *start = table + T_SEG;
    unsigned k = sk[i], lab = MIXED;
    if (k < R) {
        lab = k;
    } else if (k < 2 * R) {
        unsigned l = k - R, pure = start[l + 1] - start[l], quota = count[l] / 32;
        lab = (unsigned)(i - start[k]) + pure < quota ? l : MIXED;
    }
    label[sg[i]] = lab;
}

/* Leaving threads (in a labelled segment, not of its class) keyed by the
 * label, the others by R. */
__global__ void leave_kernel(const ckey *cls, const unsigned *label, size_t n, unsigned R,
                             ckey *k, unsigned *v)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    unsigned lab = label[t / 32];
    k[t] = (ckey)(lab != MIXED && cls[t] != lab ? lab : R), v[t] = (unsigned)t;
}

/* Processing position P (by label, then slot) keyed by its thread's own
 * class, R past the leaving threads. */
__global__ void own_kernel(const ckey *cls, const ckey *hole_key, const unsigned *hole, size_t n,
                           unsigned R, ckey *k, unsigned *v)
{
    size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    k[p] = (ckey)(hole_key[p] < R ? cls[hole[p]] : R), v[p] = (unsigned)p;
}

__global__ void identity_kernel(size_t n, unsigned *perm)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t < n)
        perm[t] = (unsigned)t;
}

/* The r-th leaving thread of class m (processing order) fills hole r of
 * class m when there is one (flag 0), else waits (flag 1). */
__global__ void fill_kernel(const ckey *mk, const unsigned *mp, size_t n, unsigned R,
                            const unsigned *table, const unsigned *hole, unsigned *flag,
                            unsigned *perm)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned m = mk[i], p = mp[i];
    if (m >= R) {
        flag[p] = 0;
        return;
    }
    const unsigned *hs = table + T_HOLE, *ls = table + T_LEAVE;
    unsigned r = (unsigned)i - ls[m], holes = hs[m + 1] - hs[m];
    if (r < holes)
        perm[hole[hs[m] + r]] = hole[p];
    flag[p] = r >= holes;
}

__global__ void wait_kernel(const unsigned *flag, const unsigned *rank, const unsigned *hole,
                            size_t n, unsigned *tomix)
{
    size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (p < n && flag[p])
        tomix[rank[p]] = hole[p];
}

/* Threads of unlabelled segments keyed by class, the others by R. */
__global__ void mixed_kernel(const ckey *cls, const unsigned *label, size_t n, unsigned R,
                             ckey *k, unsigned *v)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    k[t] = (ckey)(label[t / 32] == MIXED ? cls[t] : R), v[t] = (unsigned)t;
}

/* The r-th unlabelled thread of class m (slot order) fills hole L_m + r
 * of class m while holes remain (L_m: its leaving threads), flag 1 at its
 * slot. */
__global__ void move_kernel(const ckey *xk, const unsigned *xt, size_t n, unsigned R,
                            const unsigned *table, const unsigned *hole, unsigned *flag,
                            unsigned *perm)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned m = xk[i];
    if (m >= R)
        return;
    const unsigned *hs = table + T_HOLE, *ls = table + T_LEAVE, *xs = table + T_MIX;
    unsigned r = (unsigned)i - xs[m], holes = hs[m + 1] - hs[m], left = ls[m + 1] - ls[m];
    if (r + left < holes) {
        unsigned t = xt[i];
        perm[hole[hs[m] + left + r]] = t;
        flag[t] = 1;
    }
}

__global__ void take_kernel(const unsigned *flag, const unsigned *rank, const unsigned *tomix,
                            size_t n, unsigned *perm)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t < n && flag[t])
        perm[t] = tomix[rank[t]];
}

/* --------------------------------------------------------------- the API */

/* The bits that hold every value up to x. */
static int bits_for(unsigned x)
{
    int b = 1;
    while (b < 16 && (1u << b) <= x)
        b++;
    return b;
}

/* CUB's largest scratch for n items. */
static cudaError_t temp_size(tmap_gpu_classes *g, size_t *bytes)
{
    size_t b[5] = {0, 0, 0, 0, 0};
    int n = (int)g->n;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, b[0], g->key[0], g->key[1], g->val[0],
                                                    g->val[1], n);
    if (e == cudaSuccess)
        e = cub::DeviceReduce::Min(NULL, b[1], (const double *)NULL, g->minmax, n);
    if (e == cudaSuccess)
        e = cub::DeviceReduce::Max(NULL, b[2], (const double *)NULL, g->minmax + 1, n);
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(NULL, b[3], g->flag, g->rank, n);
    if (e == cudaSuccess)
        e = cub::DeviceHistogram::HistogramEven(NULL, b[4], g->cls, (int *)g->table,
                                                MAX_R + 1, 0, (int)MAX_R, n);
    *bytes = 0;
    for (int i = 0; i < 5; i++)
        *bytes = b[i] > *bytes ? b[i] : *bytes;
    return e;
}

extern "C" tmap_status tmap_gpu_classes_create(tmap_cuda *c, size_t nthreads,
                                               tmap_gpu_classes **out, tmap_error *err)
{
    tmap_status st = gpu_create_check(c, out, nthreads, "tmap_gpu_classes_create", err);
    if (st)
        return st;
    tmap_gpu_classes *g = (tmap_gpu_classes *)calloc(1, sizeof *g);
    unsigned *host = (unsigned *)malloc((MAX_R + 1) * sizeof *host);
    if (!g || !host) {
        free(g), free(host);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    g->n = nthreads, g->host_start = host;
    size_t n = nthreads, u = n * sizeof(unsigned), k = n * sizeof(ckey);
    void **bufs[] = {(void **)&g->minmax, (void **)&g->cls, (void **)&g->key[0],
                     (void **)&g->key[1], (void **)&g->val[0], (void **)&g->val[1],
                     (void **)&g->order, (void **)&g->hole_key, (void **)&g->hole,
                     (void **)&g->flag, (void **)&g->rank, (void **)&g->tomix,
                     (void **)&g->label, (void **)&g->table, (void **)&g->runs};
    size_t sizes[] = {2 * sizeof(double), k, k, k, u, u, u, k, u, u, u, u,
                      (n / 32 + 1) * sizeof(unsigned), T_END * sizeof(unsigned),
                      2 * MAX_RUNS * sizeof(unsigned)};
    cudaError_t e = gpu_malloc_all(bufs, sizes, sizeof sizes / sizeof *sizes);
    if (e == cudaSuccess)
        e = temp_size(g, &g->temp_bytes);
    if (e == cudaSuccess)
        e = cudaMalloc(&g->temp, g->temp_bytes ? g->temp_bytes : 1);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&g->capture, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        tmap_gpu_classes_free(g);
        return cuda_fail(err, e, "tmap_gpu_classes_create: cudaMalloc");
    }
    *out = g;
    return TMAP_OK;
}

extern "C" void tmap_gpu_classes_free(tmap_gpu_classes *g)
{
    if (!g)
        return;
    void *bufs[] = {g->minmax, g->cls, g->key[0], g->key[1], g->val[0], g->val[1], g->order,
                    g->hole_key, g->hole, g->flag, g->rank, g->tomix, g->label, g->table,
                    g->runs, g->temp};
    gpu_free_all(bufs, sizeof bufs / sizeof bufs[0]);
    if (g->graph)
        cudaGraphExecDestroy(g->graph);
    if (g->capture)
        cudaStreamDestroy(g->capture);
    free(g->host_start);
    free(g);
}

static tmap_status check_r(tmap_gpu_classes *g, uint64_t key, size_t R, const char *name,
                           tmap_error *err)
{
    if (!g || !key)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: an argument is NULL", name);
    if (!R || R > MAX_R)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu classes (1 to %d)", name, R, MAX_R);
    return TMAP_OK;
}

/* A stable sort of (key, value) pairs of n items, keys below 2^bits. */
static tmap_status sort(tmap_gpu_classes *g, const ckey *ki, ckey *ko, const unsigned *vi,
                        unsigned *vo, size_t n, int bits, cudaStream_t s, tmap_error *err)
{
    size_t bytes = g->temp_bytes;
    TMAP_CU(cub::DeviceRadixSort::SortPairs(g->temp, bytes, ki, ko, vi, vo, (int)n, 0, bits, s),
            "cub::DeviceRadixSort::SortPairs");
    return TMAP_OK;
}

/* table[at + k] for k = 0..nk: where keys k start in sk[0..n). */
static tmap_status starts(tmap_gpu_classes *g, const ckey *sk, size_t n, unsigned nk,
                          unsigned at, cudaStream_t s, tmap_error *err)
{
    starts_kernel<<<(nk + 1 + 255) / 256, 256, 0, s>>>(sk, n, nk, g->table + at);
    TMAP_CU(cudaGetLastError(), "starts kernel launch");
    return TMAP_OK;
}

static tmap_status scan(tmap_gpu_classes *g, cudaStream_t s, tmap_error *err)
{
    size_t bytes = g->temp_bytes;
    TMAP_CU(cub::DeviceScan::ExclusiveSum(g->temp, bytes, g->flag, g->rank, (int)g->n, s),
            "cub::DeviceScan::ExclusiveSum");
    return TMAP_OK;
}

/* The key's range and each thread's class into cls, key[0] (and val[0] =
 * thread). */
static tmap_status classify(tmap_gpu_classes *g, const double *key, unsigned R, cudaStream_t s,
                            tmap_error *err)
{
    size_t bytes = g->temp_bytes;
    int n = (int)g->n;
    TMAP_CU(cub::DeviceReduce::Min(g->temp, bytes, key, g->minmax, n, s), "cub::DeviceReduce::Min");
    bytes = g->temp_bytes;
    TMAP_CU(cub::DeviceReduce::Max(g->temp, bytes, key, g->minmax + 1, n, s),
            "cub::DeviceReduce::Max");
    class_kernel<<<grid_of(g->n), 256, 0, s>>>(key, g->minmax, R, g->n, g->cls, g->key[0],
                                               g->val[0]);
    TMAP_CU(cudaGetLastError(), "class kernel launch");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_classes_table(tmap_gpu_classes *g, uint64_t key, size_t nclasses,
                                              uint32_t *size, void *stream, tmap_error *err)
{
    tmap_status st = check_r(g, key, nclasses, "tmap_gpu_classes_table", err);
    if (st || !size)
        return st ? st : tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_classes_table: size is NULL");
    cudaStream_t s = (cudaStream_t)stream;
    unsigned R = (unsigned)nclasses;
    st = classify(g, (const double *)(uintptr_t)key, R, s, err);
    if (!st)
        st = sort(g, g->key[0], g->key[1], g->val[0], g->order, g->n, bits_for(R), s, err);
    if (!st)
        st = starts(g, g->key[1], g->n, R, T_COUNT, s, err);
    if (st)
        return st;
    TMAP_CU(cudaMemcpyAsync(g->host_start, g->table + T_COUNT, (R + 1) * sizeof(unsigned),
                            cudaMemcpyDeviceToHost, s),
            "cudaMemcpyAsync");
    TMAP_CU(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    for (unsigned c = 0; c < R; c++)
        size[c] = g->host_start[c + 1] - g->host_start[c];
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_classes_expand(tmap_gpu_classes *g, const uint32_t *runs,
                                               size_t nruns, uint64_t perm, void *stream,
                                               tmap_error *err)
{
    if (!g || !runs || !perm || !nruns || nruns > MAX_RUNS || runs[0] != 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_classes_expand: %s",
                         !g || !runs || !perm ? "an argument is NULL"
                                              : "1 to 65536 runs, the first at slot 0");
    cudaStream_t s = (cudaStream_t)stream;
    TMAP_CU(cudaMemcpyAsync(g->runs, runs, 2 * nruns * sizeof(unsigned), cudaMemcpyHostToDevice,
                            s),
            "cudaMemcpyAsync");
    expand_kernel<<<grid_of(g->n), 256, 0, s>>>(g->runs, (unsigned)nruns, g->order, g->n,
                                                (unsigned *)(uintptr_t)perm);
    TMAP_CU(cudaGetLastError(), "expand kernel launch");
    return TMAP_OK;
}

/* LABEL: the segments' keys, sorted, their boundaries, the labels. */
static tmap_status lam_label(tmap_gpu_classes *g, unsigned R, cudaStream_t s, tmap_error *err)
{
    size_t n = g->n, nseg = (n + 31) / 32, bytes = g->temp_bytes;
    TMAP_CU(cub::DeviceHistogram::HistogramEven(g->temp, bytes, g->cls, (int *)g->table + T_COUNT,
                                                (int)R + 1, 0, (int)R, (int)n, s),
            "cub::DeviceHistogram::HistogramEven");
    segment_kernel<<<grid_of(nseg * 32), 256, 0, s>>>(g->cls, n, R, g->key[0], g->val[0]);
    TMAP_CU(cudaGetLastError(), "segment kernel launch");
    tmap_status st = sort(g, g->key[0], g->key[1], g->val[0], g->val[1], nseg,
                          bits_for(2 * R), s, err);
    if (!st)
        st = starts(g, g->key[1], nseg, 2 * R + 1, T_SEG, s, err);
    if (st)
        return st;
    label_kernel<<<grid_of(nseg), 256, 0, s>>>(g->key[1], g->val[1], nseg, R, g->table,
                                               g->label);
    TMAP_CU(cudaGetLastError(), "label kernel launch");
    return TMAP_OK;
}

/* ASSIGN, leaving threads: the holes by label then slot (also the order
 * in which they leave), each leaving thread's rank in its class, the
 * holes filled, the rest numbered into tomix. */
static tmap_status lam_leave(tmap_gpu_classes *g, unsigned R, unsigned *perm, cudaStream_t s,
                             tmap_error *err)
{
    size_t n = g->n;
    int bits = bits_for(R);
    leave_kernel<<<grid_of(n), 256, 0, s>>>(g->cls, g->label, n, R, g->key[0], g->val[0]);
    TMAP_CU(cudaGetLastError(), "leave kernel launch");
    tmap_status st = sort(g, g->key[0], g->hole_key, g->val[0], g->hole, n, bits, s, err);
    if (!st)
        st = starts(g, g->hole_key, n, R, T_HOLE, s, err);
    if (st)
        return st;
    own_kernel<<<grid_of(n), 256, 0, s>>>(g->cls, g->hole_key, g->hole, n, R, g->key[0],
                                          g->val[0]);
    TMAP_CU(cudaGetLastError(), "own kernel launch");
    st = sort(g, g->key[0], g->key[1], g->val[0], g->val[1], n, bits, s, err);
    if (!st)
        st = starts(g, g->key[1], n, R, T_LEAVE, s, err);
    if (st)
        return st;
    identity_kernel<<<grid_of(n), 256, 0, s>>>(n, perm);
    fill_kernel<<<grid_of(n), 256, 0, s>>>(g->key[1], g->val[1], n, R, g->table, g->hole,
                                           g->flag, perm);
    TMAP_CU(cudaGetLastError(), "fill kernel launch");
    if ((st = scan(g, s, err)))
        return st;
    wait_kernel<<<grid_of(n), 256, 0, s>>>(g->flag, g->rank, g->hole, n, g->tomix);
    TMAP_CU(cudaGetLastError(), "wait kernel launch");
    return TMAP_OK;
}

/* ASSIGN, unlabelled segments: their threads of each class by slot, the
 * first ones filling the holes left, each slot so vacated taken by the
 * next waiting thread. */
static tmap_status lam_mix(tmap_gpu_classes *g, unsigned R, unsigned *perm, cudaStream_t s,
                           tmap_error *err)
{
    size_t n = g->n;
    mixed_kernel<<<grid_of(n), 256, 0, s>>>(g->cls, g->label, n, R, g->key[0], g->val[0]);
    TMAP_CU(cudaGetLastError(), "mixed kernel launch");
    tmap_status st = sort(g, g->key[0], g->key[1], g->val[0], g->val[1], n, bits_for(R), s, err);
    if (!st)
        st = starts(g, g->key[1], n, R, T_MIX, s, err);
    if (st)
        return st;
    TMAP_CU(cudaMemsetAsync(g->flag, 0, n * sizeof(unsigned), s), "cudaMemsetAsync");
    move_kernel<<<grid_of(n), 256, 0, s>>>(g->key[1], g->val[1], n, R, g->table, g->hole, g->flag,
                                           perm);
    TMAP_CU(cudaGetLastError(), "move kernel launch");
    if ((st = scan(g, s, err)))
        return st;
    take_kernel<<<grid_of(n), 256, 0, s>>>(g->flag, g->rank, g->tomix, n, perm);
    TMAP_CU(cudaGetLastError(), "take kernel launch");
    return TMAP_OK;
}

/* LAM's kernels, enqueued on s. */
static tmap_status lam_enqueue(tmap_gpu_classes *g, const uint64_t *a, cudaStream_t s,
                               tmap_error *err)
{
    unsigned R = (unsigned)a[2], *out = (unsigned *)(uintptr_t)a[1];
    tmap_status st = classify(g, (const double *)(uintptr_t)a[0], R, s, err);
    if (!st)
        st = lam_label(g, R, s, err);
    if (!st)
        st = lam_leave(g, R, out, s, err);
    if (!st)
        st = lam_mix(g, R, out, s, err);
    return st;
}

/* Captures LAM for the arguments a (key, perm, R) into g->graph. */
static tmap_status capture(tmap_gpu_classes *g, const uint64_t *a, tmap_error *err)
{
    if (g->graph)
        cudaGraphExecDestroy(g->graph);
    g->graph = NULL;
    TMAP_CU(cudaStreamBeginCapture(g->capture, cudaStreamCaptureModeRelaxed),
            "cudaStreamBeginCapture");
    tmap_status st = lam_enqueue(g, a, g->capture, err);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(g->capture, &graph);
    if (!st && e != cudaSuccess)
        st = cuda_fail(err, e, "cudaStreamEndCapture");
    if (!st && (e = cudaGraphInstantiate(&g->graph, graph, 0)) != cudaSuccess)
        st = cuda_fail(err, e, "cudaGraphInstantiate");
    if (graph)
        cudaGraphDestroy(graph);
    if (!st)
        memcpy(g->made_for, a, sizeof g->made_for);
    return st;
}

extern "C" tmap_status tmap_gpu_classes_lam(tmap_gpu_classes *g, uint64_t key, size_t nclasses,
                                            uint64_t perm, void *stream, tmap_error *err)
{
    tmap_status st = check_r(g, key, nclasses, "tmap_gpu_classes_lam", err);
    if (st || !perm)
        return st ? st : tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_classes_lam: perm is NULL");
    uint64_t a[3] = {key, perm, nclasses};
    if (!g->graph || memcmp(a, g->made_for, sizeof a))
        st = capture(g, a, err);
    if (st)
        return st;
    TMAP_CU(cudaGraphLaunch(g->graph, (cudaStream_t)stream), "cudaGraphLaunch");
    return TMAP_OK;
}

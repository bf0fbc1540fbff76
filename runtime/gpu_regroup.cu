/*
 * gpu_regroup.cu -- the regroup path on the GPU, from device-resident
 * features to a device-resident permutation, without a host round trip of
 * per-thread data (built with nvcc; CUB from the toolkit sorts).
 *
 *   cost   eq. 1 per block (rounded, clamped at 0, as tmap_predict) and
 *          eq. 11's thread latency sum_b lat[b] * count[b], in double, term
 *          by term in block order with no fused multiply-add: bitwise the
 *          CPU's tmap_predict + tmap_regroup_latency;
 *   sort   the key rounded to single precision, then to bfloat16 (8
 *          significant bits: keys within about 1 part in 256 tie, which
 *          groups threads of the same work as well and halves the radix
 *          passes), its 16 bits mapped so that unsigned order is the
 *          requested order (as regroup/sort_key.c does for doubles), then a
 *          stable radix sort of (bits, thread) pairs: over the grid (CUB's
 *          device sort, two 8-bit passes), or per thread block (one CUDA
 *          block sorts each in shared memory: CUB's block sort), ties by
 *          thread index: the permutation that tmap_regroup_sort_key gives
 *          for the rounded keys;
 *   deal   bin-and-deal: the warps of a grid-sorted order dealt
 *          round-robin to the thread blocks (see threadmap/runtime.h);
 *   run    cost and sort as one CUDA graph, captured on the first call for
 *          its arguments and relaunched after: one launch instead of the
 *          dozen kernels and the host work of CUB's dispatch.
 *
 * Everything is enqueued on the caller's stream; the scratch is allocated
 * once, at create.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
extern "C" {
#include "common/base.h"
}

/* What a captured graph was made for: a call with other arguments
 * captures anew. */
typedef struct graph_key {
    uint64_t features, perm;
    size_t block_size, model_version;
    int descending;
} graph_key;

/* A sort key: the key rounded to bfloat16 (8 significant bits), ordered. */
typedef unsigned short key_bits;

struct tmap_gpu_regroup {
    size_t n;                     /* threads */
    double *cost;                 /* [n] eq. 11 */
    key_bits *bits[2];            /* [n] keys in and out of the sort */
    unsigned *thread;             /* [n] 0..n-1, the sort's values in */
    void *temp;                   /* CUB's scratch */
    size_t temp_bytes;
    double *model;                /* coefficients then latencies */
    size_t model_cap;             /* doubles */
    size_t nblocks, nfeatures;    /* of the model set; 0 blocks: none yet */
    size_t model_version;         /* counts tmap_gpu_regroup_model calls */
    cudaStream_t capture;         /* graphs are captured on this stream */
    cudaGraphExec_t graph;        /* cost + sort, or NULL */
    graph_key made_for;
};

static tmap_status cuda_fail(tmap_error *err, cudaError_t e, const char *call)
{
    return tmap_fail(err, TMAP_ERR_CUDA, "%s: %s (%s)", call, cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

#define TMAP_CU(call, name)                                                            \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess)                                                         \
            return cuda_fail(err, e_, name);                                           \
    } while (0)

/* ------------------------------------------------------------- kernels */

/* One thread per thread of the launch; the model (coefficients, then the
 * latencies) is staged in shared memory when it fits, and the first
 * features are held in registers. */
enum { MAX_REG_FEATURES = 8 };
__global__ void cost_kernel(const double *x, unsigned p, const double *model,
                            unsigned nblocks, size_t n, double *cost)
{
    extern __shared__ double staged[];
    size_t nmodel = (size_t)nblocks * (p + 3);
    int fits = nmodel * sizeof(double) <= 32768;
    if (fits)
        for (size_t i = threadIdx.x; i < nmodel; i += blockDim.x)
            staged[i] = model[i];
    __syncthreads();
    const double *coef = fits ? staged : model, *lat = coef + (size_t)nblocks * (p + 2);
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    const double *xt = x + t * p;
    double xr[MAX_REG_FEATURES];
#pragma unroll
    for (unsigned j = 0; j < MAX_REG_FEATURES; j++)
        xr[j] = j < p ? xt[j] : 0;
    double acc = 0;
    for (unsigned b = 0; b < nblocks; b++) {
        const double *c = coef + (size_t)b * (p + 2);
        double v = __dadd_rn(c[0], __dmul_rn(c[p + 1], (double)t));
#pragma unroll
        for (unsigned j = 0; j < MAX_REG_FEATURES; j++)
            if (j < p)
                v = __dadd_rn(v, __dmul_rn(c[j + 1], xr[j]));
        for (unsigned j = MAX_REG_FEATURES; j < p; j++)
            v = __dadd_rn(v, __dmul_rn(c[j + 1], xt[j]));
        v = floor(__dadd_rn(v, 0.5));
        double count = !(v > 0) ? 0.0 : v >= 4294967295.0 ? 4294967295.0 : v;
        acc = __dadd_rn(acc, __dmul_rn(lat[b], count));
    }
    cost[t] = acc;
}

/* The key rounded to single precision, then to bfloat16 (round to nearest
 * even: 8 significant bits, keys within about 1 part in 256 tie); the
 * unsigned image of those 16 bits, increasing with the value (-0 as +0),
 * flipped when descending. */
__device__ key_bits order_bits(double key, int descending)
{
    float x = __double2float_rn(key);
    if (x == 0)
        x = 0.0f;
    unsigned short u = __bfloat16_as_ushort(__float2bfloat16_rn(x));
    u = (u >> 15) ? (unsigned short)~u : (unsigned short)(u ^ 0x8000u);
    return descending ? (key_bits)~u : u;
}

__global__ void bits_kernel(const double *key, int descending, size_t n, key_bits *bits,
                            unsigned *thread)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    bits[t] = order_bits(key[t], descending);
    thread[t] = (unsigned)t;
}

/* One CUDA block sorts one thread block of the launch (block_size <= 128 *
 * ITEMS threads) in shared memory; items past its end are padded with the
 * largest key after every real item, so they sort last (the sort is
 * stable in item order). */
enum { SORT_THREADS = 128 };

template <int ITEMS>
__global__ void block_sort_kernel(const double *key, int descending, size_t n,
                                  unsigned block_size, unsigned *perm)
{
    typedef cub::BlockRadixSort<key_bits, SORT_THREADS, ITEMS, unsigned> sorter;
    __shared__ typename sorter::TempStorage temp;
    size_t first = (size_t)blockIdx.x * block_size;
    unsigned len = (unsigned)(n - first < block_size ? n - first : block_size);
    key_bits bits[ITEMS];
    unsigned thread[ITEMS];
    for (int i = 0; i < ITEMS; i++) {
        unsigned k = threadIdx.x * ITEMS + i;
        bits[i] = k < len ? order_bits(key[first + k], descending) : (key_bits)0xffffu;
        thread[i] = (unsigned)(first + k);
    }
    sorter(temp).Sort(bits, thread);
    for (int i = 0; i < ITEMS; i++) {
        unsigned k = threadIdx.x * ITEMS + i;
        if (k < len)
            perm[first + k] = thread[i];
    }
}

/* Bin-and-deal: thread i of the grid takes slot i of the sorted order; its
 * warp (32 consecutive slots: one warp of this kernel, all lanes active as
 * n is a multiple of 32) goes whole to block w % nblocks as its warp
 * w / nblocks, sorted ascending across the lanes (a bitonic network on
 * shuffles). */
__global__ void deal_kernel(const unsigned *sorted, size_t n, unsigned block_size,
                            unsigned *perm)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned lane = threadIdx.x & 31, v = sorted[i];
    for (unsigned k = 2; k <= 32; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            unsigned o = __shfl_xor_sync(0xffffffffu, v, j);
            bool up = !(lane & k), low = !(lane & j);
            v = (low == up) ? min(v, o) : max(v, o);
        }
    size_t w = i / 32, nblocks = n / block_size;
    perm[(w % nblocks) * block_size + (w / nblocks) * 32 + lane] = v;
}

static unsigned grid_of(size_t n) { return (unsigned)((n + 255) / 256); }

/* --------------------------------------------------------------- the API */

extern "C" tmap_status tmap_gpu_regroup_create(tmap_cuda *c, size_t nthreads,
                                               tmap_gpu_regroup **out, tmap_error *err)
{
    if (out)
        *out = NULL;
    if (!c || !out || !nthreads || nthreads > 0x7fffffffu)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_create: %s",
                         !c || !out ? "an argument is NULL"
                                    : "threads must be in [1, 2^31-1] (CUB's int offsets)");
    tmap_gpu_regroup *g = (tmap_gpu_regroup *)calloc(1, sizeof *g);
    if (!g)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    g->n = nthreads;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(
        NULL, g->temp_bytes, g->bits[0], g->bits[1], g->thread, g->thread, (int)nthreads);
    void **bufs[] = {(void **)&g->cost, (void **)&g->bits[0], (void **)&g->bits[1],
                     (void **)&g->thread, &g->temp};
    size_t sizes[] = {nthreads * sizeof(double), nthreads * sizeof(key_bits),
                      nthreads * sizeof(key_bits),
                      nthreads * sizeof(unsigned), g->temp_bytes};
    for (size_t i = 0; e == cudaSuccess && i < 5; i++)
        e = cudaMalloc(bufs[i], sizes[i] ? sizes[i] : 1);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&g->capture, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        tmap_gpu_regroup_free(g);
        return cuda_fail(err, e, "tmap_gpu_regroup_create: cudaMalloc");
    }
    *out = g;
    return TMAP_OK;
}

extern "C" void tmap_gpu_regroup_free(tmap_gpu_regroup *g)
{
    if (!g)
        return;
    void *bufs[] = {g->cost, g->bits[0], g->bits[1], g->thread, g->temp, g->model};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            cudaFree(bufs[i]);
    if (g->graph)
        cudaGraphExecDestroy(g->graph);
    if (g->capture)
        cudaStreamDestroy(g->capture);
    free(g);
}

extern "C" uint64_t tmap_gpu_regroup_cost_ptr(const tmap_gpu_regroup *g)
{
    return g ? (uint64_t)(uintptr_t)g->cost : 0;
}

extern "C" tmap_status tmap_gpu_regroup_model(tmap_gpu_regroup *g, const double *coef,
                                              const double *lat, size_t nblocks,
                                              size_t nfeatures, tmap_error *err)
{
    if (!g || !coef || !lat || !nblocks || nblocks > UINT32_MAX || nfeatures > 65536)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_model: bad arguments");
    size_t ncoef = nblocks * (nfeatures + 2), need = ncoef + nblocks;
    if (need > g->model_cap) {
        if (g->model)
            cudaFree(g->model);
        g->model = NULL, g->model_cap = 0;
        TMAP_CU(cudaMalloc((void **)&g->model, need * sizeof(double)), "cudaMalloc");
        g->model_cap = need;
    }
    TMAP_CU(cudaMemcpy(g->model, coef, ncoef * sizeof(double), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    TMAP_CU(cudaMemcpy(g->model + ncoef, lat, nblocks * sizeof(double), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    g->nblocks = nblocks, g->nfeatures = nfeatures;
    g->model_version++;
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_cost(tmap_gpu_regroup *g, uint64_t features,
                                             void *stream, tmap_error *err)
{
    if (!g || (!features && g->nfeatures))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_cost: an argument is NULL");
    if (!g->nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_cost: no model yet "
                         "(tmap_gpu_regroup_model)");
    size_t shared = g->nblocks * (g->nfeatures + 3) * sizeof(double);
    cost_kernel<<<grid_of(g->n), 256, shared <= 32768 ? shared : 0, (cudaStream_t)stream>>>(
        (const double *)(uintptr_t)features, (unsigned)g->nfeatures, g->model,
        (unsigned)g->nblocks, g->n, g->cost);
    TMAP_CU(cudaGetLastError(), "cost kernel launch");
    return TMAP_OK;
}

/* The per-block sort for this block size: 128 threads of 1, 2, 4 or 8 items. */
static tmap_status block_sort(tmap_gpu_regroup *g, const double *key, int descending,
                              size_t block_size, unsigned *perm, cudaStream_t s,
                              tmap_error *err)
{
    unsigned grid = (unsigned)((g->n + block_size - 1) / block_size), bs = (unsigned)block_size;
    if (block_size <= SORT_THREADS)
        block_sort_kernel<1><<<grid, SORT_THREADS, 0, s>>>(key, descending, g->n, bs, perm);
    else if (block_size <= 2 * SORT_THREADS)
        block_sort_kernel<2><<<grid, SORT_THREADS, 0, s>>>(key, descending, g->n, bs, perm);
    else if (block_size <= 4 * SORT_THREADS)
        block_sort_kernel<4><<<grid, SORT_THREADS, 0, s>>>(key, descending, g->n, bs, perm);
    else
        block_sort_kernel<8><<<grid, SORT_THREADS, 0, s>>>(key, descending, g->n, bs, perm);
    TMAP_CU(cudaGetLastError(), "block sort kernel launch");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_sort(tmap_gpu_regroup *g, uint64_t key, int descending,
                                             size_t block_size, uint64_t perm, void *stream,
                                             tmap_error *err)
{
    if (!g || !key || !perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_sort: an argument is NULL");
    if (block_size && (block_size < 32 || block_size > 8 * SORT_THREADS))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_sort: block size %zu "
                         "(0 for grid scope, else 32 to %d threads)", block_size,
                         8 * SORT_THREADS);
    cudaStream_t s = (cudaStream_t)stream;
    const double *k = (const double *)(uintptr_t)key;
    unsigned *out = (unsigned *)(uintptr_t)perm;
    if (block_size)
        return block_sort(g, k, descending, block_size, out, s, err);
    bits_kernel<<<grid_of(g->n), 256, 0, s>>>(k, descending, g->n, g->bits[0], g->thread);
    TMAP_CU(cudaGetLastError(), "bits kernel launch");
    size_t bytes = g->temp_bytes;
    TMAP_CU(cub::DeviceRadixSort::SortPairs(g->temp, bytes, g->bits[0], g->bits[1], g->thread,
                                            out, (int)g->n, 0, 16, s),
            "cub::DeviceRadixSort::SortPairs");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_deal(tmap_gpu_regroup *g, uint64_t sorted,
                                             size_t block_size, uint64_t perm, void *stream,
                                             tmap_error *err)
{
    if (!g || !sorted || !perm || sorted == perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_deal: %s",
                         sorted == perm && perm ? "sorted and perm are the same array"
                                                : "an argument is NULL");
    if (!block_size || block_size % 32 || g->n % block_size)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_deal: %zu threads in blocks "
                         "of %zu: the block size must be a multiple of 32 dividing the threads",
                         g->n, block_size);
    deal_kernel<<<grid_of(g->n), 256, 0, (cudaStream_t)stream>>>(
        (const unsigned *)(uintptr_t)sorted, g->n, (unsigned)block_size,
        (unsigned *)(uintptr_t)perm);
    TMAP_CU(cudaGetLastError(), "deal kernel launch");
    return TMAP_OK;
}

/* Captures cost + sort for these arguments into g->graph. */
static tmap_status capture(tmap_gpu_regroup *g, const graph_key *k, tmap_error *err)
{
    if (g->graph)
        cudaGraphExecDestroy(g->graph);
    g->graph = NULL;
    TMAP_CU(cudaStreamBeginCapture(g->capture, cudaStreamCaptureModeRelaxed),
            "cudaStreamBeginCapture");
    tmap_status st = tmap_gpu_regroup_cost(g, k->features, g->capture, err);
    if (!st)
        st = tmap_gpu_regroup_sort(g, (uint64_t)(uintptr_t)g->cost, k->descending,
                                   k->block_size, k->perm, g->capture, err);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(g->capture, &graph);
    if (!st && e != cudaSuccess)
        st = cuda_fail(err, e, "cudaStreamEndCapture");
    if (!st && (e = cudaGraphInstantiate(&g->graph, graph, 0)) != cudaSuccess)
        st = cuda_fail(err, e, "cudaGraphInstantiate");
    if (graph)
        cudaGraphDestroy(graph);
    if (!st)
        g->made_for = *k;
    return st;
}

extern "C" tmap_status tmap_gpu_regroup_run(tmap_gpu_regroup *g, uint64_t features,
                                            int descending, size_t block_size, uint64_t perm,
                                            void *stream, tmap_error *err)
{
    if (!g || !perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_run: an argument is NULL");
    graph_key k;
    memset(&k, 0, sizeof k); /* padding too: keys compare with memcmp */
    k.features = features, k.perm = perm, k.block_size = block_size;
    k.model_version = g->model_version, k.descending = descending != 0;
    if (!g->graph || memcmp(&k, &g->made_for, sizeof k)) {
        tmap_status st = capture(g, &k, err);
        if (st)
            return st;
    }
    TMAP_CU(cudaGraphLaunch(g->graph, (cudaStream_t)stream), "cudaGraphLaunch");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_sync(tmap_gpu_regroup *g, void *stream,
                                             tmap_error *err)
{
    if (!g)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_sync: argument 'g' is NULL");
    TMAP_CU(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
    return TMAP_OK;
}

/*
 * gpu_regroup.cu -- the regroup path on the GPU, from device-resident
 * features to a device-resident permutation, without a host round trip of
 * per-thread data (built with nvcc; CUB from the toolkit sorts).
 *
 *   cost   eq. 11's thread latency sum_b lat[b] * count_b with eq. 1's
 *          count clamped at 0 (not rounded), folded: blocks of
 *          equal coefficients merged on the host; on the GPU each tile of
 *          256 threads bounds eq. 1 over its features' box and proves
 *          which blocks are never clamped there, whose terms fold into one
 *          linear form (p+1 fused multiply-adds per thread), and which are
 *          always 0 (dropped); only the rest are evaluated per thread with
 *          the clamp, in single precision (the key is rounded to bfloat16
 *          for the sort; threadmap/runtime.h bounds the error), each CUDA
 *          thread computing 2 threads' keys so that each row read from
 *          shared memory serves 2.  Every step is one fma in a fixed order,
 *          so a CPU doing the same gets the same bits
 *          (tests/test_gpu_regroup.c);
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
 *   run    cost and sort (and, for bin-and-deal, the deal) as one CUDA
 *          graph: one launch instead of the dozen kernels and the host
 *          work of CUB's dispatch; over the grid the cost kernel writes the
 *          sort keys too (no bits kernel), and the sort's values 0..n-1 are
 *          written once, at create.  A graph is captured on the first call
 *          with its arguments and kept in a small cache (GRAPHS execs, the
 *          least recently used replaced), so that a caller alternating
 *          between a few (the regrouper's trial: grid, block, deal; the
 *          overlap's second permutation) captures each once.
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
#include "runtime/gpu_util.cuh"

/* What a captured graph was made for: a call with other arguments
 * captures anew.  block_size: the sort's scope (0: the grid); deal: the
 * thread blocks the grid order is dealt to (0: no deal). */
typedef struct graph_key {
    uint64_t features, perm;
    size_t block_size, deal, model_version;
    int descending;
} graph_key;

/* The graph cache: why a cache and not cudaGraphExecUpdate -- the
 * candidates' graphs differ in topology (grid sort, block sort, grid sort
 * and deal), which an update cannot bridge, and an update would still
 * capture the stream anew (CUB's host dispatch) at every call. */
enum { GRAPHS = 8 };

typedef struct graph_slot {
    cudaGraphExec_t exec; /* NULL: empty */
    graph_key key;
    unsigned long long used; /* the call that last launched it */
} graph_slot;

/* A sort key: the key rounded to bfloat16 (8 significant bits), ordered. */
typedef unsigned short key_bits;

struct tmap_gpu_regroup {
    size_t n;                     /* threads */
    double *cost;                 /* [n] eq. 11 */
    key_bits *bits[2];            /* [n] keys in and out of the sort */
    unsigned *thread;             /* [n] 0..n-1 (set at create), the sort's values in */
    unsigned *sorted;             /* [n] the grid order before the deal (allocated on the
                                     first deal graph), or NULL */
    void *temp;                   /* CUB's scratch */
    size_t temp_bytes;
    double *model;                /* the compiled rows (compile_rows) */
    size_t model_cap;             /* doubles */
    size_t nrows, nfeatures;      /* of the model set */
    int have_model;
    size_t model_version;         /* counts tmap_gpu_regroup_model calls */
    cudaStream_t capture;         /* graphs are captured on this stream */
    cudaStream_t side;            /* work beside the caller's stream */
    cudaEvent_t fork, mark;       /* the caller's stream so far; the side's marked work */
    graph_slot graphs[GRAPHS];
    unsigned long long calls;     /* graph launches so far */
};

/* ------------------------------------------------------------- kernels */

/* The folded key (see threadmap/runtime.h).  A row of the compiled model
 * is [c0, c1..cp, ct, w] padded to ROW(p) doubles; each tile of TILE
 * threads proves, from its features' box and its thread range, which rows
 * are never negative there (L: folded into one linear form, in double),
 * never positive (Z: dropped), or neither (U: evaluated per thread in
 * single precision, clamped at 0).  The U rows are converted to floats
 * into shared memory, U_CHUNK_BYTES at a time, padded to ROWF(p) floats
 * (rows load as float4).  A CUDA thread computes COST_K threads' keys:
 * the U loop is bound by the bytes shared memory delivers per lane, and
 * each row loaded serves COST_K threads (on the H100 at 10^6 threads x 64
 * U rows: 59 us with 1, 48 with 2 or 4). */
enum { TILE = 256, MAX_ROWS = 8192, U_CHUNK_BYTES = 16384, COST_K = 2 };
enum { ROW_Z = 0, ROW_L = 1, ROW_U = 2 };
#define ROW(p) ((((size_t)(p) + 3) + 1) & ~(size_t)1)
#define ROWF(p) ((((size_t)(p) + 3) + 3) & ~(size_t)3)

/* Row k's class on the box [lo, hi] of features and [t0, t1] of thread
 * indices: the bounds of eq. 1 over the box, each product rounded once
 * (fma), trusted only beyond a margin larger than their rounding error. */
__device__ int row_class(const double *__restrict__ r, unsigned p, const double *lo,
                         const double *hi, double t0, double t1)
{
    double ct = r[p + 1], vlo = r[0], vhi = r[0], s = fabs(r[0]);
    vlo = fma(ct, ct >= 0 ? t0 : t1, vlo);
    vhi = fma(ct, ct >= 0 ? t1 : t0, vhi);
    s = fma(fabs(ct), t1, s);
    for (unsigned j = 0; j < p; j++) {
        double c = r[j + 1];
        vlo = fma(c, c >= 0 ? lo[j] : hi[j], vlo);
        vhi = fma(c, c >= 0 ? hi[j] : lo[j], vhi);
        s = fma(fabs(c), fmax(fabs(lo[j]), fabs(hi[j])), s);
    }
    double margin = __dmul_rn(s, (double)(p + 3) * 0x1p-52); /* not fused into a use */
    return vlo > margin ? ROW_L : vhi < -margin ? ROW_Z : ROW_U;
}

/* Data thread k (< K) of a CUDA thread: tile thread threadIdx.x + k *
 * blockDim.x; its feature j from registers when p is known (P > 0, loops
 * over j unrolled), else from memory. */
template <int P, int K>
__device__ __forceinline__ double feat(const double (*xr)[P > 0 ? P : 1],
                                       const double *const *xt, int k, unsigned j)
{
    return P > 0 ? xr[k][j] : xt[k][j];
}

/* What a tile shares: its box, the folded form, the warps' partial boxes,
 * a chunk of U rows as floats, the lists of L and U rows (in row order),
 * the rows' classes. */
struct tile_shared {
    double *lo, *hi, *fold, *wpart;
    float *uf;
    unsigned short *list[2]; /* L, U */
    unsigned char *cls;
};

/* The doubles of a tile's shared memory before its floats (a multiple of
 * two: the floats stay 16-byte aligned). */
__host__ __device__ inline size_t tile_doubles(size_t p)
{
    return (2 * p + p + 2 + (TILE / 32) * 2 * p + 1) & ~(size_t)1;
}

__device__ tile_shared tile_layout(double *base, unsigned p, unsigned m, unsigned chunk)
{
    tile_shared t;
    t.lo = base, t.hi = t.lo + p, t.fold = t.hi + p, t.wpart = t.fold + p + 2;
    t.uf = (float *)(base + tile_doubles(p));
    t.list[0] = (unsigned short *)(t.uf + chunk * ROWF(p));
    t.list[1] = t.list[0] + m;
    t.cls = (unsigned char *)(t.list[1] + m);
    return t;
}

/* A float's bits mapped so that unsigned order is the value's order. */
__device__ __forceinline__ unsigned ordered(float f)
{
    unsigned u = __float_as_uint(f);
    return (u >> 31) ? ~u : u | 0x80000000u;
}

__device__ __forceinline__ float unordered(unsigned u)
{
    return __uint_as_float((u >> 31) ? u & 0x7fffffffu : ~u);
}

/* The warp's least and greatest of a (ordered floats). */
__device__ __forceinline__ void warp_minmax(unsigned &lo, unsigned &hi)
{
#if __CUDA_ARCH__ >= 800
    lo = __reduce_min_sync(0xffffffffu, lo);
    hi = __reduce_max_sync(0xffffffffu, hi);
#else
    for (int o = 16; o > 0; o >>= 1) {
        lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    }
#endif
}

/* The box of the tile's features into t.lo, t.hi, widened to floats: lo
 * the greatest float <= each feature's least value, hi the least float >=
 * its greatest (every thread of the tile calls it; dead data threads hold
 * the first thread's row). */
template <int P, int K>
__device__ __forceinline__ void tile_box(const tile_shared &t, const double (*xr)[P > 0 ? P : 1],
                                         const double *const *xt, unsigned p)
{
    const unsigned pp = P > 0 ? P : p, lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    unsigned *part = (unsigned *)t.wpart;
#pragma unroll
    for (unsigned j = 0; j < pp; j++) {
        unsigned a = 0xffffffffu, b = 0;
#pragma unroll
        for (int k = 0; k < K; k++) {
            double x = feat<P, K>(xr, xt, k, j);
            a = min(a, ordered(__double2float_rd(x))), b = max(b, ordered(__double2float_ru(x)));
        }
        warp_minmax(a, b);
        if (!lane)
            part[warp * 2 * p + j] = a, part[warp * 2 * p + p + j] = b;
    }
    __syncthreads();
    for (unsigned j = threadIdx.x; j < p; j += blockDim.x) {
        unsigned a = part[j], b = part[p + j];
        for (unsigned w = 1; w < blockDim.x / 32; w++)
            a = min(a, part[w * 2 * p + j]), b = max(b, part[w * 2 * p + p + j]);
        t.lo[j] = unordered(a), t.hi[j] = unordered(b);
    }
    __syncthreads();
}

/* Each row's class, then (warp 0, by ballots) the lists of L and U rows in
 * row order, then the folded form: a_j = fma(w, r_j, a_j) over the L rows
 * in order.  Returns the U count. */
__device__ __forceinline__ unsigned tile_rows(const tile_shared &t,
                                              const double *__restrict__ rows, size_t S,
                                              unsigned p, unsigned m, double t0, double t1)
{
    __shared__ unsigned count[2];
    for (unsigned k = threadIdx.x; k < m; k += blockDim.x)
        t.cls[k] = (unsigned char)row_class(rows + k * S, p, t.lo, t.hi, t0, t1);
    __syncthreads();
    if (threadIdx.x < 32) {
        unsigned lane = threadIdx.x, below = (1u << lane) - 1, n[2] = {0, 0};
        for (unsigned base = 0; base < m; base += 32) {
            unsigned k = base + lane, c = k < m ? t.cls[k] : ROW_Z;
            for (int l = 0; l < 2; l++) {
                unsigned in = __ballot_sync(0xffffffffu, c == (l ? ROW_U : ROW_L));
                if (c == (l ? ROW_U : ROW_L))
                    t.list[l][n[l] + __popc(in & below)] = (unsigned short)k;
                n[l] += __popc(in);
            }
        }
        if (!lane)
            count[0] = n[0], count[1] = n[1];
    }
    __syncthreads();
    unsigned nl = count[0];
    for (unsigned j = threadIdx.x; j < p + 2; j += blockDim.x) {
        double a = 0;
#pragma unroll 4
        for (unsigned i = 0; i < nl; i++) {
            const double *r = rows + t.list[0][i] * S;
            a = fma(r[p + 2], r[j], a);
        }
        t.fold[j] = a;
    }
    __syncthreads();
    return count[1];
}

/* U rows first..first+nc-1 (of the U list) into t.uf as floats (rounded
 * to nearest), padded with 0; the caller syncs before and after. */
__device__ __forceinline__ void stage_u_rows(const tile_shared &t, const double *__restrict__ rows,
                                             size_t S, unsigned p, size_t RF, unsigned first,
                                             unsigned nc)
{
    for (unsigned i = threadIdx.x; i < nc * RF; i += blockDim.x) {
        unsigned k = i / (unsigned)RF, j = i % (unsigned)RF;
        t.uf[i] = j < p + 3 ? __double2float_rn(rows[t.list[1][first + k] * S + j]) : 0.0f;
    }
}

/* The clamped terms of nc staged U rows in single precision, for each of
 * the K data threads: v = fmaf(ct, t, c0), fmaf(c_j, x_j, v), u =
 * fmaf(w, max(v, 0), u) from 0.  Each row is loaded once for the K. */
template <int P, int K>
__device__ __forceinline__ void u_terms(const float *uf, unsigned nc, unsigned p,
                                        const float (*xf)[P > 0 ? P : 1],
                                        const double *const *xt, const float *tf, float *u)
{
#pragma unroll
    for (int k = 0; k < K; k++)
        u[k] = 0;
    if (P > 0) {
        const float4 *r4 = (const float4 *)uf;
        const unsigned RF = (unsigned)ROWF(P > 0 ? P : 1);
#pragma unroll(8 / K)
        for (unsigned i = 0; i < nc; i++) {
            float c[ROWF(P > 0 ? P : 1)];
#pragma unroll
            for (unsigned h = 0; h < RF / 4; h++) {
                float4 q = r4[i * (RF / 4) + h];
                c[4 * h] = q.x, c[4 * h + 1] = q.y, c[4 * h + 2] = q.z, c[4 * h + 3] = q.w;
            }
#pragma unroll
            for (int k = 0; k < K; k++) {
                float v = fmaf(c[P + 1], tf[k], c[0]);
#pragma unroll
                for (unsigned j = 0; j < (P > 0 ? P : 1); j++)
                    v = fmaf(c[j + 1], xf[k][j], v);
                u[k] = fmaf(c[P + 2], v > 0 ? v : 0.0f, u[k]); /* NaN: 0 */
            }
        }
    } else {
        const size_t RF = ROWF(p);
        for (unsigned i = 0; i < nc; i++) {
            const float *c = uf + i * RF;
#pragma unroll
            for (int k = 0; k < K; k++) {
                float v = fmaf(c[p + 1], tf[k], c[0]);
                for (unsigned j = 0; j < p; j++)
                    v = fmaf(c[j + 1], __double2float_rn(xt[k][j]), v);
                u[k] = fmaf(c[p + 2], v > 0 ? v : 0.0f, u[k]);
            }
        }
    }
}

/* The keys of the K data threads: the folded form in double, then per
 * chunk of U rows its single-precision sum added (every thread of the
 * tile calls it: the chunks are staged together). */
template <int P, int K>
__device__ __forceinline__ void thread_keys(const tile_shared &t,
                                            const double *__restrict__ rows, size_t S,
                                            unsigned p, unsigned nu, unsigned chunk,
                                            const double (*xr)[P > 0 ? P : 1],
                                            const double *const *xt, const size_t *tid,
                                            double *key)
{
    const unsigned pp = P > 0 ? P : p;
    float xf[K][P > 0 ? P : 1], tf[K], u[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        tf[k] = (float)tid[k];
        key[k] = fma(t.fold[p + 1], (double)tid[k], t.fold[0]);
#pragma unroll
        for (unsigned j = 0; j < pp; j++) {
            key[k] = fma(t.fold[j + 1], feat<P, K>(xr, xt, k, j), key[k]);
            if (P > 0)
                xf[k][j] = __double2float_rn(xr[k][j]);
        }
    }
    for (unsigned first = 0; first < nu; first += chunk) {
        unsigned nc = nu - first < chunk ? nu - first : chunk;
        __syncthreads(); /* the previous chunk is used */
        stage_u_rows(t, rows, S, p, ROWF(pp), first, nc);
        __syncthreads();
        u_terms<P, K>(t.uf, nc, p, xf, xt, tf, u);
#pragma unroll
        for (int k = 0; k < K; k++)
            key[k] = key[k] + (double)u[k];
    }
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

/* Per tile of TILE threads, TILE / K CUDA threads of K data threads each:
 * the box, the rows' classes and the folded form, then each thread's key
 * into cost and, when bits is not NULL, its sort key (order_bits) into
 * bits.  P > 0: p == P (unrolled); P == 0: any p. */
template <int P, int K>
__global__ void __launch_bounds__(TILE / K)
    cost_kernel(const double *__restrict__ x, unsigned p, const double *__restrict__ rows,
                unsigned m, unsigned chunk, size_t n, double *cost, key_bits *bits,
                int descending)
{
    extern __shared__ double2 shm[];
    const size_t S = ROW(P > 0 ? P : p);
    tile_shared t = tile_layout((double *)shm, p, m, chunk);
    size_t first = (size_t)blockIdx.x * TILE, tid[K];
    size_t last = n - first < TILE ? n - 1 : first + TILE - 1;
    const double *xt[K];
    double xr[K][P > 0 ? P : 1], key[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        tid[k] = first + threadIdx.x + (size_t)k * blockDim.x;
        xt[k] = x + (tid[k] < n ? tid[k] : first) * p;
#pragma unroll
        for (int j = 0; j < P; j++)
            xr[k][j] = xt[k][j];
    }
    tile_box<P, K>(t, xr, xt, p);
    unsigned nu = tile_rows(t, rows, S, p, m, (double)first, (double)last);
    thread_keys<P, K>(t, rows, S, p, nu, chunk, xr, xt, tid, key);
#pragma unroll
    for (int k = 0; k < K; k++)
        if (tid[k] < n) {
            cost[tid[k]] = key[k];
            if (bits)
                bits[tid[k]] = order_bits(key[k], descending);
        }
}

__global__ void bits_kernel(const double *key, int descending, size_t n, key_bits *bits)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t < n)
        bits[t] = order_bits(key[t], descending);
}

__global__ void iota_kernel(size_t n, unsigned *v)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t < n)
        v[t] = (unsigned)t;
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
    tmap_status st = gpu_create_check(c, out, nthreads, "tmap_gpu_regroup_create", err);
    if (st)
        return st;
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
    if (e == cudaSuccess)
        e = gpu_malloc_all(bufs, sizes, 5);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&g->capture, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&g->side, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&g->fork, cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&g->mark, cudaEventDisableTiming);
    if (e == cudaSuccess) {
        iota_kernel<<<grid_of(nthreads), 256, 0, g->capture>>>(nthreads, g->thread);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->capture);
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
    void *bufs[] = {g->cost, g->bits[0], g->bits[1], g->thread, g->temp, g->model, g->sorted};
    gpu_free_all(bufs, sizeof bufs / sizeof bufs[0]);
    for (int i = 0; i < GRAPHS; i++)
        if (g->graphs[i].exec)
            cudaGraphExecDestroy(g->graphs[i].exec);
    cudaStream_t streams[] = {g->capture, g->side};
    for (int i = 0; i < 2; i++)
        if (streams[i])
            cudaStreamDestroy(streams[i]);
    if (g->fork)
        cudaEventDestroy(g->fork);
    if (g->mark)
        cudaEventDestroy(g->mark);
    free(g);
}

extern "C" uint64_t tmap_gpu_regroup_cost_ptr(const tmap_gpu_regroup *g)
{
    return g ? (uint64_t)(uintptr_t)g->cost : 0;
}

/* The model compiled to rows [c0, c1..cp, ct, w, pad]: blocks of the same
 * coefficients (bit for bit) merged, their latencies summed in block
 * order; rows of weight 0 dropped.  Returns the row count, or -1 past
 * MAX_ROWS; rows has room for nblocks rows. */
static long compile_rows(const double *coef, const double *lat, size_t nblocks, size_t p,
                         double *rows)
{
    size_t S = ROW(p), m = 0;
    for (size_t b = 0; b < nblocks; b++) {
        const double *c = coef + b * (p + 2);
        size_t k = 0;
        while (k < m && memcmp(rows + k * S, c, (p + 2) * sizeof *c))
            k++;
        if (k == m) {
            memset(rows + m * S, 0, S * sizeof *rows);
            memcpy(rows + m * S, c, (p + 2) * sizeof *c);
            m++;
        }
        rows[k * S + p + 2] += lat[b];
    }
    size_t kept = 0;
    for (size_t k = 0; k < m; k++)
        if (rows[k * S + p + 2] != 0)
            memmove(rows + kept++ * S, rows + k * S, S * sizeof *rows);
    return kept > MAX_ROWS ? -1 : (long)kept;
}

extern "C" tmap_status tmap_gpu_regroup_model(tmap_gpu_regroup *g, const double *coef,
                                              const double *lat, size_t nblocks,
                                              size_t nfeatures, tmap_error *err)
{
    if (!g || !coef || !lat || !nblocks || nblocks > UINT32_MAX || nfeatures > 65536)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_model: bad arguments");
    size_t S = ROW(nfeatures);
    double *rows = (double *)calloc(nblocks * S, sizeof *rows);
    if (!rows)
        return tmap_fail(err, TMAP_ERR_NOMEM, "tmap_gpu_regroup_model: out of memory");
    long m = compile_rows(coef, lat, nblocks, nfeatures, rows);
    tmap_status st = TMAP_OK;
    if (m < 0)
        st = tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_model: more than %d distinct "
                       "blocks of non-zero latency", (int)MAX_ROWS);
    size_t need = (m > 0 ? (size_t)m : 1) * S;
    if (!st && need > g->model_cap) {
        if (g->model)
            cudaFree(g->model);
        g->model = NULL, g->model_cap = 0;
        cudaError_t e = cudaMalloc((void **)&g->model, need * sizeof(double));
        st = e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, "tmap_gpu_regroup_model: cudaMalloc");
        g->model_cap = st ? 0 : need;
    }
    cudaError_t e = cudaSuccess;
    if (!st && m > 0)
        e = cudaMemcpy(g->model, rows, (size_t)m * S * sizeof(double), cudaMemcpyHostToDevice);
    if (!st && e != cudaSuccess)
        st = cuda_fail(err, e, "tmap_gpu_regroup_model: cudaMemcpy");
    free(rows);
    if (st)
        return st;
    g->nrows = (size_t)m, g->nfeatures = nfeatures, g->have_model = 1;
    g->model_version++;
    return TMAP_OK;
}

/* Shared memory of a cost tile (tile_layout): the box, the folded form,
 * the warps' partial boxes, a chunk of *chunk U rows as floats, the L and
 * U lists and the classes. */
static size_t cost_shared(size_t m, size_t p, unsigned *chunk)
{
    size_t rows = U_CHUNK_BYTES / (ROWF(p) * sizeof(float));
    *chunk = (unsigned)(rows < 1 ? 1 : rows < m ? rows : m ? m : 1);
    return tile_doubles(p) * sizeof(double) + *chunk * ROWF(p) * sizeof(float) + m * 5;
}

/* The cost kernel for the model of g on features into g->cost and, when
 * bits is not NULL, the sort keys into bits. */
static tmap_status cost_launch(tmap_gpu_regroup *g, uint64_t features, key_bits *bits,
                               int descending, cudaStream_t s, tmap_error *err)
{
    if (!features && g->nfeatures)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_cost: features is NULL");
    if (!g->have_model)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_cost: no model yet "
                         "(tmap_gpu_regroup_model)");
    const double *x = (const double *)(uintptr_t)features;
    unsigned chunk;
    size_t shared = cost_shared(g->nrows, g->nfeatures, &chunk);
    if (shared > 48 * 1024)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_cost: %zu features and %zu "
                         "rows need %zu bytes of shared memory (48 KiB)", g->nfeatures, g->nrows,
                         shared);
    unsigned p = (unsigned)g->nfeatures, m = (unsigned)g->nrows;
    unsigned grid = (unsigned)((g->n + TILE - 1) / TILE);
#define TMAP_COST(P, K)                                                                        \
    cost_kernel<P, K><<<grid, TILE / K, shared, s>>>(x, p, g->model, m, chunk, g->n, g->cost,   \
                                                     bits, descending)
    switch (p) {
    case 1: TMAP_COST(1, COST_K); break;
    case 2: TMAP_COST(2, COST_K); break;
    case 3: TMAP_COST(3, COST_K); break;
    case 4: TMAP_COST(4, COST_K); break;
    case 5: TMAP_COST(5, COST_K); break;
    case 6: TMAP_COST(6, COST_K); break;
    case 7: TMAP_COST(7, COST_K); break;
    case 8: TMAP_COST(8, COST_K); break;
    default: TMAP_COST(0, COST_K); break;
    }
#undef TMAP_COST
    TMAP_CU(cudaGetLastError(), "cost kernel launch");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_cost(tmap_gpu_regroup *g, uint64_t features,
                                             void *stream, tmap_error *err)
{
    if (!g)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_cost: argument 'g' is NULL");
    return cost_launch(g, features, NULL, 0, (cudaStream_t)stream, err);
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

/* The stable sort of (g->bits[0], thread) pairs over the grid into perm:
 * the 16 bits only.  On sm_90 CUB runs onesweep: two memsets, a histogram
 * and a scan, then per 8-bit pass a memset and a pass: about 30 us of
 * dependent GPU steps at any n plus 20 us per 10^6 pairs on the H100 (the
 * upsweep/downsweep sort, which CUB's sm_80 policy takes for 16-bit keys:
 * three passes of at most 6 bits, 57 and 67 us at 10^4 and 10^6 pairs). */
static tmap_status grid_sort(tmap_gpu_regroup *g, unsigned *perm, cudaStream_t s, tmap_error *err)
{
    size_t bytes = g->temp_bytes;
    TMAP_CU(cub::DeviceRadixSort::SortPairs(g->temp, bytes, g->bits[0], g->bits[1], g->thread,
                                            perm, (int)g->n, 0, 16, s),
            "cub::DeviceRadixSort::SortPairs");
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
    bits_kernel<<<grid_of(g->n), 256, 0, s>>>(k, descending, g->n, g->bits[0]);
    TMAP_CU(cudaGetLastError(), "bits kernel launch");
    return grid_sort(g, out, s, err);
}

/* Bin-and-deal's thread blocks: whole warps, dividing the threads. */
static tmap_status deal_check(const tmap_gpu_regroup *g, size_t block_size, const char *fn,
                              tmap_error *err)
{
    if (!block_size || block_size % 32 || g->n % block_size)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu threads in blocks of %zu: the block "
                         "size must be a multiple of 32 dividing the threads", fn, g->n,
                         block_size);
    return TMAP_OK;
}

static tmap_status deal_launch(const tmap_gpu_regroup *g, const unsigned *sorted,
                               size_t block_size, unsigned *perm, cudaStream_t s,
                               tmap_error *err)
{
    deal_kernel<<<grid_of(g->n), 256, 0, s>>>(sorted, g->n, (unsigned)block_size, perm);
    TMAP_CU(cudaGetLastError(), "deal kernel launch");
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
    tmap_status st = deal_check(g, block_size, "tmap_gpu_regroup_deal", err);
    return st ? st : deal_launch(g, (const unsigned *)(uintptr_t)sorted, block_size,
                                 (unsigned *)(uintptr_t)perm, (cudaStream_t)stream, err);
}

/* Captures cost, sort and deal for these arguments into *exec. */
static tmap_status capture(tmap_gpu_regroup *g, const graph_key *k, cudaGraphExec_t *exec,
                           tmap_error *err)
{
    unsigned *perm = (unsigned *)(uintptr_t)k->perm;
    TMAP_CU(cudaStreamBeginCapture(g->capture, cudaStreamCaptureModeRelaxed),
            "cudaStreamBeginCapture");
    /* grid scope: the cost kernel writes the sort keys too */
    tmap_status st = cost_launch(g, k->features, k->block_size ? NULL : g->bits[0],
                                 k->descending, g->capture, err);
    if (!st && k->block_size)
        st = tmap_gpu_regroup_sort(g, (uint64_t)(uintptr_t)g->cost, k->descending,
                                   k->block_size, k->perm, g->capture, err);
    if (!st && !k->block_size)
        st = grid_sort(g, k->deal ? g->sorted : perm, g->capture, err);
    if (!st && k->deal)
        st = deal_launch(g, g->sorted, k->deal, perm, g->capture, err);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(g->capture, &graph);
    if (!st && e != cudaSuccess)
        st = cuda_fail(err, e, "cudaStreamEndCapture");
    if (!st && (e = cudaGraphInstantiate(exec, graph, 0)) != cudaSuccess)
        st = cuda_fail(err, e, "cudaGraphInstantiate");
    if (graph)
        cudaGraphDestroy(graph);
    return st;
}

/* The graph for k, from the cache or captured into the least recently
 * used slot, launched on stream. */
static tmap_status launch_graph(tmap_gpu_regroup *g, const graph_key *k, cudaStream_t stream,
                                tmap_error *err)
{
    graph_slot *slot = &g->graphs[0];
    for (int i = 0; i < GRAPHS; i++) {
        graph_slot *h = &g->graphs[i];
        if (h->exec && !memcmp(&h->key, k, sizeof *k)) {
            slot = h;
            break;
        }
        if (h->used < slot->used) /* an empty slot's is 0 */
            slot = h;
    }
    if (!slot->exec || memcmp(&slot->key, k, sizeof *k)) {
        if (slot->exec)
            cudaGraphExecDestroy(slot->exec);
        slot->exec = NULL;
        tmap_status st = capture(g, k, &slot->exec, err);
        if (st)
            return st;
        slot->key = *k;
    }
    slot->used = ++g->calls;
    TMAP_CU(cudaGraphLaunch(slot->exec, stream), "cudaGraphLaunch");
    return TMAP_OK;
}

/* A graph key, its padding zeroed (keys compare with memcmp). */
static graph_key key_of(const tmap_gpu_regroup *g, uint64_t features, int descending,
                        size_t block_size, size_t deal, uint64_t perm)
{
    graph_key k;
    memset(&k, 0, sizeof k);
    k.features = features, k.perm = perm, k.block_size = block_size, k.deal = deal;
    k.model_version = g->model_version, k.descending = descending != 0;
    return k;
}

extern "C" tmap_status tmap_gpu_regroup_run(tmap_gpu_regroup *g, uint64_t features,
                                            int descending, size_t block_size, uint64_t perm,
                                            void *stream, tmap_error *err)
{
    if (!g || !perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_run: an argument is NULL");
    graph_key k = key_of(g, features, descending, block_size, 0, perm);
    return launch_graph(g, &k, (cudaStream_t)stream, err);
}

extern "C" tmap_status tmap_gpu_regroup_run_deal(tmap_gpu_regroup *g, uint64_t features,
                                                 size_t block_size, uint64_t perm,
                                                 void *stream, tmap_error *err)
{
    if (!g || !perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_run_deal: an argument is "
                         "NULL");
    tmap_status st = deal_check(g, block_size, "tmap_gpu_regroup_run_deal", err);
    if (st)
        return st;
    cudaError_t e = g->sorted ? cudaSuccess
                              : cudaMalloc((void **)&g->sorted, g->n * sizeof(unsigned));
    if (e != cudaSuccess) {
        g->sorted = NULL;
        return cuda_fail(err, e, "tmap_gpu_regroup_run_deal: cudaMalloc");
    }
    graph_key k = key_of(g, features, 1, 0, block_size, perm);
    return launch_graph(g, &k, (cudaStream_t)stream, err);
}

extern "C" tmap_status tmap_gpu_regroup_sync(tmap_gpu_regroup *g, void *stream,
                                             tmap_error *err)
{
    if (!g)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_sync: argument 'g' is NULL");
    TMAP_CU(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
    return TMAP_OK;
}

/* ------------------------------------------------------------ overlap */

extern "C" void *tmap_gpu_regroup_side(const tmap_gpu_regroup *g)
{
    return g ? (void *)g->side : NULL;
}

extern "C" tmap_status tmap_gpu_regroup_fork(tmap_gpu_regroup *g, void *stream, tmap_error *err)
{
    if (!g)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_fork: argument 'g' is NULL");
    TMAP_CU(cudaEventRecord(g->fork, (cudaStream_t)stream), "cudaEventRecord");
    TMAP_CU(cudaStreamWaitEvent(g->side, g->fork, 0), "cudaStreamWaitEvent");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_mark(tmap_gpu_regroup *g, tmap_error *err)
{
    if (!g)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_mark: argument 'g' is NULL");
    TMAP_CU(cudaEventRecord(g->mark, g->side), "cudaEventRecord");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_done(tmap_gpu_regroup *g, int *done, tmap_error *err)
{
    if (!g || !done)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_done: an argument is NULL");
    cudaError_t e = cudaEventQuery(g->mark);
    *done = e == cudaSuccess;
    if (e != cudaSuccess && e != cudaErrorNotReady)
        return cuda_fail(err, e, "cudaEventQuery");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_join(tmap_gpu_regroup *g, void *stream, tmap_error *err)
{
    if (!g)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_join: argument 'g' is NULL");
    TMAP_CU(cudaStreamWaitEvent((cudaStream_t)stream, g->mark, 0), "cudaStreamWaitEvent");
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_regroup_copy(tmap_gpu_regroup *g, uint64_t dst, uint64_t src,
                                             size_t bytes, void *stream, tmap_error *err)
{
    if (!g || !dst || !src)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_regroup_copy: an argument is NULL");
    TMAP_CU(cudaMemcpyAsync((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes,
                            cudaMemcpyDeviceToDevice, (cudaStream_t)stream),
            "cudaMemcpyAsync");
    return TMAP_OK;
}

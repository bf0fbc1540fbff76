/*
 * gpu_memorder.cu -- the memory layouts that follow an order, built on the
 * GPU (threadmap/runtime.h): relabeling by an order, Morton order and
 * wu2013's padding, bit for bit regroup's tmap_memre_relabel,
 * tmap_memre_morton and tmap_memre_pad with warps of 32.  Each enqueues
 * its work on `stream` (scratch from cudaMallocAsync on it, freed on it)
 * and waits for nothing.
 *
 * Padding's one sequential step: where a warp's working set starts
 * depends on where the warps before it ended (the padding), so one block
 * walks the per-warp summaries (distinct elements, whether the first is
 * the previous warp's last) in order; everything per thread is parallel.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <stdint.h>

#include "threadmap/runtime.h"
extern "C" {
#include "common/base.h"
}
#include "common/morton.h"

namespace {

enum { THREADS = 256, WARP = 32, WALK = 1024 };
const unsigned EMPTY = 0xffffffffu;
typedef unsigned long long u64;

tmap_status cuda_fail(tmap_error *err, cudaError_t e, const char *fn, const char *call)
{
    return tmap_fail(err, TMAP_ERR_CUDA, "%s: %s: %s (%s)", fn, call, cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

__device__ u64 global_id() { return blockIdx.x * (u64)THREADS + threadIdx.x; }

/* One device allocation cut into aligned pieces: a first pass (base
 * NULL) only counts the bytes. */
struct carver {
    char *base;
    size_t used;
    template <typename T> T *take(size_t n)
    {
        size_t at = (used + 255) & ~(size_t)255;
        used = at + n * sizeof(T);
        return base ? (T *)(base + at) : NULL;
    }
};

/* ------------------------------------------------------------ relabeling */

__global__ void inverse_kernel(const unsigned *order, unsigned ne, unsigned *where)
{
    u64 x = global_id();
    if (x < ne)
        where[order[x]] = (unsigned)x;
}

__global__ void redirect_kernel(const unsigned *index, u64 m, const unsigned *where, unsigned *q)
{
    u64 i = global_id();
    if (i < m)
        q[i] = where[index[i]];
}

/* --------------------------------------------------------------- Morton */

/* Floats as unsigned integers of the same order (-0 just below +0). */
__device__ unsigned float_key(float f)
{
    unsigned b = __float_as_uint(f);
    return b & 0x80000000u ? ~b : b | 0x80000000u;
}

__device__ float key_float(unsigned u)
{
    return __uint_as_float(u & 0x80000000u ? u & 0x7fffffffu : ~u);
}

/* box[d], box[3 + d]: the least and greatest coordinate d, as float_key. */
__global__ void box_kernel(const float *xyz, u64 stride, u64 n, unsigned *box)
{
    unsigned lo[3] = {EMPTY, EMPTY, EMPTY}, hi[3] = {0, 0, 0};
    for (u64 i = global_id(); i < n; i += (u64)gridDim.x * THREADS)
        for (int d = 0; d < 3; d++) {
            unsigned v = float_key(xyz[i * stride + d]);
            lo[d] = min(lo[d], v), hi[d] = max(hi[d], v);
        }
    for (int d = 0; d < 3; d++) {
        for (int off = WARP / 2; off; off /= 2) {
            lo[d] = min(lo[d], __shfl_down_sync(EMPTY, lo[d], off));
            hi[d] = max(hi[d], __shfl_down_sync(EMPTY, hi[d], off));
        }
        if (threadIdx.x % WARP == 0)
            atomicMin(&box[d], lo[d]), atomicMax(&box[3 + d], hi[d]);
    }
}

/* The CPU's codes (common/morton.h), the box's floats as doubles. */
__global__ void code_kernel(const float *xyz, u64 stride, u64 n, const unsigned *box, u64 *code,
                            unsigned *id)
{
    u64 i = global_id();
    if (i >= n)
        return;
    double lo[3], hi[3];
    for (int d = 0; d < 3; d++)
        lo[d] = key_float(box[d]), hi[d] = key_float(box[3 + d]);
    u64 c = tmap_morton_code(xyz + i * stride, lo, hi);
    code[i] = c, id[i] = (unsigned)i;
}

/* -------------------------------------------------------------- padding */

__global__ void count_kernel(const unsigned *index, u64 n, unsigned *freq, unsigned *first)
{
    u64 t = global_id();
    if (t < n)
        atomicAdd(&freq[index[t]], 1u), atomicMin(&first[index[t]], (unsigned)t);
}

/* Thread t's key: its element's rank key (most accesses first, then the
 * earliest first access; distinct per element). */
__global__ void rank_kernel(const unsigned *index, u64 n, const unsigned *freq,
                            const unsigned *first, u64 *key, unsigned *id)
{
    u64 t = global_id();
    if (t < n) {
        unsigned e = index[t];
        key[t] = (u64)(EMPTY - freq[e]) << 32 | first[e], id[t] = (unsigned)t;
    }
}

/* Slot s of the sorted threads (one CUDA warp per warp of threads): its
 * element, and the mask of lanes that start a distinct element. */
__device__ unsigned lane_element(const unsigned *index, const unsigned *perm, u64 n, u64 s,
                                 unsigned *starts)
{
    unsigned lane = threadIdx.x % WARP, e = s < n ? index[perm[s]] : EMPTY;
    unsigned before = __shfl_up_sync(EMPTY, e, 1);
    *starts = __ballot_sync(EMPTY, s < n && (lane == 0 || e != before));
    return e;
}

/* sum[w] = 2 * (distinct elements of warp w) + (its first is warp w-1's last). */
__global__ void summary_kernel(const unsigned *index, const unsigned *perm, u64 n, unsigned *sum)
{
    u64 s = global_id();
    unsigned starts, e = lane_element(index, perm, n, s, &starts);
    if (s < n && s % WARP == 0)
        sum[s / WARP] = 2 * __popc(starts) + (s > 0 && index[perm[s - 1]] == e);
}

/* The packing of mem_pad.c's pack_warp, warp after warp: base[w] = the
 * slot of its first newly placed element, keep[w] = the slot its first
 * element keeps (EMPTY: none); *nout = the slots used.  One block: the
 * summaries staged WALK at a time, thread 0 walks them. */
__global__ void walk_kernel(const unsigned *sum, unsigned nw, unsigned seg, unsigned *base,
                            unsigned *keep, unsigned *nout)
{
    __shared__ unsigned sh_sum[WALK], sh_base[WALK], sh_keep[WALK];
    unsigned pos = 0, last = EMPTY; /* last: the slot of the previous warp's last element */
    for (unsigned lo = 0; lo < nw; lo += WALK) {
        unsigned m = nw - lo < WALK ? nw - lo : WALK;
        for (unsigned i = threadIdx.x; i < m; i += blockDim.x)
            sh_sum[i] = sum[lo + i];
        __syncthreads();
        for (unsigned i = 0; threadIdx.x == 0 && i < m; i++) {
            unsigned nu = sh_sum[i] / 2, old = sh_sum[i] % 2 ? last : EMPTY;
            unsigned kept = old != EMPTY && old >= pos - pos % seg;
            if (nu > kept && nu > seg - pos % seg) /* fresh elements that do not fit */
                pos = (pos + seg - 1) / seg * seg, kept = old != EMPTY && old >= pos;
            sh_base[i] = pos, sh_keep[i] = kept ? old : EMPTY;
            last = nu == kept ? old : pos + nu - 1 - kept;
            pos += nu - kept;
        }
        __syncthreads();
        for (unsigned i = threadIdx.x; i < m; i += blockDim.x)
            base[lo + i] = sh_base[i], keep[lo + i] = sh_keep[i];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *nout = pos;
}

/* Each sorted thread's slot: its element's rank d among the warp's
 * distinct elements, after the kept one. */
__global__ void place_kernel(const unsigned *index, const unsigned *perm, u64 n,
                             const unsigned *base, const unsigned *keep, unsigned *from,
                             unsigned *q)
{
    u64 s = global_id();
    unsigned starts, e = lane_element(index, perm, n, s, &starts);
    if (s >= n)
        return;
    unsigned lane = threadIdx.x % WARP, w = (unsigned)(s / WARP), k = keep[w];
    unsigned d = __popc(starts & (2u << lane) - 1) - 1;
    unsigned slot = k != EMPTY && d == 0 ? k : base[w] + d - (k != EMPTY);
    if (starts >> lane & 1 && slot != k)
        from[slot] = e;
    q[perm[s]] = slot;
}

tmap_status check_count(size_t n, const char *what, const char *fn, tmap_error *err)
{
    if (!n || n >= EMPTY)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu %s: must be in [1, 2^32 - 2]", fn, n,
                         what);
    return TMAP_OK;
}

/* Allocates c's bytes on the stream, runs steps(c) (which carves the same
 * pieces), frees on the stream. */
template <typename F>
tmap_status with_scratch(cudaStream_t st, const char *fn, F steps, tmap_error *err)
{
    carver c = {NULL, 0};
    cudaError_t e = steps(c);
    if (e == cudaSuccess)
        e = cudaMallocAsync((void **)&c.base, c.used, st);
    if (e != cudaSuccess)
        return cuda_fail(err, e, fn, "cudaMallocAsync");
    c.used = 0;
    e = steps(c);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    cudaError_t f = cudaFreeAsync(c.base, st);
    e = e == cudaSuccess ? f : e;
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, fn, "the build");
}

} // namespace

extern "C" tmap_status tmap_gpu_memre_relabel(uint64_t index, size_t nthreads, size_t per_thread,
                                              uint64_t order, size_t nelems, uint64_t q,
                                              void *stream, tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_relabel";
    size_t m = nthreads * per_thread;
    tmap_status st = check_count(nelems, "elements", fn, err);
    if (st == TMAP_OK && (!per_thread || (nthreads && m / nthreads != per_thread)))
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu per thread", fn, per_thread);
    if (st == TMAP_OK)
        st = check_count(m, "accesses", fn, err);
    if (st)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    return with_scratch(s, fn, [&](carver &c) {
        unsigned *where = c.take<unsigned>(nelems);
        if (!c.base)
            return cudaSuccess;
        inverse_kernel<<<blocks_for(nelems), THREADS, 0, s>>>((const unsigned *)order,
                                                              (unsigned)nelems, where);
        redirect_kernel<<<blocks_for(m), THREADS, 0, s>>>((const unsigned *)index, m, where,
                                                          (unsigned *)q);
        return cudaSuccess;
    }, err);
}

extern "C" tmap_status tmap_gpu_memre_morton(uint64_t xyz, size_t stride, size_t n,
                                             uint64_t order, void *stream, tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_morton";
    tmap_status st = check_count(n, "points", fn, err);
    if (st == TMAP_OK && stride < 3)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: stride %zu, must be >= 3", fn, stride);
    if (st)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    const float *p = (const float *)xyz;
    return with_scratch(s, fn, [&](carver &c) {
        unsigned *box = c.take<unsigned>(6), *id = c.take<unsigned>(n);
        u64 *code[2] = {c.take<u64>(n), c.take<u64>(n)};
        size_t temp_bytes = 0;
        cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, code[0], code[1], id,
                                                        (unsigned *)order, n, 0, 63, s);
        void *temp = c.take<char>(temp_bytes);
        if (e != cudaSuccess || !c.base)
            return e;
        if ((e = cudaMemsetAsync(box, 0xff, 3 * sizeof *box, s)) != cudaSuccess ||
            (e = cudaMemsetAsync(box + 3, 0, 3 * sizeof *box, s)) != cudaSuccess)
            return e;
        unsigned g = blocks_for(n) < 1024 ? blocks_for(n) : 1024;
        box_kernel<<<g, THREADS, 0, s>>>(p, stride, n, box);
        code_kernel<<<blocks_for(n), THREADS, 0, s>>>(p, stride, n, box, code[0], id);
        return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, code[0], code[1], id,
                                               (unsigned *)order, n, 0, 63, s);
    }, err);
}

extern "C" tmap_status tmap_gpu_memre_pad(uint64_t index, size_t nthreads, size_t nelems,
                                          size_t elem_bytes, size_t sector_bytes, uint64_t from,
                                          uint64_t q, uint64_t perm, uint64_t nout, void *stream,
                                          tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_pad";
    tmap_status st = check_count(nthreads, "threads", fn, err);
    if (st == TMAP_OK)
        st = check_count(nelems, "elements", fn, err);
    size_t sb = sector_bytes ? sector_bytes : 32, seg = sb > elem_bytes ? sb / elem_bytes : 1;
    if (st == TMAP_OK && (!elem_bytes || elem_bytes & (elem_bytes - 1) || sb & (sb - 1)))
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: element (%zu) and sector (%zu) bytes must be "
                       "powers of two", fn, elem_bytes, sb);
    size_t n = nthreads, nw = (n + WARP - 1) / WARP;
    size_t slots = nw * (WARP + seg); /* a working set and a pad per warp */
    if (st == TMAP_OK && slots > EMPTY)
        st = tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: %zu threads: the padded layout may need "
                       "more slots than 32-bit indices number", fn, n);
    if (st)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned *ix = (const unsigned *)index;
    unsigned *pm = (unsigned *)perm;
    return with_scratch(s, fn, [&](carver &c) {
        unsigned *freq = c.take<unsigned>(nelems), *first = c.take<unsigned>(nelems);
        unsigned *id = c.take<unsigned>(n), *sum = c.take<unsigned>(nw);
        unsigned *base = c.take<unsigned>(nw), *keep = c.take<unsigned>(nw);
        u64 *key[2] = {c.take<u64>(n), c.take<u64>(n)};
        size_t temp_bytes = 0;
        cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, key[0], key[1], id,
                                                        pm, n, 0, 64, s);
        void *temp = c.take<char>(temp_bytes);
        if (e != cudaSuccess || !c.base)
            return e;
        if ((e = cudaMemsetAsync(freq, 0, nelems * sizeof *freq, s)) != cudaSuccess ||
            (e = cudaMemsetAsync(first, 0xff, nelems * sizeof *first, s)) != cudaSuccess ||
            (e = cudaMemsetAsync((void *)from, 0xff, slots * sizeof(unsigned), s)) != cudaSuccess)
            return e;
        count_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, n, freq, first);
        rank_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, n, freq, first, key[0], id);
        if ((e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, key[0], key[1], id, pm,
                                                 n, 0, 64, s)) != cudaSuccess)
            return e;
        summary_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, pm, n, sum);
        walk_kernel<<<1, WALK, 0, s>>>(sum, (unsigned)nw, (unsigned)seg, base, keep,
                                       (unsigned *)nout);
        place_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, pm, n, base, keep, (unsigned *)from,
                                                       (unsigned *)q);
        return cudaSuccess;
    }, err);
}

/*
 * gpu_memre.cu -- memory layouts built on the GPU (threadmap/runtime.h):
 * duplication and data reordering, the same arrays as regroup's
 * tmap_memre_duplicate and tmap_memre_reorder with warps of 32, and the
 * gather that builds A' before each launch.  Reordering: each element's
 * least duplication slot by atomicMin; elements whose slot lies inside A
 * go there (the slots are distinct); the rest (read ones by that slot,
 * then unread ones by number) are sorted with CUB's radix sort and dealt
 * to the free slots, found with a CUB scan, in order.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <stdint.h>

#include "threadmap/runtime.h"
extern "C" {
#include "common/base.h"
}

enum { THREADS = 256, WARP = 32 };
#define EMPTY 0xffffffffu

static tmap_status cuda_fail(tmap_error *err, cudaError_t e, const char *fn, const char *call)
{
    return tmap_fail(err, TMAP_ERR_CUDA, "%s: %s: %s (%s)", fn, call, cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

static unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

/* Access i = t * k + j's duplication slot: warp w's request j holds its L
 * lanes consecutively, at w * 32 * k + j * L + l. */
__device__ static unsigned slot_of(unsigned long long i, unsigned long long n, unsigned long long k)
{
    unsigned long long t = i / k, j = i % k, w = t / WARP, l = t % WARP;
    unsigned long long lanes = n - w * WARP < WARP ? n - w * WARP : WARP;
    return (unsigned)(w * WARP * k + j * lanes + l);
}

__global__ void duplicate_kernel(const unsigned *index, unsigned long long n, unsigned long long k,
                                 unsigned *from, unsigned *q)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i >= n * k)
        return;
    unsigned s = slot_of(i, n, k);
    from[s] = index[i];
    q[i] = s;
}

__global__ void first_kernel(const unsigned *index, unsigned long long n, unsigned long long k,
                             unsigned *first)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i < n * k)
        atomicMin(&first[index[i]], slot_of(i, n, k));
}

/* Places elements at their first slot inside A; the others get a sort
 * key: their first slot, or 2^32 + e if unread; placed ones sort last. */
__global__ void home_kernel(const unsigned *first, unsigned ne, unsigned *from, unsigned *where,
                            unsigned long long *key, unsigned *elem)
{
    unsigned e = blockIdx.x * THREADS + threadIdx.x;
    if (e >= ne)
        return;
    unsigned f = first[e];
    int home = f < ne;
    if (home)
        from[f] = e, where[e] = f;
    key[e] = home ? (1ull << 33) - 1 : f == EMPTY ? (1ull << 32) + e : f;
    elem[e] = e;
}

__global__ void free_kernel(const unsigned *from, unsigned ne, unsigned *flag)
{
    unsigned x = blockIdx.x * THREADS + threadIdx.x;
    if (x < ne)
        flag[x] = from[x] == EMPTY;
}

/* Free slot x is the pos[x]-th: it takes the pos[x]-th element of the
 * sorted rest. */
__global__ void deal_kernel(const unsigned *flag, const unsigned *pos, const unsigned *sorted,
                            unsigned ne, unsigned *from, unsigned *where)
{
    unsigned x = blockIdx.x * THREADS + threadIdx.x;
    if (x < ne && flag[x]) {
        unsigned e = sorted[pos[x]];
        from[x] = e, where[e] = x;
    }
}

__global__ void redirect_kernel(const unsigned *index, unsigned long long m, const unsigned *where,
                                unsigned *q)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i < m)
        q[i] = where[index[i]];
}

template <typename T>
__global__ void gather_kernel(const unsigned *from, unsigned long long nout, const T *src, T *dst)
{
    unsigned long long x = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (x < nout) {
        unsigned f = from[x];
        dst[x] = f == EMPTY ? T() : src[f];
    }
}

/* Elements of more than 16 bytes, a byte at a time. */
__global__ void gather_bytes(const unsigned *from, unsigned long long nout, const unsigned char *src,
                             unsigned long long eb, unsigned char *dst)
{
    unsigned long long b = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (b < nout * eb) {
        unsigned f = from[b / eb];
        dst[b] = f == EMPTY ? 0 : src[(unsigned long long)f * eb + b % eb];
    }
}

static tmap_status check(size_t nthreads, size_t k, size_t nelems, const char *fn,
                         tmap_error *err)
{
    if (!nthreads || !k || k > UINT32_MAX / nthreads || !nelems || nelems > EMPTY - 1 ||
        nthreads * k > EMPTY - 1)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu threads x %zu per thread over %zu "
                         "elements: all positive, accesses and elements below 2^32 - 1", fn,
                         nthreads, k, nelems);
    return TMAP_OK;
}

extern "C" tmap_status tmap_gpu_memre_duplicate(uint64_t index, size_t nthreads,
                                                size_t per_thread, uint64_t from, uint64_t q,
                                                void *stream, tmap_error *err)
{
    tmap_status st = check(nthreads, per_thread, 1, "tmap_gpu_memre_duplicate", err);
    if (st)
        return st;
    size_t m = nthreads * per_thread;
    duplicate_kernel<<<blocks_for(m), THREADS, 0, (cudaStream_t)stream>>>(
        (const unsigned *)index, nthreads, per_thread, (unsigned *)from, (unsigned *)q);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, "tmap_gpu_memre_duplicate", "launch");
}

/* The reordering's scratch, one allocation. */
struct scratch {
    unsigned *first, *where, *elem[2], *flag, *pos;
    unsigned long long *key[2];
    void *temp;
    size_t temp_bytes;
};

static cudaError_t reorder_steps(const unsigned *index, size_t n, size_t k, unsigned ne,
                                 unsigned *from, unsigned *q, scratch *s)
{
    cudaError_t e = cudaMemset(s->first, 0xff, ne * sizeof(unsigned));
    if (e == cudaSuccess)
        e = cudaMemset(from, 0xff, ne * sizeof(unsigned));
    if (e != cudaSuccess)
        return e;
    size_t m = n * k;
    first_kernel<<<blocks_for(m), THREADS>>>(index, n, k, s->first);
    home_kernel<<<blocks_for(ne), THREADS>>>(s->first, ne, from, s->where, s->key[0], s->elem[0]);
    e = cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, s->key[0], s->key[1], s->elem[0],
                                        s->elem[1], (int)ne, 0, 33);
    if (e != cudaSuccess)
        return e;
    free_kernel<<<blocks_for(ne), THREADS>>>(from, ne, s->flag);
    e = cub::DeviceScan::ExclusiveSum(s->temp, s->temp_bytes, s->flag, s->pos, (int)ne);
    if (e != cudaSuccess)
        return e;
    deal_kernel<<<blocks_for(ne), THREADS>>>(s->flag, s->pos, s->elem[1], ne, from, s->where);
    redirect_kernel<<<blocks_for(m), THREADS>>>(index, m, s->where, q);
    e = cudaGetLastError();
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

extern "C" tmap_status tmap_gpu_memre_reorder(uint64_t index, size_t nthreads, size_t per_thread,
                                              size_t nelems, uint64_t from, uint64_t q,
                                              tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_reorder";
    tmap_status st = check(nthreads, per_thread, nelems, fn, err);
    if (st)
        return st;
    unsigned ne = (unsigned)nelems;
    scratch s = {};
    size_t sort_bytes = 0, scan_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, s.key[0], s.key[1],
                                                    s.elem[0], s.elem[1], (int)ne, 0, 33);
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, s.flag, s.pos, (int)ne);
    s.temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    size_t u = ne * sizeof(unsigned), l = ne * sizeof(unsigned long long);
    size_t bytes = 6 * u + 2 * l + s.temp_bytes + 64;
    char *pool = NULL;
    if (e == cudaSuccess)
        e = cudaMalloc(&pool, bytes);
    if (e == cudaSuccess) {
        s.key[0] = (unsigned long long *)pool, s.key[1] = s.key[0] + ne; /* 8-byte aligned first */
        unsigned *p = (unsigned *)(s.key[1] + ne);
        s.first = p, s.where = p + ne, s.elem[0] = p + 2 * (size_t)ne;
        s.elem[1] = p + 3 * (size_t)ne, s.flag = p + 4 * (size_t)ne, s.pos = p + 5 * (size_t)ne;
        s.temp = (void *)(((uintptr_t)(p + 6 * (size_t)ne) + 63) & ~(uintptr_t)63);
        e = reorder_steps((const unsigned *)index, nthreads, per_thread, ne, (unsigned *)from,
                          (unsigned *)q, &s);
    }
    cudaFree(pool);
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, fn, "the build");
}

extern "C" tmap_status tmap_gpu_memre_gather(uint64_t from, size_t nout, uint64_t src,
                                             size_t elem_bytes, uint64_t dst, void *stream,
                                             tmap_error *err)
{
    if (!nout || !elem_bytes)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_memre_gather: %zu elements of %zu "
                         "bytes", nout, elem_bytes);
    cudaStream_t st = (cudaStream_t)stream;
    const unsigned *f = (const unsigned *)from;
    unsigned g = blocks_for(nout);
    switch (elem_bytes) {
    case 4:
        gather_kernel<<<g, THREADS, 0, st>>>(f, nout, (const unsigned *)src, (unsigned *)dst);
        break;
    case 8:
        gather_kernel<<<g, THREADS, 0, st>>>(f, nout, (const double *)src, (double *)dst);
        break;
    case 16:
        gather_kernel<<<g, THREADS, 0, st>>>(f, nout, (const double2 *)src, (double2 *)dst);
        break;
    default:
        gather_bytes<<<blocks_for(nout * elem_bytes), THREADS, 0, st>>>(
            f, nout, (const unsigned char *)src, elem_bytes, (unsigned char *)dst);
    }
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, "tmap_gpu_memre_gather", "launch");
}

/*
 * gpu_memre.cu -- memory layouts built on the GPU (threadmap/runtime.h):
 * duplication and data reordering, the same arrays as regroup's
 * tmap_memre_duplicate and tmap_memre_reorder with warps of 32, and the
 * gather that builds A' before each launch.  Reordering: each element's
 * least duplication slot by atomicMin; elements whose slot lies inside A
 * go there (the slots are distinct); the rest (read ones by that slot,
 * then unread ones by number) are sorted with CUB's radix sort and dealt
 * to the free slots, found with a CUB scan, in order.  Partial
 * duplication: one warp per request counts its sectors (gpu_warp.cuh), a
 * CUB radix sort ranks the requests, a scan places the chosen ones'
 * copies.  Sharing: the accesses sorted by (block, element), packed in
 * one key of the fewest bits (32 where they fit: the greatest element is
 * read first), the distinct pairs numbered by a scan.  Job swapping as a sort (regroup's
 * tmap_memre_swap_sorted): the category key (the block, then the segment
 * of each access) packed into the fewest 32-bit words, one stable radix
 * sort of the jobs per word (the least significant first), the categories
 * numbered by a scan of their heads, their residues (beyond their whole
 * warps) summed by a scan over the categories, and one kernel places each
 * job: the block's whole warps first, then its residues, in category order.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <stdint.h>
#include <stdlib.h>

#include "runtime/gpu_util.cuh"
#include "runtime/gpu_warp.cuh"
#include "threadmap/runtime.h"
extern "C" {
#include "common/base.h"
}

enum { THREADS = 256, WARP = 32 };
#define EMPTY 0xffffffffu

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

/* ------------------------------------------------ partial duplication */

/* Request q = w * k + j's rank key (tmap_memre_partial's order): requests
 * that save no sector last, then most saved first, then by number. */
__global__ void rank_kernel(const unsigned *index, unsigned long long n, unsigned long long k,
                            unsigned long long eb, unsigned long long sb, unsigned long long *key)
{
    unsigned lane = threadIdx.x % WARP;
    unsigned long long q = (blockIdx.x * (unsigned long long)THREADS + threadIdx.x) / WARP;
    unsigned long long w = q / k, j = q % k, t = w * WARP + lane;
    if (w * WARP >= n) /* the whole warp leaves together */
        return;
    bool active = t < n, first;
    unsigned long long e = active ? index[t * k + j] : 0;
    unsigned long long per = eb >= sb ? eb / sb : 1;
    unsigned ds = tmap_warp_distinct(eb >= sb ? e : e * eb / sb, active, &first);
    unsigned long long lanes = n - w * WARP < WARP ? n - w * WARP : WARP;
    unsigned long long sectors = eb >= sb ? ds * per : ds, pk = (lanes * eb + sb - 1) / sb;
    unsigned long long saved = sectors > pk ? sectors - pk : 0;
    if (lane == 0)
        key[q] = (unsigned long long)(saved == 0) << 63 | (0x7fffffffull - saved) << 32 | q;
}

/* The first `take` ranked requests that save a sector: count[q] = lanes. */
__global__ void choose_kernel(const unsigned long long *sorted, unsigned long long take,
                              unsigned long long n, unsigned long long k, unsigned *count)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i >= take || sorted[i] >> 63)
        return;
    unsigned long long q = sorted[i] & 0xffffffffull, w = q / k;
    count[q] = (unsigned)(n - w * WARP < WARP ? n - w * WARP : WARP);
}

__global__ void head_kernel(unsigned ne, unsigned head, unsigned *from)
{
    unsigned x = blockIdx.x * THREADS + threadIdx.x;
    if (x < head)
        from[x] = x < ne ? x : EMPTY;
}

__global__ void copies_kernel(const unsigned *index, unsigned long long n, unsigned long long k,
                              const unsigned *count, const unsigned *base, unsigned head,
                              unsigned *from, unsigned *q)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i >= n * k)
        return;
    unsigned long long t = i / k, r = t / WARP * k + i % k;
    unsigned s = head + base[r] + (unsigned)(t % WARP);
    if (count[r])
        from[s] = index[i];
    q[i] = count[r] ? s : index[i];
}

/* Scratch of a build: one allocation carved in 8-byte-aligned pieces. */
struct pool {
    char *base;
    size_t used;
    void *take(size_t bytes)
    {
        void *p = base + used;
        used += (bytes + 63) / 64 * 64;
        return p;
    }
    /* Frees the pool; e, else the launches' error. */
    cudaError_t release(cudaError_t e)
    {
        if (e == cudaSuccess)
            e = cudaGetLastError();
        cudaFree(base);
        return e;
    }
};

static cudaError_t partial_steps(const unsigned *index, size_t n, size_t k, unsigned ne,
                                 size_t eb, size_t sb, double fraction, unsigned *from,
                                 unsigned *q, size_t *nout)
{
    size_t nq = (n + WARP - 1) / WARP * k, take = (size_t)(fraction * (double)nq + 0.999999);
    take = take < nq ? take : nq;
    size_t seg = sb > eb ? sb / eb : 1, head = (ne + seg - 1) / seg * seg;
    size_t sort_bytes = 0, scan_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortKeys(NULL, sort_bytes, (unsigned long long *)NULL,
                                                   (unsigned long long *)NULL, (int)nq);
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (unsigned *)NULL, (unsigned *)NULL,
                                          (int)nq);
    pool p = {NULL, 0};
    size_t temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    if (e == cudaSuccess)
        e = cudaMalloc(&p.base, 2 * nq * 8 + 2 * nq * 4 + temp_bytes + 5 * 64);
    if (e != cudaSuccess)
        return e;
    unsigned long long *key = (unsigned long long *)p.take(nq * 8);
    unsigned long long *sorted = (unsigned long long *)p.take(nq * 8);
    unsigned *count = (unsigned *)p.take(nq * 4), *base = (unsigned *)p.take(nq * 4);
    void *temp = p.take(temp_bytes);
    unsigned last[2] = {0, 0};
    e = cudaMemset(count, 0, nq * 4);
    if (e == cudaSuccess) {
        rank_kernel<<<blocks_for(nq * WARP), THREADS>>>(index, n, k, eb, sb, key);
        e = cub::DeviceRadixSort::SortKeys(temp, sort_bytes, key, sorted, (int)nq);
    }
    if (e == cudaSuccess) {
        if (take) /* fraction 0: nothing chosen */
            choose_kernel<<<blocks_for(take), THREADS>>>(sorted, take, n, k, count);
        e = cub::DeviceScan::ExclusiveSum(temp, scan_bytes, count, base, (int)nq);
    }
    if (e == cudaSuccess) {
        head_kernel<<<blocks_for(head), THREADS>>>(ne, (unsigned)head, from);
        copies_kernel<<<blocks_for(n * k), THREADS>>>(index, n, k, count, base, (unsigned)head,
                                                      from, q);
        e = cudaMemcpy(&last[0], count + nq - 1, 4, cudaMemcpyDeviceToHost);
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(&last[1], base + nq - 1, 4, cudaMemcpyDeviceToHost);
    *nout = head + last[0] + last[1];
    return p.release(e);
}

extern "C" tmap_status tmap_gpu_memre_partial(uint64_t index, size_t nthreads, size_t per_thread,
                                              size_t nelems, size_t elem_bytes, double fraction,
                                              uint64_t from, uint64_t q, size_t *nout,
                                              tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_partial";
    tmap_status st = check(nthreads, per_thread, nelems, fn, err);
    if (st)
        return st;
    if (!nout || !(fraction >= 0 && fraction <= 1) || !elem_bytes ||
        (elem_bytes & (elem_bytes - 1)) || nthreads * per_thread > 0x7fffffffu ||
        nelems > 0x7fffffffu)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: fraction %g in [0, 1], a power-of-two "
                         "element size (%zu), accesses and elements below 2^31, nout needed",
                         fn, fraction, elem_bytes);
    cudaError_t e = partial_steps((const unsigned *)index, nthreads, per_thread,
                                  (unsigned)nelems, elem_bytes, 32, fraction, (unsigned *)from,
                                  (unsigned *)q, nout);
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, fn, "the build");
}

/* ----------------------------------------------------------- sharing */

/* *most = the greatest of the m entries of index (a fixed grid, one
 * atomicMax per warp). */
__global__ void share_max_kernel(const unsigned *index, unsigned long long m, unsigned *most)
{
    unsigned v = 0;
#pragma unroll 4
    for (unsigned long long x = blockIdx.x * (unsigned long long)THREADS + threadIdx.x; x < m;
         x += (unsigned long long)gridDim.x * THREADS)
        v = max(v, index[x]);
    for (int off = WARP / 2; off; off /= 2)
        v = max(v, __shfl_down_sync(EMPTY, v, off));
    if (threadIdx.x % WARP == 0)
        atomicMax(most, v);
}

/* Access (slot s, j) at m = s * k + j: key (block, element) packed as
 * block << ebits | element (K: 32 bits where they fit), value i. */
template <typename K>
__global__ void share_keys_kernel(const unsigned *index, const unsigned *perm,
                                  unsigned long long n, unsigned long long k,
                                  unsigned long long bs, int ebits, K *key, unsigned *val)
{
    unsigned long long m = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (m >= n * k)
        return;
    unsigned long long s = m / k, t = perm ? perm[s] : s, i = t * k + m % k;
    key[m] = (K)(s / bs) << ebits | index[i];
    val[m] = (unsigned)i;
}

template <typename K>
__global__ void share_flag_kernel(const K *key, unsigned long long m, unsigned *flag)
{
    unsigned long long x = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (x < m)
        flag[x] = x == 0 || key[x] != key[x - 1];
}

/* pos[x] (inclusive count of distinct pairs) - 1 is access val[x]'s slot. */
template <typename K>
__global__ void share_place_kernel(const K *key, const unsigned *val, const unsigned *flag,
                                   const unsigned *pos, unsigned long long m, int ebits,
                                   unsigned *from, unsigned *q, unsigned *start)
{
    unsigned long long x = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (x >= m)
        return;
    unsigned y = pos[x] - 1;
    K block = key[x] >> ebits;
    q[val[x]] = y;
    if (flag[x])
        from[y] = (unsigned)(key[x] & (((K)1 << ebits) - 1));
    if (x == 0 || key[x - 1] >> ebits != block)
        start[block] = y;
}


/* The sort over (block, element) keys of K: ebits element bits under the
 * block's; pieces carved from p (its scratch) and t (CUB's). */
template <typename K>
static cudaError_t share_sorted(const unsigned *index, const unsigned *perm, size_t n, size_t k,
                                size_t bs, int ebits, int end_bit, pool *p, unsigned *from,
                                unsigned *q, unsigned *start, unsigned *total)
{
    size_t m = n * k, sort_bytes = 0, scan_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (K *)NULL, (K *)NULL,
                                                    (unsigned *)NULL, (unsigned *)NULL, (int)m,
                                                    0, end_bit);
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveSum(NULL, scan_bytes, (unsigned *)NULL, (unsigned *)NULL,
                                          (int)m);
    size_t temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    if (e == cudaSuccess)
        e = cudaMalloc(&p->base, 2 * m * sizeof(K) + 4 * m * 4 + temp_bytes + 7 * 64);
    if (e != cudaSuccess)
        return e;
    K *key[2] = {(K *)p->take(m * sizeof(K)), (K *)p->take(m * sizeof(K))};
    unsigned *val[2] = {(unsigned *)p->take(m * 4), (unsigned *)p->take(m * 4)};
    unsigned *flag = (unsigned *)p->take(m * 4), *pos = (unsigned *)p->take(m * 4);
    void *temp = p->take(temp_bytes);
    share_keys_kernel<K><<<blocks_for(m), THREADS>>>(index, perm, n, k, bs, ebits, key[0],
                                                     val[0]);
    e = cub::DeviceRadixSort::SortPairs(temp, sort_bytes, key[0], key[1], val[0], val[1], (int)m,
                                        0, end_bit);
    if (e == cudaSuccess) {
        share_flag_kernel<K><<<blocks_for(m), THREADS>>>(key[1], m, flag);
        e = cub::DeviceScan::InclusiveSum(temp, scan_bytes, flag, pos, (int)m);
    }
    if (e == cudaSuccess) {
        share_place_kernel<K><<<blocks_for(m), THREADS>>>(key[1], val[1], flag, pos, m, ebits,
                                                          from, q, start);
        e = cudaMemcpy(total, pos + m - 1, 4, cudaMemcpyDeviceToHost);
    }
    return e;
}

/* The accesses sorted by (block, element) with the fewest key bits: the
 * greatest element read first (one pass over the index), so that block
 * and element share a 32-bit key where they fit (1M threads x 55 over 1M
 * elements in blocks of 256: 20 + 12 bits, four radix passes of 8-byte
 * pairs instead of six of 12-byte ones); the same order either way. */
static cudaError_t share_steps(const unsigned *index, const unsigned *perm, size_t n, size_t k,
                               size_t bs, unsigned *from, unsigned *q, unsigned *start,
                               size_t *nout)
{
    size_t m = n * k, nb = (n + bs - 1) / bs;
    unsigned most = 0, total = 0, *dmost = NULL;
    cudaError_t e = cudaMalloc(&dmost, 4);
    if (e == cudaSuccess && (e = cudaMemset(dmost, 0, 4)) == cudaSuccess) {
        share_max_kernel<<<blocks_for(m) < 2048 ? blocks_for(m) : 2048, THREADS>>>(index, m,
                                                                                  dmost);
        e = cudaMemcpy(&most, dmost, 4, cudaMemcpyDeviceToHost);
    }
    cudaFree(dmost);
    if (e != cudaSuccess)
        return e;
    int ebits = gpu_bits(most), end_bit = ebits + gpu_bits(nb - 1);
    end_bit = end_bit ? end_bit : 1;
    pool p = {NULL, 0};
    e = end_bit <= 32 && ebits < 32
            ? share_sorted<unsigned>(index, perm, n, k, bs, ebits, end_bit, &p, from, q, start,
                                     &total)
            : share_sorted<unsigned long long>(index, perm, n, k, bs, ebits, end_bit, &p, from, q,
                                               start, &total);
    if (e == cudaSuccess)
        e = cudaMemcpy(start + nb, &total, 4, cudaMemcpyHostToDevice);
    *nout = total;
    return p.release(e);
}

extern "C" tmap_status tmap_gpu_memre_share(uint64_t index, uint64_t perm, size_t nthreads,
                                            size_t per_thread, size_t block_size, uint64_t from,
                                            uint64_t q, uint64_t start, size_t *nout,
                                            tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_share";
    tmap_status st = check(nthreads, per_thread, 1, fn, err);
    if (st)
        return st;
    if (!nout || !block_size || block_size % WARP || nthreads * per_thread > 0x7fffffffu)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: blocks of %zu threads (a multiple of 32), "
                         "accesses below 2^31, nout needed", fn, block_size);
    cudaError_t e = share_steps((const unsigned *)index, (const unsigned *)perm, nthreads,
                                per_thread, block_size, (unsigned *)from, (unsigned *)q,
                                (unsigned *)start, nout);
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, fn, "the build");
}

/* ------------------------------------------------------------- swapping */

/* The category key, most significant field first: the block (when there
 * are several), then the segment of each access j = 0..k-1.  The fields
 * are packed into 32-bit words, as many as fit, grouped from the least
 * significant end (the fewest words); one stable sort per word, least
 * significant first, gives the order of one sort on the whole key. */
struct swap_word {
    unsigned lo, hi; /* fields [lo, hi) */
    int bits;
};

struct swap_plan {
    size_t n, k, bs, nb;
    int has_block, block_bits, seg_bits, shift; /* seg = 1 << shift elements */
    unsigned nfields, nwords;
    swap_word *word; /* host: nwords, the least significant first */
};

/* CUB's 8-bit digits: the radix passes of a word of `bits`. */
static int swap_passes(int bits) { return (bits + 7) / 8; }

/* Field f's value for job t: its block, or the segment of its access. */
__device__ static unsigned swap_field(const unsigned *index, unsigned long long t,
                                      unsigned long long k, unsigned long long bs, int has_block,
                                      int shift, unsigned f)
{
    if (has_block && f == 0)
        return (unsigned)(t / bs);
    return index[t * k + (f - has_block)] >> shift;
}

/* key[i]: the word [lo, hi) of job id[i] (of job i on the first word, which
 * also writes id: the identity). */
__global__ void swap_key_kernel(const unsigned *index, unsigned *id, unsigned long long n,
                                unsigned long long k, unsigned long long bs, int has_block,
                                int block_bits, int seg_bits, int shift, unsigned lo, unsigned hi,
                                int first, unsigned *key)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long t = first ? i : id[i];
    unsigned v = 0;
    for (unsigned f = lo; f < hi; f++) {
        int w = has_block && f == 0 ? block_bits : seg_bits;
        v = (w == 32 ? 0 : v << w) | swap_field(index, t, k, bs, has_block, shift, f);
    }
    key[i] = v;
    if (first)
        id[i] = (unsigned)i;
}

/* Whether sorted job p starts a category: its most significant word
 * (key, sorted) differs from job p-1's, or one of the fields below it. */
struct swap_head {
    const unsigned *key, *id, *index;
    unsigned long long k, bs;
    int has_block, shift;
    unsigned below, nfields; /* fields [below, nfields) lie in the other words */
    __device__ unsigned operator()(unsigned p) const
    {
        if (p == 0 || key[p] != key[p - 1])
            return 1;
        unsigned long long a = id[p], b = id[p - 1];
        for (unsigned f = below; f < nfields; f++)
            if (swap_field(index, a, k, bs, has_block, shift, f) !=
                swap_field(index, b, k, bs, has_block, shift, f))
                return 1;
        return 0;
    }
};

/* Category c's residue (its jobs beyond whole warps); 0 past the last. */
struct swap_rem {
    const unsigned *start;
    const unsigned *runs; /* device: the number of categories */
    __device__ unsigned operator()(unsigned c) const
    {
        return c < *runs ? (start[c + 1] - start[c]) % WARP : 0;
    }
};

/* run[p] (1 + the category of sorted job p, an inclusive count of the
 * heads): start[c] = where category c begins; start[runs] = n. */
__global__ void swap_start_kernel(const unsigned *run, unsigned long long n, unsigned *start)
{
    unsigned long long p = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (p >= n)
        return;
    if (p == 0 || run[p] != run[p - 1])
        start[run[p] - 1] = (unsigned)p;
    if (p + 1 == n)
        start[run[p]] = (unsigned)n;
}

/* Sorted job p of category c, in block b (the sorted positions [b * bs,
 * b * bs + its size), the block being the most significant field): the
 * block's whole warps first, in category order, then its residues, in
 * category order.  rex[c]: the residues of the categories before c (an
 * exclusive sum; the block's own from the difference with its first
 * category's). */
__global__ void swap_place_kernel(const unsigned *id, const unsigned *run, const unsigned *start,
                                  const unsigned *rex, unsigned long long n,
                                  unsigned long long bs, unsigned *perm)
{
    unsigned long long p = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (p >= n)
        return;
    unsigned long long b0 = p / bs * bs, blen = n - b0 < bs ? n - b0 : bs;
    unsigned c = run[p] - 1, c0 = run[b0] - 1, c1 = run[b0 + blen - 1];
    unsigned s = start[c], whole = start[c] + (start[c + 1] - s) / WARP * WARP;
    unsigned before = rex[c] - rex[c0], residues = rex[c1] - rex[c0];
    unsigned long long dest = p < whole ? p - before : b0 + blen - residues + before + (p - whole);
    perm[dest] = id[p];
}

/* The plan: field widths, the words.  word: room for nfields words. */
static void swap_plan_make(size_t n, size_t k, size_t ne, unsigned seg, size_t bs, swap_plan *s,
                           swap_word *word)
{
    s->n = n, s->k = k, s->bs = bs, s->nb = (n + bs - 1) / bs;
    s->has_block = s->nb > 1;
    s->block_bits = gpu_bits(s->nb - 1);
    s->seg_bits = gpu_bits((ne - 1) / seg);
    s->shift = gpu_bits(seg) - 1;
    s->nfields = (unsigned)k + s->has_block;
    s->nwords = 0, s->word = word;
    for (unsigned hi = s->nfields; hi > 0;) {
        unsigned lo = hi;
        int bits = 0;
        while (lo > 0) {
            int w = s->has_block && lo == 1 ? s->block_bits : s->seg_bits;
            if (lo < hi && bits + w > 32)
                break;
            bits += w, lo--;
        }
        word[s->nwords++] = (swap_word){lo, hi, bits};
        hi = lo;
    }
}

/* Each step between two events, waited for (steps: NULL, untimed). */
struct swap_clock {
    tmap_gpu_swap_steps *steps;
    cudaEvent_t ev[2];
    cudaError_t tick(int step)
    {
        if (!steps)
            return cudaSuccess;
        float ms = 0;
        cudaError_t e = cudaEventRecord(ev[1], 0);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(ev[1]);
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms, ev[0], ev[1]);
        steps->ms[step] += ms;
        cudaEvent_t t = ev[0];
        ev[0] = ev[1], ev[1] = t;
        return e;
    }
};

/* The bytes each step must read and write at least (the floor): the key
 * words (the index's accesses of their fields, the ids, the keys), CUB's
 * histogram and passes (a key and an id read and written), the heads'
 * scan and the starts, the residues' scan, the placement. */
static void swap_floor(const swap_plan *s, size_t runs, tmap_gpu_swap_steps *st)
{
    double n = (double)s->n;
    st->words = s->nwords, st->passes = 0, st->runs = runs;
    for (unsigned w = 0; w < s->nwords; w++) {
        const swap_word *x = &s->word[w];
        unsigned acc = x->hi - x->lo - (s->has_block && x->lo == 0);
        st->bytes[TMAP_SWAP_KEYS] += 4 * n * (acc + 2); /* + the ids read or written, the keys */
        int p = swap_passes(x->bits);
        st->passes += (unsigned)p;
        st->bytes[TMAP_SWAP_SORT] += p ? 4 * n + 16 * n * p : 0;
    }
    st->bytes[TMAP_SWAP_RUNS] = 12 * n + 16 * (double)runs;
    st->bytes[TMAP_SWAP_PLACE] = 12 * n;
}

static cudaError_t swap_steps(const unsigned *index, const swap_plan *s, unsigned *perm,
                              swap_clock *clk)
{
    size_t n = s->n, sort_bytes = 0, scan_bytes = 0, rex_bytes = 0;
    cub::DoubleBuffer<unsigned> key(NULL, NULL), id(NULL, NULL);
    thrust::counting_iterator<unsigned> at(0);
    swap_head head = {};
    swap_rem rem = {};
    cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, key, id, (int)n, 0, 32);
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveSum(NULL, scan_bytes,
                                          thrust::make_transform_iterator(at, head),
                                          (unsigned *)NULL, (int)n);
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(NULL, rex_bytes,
                                          thrust::make_transform_iterator(at, rem),
                                          (unsigned *)NULL, (int)n + 1);
    size_t temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    temp_bytes = temp_bytes > rex_bytes ? temp_bytes : rex_bytes;
    pool p = {NULL, 0};
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&p.base, 4 * ((n + 1) * 4 + 64) + temp_bytes + 64);
    if (e != cudaSuccess)
        return e;
    e = clk->tick(TMAP_SWAP_ALLOC);
    unsigned *k0 = (unsigned *)p.take((n + 1) * 4), *k1 = (unsigned *)p.take((n + 1) * 4);
    unsigned *i0 = (unsigned *)p.take((n + 1) * 4), *i1 = (unsigned *)p.take((n + 1) * 4);
    void *temp = p.take(temp_bytes);
    key = cub::DoubleBuffer<unsigned>(k0, k1), id = cub::DoubleBuffer<unsigned>(i0, i1);
    /* LSD: the least significant word first; each pass ping-pongs between
     * the two buffers of keys and of ids (CUB's DoubleBuffer: no copies of
     * its own) */
    for (unsigned w = 0; e == cudaSuccess && w < s->nwords; w++) {
        const swap_word *x = &s->word[w];
        swap_key_kernel<<<blocks_for(n), THREADS>>>(index, id.Current(), n, s->k, s->bs,
                                                    s->has_block, s->block_bits, s->seg_bits,
                                                    s->shift, x->lo, x->hi, w == 0,
                                                    key.Current());
        e = cudaGetLastError();
        if (e == cudaSuccess)
            e = clk->tick(TMAP_SWAP_KEYS);
        if (e == cudaSuccess)
            e = cub::DeviceRadixSort::SortPairs(temp, sort_bytes, key, id, (int)n, 0, x->bits);
        if (e == cudaSuccess)
            e = clk->tick(TMAP_SWAP_SORT);
    }
    /* the categories: the heads counted (run), where each starts */
    unsigned *run = key.Alternate(), *start = key.Current(), *rex = id.Alternate();
    head = {key.Current(), id.Current(), index, s->k, s->bs, s->has_block, s->shift,
            s->word[s->nwords - 1].hi, s->nfields};
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveSum(temp, scan_bytes,
                                          thrust::make_transform_iterator(at, head), run, (int)n);
    if (e == cudaSuccess) {
        swap_start_kernel<<<blocks_for(n), THREADS>>>(run, n, start);
        e = cudaGetLastError();
    }
    unsigned nruns = 0;
    if (e == cudaSuccess)
        e = cudaMemcpy(&nruns, run + n - 1, 4, cudaMemcpyDeviceToHost);
    rem = {start, run + n - 1};
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(temp, rex_bytes, thrust::make_transform_iterator(at, rem),
                                          rex, (int)nruns + 1);
    if (e == cudaSuccess)
        e = clk->tick(TMAP_SWAP_RUNS);
    if (e == cudaSuccess) {
        swap_place_kernel<<<blocks_for(n), THREADS>>>(id.Current(), run, start, rex, n, s->bs,
                                                      perm);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = clk->tick(TMAP_SWAP_PLACE);
    if (clk->steps)
        swap_floor(s, nruns, clk->steps);
    cudaError_t f = cudaFree(p.base); /* waits for the device */
    if (f == cudaSuccess)
        f = clk->tick(TMAP_SWAP_FREE);
    return e == cudaSuccess ? f : e;
}

static tmap_status swap_run(uint64_t index, size_t nthreads, size_t per_thread, size_t nelems,
                            size_t elem_bytes, size_t block_size, uint64_t perm,
                            tmap_gpu_swap_steps *steps, const char *fn, tmap_error *err)
{
    tmap_status st = check(nthreads, per_thread, nelems, fn, err);
    if (st)
        return st;
    if (!elem_bytes || elem_bytes & (elem_bytes - 1) || block_size % WARP ||
        nthreads > 0x7ffffffeu)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: element bytes %zu (a power of two), blocks "
                         "of %zu threads (0 or a multiple of 32), threads below 2^31 - 1", fn,
                         elem_bytes, block_size);
    unsigned seg = elem_bytes < 32 ? (unsigned)(32 / elem_bytes) : 1;
    size_t bs = block_size && block_size < nthreads ? block_size : nthreads;
    swap_word *word = (swap_word *)malloc((per_thread + 1) * sizeof *word);
    if (!word)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", fn);
    swap_plan plan;
    swap_plan_make(nthreads, per_thread, nelems, seg, bs, &plan, word);
    swap_clock clk = {steps, {NULL, NULL}};
    cudaError_t e = cudaSuccess;
    if (steps) {
        *steps = (tmap_gpu_swap_steps){};
        e = cudaEventCreate(&clk.ev[0]);
        if (e == cudaSuccess)
            e = cudaEventCreate(&clk.ev[1]);
        if (e == cudaSuccess)
            e = cudaEventRecord(clk.ev[0], 0);
    }
    if (e == cudaSuccess)
        e = swap_steps((const unsigned *)index, &plan, (unsigned *)perm, &clk);
    for (int i = 0; i < 2; i++)
        if (clk.ev[i])
            cudaEventDestroy(clk.ev[i]);
    free(word);
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, fn, "the build");
}

extern "C" tmap_status tmap_gpu_memre_swap(uint64_t index, size_t nthreads, size_t per_thread,
                                           size_t nelems, size_t elem_bytes, size_t block_size,
                                           uint64_t perm, tmap_error *err)
{
    return swap_run(index, nthreads, per_thread, nelems, elem_bytes, block_size, perm, NULL,
                    "tmap_gpu_memre_swap", err);
}

extern "C" tmap_status tmap_gpu_memre_swap_steps(uint64_t index, size_t nthreads,
                                                 size_t per_thread, size_t nelems,
                                                 size_t elem_bytes, size_t block_size,
                                                 uint64_t perm, tmap_gpu_swap_steps *steps,
                                                 tmap_error *err)
{
    if (!steps)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_memre_swap_steps: steps is NULL");
    return swap_run(index, nthreads, per_thread, nelems, elem_bytes, block_size, perm, steps,
                    "tmap_gpu_memre_swap_steps", err);
}

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
 * tmap_memre_swap_sorted): one stable radix sort of the jobs per access
 * on the segment it reads, last access first (then the block), the
 * categories' starts by a maximum scan, and a last stable sort puts each
 * category's residue (beyond its whole warps) after the whole warps.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <stdint.h>

#include "runtime/gpu_warp.cuh"
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

static int bits_for(unsigned long long v)
{
    int b = 0;
    while (v >> b)
        b++;
    return b;
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
    int ebits = bits_for(most), end_bit = ebits + bits_for(nb - 1);
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

__global__ void iota_kernel(unsigned *id, unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i < n)
        id[i] = (unsigned)i;
}

/* key[i]: the segment that job id[i]'s access j reads; j = k: its block. */
__global__ void swap_key_kernel(const unsigned *index, const unsigned *id, unsigned long long n,
                                unsigned long long k, unsigned long long j, unsigned seg,
                                unsigned long long bs, unsigned *key)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i < n)
        key[i] = j < k ? index[id[i] * k + j] / seg : (unsigned)(id[i] / bs);
}

/* run[i] = i where sorted job i starts a category (its block or one of its
 * segments differs from the job before), else 0. */
__global__ void swap_head_kernel(const unsigned *index, const unsigned *id, unsigned long long n,
                                 unsigned long long k, unsigned seg, unsigned long long bs,
                                 unsigned *run)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long a = id[i], b = i ? id[i - 1] : 0;
    bool head = i == 0 || a / bs != b / bs;
    for (unsigned long long j = 0; !head && j < k; j++)
        head = index[a * k + j] / seg != index[b * k + j] / seg;
    run[i] = head ? (unsigned)i : 0;
}

/* After the maximum scan run[i] is where job i's category starts: its
 * last job writes the category's length there. */
__global__ void swap_len_kernel(const unsigned *run, unsigned long long n, unsigned *len)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i < n && (i + 1 == n || run[i + 1] != run[i]))
        len[run[i]] = (unsigned)(i + 1 - run[i]);
}

/* key[i] = job i's block x 2 + whether it is beyond its category's whole
 * warps (a residue). */
__global__ void swap_residue_kernel(const unsigned *id, const unsigned *run, const unsigned *len,
                                    unsigned long long n, unsigned long long bs, unsigned *key)
{
    unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x;
    if (i < n) {
        unsigned r = (unsigned)i - run[i], whole = len[run[i]] / WARP * WARP;
        key[i] = (unsigned)(id[i] / bs) * 2 + (r >= whole);
    }
}

struct max_op {
    __device__ unsigned operator()(unsigned a, unsigned b) const { return a > b ? a : b; }
};

static cudaError_t swap_steps(const unsigned *index, size_t n, size_t k, size_t ne, unsigned seg,
                              size_t bs, unsigned *perm)
{
    size_t sort_bytes = 0, scan_bytes = 0, nb = (n + bs - 1) / bs;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (unsigned *)NULL,
                                                    (unsigned *)NULL, (unsigned *)NULL,
                                                    (unsigned *)NULL, (int)n, 0, 32);
    if (e == cudaSuccess)
        e = cub::DeviceScan::InclusiveScan(NULL, scan_bytes, (unsigned *)NULL, (unsigned *)NULL,
                                           max_op(), (int)n);
    pool p = {NULL, 0};
    size_t temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    if (e == cudaSuccess)
        e = cudaMalloc(&p.base, 6 * n * 4 + temp_bytes + 7 * 64);
    if (e != cudaSuccess)
        return e;
    unsigned *key[2] = {(unsigned *)p.take(n * 4), (unsigned *)p.take(n * 4)};
    unsigned *id[2] = {(unsigned *)p.take(n * 4), (unsigned *)p.take(n * 4)};
    unsigned *run = (unsigned *)p.take(n * 4), *len = (unsigned *)p.take(n * 4);
    void *temp = p.take(temp_bytes);
    int cur = 0, seg_bits = bits_for((ne - 1) / seg | 1), final_bits = bits_for(2 * nb - 1);
    iota_kernel<<<blocks_for(n), THREADS>>>(id[0], n);
    /* LSD: the last access first; the block (most significant) last */
    for (size_t pass = 0; e == cudaSuccess && pass < k + (bs < n); pass++) {
        size_t j = pass < k ? k - 1 - pass : k;
        swap_key_kernel<<<blocks_for(n), THREADS>>>(index, id[cur], n, k, j, seg, bs, key[0]);
        e = cub::DeviceRadixSort::SortPairs(temp, sort_bytes, key[0], key[1], id[cur],
                                            id[1 - cur], (int)n, 0,
                                            j < k ? seg_bits : bits_for(nb - 1));
        cur = 1 - cur;
    }
    if (e == cudaSuccess) {
        swap_head_kernel<<<blocks_for(n), THREADS>>>(index, id[cur], n, k, seg, bs, run);
        e = cub::DeviceScan::InclusiveScan(temp, scan_bytes, run, key[1], max_op(), (int)n);
    }
    if (e == cudaSuccess) {
        swap_len_kernel<<<blocks_for(n), THREADS>>>(key[1], n, len);
        swap_residue_kernel<<<blocks_for(n), THREADS>>>(id[cur], key[1], len, n, bs, key[0]);
        e = cub::DeviceRadixSort::SortPairs(temp, sort_bytes, key[0], run, id[cur], perm, (int)n,
                                            0, final_bits);
    }
    return p.release(e);
}

extern "C" tmap_status tmap_gpu_memre_swap(uint64_t index, size_t nthreads, size_t per_thread,
                                           size_t nelems, size_t elem_bytes, size_t block_size,
                                           uint64_t perm, tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_swap";
    tmap_status st = check(nthreads, per_thread, nelems, fn, err);
    if (st)
        return st;
    if (!elem_bytes || elem_bytes & (elem_bytes - 1) || block_size % WARP)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: element bytes %zu (a power of two), blocks "
                         "of %zu threads (0 or a multiple of 32)", fn, elem_bytes, block_size);
    unsigned seg = elem_bytes < 32 ? (unsigned)(32 / elem_bytes) : 1;
    cudaError_t e = swap_steps((const unsigned *)index, nthreads, per_thread, nelems, seg,
                               block_size && block_size < nthreads ? block_size : nthreads,
                               (unsigned *)perm);
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, fn, "the build");
}

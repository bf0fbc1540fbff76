/*
 * gpu_sectors.cu -- the transaction model of an irregular reference on
 * the GPU (threadmap/runtime.h, tmap_gpu_sectors): one CUDA warp per warp
 * request of the modelled launch; __match_any_sync finds the distinct
 * sectors and elements of its 32 lanes, the first lane of each marks the
 * launch's footprint bitmap; per-warp counts are summed by a CUB block
 * reduction and one atomic add per block.  The thread blocks' distinct
 * sectors: whole blocks at a time (a chunk of about CHUNK accesses), each
 * access's (block, sector) key sorted by CUB's radix sort, the keys that
 * differ from their predecessor counted.  The CPU's tmap_sectors_count is
 * the reference it equals.
 */
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>

#include "runtime/gpu_util.cuh"
#include "runtime/gpu_warp.cuh"
#include "threadmap/runtime.h"
extern "C" {
#include "common/base.h"
}

enum { THREADS = 256, WARP = 32 };
/* accesses whose block keys are sorted at once (whole blocks; at least one) */
static const unsigned long long CHUNK = 1ull << 25;

/* The counts, summed in place, and the lowest access (t * per_thread + j)
 * whose index or perm entry is out of range. */
struct totals {
    unsigned long long sectors, min_sectors, footprint, bad, block_keys;
};

struct geometry {
    const uint32_t *index, *perm;
    unsigned long long nthreads, per_thread, nelems;
    unsigned long long elem_bytes, sector_bytes;
};

__global__ void sectors_kernel(geometry g, unsigned *bitmap, totals *out)
{
    typedef cub::BlockReduce<unsigned long long, THREADS> reduce;
    __shared__ typename reduce::TempStorage temp;
    unsigned lane = threadIdx.x % WARP;
    unsigned long long warps = (g.nthreads + WARP - 1) / WARP, requests = warps * g.per_thread;
    unsigned long long step = (unsigned long long)gridDim.x * (THREADS / WARP);
    unsigned long long sectors = 0, packed = 0;
    /* every lane of a warp runs the same iterations: the loop is warp-uniform */
    for (unsigned long long r = blockIdx.x * (THREADS / WARP) + threadIdx.x / WARP; r < requests;
         r += step) {
        unsigned long long w = r / g.per_thread, j = r % g.per_thread, slot = w * WARP + lane;
        bool active = slot < g.nthreads;
        unsigned long long e = 0, i = 0;
        if (active) {
            unsigned long long t = g.perm ? g.perm[slot] : slot;
            i = t * g.per_thread + j;
            e = t < g.nthreads && g.index ? g.index[i] : i;
            if (t >= g.nthreads || e >= g.nelems) {
                atomicMin(&out->bad, i);
                active = false;
            }
        }
        bool first_elem, first_sector;
        unsigned de = tmap_warp_distinct(e, active, &first_elem);
        unsigned long long per = g.elem_bytes >= g.sector_bytes ? g.elem_bytes / g.sector_bytes : 1;
        unsigned long long key =
            g.elem_bytes >= g.sector_bytes ? e : e * g.elem_bytes / g.sector_bytes;
        unsigned ds = tmap_warp_distinct(key, active, &first_sector);
        if (lane == 0) {
            sectors += g.elem_bytes >= g.sector_bytes ? de * per : ds;
            packed += (de * g.elem_bytes + g.sector_bytes - 1) / g.sector_bytes;
        }
        for (unsigned long long b = key * per; first_sector && b < key * per + per; b++)
            atomicOr(&bitmap[b / 32], 1u << (b % 32));
    }
    unsigned long long s = reduce(temp).Sum(sectors);
    __syncthreads();
    unsigned long long p = reduce(temp).Sum(packed);
    if (threadIdx.x == 0) {
        atomicAdd(&out->sectors, s);
        atomicAdd(&out->min_sectors, p);
    }
}

__global__ void popcount_kernel(const unsigned *bitmap, size_t words, totals *out)
{
    typedef cub::BlockReduce<unsigned long long, THREADS> reduce;
    __shared__ typename reduce::TempStorage temp;
    unsigned long long n = 0;
    for (size_t i = blockIdx.x * (size_t)THREADS + threadIdx.x; i < words;
         i += (size_t)gridDim.x * THREADS)
        n += __popc(bitmap[i]);
    unsigned long long total = reduce(temp).Sum(n);
    if (threadIdx.x == 0)
        atomicAdd(&out->footprint, total);
}

/* Access a of the slots [first, first + nslots): its key (element or
 * sector, as the warp count's) under its block's number in the chunk,
 * bits 32 and up.  An out-of-range index or perm entry (reported by
 * sectors_kernel) counts as element 0. */
__global__ void block_keys_kernel(geometry g, unsigned long long first, unsigned long long nslots,
                                  unsigned long long block, unsigned long long *keys)
{
    unsigned long long n = nslots * g.per_thread;
    for (unsigned long long a = blockIdx.x * (unsigned long long)THREADS + threadIdx.x; a < n;
         a += (unsigned long long)gridDim.x * THREADS) {
        unsigned long long s = first + a / g.per_thread, j = a % g.per_thread, e = 0;
        unsigned long long t = g.perm ? g.perm[s] : s;
        if (t < g.nthreads)
            e = g.index ? g.index[t * g.per_thread + j] : t * g.per_thread + j;
        e = e < g.nelems ? e : 0;
        unsigned long long key =
            g.elem_bytes >= g.sector_bytes ? e : e * g.elem_bytes / g.sector_bytes;
        keys[a] = (s - first) / block << 32 | key;
    }
}

/* The sorted keys that differ from their predecessor, added to block_keys. */
__global__ void distinct_kernel(const unsigned long long *keys, unsigned long long n, totals *out)
{
    typedef cub::BlockReduce<unsigned long long, THREADS> reduce;
    __shared__ typename reduce::TempStorage temp;
    unsigned long long d = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)THREADS + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * THREADS)
        d += i == 0 || keys[i] != keys[i - 1];
    unsigned long long total = reduce(temp).Sum(d);
    if (threadIdx.x == 0)
        atomicAdd(&out->block_keys, total);
}


/* The blocks' distinct keys into dev->block_keys: chunks of whole blocks,
 * each chunk's keys sorted and their distinct ones counted. */
static cudaError_t count_blocks(const geometry &g, unsigned long long block, int sms, totals *dev)
{
    unsigned long long per_block = block * g.per_thread;
    unsigned long long nblocks = (g.nthreads + block - 1) / block;
    unsigned long long chunk = CHUNK / per_block ? CHUNK / per_block : 1;
    chunk = chunk < nblocks ? chunk : nblocks;
    unsigned long long cap = chunk * block * g.per_thread;
    if (cap > (unsigned long long)INT_MAX)
        return cudaErrorInvalidValue; /* one block's accesses beyond CUB's int count */
    int end_bit = 32 + gpu_bits(chunk - 1);
    unsigned long long *keys[2] = {NULL, NULL};
    void *temp = NULL;
    size_t temp_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortKeys(NULL, temp_bytes, keys[0], keys[1], (int)cap,
                                                   0, end_bit);
    if (e == cudaSuccess)
        e = cudaMalloc(&keys[0], cap * sizeof **keys);
    if (e == cudaSuccess)
        e = cudaMalloc(&keys[1], cap * sizeof **keys);
    if (e == cudaSuccess)
        e = cudaMalloc(&temp, temp_bytes ? temp_bytes : 1);
    for (unsigned long long b = 0; e == cudaSuccess && b < nblocks; b += chunk) {
        unsigned long long first = b * block;
        unsigned long long nslots = g.nthreads - first < chunk * block ? g.nthreads - first
                                                                      : chunk * block;
        unsigned long long n = nslots * g.per_thread;
        block_keys_kernel<<<sms * 8, THREADS>>>(g, first, nslots, block, keys[0]);
        e = cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys[0], keys[1], (int)n, 0,
                                           end_bit);
        if (e == cudaSuccess)
            distinct_kernel<<<sms * 4, THREADS>>>(keys[1], n, dev);
        if (e == cudaSuccess)
            e = cudaGetLastError();
    }
    cudaFree(keys[0]), cudaFree(keys[1]), cudaFree(temp);
    return e;
}


static int pow2(size_t v) { return v && !(v & (v - 1)); }

/* Launches the kernels on the legacy stream and reads the totals back. */
static cudaError_t count(const geometry &g, unsigned long long block, unsigned *bitmap,
                         size_t words, totals *dev, totals *host)
{
    int device = 0, sms = 1;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    totals zero = {0, 0, 0, ~0ull, 0};
    if (e == cudaSuccess)
        e = cudaMemcpy(dev, &zero, sizeof zero, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemset(bitmap, 0, words * sizeof *bitmap);
    if (e != cudaSuccess)
        return e;
    sectors_kernel<<<sms * 8, THREADS>>>(g, bitmap, dev);
    popcount_kernel<<<sms * 4, THREADS>>>(bitmap, words, dev);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = count_blocks(g, block, sms, dev);
    if (e == cudaSuccess)
        e = cudaMemcpy(host, dev, sizeof *host, cudaMemcpyDeviceToHost);
    return e;
}

extern "C" tmap_status tmap_gpu_sectors(tmap_cuda *c, uint64_t index, uint64_t perm,
                                        size_t nthreads, size_t per_thread, size_t elem_bytes,
                                        size_t nelems, size_t sector_bytes,
                                        size_t block_size, tmap_sector_counts *out,
                                        uint64_t *l2_bytes, tmap_error *err)
{
    if (!c || !out || !nthreads || nthreads > (1ull << 32) || !per_thread ||
        per_thread > (1ull << 40) / nthreads || !pow2(elem_bytes) || !pow2(sector_bytes) ||
        !nelems || nelems > (1ull << 32) || !block_size || block_size % WARP)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_sectors: bad arguments (threads in "
                         "[1, 2^32], threads x per_thread at most 2^40, power-of-two element "
                         "and sector sizes, 1 to 2^32 elements, blocks of whole warps)");
    if ((unsigned long long)block_size * per_thread > (unsigned long long)INT_MAX)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "tmap_gpu_sectors: a block's %zu x %zu "
                         "accesses exceed what one CUB sort counts (2^31 - 1)", block_size,
                         per_thread);
    geometry g = {(const uint32_t *)(uintptr_t)index, (const uint32_t *)(uintptr_t)perm,
                  nthreads, per_thread, nelems, elem_bytes, sector_bytes};
    size_t nsectors = (nelems * elem_bytes + sector_bytes - 1) / sector_bytes;
    size_t words = (nsectors + 31) / 32;
    unsigned *bitmap = NULL;
    totals *dev = NULL, host;
    cudaError_t e = cudaMalloc(&bitmap, words * sizeof *bitmap);
    if (e == cudaSuccess)
        e = cudaMalloc(&dev, sizeof *dev);
    if (e == cudaSuccess)
        e = count(g, block_size, bitmap, words, dev, &host);
    cudaFree(bitmap);
    cudaFree(dev);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "tmap_gpu_sectors", "counting");
    if (host.bad != ~0ull)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_gpu_sectors: access %llu: the index is "
                         "not below the %zu elements, or perm names no thread", host.bad, nelems);
    unsigned long long per = elem_bytes >= sector_bytes ? elem_bytes / sector_bytes : 1;
    *out = (tmap_sector_counts){(nthreads + WARP - 1) / WARP * per_thread, host.sectors,
                                host.min_sectors, host.footprint, host.block_keys * per};
    int device = 0, l2 = 0;
    if (l2_bytes && (e = cudaGetDevice(&device)) == cudaSuccess)
        e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "tmap_gpu_sectors", "cudaDeviceGetAttribute(L2)");
    if (l2_bytes)
        *l2_bytes = (uint64_t)l2;
    return TMAP_OK;
}

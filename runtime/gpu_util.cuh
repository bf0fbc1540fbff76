/*
 * gpu_util.cuh -- what the runtime's CUDA files share: a failed CUDA
 * runtime call as a tmap_status naming the call (and the function); the
 * bits a radix sort's key needs; the argument check of a
 * create over nthreads (CUB's int offsets); allocating and freeing a list
 * of device buffers.
 */
#ifndef TMAP_RUNTIME_GPU_UTIL_CUH
#define TMAP_RUNTIME_GPU_UTIL_CUH

#include <cuda_runtime.h>

extern "C" {
#include "common/base.h"
}

static inline tmap_status cuda_fail(tmap_error *err, cudaError_t e, const char *call)
{
    return tmap_fail(err, TMAP_ERR_CUDA, "%s: %s (%s)", call, cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

/* The same, naming the public function fn whose step `call` failed. */
static inline tmap_status cuda_fail(tmap_error *err, cudaError_t e, const char *fn,
                                    const char *call)
{
    return tmap_fail(err, TMAP_ERR_CUDA, "%s: %s: %s (%s)", fn, call, cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

/* Bits to hold v (0 for 0): a radix sort's end bit. */
static inline int gpu_bits(unsigned long long v)
{
    int b = 0;
    while (v >> b)
        b++;
    return b;
}

/* Returns from the calling function (which has `err`) when call fails. */
#define TMAP_CU(call, name)                                                            \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess)                                                         \
            return cuda_fail(err, e_, name);                                           \
    } while (0)

/* The arguments of `fn`'s create: c and out given (*out cleared), 1 to
 * 2^31-1 threads (CUB's int offsets). */
static inline tmap_status gpu_create_check(const void *c, void *out, size_t nthreads,
                                           const char *fn, tmap_error *err)
{
    if (out)
        *(void **)out = NULL;
    if (!c || !out || !nthreads || nthreads > 0x7fffffffu)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %s", fn,
                         !c || !out ? "an argument is NULL"
                                    : "threads must be in [1, 2^31-1] (CUB's int offsets)");
    return TMAP_OK;
}

/* cudaMalloc of *bufs[i], sizes[i] bytes (at least 1), i < n, up to the
 * first failure. */
static inline cudaError_t gpu_malloc_all(void **const bufs[], const size_t sizes[], size_t n)
{
    cudaError_t e = cudaSuccess;
    for (size_t i = 0; e == cudaSuccess && i < n; i++)
        e = cudaMalloc(bufs[i], sizes[i] ? sizes[i] : 1);
    return e;
}

/* cudaFree of each bufs[i] that is not NULL, i < n. */
static inline void gpu_free_all(void *const bufs[], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (bufs[i])
            cudaFree(bufs[i]);
}

#endif

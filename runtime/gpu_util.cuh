/*
 * gpu_util.cuh -- what the runtime's CUDA files share: a failed CUDA
 * runtime call as a tmap_status naming the call.
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

/* Returns from the calling function (which has `err`) when call fails. */
#define TMAP_CU(call, name)                                                            \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess)                                                         \
            return cuda_fail(err, e_, name);                                           \
    } while (0)

#endif

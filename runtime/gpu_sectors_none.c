/*
 * gpu_sectors_none.c -- the GPU transaction count where the library was
 * built without nvcc (gpu_sectors.cu needs it for CUB): it says so.
 */
#include "threadmap/runtime.h"
#include "common/base.h"

tmap_status tmap_gpu_sectors(tmap_cuda *c, uint64_t index, uint64_t perm, size_t nthreads,
                             size_t per_thread, size_t elem_bytes, size_t nelems,
                             size_t sector_bytes, size_t block_size, tmap_sector_counts *out,
                             uint64_t *l2_bytes, tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "tmap_gpu_sectors: threadmap was built without "
                     "nvcc (rebuild with the CUDA toolkit's nvcc found by CMake)");
}

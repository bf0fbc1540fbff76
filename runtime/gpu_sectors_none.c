/*
 * gpu_sectors_none.c -- the GPU transaction count where the library was
 * built without gpu_sectors.cu (runtime/gpu_none.h says why): every call says so.
 */
#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/gpu_none.h"

tmap_status tmap_gpu_sectors(tmap_cuda *c, uint64_t index, uint64_t perm, size_t nthreads,
                             size_t per_thread, size_t elem_bytes, size_t nelems,
                             size_t sector_bytes, size_t block_size, tmap_sector_counts *out,
                             uint64_t *l2_bytes, tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "tmap_gpu_sectors: " TMAP_GPU_NONE_WHY);
}

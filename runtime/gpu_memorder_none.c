/*
 * gpu_memorder_none.c -- the GPU builds of the ordered layouts where the library was
 * built without gpu_memorder.cu (runtime/gpu_none.h says why): every call says so.
 */
#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/gpu_none.h"

static tmap_status none(const char *fn, tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: " TMAP_GPU_NONE_WHY, fn);
}

tmap_status tmap_gpu_memre_relabel(uint64_t index, size_t nthreads, size_t per_thread,
                                   uint64_t order, size_t nelems, uint64_t q, void *stream,
                                   tmap_error *err)
{
    return none("tmap_gpu_memre_relabel", err);
}

tmap_status tmap_gpu_memre_morton(uint64_t xyz, size_t stride, size_t n, uint64_t order,
                                  void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_morton", err);
}

tmap_status tmap_gpu_memre_pad(uint64_t index, size_t nthreads, size_t nelems, size_t elem_bytes,
                               size_t sector_bytes, uint64_t from, uint64_t q, uint64_t perm,
                               uint64_t nout, void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_pad", err);
}

tmap_status tmap_gpu_memre_rcm(uint64_t rowptr, uint64_t col, size_t n, uint64_t order,
                               void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_rcm", err);
}

tmap_status tmap_gpu_memre_rcm_timed(uint64_t rowptr, uint64_t col, size_t n, uint64_t order,
                                     tmap_gpu_rcm_steps *steps, void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_rcm_timed", err);
}

tmap_status tmap_gpu_memre_rcm_floors(uint64_t rowptr, uint64_t col, size_t n,
                                      tmap_gpu_rcm_steps *steps, void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_rcm_floors", err);
}

tmap_status tmap_gpu_memre_follow(uint64_t row, size_t nthreads, uint64_t order, size_t nrows,
                                  uint64_t perm, void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_follow", err);
}

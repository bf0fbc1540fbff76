/*
 * gpu_memre_none.c -- the GPU layout builds where the library was
 * built without gpu_memre.cu (runtime/gpu_none.h says why): every call says so.
 */
#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/gpu_none.h"

static tmap_status none(const char *fn, tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: " TMAP_GPU_NONE_WHY, fn);
}

tmap_status tmap_gpu_memre_duplicate(uint64_t index, size_t nthreads, size_t per_thread,
                                     uint64_t from, uint64_t q, void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_duplicate", err);
}

tmap_status tmap_gpu_memre_reorder(uint64_t index, size_t nthreads, size_t per_thread,
                                   size_t nelems, uint64_t from, uint64_t q, tmap_error *err)
{
    return none("tmap_gpu_memre_reorder", err);
}

tmap_status tmap_gpu_memre_gather(uint64_t from, size_t nout, uint64_t src, size_t elem_bytes,
                                  uint64_t dst, void *stream, tmap_error *err)
{
    return none("tmap_gpu_memre_gather", err);
}

tmap_status tmap_gpu_memre_partial(uint64_t index, size_t nthreads, size_t per_thread,
                                   size_t nelems, size_t elem_bytes, double fraction,
                                   uint64_t from, uint64_t q, size_t *nout, tmap_error *err)
{
    return none("tmap_gpu_memre_partial", err);
}

tmap_status tmap_gpu_memre_share(uint64_t index, uint64_t perm, size_t nthreads,
                                 size_t per_thread, size_t block_size, uint64_t from, uint64_t q,
                                 uint64_t start, size_t *nout, tmap_error *err)
{
    return none("tmap_gpu_memre_share", err);
}

tmap_status tmap_gpu_memre_swap(uint64_t index, size_t nthreads, size_t per_thread,
                                size_t nelems, size_t elem_bytes, size_t block_size,
                                uint64_t perm, tmap_error *err)
{
    return none("tmap_gpu_memre_swap", err);
}

tmap_status tmap_gpu_memre_swap_steps(uint64_t index, size_t nthreads, size_t per_thread,
                                      size_t nelems, size_t elem_bytes, size_t block_size,
                                      uint64_t perm, tmap_gpu_swap_steps *steps, tmap_error *err)
{
    return none("tmap_gpu_memre_swap_steps", err);
}

/*
 * gpu_regroup_none.c -- the GPU regroup path where the library was
 * built without gpu_regroup.cu (runtime/gpu_none.h says why): every call says so.
 */
#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/gpu_none.h"

static tmap_status none(tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "the GPU regroup path: " TMAP_GPU_NONE_WHY);
}

tmap_status tmap_gpu_regroup_create(tmap_cuda *c, size_t nthreads, tmap_gpu_regroup **out,
                                    tmap_error *err)
{
    if (out)
        *out = NULL;
    return none(err);
}

void tmap_gpu_regroup_free(tmap_gpu_regroup *g) {}

uint64_t tmap_gpu_regroup_cost_ptr(const tmap_gpu_regroup *g) { return 0; }

tmap_status tmap_gpu_regroup_model(tmap_gpu_regroup *g, const double *coef, const double *lat,
                                   size_t nblocks, size_t nfeatures, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_cost(tmap_gpu_regroup *g, uint64_t features, void *stream,
                                  tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_run(tmap_gpu_regroup *g, uint64_t features, int descending,
                                 size_t block_size, uint64_t perm, void *stream,
                                 tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_run_deal(tmap_gpu_regroup *g, uint64_t features, size_t block_size,
                                      uint64_t perm, void *stream, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_sort(tmap_gpu_regroup *g, uint64_t key, int descending,
                                  size_t block_size, uint64_t perm, void *stream,
                                  tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_sync(tmap_gpu_regroup *g, void *stream, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_deal(tmap_gpu_regroup *g, uint64_t sorted, size_t block_size,
                                  uint64_t perm, void *stream, tmap_error *err)
{
    return none(err);
}

void *tmap_gpu_regroup_side(const tmap_gpu_regroup *g) { return NULL; }

tmap_status tmap_gpu_regroup_fork(tmap_gpu_regroup *g, void *stream, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_mark(tmap_gpu_regroup *g, tmap_error *err) { return none(err); }

tmap_status tmap_gpu_regroup_done(tmap_gpu_regroup *g, int *done, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_join(tmap_gpu_regroup *g, void *stream, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_regroup_copy(tmap_gpu_regroup *g, uint64_t dst, uint64_t src, size_t bytes,
                                  void *stream, tmap_error *err)
{
    return none(err);
}

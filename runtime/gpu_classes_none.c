/*
 * gpu_classes_none.c -- value classes on the GPU where the library was
 * built without gpu_classes.cu (runtime/gpu_none.h says why): every call says so.
 */
#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/gpu_none.h"

static tmap_status none(tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "the GPU value classes: " TMAP_GPU_NONE_WHY);
}

tmap_status tmap_gpu_classes_create(tmap_cuda *c, size_t nthreads, tmap_gpu_classes **out,
                                    tmap_error *err)
{
    if (out)
        *out = NULL;
    return none(err);
}

void tmap_gpu_classes_free(tmap_gpu_classes *g) {}

tmap_status tmap_gpu_classes_table(tmap_gpu_classes *g, uint64_t key, size_t nclasses,
                                   uint32_t *size, void *stream, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_classes_expand(tmap_gpu_classes *g, const uint32_t *runs, size_t nruns,
                                    uint64_t perm, void *stream, tmap_error *err)
{
    return none(err);
}

tmap_status tmap_gpu_classes_lam(tmap_gpu_classes *g, uint64_t key, size_t nclasses,
                                 uint64_t perm, void *stream, tmap_error *err)
{
    return none(err);
}

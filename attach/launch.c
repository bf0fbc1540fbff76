/*
 * launch.c (attach) -- profiling one intercepted launch: the counting
 * kernel loaded in the application's current context, the features copied
 * from the arguments, the instrumented kernel launched through the
 * application's own driver entry point (same geometry, shared memory,
 * stream, parameters), waited for, and its counters read.
 */
#include <stdlib.h>
#include <string.h>

#include "attach/launch.h"
#include "common/base.h"
#include "runtime/cuda.h"

const void *tmap_attach_param_value(const tmap_attach_call *c, const tmap_param *p, size_t i)
{
    if (c->params)
        return c->params[i];
    for (size_t k = 0; c->extra && c->extra[k] != CU_LAUNCH_PARAM_END; k += 2)
        if (c->extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            return (const char *)c->extra[k + 1] + p->offset;
    return NULL;
}

/* Element i of an array of `type` (i8 u8 i32 u32 i64 u64 f32 f64) as a double. */
static double element(const void *base, size_t i, const char *type)
{
    const char *p = (const char *)base;
    if (!strcmp(type, "i8")) { int8_t v; memcpy(&v, p + i, 1); return v; }
    if (!strcmp(type, "u8")) { uint8_t v; memcpy(&v, p + i, 1); return v; }
    if (!strcmp(type, "i32")) { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    if (!strcmp(type, "u32")) { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    if (!strcmp(type, "i64")) { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    if (!strcmp(type, "u64")) { uint64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    if (!strcmp(type, "f32")) { float v; memcpy(&v, p + 4 * i, 4); return v; }
    double v;
    memcpy(&v, p + 8 * i, 8);
    return v;
}

/* Column k of the feature matrix: elements t + offset of the array that
 * pointer parameter f->arg holds. */
static tmap_status read_feature(tmap_cuda *cuda, const tmap_attach_call *c,
                                const tmap_attach_result *r, const tmap_attach_feature *f,
                                size_t k, size_t n, tmap_error *err)
{
    if (f->arg >= r->nparams || r->params[f->arg].size != 8)
        return tmap_fail(err, TMAP_ERR_INVALID, "feature '%s': arg%u is not a pointer parameter "
                         "(the kernel has %zu parameters)", f->name, f->arg, r->nparams);
    const void *v = tmap_attach_param_value(c, &r->params[f->arg], f->arg);
    uint64_t ptr = 0;
    if (v)
        memcpy(&ptr, v, 8);
    if (!ptr)
        return tmap_fail(err, TMAP_ERR_INVALID, "feature '%s': arg%u is NULL", f->name, f->arg);
    void *host = malloc(n * f->elem_size);
    if (!host)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for feature '%s'", f->name);
    uint64_t from = ptr + (uint64_t)((int64_t)f->offset * (int64_t)f->elem_size);
    tmap_status st = tmap_cuda_download(cuda, host, from, n * f->elem_size, err);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "feature '%s': elements [%ld, %ld) of arg%u", f->name, f->offset,
                          f->offset + (long)n, f->arg);
    for (size_t t = 0; st == TMAP_OK && t < n; t++)
        r->features[t * r->nfeatures + k] = element(host, t, f->type);
    free(host);
    return st;
}

static tmap_status read_features(tmap_cuda *cuda, const tmap_attach_call *c,
                                 tmap_attach_result *r, const tmap_attach_feature *f, size_t nf,
                                 size_t n, tmap_error *err)
{
    if (!nf)
        return TMAP_OK;
    r->nfeatures = nf;
    if (!(r->features = malloc(n * nf * sizeof *r->features)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu x %zu features", n, nf);
    tmap_status st = tmap_cuda_check(cuda, cuda->api.ctx_synchronize(), "cuCtxSynchronize", err);
    for (size_t k = 0; st == TMAP_OK && k < nf; k++)
        st = read_feature(cuda, c, r, &f[k], k, n, err);
    return st;
}

enum { SHARED_DEFAULT_MAX = 48 * 1024 }; /* dynamic shared memory without opting in */

static tmap_status run_counting(tmap_cuda *cuda, tmap_counting *k, const tmap_attach_call *c,
                                int *launched, CUresult *cu, tmap_error *err)
{
    CUfunction f = tmap_kernel_function(tmap_counting_kernel(k));
    tmap_status st = TMAP_OK;
    if (c->shared_bytes > SHARED_DEFAULT_MAX) /* what the application set on its own */
        st = tmap_cuda_check(cuda, cuda->api.func_set_attribute(
                                       f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       (int)c->shared_bytes),
                             "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", err);
    if (st != TMAP_OK)
        return st;
    *cu = c->relaunch(c, f);
    /* a launch refused (resources...) ran nothing: the original still may */
    *launched = *cu == CUDA_SUCCESS;
    st = tmap_cuda_check(cuda, *cu, "cuLaunchKernel (instrumented)", err);
    if (st == TMAP_OK)
        st = tmap_cuda_check(cuda, cuda->api.stream_synchronize(c->stream), "cuStreamSynchronize",
                             err);
    return st;
}

tmap_status tmap_attach_launch(tmap_cuda *cuda, const char *ptx, const char *entry,
                               const tmap_attach_call *c, const tmap_attach_feature *f,
                               size_t nf, tmap_attach_result *res, int *launched, CUresult *cu,
                               tmap_error *err)
{
    memset(res, 0, sizeof *res);
    *launched = 0;
    tmap_launch l = {.grid = {c->grid[0], c->grid[1], c->grid[2]},
                     .block = {c->block[0], c->block[1], c->block[2]},
                     .shared_bytes = c->shared_bytes};
    tmap_status st = tmap_attach_params(ptx, entry, &res->params, &res->nparams, err);
    if (st == TMAP_OK)
        st = read_features(cuda, c, res, f, nf, (size_t)tmap_launch_threads(&l), err);
    if (st == TMAP_OK)
        st = tmap_counting_load(cuda, ptx, entry, &l, 1, &res->counting, err);
    if (st == TMAP_OK)
        st = run_counting(cuda, res->counting, c, launched, cu, err);
    if (st == TMAP_OK)
        st = tmap_counting_read(res->counting, &res->bbv, err);
    if (st != TMAP_OK)
        tmap_attach_result_free(res);
    return st;
}

void tmap_attach_result_free(tmap_attach_result *r)
{
    tmap_bbv_free(&r->bbv);
    tmap_counting_free(r->counting);
    free(r->params);
    free(r->features);
    memset(r, 0, sizeof *r);
}

/*
 * kernel.c -- loading PTX into a module (with the JIT's logs on failure),
 * launching one kernel of it, timing launches with CUDA events, and the
 * kernel's register and occupancy figures.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "instrument/nvrtc.h"
#include "runtime/cuda.h"

struct tmap_kernel {
    tmap_cuda *cuda;
    CUmodule module;
    CUfunction function;
    char *name;
};

/* Finds the `.version X.Y` directive: the first line, after blank and `//`
 * comment lines, that starts with it.  Returns its offset or -1. */
static long version_offset(const char *ptx)
{
    const char *p = ptx;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!strncmp(p, ".version", 8))
            return (long)(p - ptx);
        if (strncmp(p, "//", 2))
            return -1;
        p = strchr(p, '\n');
        if (!p)
            return -1;
    }
    return -1;
}

/* A copy of the PTX whose .version is at most what the driver loads. */
static char *cap_version(const char *ptx, int driver_version)
{
    int maj, min, have_maj, have_min, used;
    tmap_ptx_version_for_driver(driver_version, &maj, &min);
    long off = version_offset(ptx);
    if (off < 0 || sscanf(ptx + off, ".version %d.%d%n", &have_maj, &have_min, &used) != 2 ||
        have_maj * 10 + have_min <= maj * 10 + min) {
        size_t n = strlen(ptx) + 1;
        char *copy = malloc(n);
        if (copy)
            memcpy(copy, ptx, n);
        return copy;
    }
    tmap_buf b = {0};
    tmap_buf_put(&b, ptx, (size_t)off);
    tmap_buf_printf(&b, ".version %d.%d", maj, min);
    tmap_buf_puts(&b, ptx + off + used);
    if (b.oom) {
        tmap_buf_free(&b);
        return NULL;
    }
    return b.data;
}

enum { JIT_LOG = 16384 };

static tmap_status load_module(tmap_cuda *c, const char *ptx, CUmodule *mod,
                               tmap_error *err)
{
    char *text = cap_version(ptx, c->driver_version);
    char *errlog = calloc(1, JIT_LOG), *infolog = calloc(1, JIT_LOG);
    if (!text || !errlog || !infolog) {
        free(text), free(errlog), free(infolog);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory loading PTX");
    }
    CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *val[] = {errlog, (void *)(uintptr_t)JIT_LOG, infolog, (void *)(uintptr_t)JIT_LOG};
    CUresult r = c->api.module_load_data_ex(mod, text, 4, opt, val);
    tmap_status st = tmap_cuda_check(c, r, "cuModuleLoadDataEx", err);
    if (st != TMAP_OK && err) {
        errlog[JIT_LOG - 1] = '\0';
        size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n, ": JIT log: %s",
                 errlog[0] ? errlog : "(empty)");
    }
    free(text), free(errlog), free(infolog);
    return st;
}

tmap_status tmap_kernel_load(tmap_cuda *c, const char *ptx, const char *kernel,
                             tmap_kernel **out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, ptx, kernel, out);
    if (absent)
        return absent;
    *out = NULL;
    tmap_kernel *k = calloc(1, sizeof *k);
    size_t n = strlen(kernel) + 1;
    if (!k || !(k->name = malloc(n))) {
        free(k);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    memcpy(k->name, kernel, n);
    k->cuda = c;
    tmap_status st = load_module(c, ptx, &k->module, err);
    if (st == TMAP_OK) {
        st = tmap_cuda_check(c, c->api.module_get_function(&k->function, k->module, kernel),
                             "cuModuleGetFunction", err);
        if (st != TMAP_OK)
            tmap_error_prefix(err, "kernel '%s'", kernel);
    }
    if (st != TMAP_OK) {
        tmap_kernel_free(k);
        return st;
    }
    *out = k;
    return TMAP_OK;
}

tmap_cuda *tmap_kernel_cuda(const tmap_kernel *k) { return k->cuda; }

void tmap_kernel_free(tmap_kernel *k)
{
    if (!k)
        return;
    if (k->module)
        k->cuda->api.module_unload(k->module);
    free(k->name);
    free(k);
}

tmap_status tmap_kernel_global(tmap_kernel *k, const char *name, uint64_t *ptr,
                               size_t *bytes, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, k, name, ptr);
    if (absent)
        return absent;
    CUdeviceptr p = 0;
    size_t n = 0;
    tmap_status st = tmap_cuda_check(k->cuda, k->cuda->api.module_get_global(&p, &n, k->module, name),
                                     "cuModuleGetGlobal", err);
    if (st != TMAP_OK) {
        tmap_error_prefix(err, "module variable '%s'", name);
        return st;
    }
    *ptr = (uint64_t)p;
    if (bytes)
        *bytes = n;
    return TMAP_OK;
}

uint64_t tmap_launch_blocks(const tmap_launch *l)
{
    if (!l)
        return 0;
    return (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
}

unsigned tmap_launch_block_size(const tmap_launch *l)
{
    if (!l)
        return 0;
    return l->block[0] * l->block[1] * l->block[2];
}

uint64_t tmap_launch_threads(const tmap_launch *l)
{
    return tmap_launch_blocks(l) * tmap_launch_block_size(l);
}

tmap_status tmap_kernel_enqueue(tmap_kernel *k, const tmap_launch *l, void *stream,
                                tmap_error *err)
{
    if (!k || !l)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_kernel_enqueue: %s is NULL",
                         k ? "the launch" : "the kernel");
    const tmap_cuda_api *a = &k->cuda->api;
    tmap_status st = tmap_cuda_check(
        k->cuda,
        a->launch_kernel(k->function, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                         l->block[1], l->block[2], l->shared_bytes, (CUstream)stream, l->args,
                         NULL),
        "cuLaunchKernel", err);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "kernel '%s'", k->name);
    return st;
}

static tmap_status launch(tmap_kernel *k, const tmap_launch *l, tmap_error *err)
{
    return tmap_kernel_enqueue(k, l, NULL, err);
}

tmap_status tmap_kernel_run(tmap_kernel *k, const tmap_launch *l, tmap_error *err)
{
    tmap_status st = launch(k, l, err);
    if (st == TMAP_OK) {
        st = tmap_cuda_check(k->cuda, k->cuda->api.ctx_synchronize(), "cuCtxSynchronize", err);
        if (st != TMAP_OK)
            tmap_error_prefix(err, "kernel '%s'", k->name);
    }
    return st;
}

tmap_status tmap_kernel_time(tmap_kernel *k, const tmap_launch *l, int warmup, int reps,
                             float *ms, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, k, l, ms);
    if (absent)
        return absent;
    const tmap_cuda_api *a = &k->cuda->api;
    CUevent start = NULL, stop = NULL;
    tmap_status st = tmap_cuda_check(k->cuda, a->event_create(&start, CU_EVENT_DEFAULT),
                                     "cuEventCreate", err);
    if (st == TMAP_OK)
        st = tmap_cuda_check(k->cuda, a->event_create(&stop, CU_EVENT_DEFAULT),
                             "cuEventCreate", err);
    for (int i = 0; st == TMAP_OK && i < warmup; i++)
        st = tmap_kernel_run(k, l, err);
    for (int i = 0; st == TMAP_OK && i < reps; i++) {
        st = tmap_cuda_check(k->cuda, a->event_record(start, NULL), "cuEventRecord", err);
        if (st == TMAP_OK)
            st = launch(k, l, err);
        if (st == TMAP_OK)
            st = tmap_cuda_check(k->cuda, a->event_record(stop, NULL), "cuEventRecord", err);
        if (st == TMAP_OK)
            st = tmap_cuda_check(k->cuda, a->event_synchronize(stop), "cuEventSynchronize",
                                 err);
        if (st == TMAP_OK)
            st = tmap_cuda_check(k->cuda, a->event_elapsed_time(&ms[i], start, stop),
                                 "cuEventElapsedTime", err);
    }
    if (start)
        a->event_destroy(start);
    if (stop)
        a->event_destroy(stop);
    return st;
}

tmap_status tmap_kernel_stats_get(tmap_kernel *k, const tmap_launch *l,
                                  tmap_kernel_stats *s, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, k, l, s);
    if (absent)
        return absent;
    const tmap_cuda_api *a = &k->cuda->api;
    memset(s, 0, sizeof *s);
    struct { int *dst; CUfunction_attribute attr; } q[] = {
        {&s->registers, CU_FUNC_ATTRIBUTE_NUM_REGS},
        {&s->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
        {&s->static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        tmap_status st = tmap_cuda_check(k->cuda, a->func_get_attribute(q[i].dst, q[i].attr, k->function),
                                         "cuFuncGetAttribute", err);
        if (st != TMAP_OK)
            return st;
    }
    return tmap_cuda_check(k->cuda,
                           a->occupancy_max_active_blocks(&s->blocks_per_sm, k->function,
                                                          (int)tmap_launch_block_size(l),
                                                          l->shared_bytes),
                           "cuOccupancyMaxActiveBlocksPerMultiprocessor", err);
}

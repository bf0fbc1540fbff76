/*
 * cuda.c -- opening the CUDA driver with dlopen, the primary context, device
 * facts and device memory.  Nothing here runs without a GPU; callers get
 * TMAP_ERR_NO_DEVICE instead of a crash.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "common/dl.h"
#include "instrument/nvrtc.h"
#include "runtime/cuda.h"

tmap_status tmap_cuda_check(const tmap_cuda *c, CUresult r, const char *call,
                            tmap_error *err)
{
    if (r == CUDA_SUCCESS)
        return TMAP_OK;
    const char *name = NULL, *text = NULL;
    if (c && c->api.get_error_name)
        c->api.get_error_name(r, &name);
    if (c && c->api.get_error_string)
        c->api.get_error_string(r, &text);
    tmap_status st = (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY)
                         ? TMAP_ERR_NO_DEVICE
                         : TMAP_ERR_CUDA;
    return tmap_fail(err, st, "%s: %s (%s)", call, name ? name : "CUDA error",
                     text ? text : "no description");
}

#define S(field, a, b) TMAP_DL_SYM(tmap_cuda_api, field, a, b)
static const tmap_dl_sym symbols[] = {
    S(init, "cuInit", NULL),
    S(driver_get_version, "cuDriverGetVersion", NULL),
    S(get_error_name, "cuGetErrorName", NULL),
    S(get_error_string, "cuGetErrorString", NULL),
    S(device_get_count, "cuDeviceGetCount", NULL),
    S(device_get, "cuDeviceGet", NULL),
    S(device_get_name, "cuDeviceGetName", NULL),
    S(device_get_attribute, "cuDeviceGetAttribute", NULL),
    S(primary_ctx_retain, "cuDevicePrimaryCtxRetain", NULL),
    S(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    S(ctx_set_current, "cuCtxSetCurrent", NULL),
    S(ctx_get_current, "cuCtxGetCurrent", NULL),
    S(ctx_get_device, "cuCtxGetDevice", NULL),
    S(ctx_synchronize, "cuCtxSynchronize", NULL),
    S(ctx_get_limit, "cuCtxGetLimit", NULL),
    S(ctx_set_limit, "cuCtxSetLimit", NULL),
    S(mem_alloc, "cuMemAlloc_v2", NULL),
    S(mem_free, "cuMemFree_v2", NULL),
    S(memcpy_htod, "cuMemcpyHtoD_v2", NULL),
    S(memcpy_dtoh, "cuMemcpyDtoH_v2", NULL),
    S(memcpy_dtod, "cuMemcpyDtoD_v2", NULL),
    S(memset_d8, "cuMemsetD8_v2", NULL),
    S(module_load_data_ex, "cuModuleLoadDataEx", NULL),
    S(module_unload, "cuModuleUnload", NULL),
    S(module_get_function, "cuModuleGetFunction", NULL),
    S(module_get_global, "cuModuleGetGlobal_v2", NULL),
    S(func_get_attribute, "cuFuncGetAttribute", NULL),
    S(func_set_attribute, "cuFuncSetAttribute", NULL),
    S(occupancy_max_active_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL),
    S(launch_kernel, "cuLaunchKernel", NULL),
    S(event_create, "cuEventCreate", NULL),
    S(event_destroy, "cuEventDestroy_v2", "cuEventDestroy"),
    S(event_record, "cuEventRecord", NULL),
    S(event_synchronize, "cuEventSynchronize", NULL),
    S(event_query, "cuEventQuery", NULL),
    S(event_elapsed_time, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    S(stream_synchronize, "cuStreamSynchronize", NULL),
};
#undef S

static tmap_status open_library(tmap_cuda *c, tmap_error *err)
{
    const char *env = getenv("THREADMAP_LIBCUDA");
    const char *names[] = {env, "libcuda.so.1", "libcuda.so"};
    for (size_t i = 0; i < 3 && !c->lib; i++)
        if (names[i])
            c->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!c->lib)
        return tmap_fail(err, TMAP_ERR_NO_DEVICE,
                         "no CUDA driver: cannot load libcuda.so.1 (%s); this needs a "
                         "machine with an NVIDIA GPU and its driver",
                         dlerror());
    const char *missing =
        tmap_dl_resolve(c->lib, symbols, sizeof symbols / sizeof symbols[0], &c->api);
    if (missing)
        return tmap_fail(err, TMAP_ERR_NO_DEVICE,
                         "libcuda has no %s: the driver is too old (CUDA 12 or newer is needed)",
                         missing);
    return TMAP_OK;
}

static tmap_status select_device(tmap_cuda *c, int ordinal, tmap_error *err)
{
    tmap_status st = tmap_cuda_check(c, c->api.init(0), "cuInit", err);
    if (st != TMAP_OK)
        return st;
    if ((st = tmap_cuda_check(c, c->api.driver_get_version(&c->driver_version),
                              "cuDriverGetVersion", err)) != TMAP_OK)
        return st;
    int n = 0;
    if ((st = tmap_cuda_check(c, c->api.device_get_count(&n), "cuDeviceGetCount", err)))
        return st;
    if (ordinal < 0 || ordinal >= n)
        return tmap_fail(err, n ? TMAP_ERR_INVALID : TMAP_ERR_NO_DEVICE,
                         "GPU %d requested, %d present", ordinal, n);
    if ((st = tmap_cuda_check(c, c->api.device_get(&c->device, ordinal), "cuDeviceGet",
                              err)))
        return st;
    if ((st = tmap_cuda_check(c, c->api.primary_ctx_retain(&c->ctx, c->device),
                              "cuDevicePrimaryCtxRetain", err)))
        return st;
    return tmap_cuda_check(c, c->api.ctx_set_current(c->ctx), "cuCtxSetCurrent", err);
}

tmap_status tmap_cuda_open(int ordinal, tmap_cuda **out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, out);
    if (absent)
        return absent;
    *out = NULL;
    tmap_cuda *c = calloc(1, sizeof *c);
    if (!c)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    tmap_status st = open_library(c, err);
    if (st == TMAP_OK)
        st = select_device(c, ordinal, err);
    if (st != TMAP_OK) {
        tmap_cuda_close(c);
        return st;
    }
    *out = c;
    return TMAP_OK;
}

static tmap_status borrow_current(tmap_cuda *c, tmap_error *err)
{
    tmap_status st = tmap_cuda_check(c, c->api.driver_get_version(&c->driver_version),
                                     "cuDriverGetVersion", err);
    if (st == TMAP_OK)
        st = tmap_cuda_check(c, c->api.ctx_get_current(&c->ctx), "cuCtxGetCurrent", err);
    if (st == TMAP_OK && !c->ctx)
        st = tmap_fail(err, TMAP_ERR_CUDA, "cuCtxGetCurrent: no CUDA context is current");
    if (st == TMAP_OK)
        st = tmap_cuda_check(c, c->api.ctx_get_device(&c->device), "cuCtxGetDevice", err);
    return st;
}

tmap_status tmap_cuda_open_current(tmap_cuda **out, tmap_error *err)
{
    *out = NULL;
    tmap_cuda *c = calloc(1, sizeof *c);
    if (!c)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    c->borrowed = 1;
    tmap_status st = open_library(c, err);
    if (st == TMAP_OK)
        st = borrow_current(c, err);
    if (st != TMAP_OK) {
        tmap_cuda_close(c);
        return st;
    }
    *out = c;
    return TMAP_OK;
}

void tmap_cuda_close(tmap_cuda *c)
{
    if (!c)
        return;
    tmap_kernel_free(c->move[0]);
    tmap_kernel_free(c->move[1]);
    if (c->ctx && !c->borrowed)
        c->api.primary_ctx_release(c->device);
    if (c->lib)
        dlclose(c->lib);
    free(c);
}

static int attribute(tmap_cuda *c, CUdevice_attribute a)
{
    int v = 0;
    if (c->api.device_get_attribute(&v, a, c->device) != CUDA_SUCCESS)
        return 0;
    return v;
}

tmap_status tmap_cuda_info(tmap_cuda *c, tmap_device_info *info, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, info);
    if (absent)
        return absent;
    memset(info, 0, sizeof *info);
    tmap_status st = tmap_cuda_check(
        c, c->api.device_get_name(info->name, sizeof info->name - 1, c->device),
        "cuDeviceGetName", err);
    if (st != TMAP_OK)
        return st;
    info->cc_major = attribute(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    info->cc_minor = attribute(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    info->sms = attribute(c, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info->clock_khz = attribute(c, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    info->mem_clock_khz = attribute(c, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    info->mem_bus_width_bits = attribute(c, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    info->max_threads_per_sm = attribute(c, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    info->max_blocks_per_sm = attribute(c, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    info->driver_version = c->driver_version;
    tmap_ptx_version_for_driver(c->driver_version, &info->ptx_major, &info->ptx_minor);
    return TMAP_OK;
}

void tmap_cuda_arch(const tmap_device_info *info, char *buf, size_t size)
{
    if (!info || !buf || !size)
        return;
    snprintf(buf, size, "compute_%d%d", info->cc_major, info->cc_minor);
}

tmap_status tmap_cuda_alloc(tmap_cuda *c, size_t bytes, uint64_t *ptr, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, ptr);
    if (absent)
        return absent;
    CUdeviceptr p = 0;
    tmap_status st = tmap_cuda_check(c, c->api.mem_alloc(&p, bytes ? bytes : 1),
                                     "cuMemAlloc", err);
    if (st == TMAP_OK)
        *ptr = (uint64_t)p;
    else
        tmap_error_prefix(err, "allocating %zu bytes on the GPU", bytes);
    return st;
}

void tmap_cuda_free(tmap_cuda *c, uint64_t ptr)
{
    if (c && ptr)
        c->api.mem_free((CUdeviceptr)ptr);
}

tmap_status tmap_cuda_upload(tmap_cuda *c, uint64_t dst, const void *src, size_t bytes,
                             tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, src);
    if (absent)
        return absent;
    return tmap_cuda_check(c, c->api.memcpy_htod((CUdeviceptr)dst, src, bytes),
                           "cuMemcpyHtoD", err);
}

tmap_status tmap_cuda_download(tmap_cuda *c, void *dst, uint64_t src, size_t bytes,
                               tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, dst);
    if (absent)
        return absent;
    return tmap_cuda_check(c, c->api.memcpy_dtoh(dst, (CUdeviceptr)src, bytes),
                           "cuMemcpyDtoH", err);
}

tmap_status tmap_cuda_copy(tmap_cuda *c, uint64_t dst, uint64_t src, size_t bytes,
                           tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c);
    if (absent)
        return absent;
    return tmap_cuda_check(c, c->api.memcpy_dtod((CUdeviceptr)dst, (CUdeviceptr)src, bytes),
                           "cuMemcpyDtoD", err);
}

tmap_status tmap_cuda_zero(tmap_cuda *c, uint64_t ptr, size_t bytes, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c);
    if (absent)
        return absent;
    return tmap_cuda_check(c, c->api.memset_d8((CUdeviceptr)ptr, 0, bytes), "cuMemsetD8",
                           err);
}

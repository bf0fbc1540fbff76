/*
 * cuda.h (runtime) -- the CUDA driver, loaded with dlopen at run time, and
 * the few things threadmap does with it: device facts, memory, modules,
 * launches and their timing.  Only this folder talks to libcuda.
 */
#ifndef TMAP_RUNTIME_CUDA_H
#define TMAP_RUNTIME_CUDA_H

#include <cuda.h>

#include "threadmap/runtime.h"

/* Driver entry points this project uses, resolved by name with dlsym.
 * Invariant: after tmap_cuda_open succeeds every pointer is non-NULL. */
typedef struct tmap_cuda_api {
    CUresult (*init)(unsigned int);
    CUresult (*driver_get_version)(int *);
    CUresult (*get_error_name)(CUresult, const char **);
    CUresult (*get_error_string)(CUresult, const char **);
    CUresult (*device_get_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_get_name)(char *, int, CUdevice);
    CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*primary_ctx_release)(CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_synchronize)(void);
    CUresult (*ctx_get_limit)(size_t *, CUlimit);
    CUresult (*ctx_set_limit)(CUlimit, size_t);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*module_load_data_ex)(CUmodule *, const void *, unsigned int, CUjit_option *,
                                    void **);
    CUresult (*module_unload)(CUmodule);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*module_get_global)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*func_get_attribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*occupancy_max_active_blocks)(int *, CUfunction, int, size_t);
    CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_destroy)(CUevent);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_synchronize)(CUevent);
    CUresult (*event_query)(CUevent);
    CUresult (*event_elapsed_time)(float *, CUevent, CUevent);
} tmap_cuda_api;

struct tmap_cuda {
    void *lib;          /* dlopen handle of libcuda */
    tmap_cuda_api api;
    CUdevice device;
    CUcontext ctx;      /* the device's primary context, retained */
    int driver_version; /* cuDriverGetVersion: 13000 for CUDA 13.0 */
    tmap_kernel *move[2];  /* gather and scatter kernels, loaded on first use */
};

/* Turns a failed driver call into TMAP_ERR_CUDA: "cuX: CUDA_ERROR_Y (text)". */
tmap_status tmap_cuda_check(const tmap_cuda *c, CUresult r, const char *call,
                            tmap_error *err);

/* The CUDA handle a kernel was loaded with (kernel.c). */
tmap_cuda *tmap_kernel_cuda(const tmap_kernel *k);

#endif

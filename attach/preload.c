/*
 * preload.c (attach) -- the entry points of libthreadmap_attach.so, the
 * library `threadmap profile -- ./app` preloads (LD_PRELOAD).  It defines
 * the CUDA driver functions that load modules, name kernels and launch
 * them, so that a program linked with libcuda calls these; and it hands
 * the same wrappers out where programs look driver functions up by name:
 * cuGetProcAddress (the CUDA runtime, statically linked or not, reaches
 * the driver only this way) and dlsym (the runtime finds cuGetProcAddress
 * with dlsym on libcuda's handle).  Each wrapper tells the session
 * (session.c) what it saw and calls the real function.
 *
 * Exceptions to the project's rules, both forced by interposition: the
 * exported names are the driver's own (cu*, dlsym), and the state lives in
 * one static struct, since a preloaded library has no caller to hand it.
 * This file is built into libthreadmap_attach.so only, never into
 * libthreadmap.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "attach/session.h"

#undef cuGetProcAddress

CUresult cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

/* The wrapped driver functions: name, wrapper, and the real function. */
enum {
    W_LOAD_DATA, W_LOAD_DATA_EX, W_LOAD_FATBIN, W_LIBRARY_LOAD, W_GET_FUNCTION,
    W_LIBRARY_GET_KERNEL, W_LIBRARY_GET_MODULE, W_KERNEL_GET_FUNCTION, W_LAUNCH,
    W_LAUNCH_PTSZ, W_LAUNCH_EX, W_LAUNCH_EX_PTSZ, W_PROC, W_PROC_V2, W_COUNT
};

static const char *const names[W_COUNT] = {
    [W_LOAD_DATA] = "cuModuleLoadData",
    [W_LOAD_DATA_EX] = "cuModuleLoadDataEx",
    [W_LOAD_FATBIN] = "cuModuleLoadFatBinary",
    [W_LIBRARY_LOAD] = "cuLibraryLoadData",
    [W_GET_FUNCTION] = "cuModuleGetFunction",
    [W_LIBRARY_GET_KERNEL] = "cuLibraryGetKernel",
    [W_LIBRARY_GET_MODULE] = "cuLibraryGetModule",
    [W_KERNEL_GET_FUNCTION] = "cuKernelGetFunction",
    [W_LAUNCH] = "cuLaunchKernel",
    [W_LAUNCH_PTSZ] = "cuLaunchKernel_ptsz",
    [W_LAUNCH_EX] = "cuLaunchKernelEx",
    [W_LAUNCH_EX_PTSZ] = "cuLaunchKernelEx_ptsz",
    [W_PROC] = "cuGetProcAddress",
    [W_PROC_V2] = "cuGetProcAddress_v2",
};
static void *wrapper(int i);

static struct {
    pthread_once_t once;
    void *(*dlsym)(void *, const char *);  /* glibc's */
    void *libcuda;
    void *real[W_COUNT];                   /* the driver's functions */
    tmap_session *session;                 /* NULL: pass everything through */
} g = {.once = PTHREAD_ONCE_INIT};

#define REAL(i, type) ((type)g.real[i])

static void *real_dlsym(void *h, const char *name)
{
    if (!g.dlsym) {
        void *f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
            f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        *(void **)&g.dlsym = f;
    }
    return g.dlsym ? g.dlsym(h, name) : NULL;
}

static void start_session(void)
{
    tmap_session_driver drv = {0};
    *(void **)&drv.func_get_name = real_dlsym(g.libcuda, "cuFuncGetName");
    *(void **)&drv.stream_is_capturing = real_dlsym(g.libcuda, "cuStreamIsCapturing");
    *(void **)&drv.mem_get_address_range = real_dlsym(g.libcuda, "cuMemGetAddressRange_v2");
    tmap_error err = {0};
    if (getenv("THREADMAP_ATTACH_OUT") &&
        tmap_session_create(&drv, &g.session, &err) != TMAP_OK)
        fprintf(stderr, "threadmap: attach disabled: %s\n", err.message);
}

static void init(void);

static void init_once(void)
{
    pthread_once(&g.once, init);
}

/* ----------------------------------------------------------- wrappers */

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    init_once();
    CUresult r = REAL(W_LOAD_DATA, CUresult (*)(CUmodule *, const void *))(m, image);
    tmap_session_trace(g.session, "cuModuleLoadData -> %d", (int)r);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_image(g.session, *m, image);
    return r;
}

CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o,
                            void **v)
{
    init_once();
    CUresult r = REAL(W_LOAD_DATA_EX, CUresult (*)(CUmodule *, const void *, unsigned,
                                                   CUjit_option *, void **))(m, image, n, o, v);
    tmap_session_trace(g.session, "cuModuleLoadDataEx -> %d", (int)r);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_image(g.session, *m, image);
    return r;
}

CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fatbin)
{
    init_once();
    CUresult r = REAL(W_LOAD_FATBIN, CUresult (*)(CUmodule *, const void *))(m, fatbin);
    tmap_session_trace(g.session, "cuModuleLoadFatBinary -> %d", (int)r);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_image(g.session, *m, fatbin);
    return r;
}

CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
                           unsigned nj, CUlibraryOption *lo, void **lv, unsigned nl)
{
    init_once();
    CUresult r = REAL(W_LIBRARY_LOAD, CUresult (*)(CUlibrary *, const void *, CUjit_option *,
                                                   void **, unsigned, CUlibraryOption *,
                                                   void **, unsigned))(lib, code, jo, jv, nj,
                                                                      lo, lv, nl);
    tmap_session_trace(g.session, "cuLibraryLoadData(image magic 0x%08x) -> %d",
                       code ? *(const unsigned *)code : 0u, (int)r);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_image(g.session, *lib, code);
    return r;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    init_once();
    CUresult r = REAL(W_GET_FUNCTION, CUresult (*)(CUfunction *, CUmodule, const char *))(
        f, m, name);
    tmap_session_trace(g.session, "cuModuleGetFunction(%s) -> %d", name, (int)r);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_function(g.session, *f, m, name);
    return r;
}

CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    init_once();
    CUresult r = REAL(W_LIBRARY_GET_KERNEL, CUresult (*)(CUkernel *, CUlibrary, const char *))(
        k, lib, name);
    tmap_session_trace(g.session, "cuLibraryGetKernel(%s) -> %d", name, (int)r);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_function(g.session, *k, lib, name);
    return r;
}

CUresult cuLibraryGetModule(CUmodule *m, CUlibrary lib)
{
    init_once();
    CUresult r = REAL(W_LIBRARY_GET_MODULE, CUresult (*)(CUmodule *, CUlibrary))(m, lib);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_alias(g.session, *m, lib);
    return r;
}

CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    init_once();
    CUresult r = REAL(W_KERNEL_GET_FUNCTION, CUresult (*)(CUfunction *, CUkernel))(f, k);
    tmap_session_trace(g.session, "cuKernelGetFunction -> %d", (int)r);
    if (r == CUDA_SUCCESS && g.session)
        tmap_session_function(g.session, *f, k, NULL);
    return r;
}

/* ------------------------------------------------------------ launches */

typedef struct classic {
    launch_fn real;
} classic;

static CUresult relaunch_classic(const tmap_attach_call *c, CUfunction f)
{
    const classic *k = c->raw;
    return k->real(f, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
                   c->block[2], c->shared_bytes, c->stream, c->params, c->extra);
}

static CUresult launch(launch_fn real, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s,
                       void **params, void **extra)
{
    if (tmap_session_active(g.session)) {
        classic k = {real};
        tmap_attach_call c = {.function = f, .grid = {gx, gy, gz}, .block = {bx, by, bz},
                              .shared_bytes = shared, .stream = s, .params = params,
                              .extra = extra, .relaunch = relaunch_classic, .raw = &k,
                              .per_thread_stream = real == REAL(W_LAUNCH_PTSZ, launch_fn)};
        CUresult r;
        if (tmap_session_launch(g.session, &c, &r))
            return r;
    }
    return real(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                        void **extra)
{
    init_once();
    return launch(REAL(W_LAUNCH, launch_fn), f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shared, CUstream s,
                             void **params, void **extra)
{
    init_once();
    return launch(REAL(W_LAUNCH_PTSZ, launch_fn), f, gx, gy, gz, bx, by, bz, shared, s, params,
                  extra);
}

typedef struct extended {
    launch_ex_fn real;
    const CUlaunchConfig *config;
} extended;

static CUresult relaunch_ex(const tmap_attach_call *c, CUfunction f)
{
    const extended *k = c->raw;
    return k->real(k->config, f, c->params, c->extra);
}

static CUresult launch_ex(launch_ex_fn real, const CUlaunchConfig *cfg, CUfunction f,
                          void **params, void **extra)
{
    if (cfg && tmap_session_active(g.session)) {
        extended k = {real, cfg};
        tmap_attach_call c = {.function = f,
                              .grid = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
                              .block = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ},
                              .shared_bytes = cfg->sharedMemBytes, .stream = cfg->hStream,
                              .params = params, .extra = extra, .relaunch = relaunch_ex,
                              .raw = &k, .nattrs = cfg->numAttrs,
                              .per_thread_stream = real == REAL(W_LAUNCH_EX_PTSZ, launch_ex_fn)};
        CUresult r;
        if (tmap_session_launch(g.session, &c, &r))
            return r;
    }
    return real(cfg, f, params, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    init_once();
    return launch_ex(REAL(W_LAUNCH_EX, launch_ex_fn), cfg, f, params, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
                               void **extra)
{
    init_once();
    return launch_ex(REAL(W_LAUNCH_EX_PTSZ, launch_ex_fn), cfg, f, params, extra);
}

/* ------------------------------------------------- lookups by name */

static int wrapped_index(const char *name)
{
    for (int i = 0; i < W_COUNT; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

/* The wrapper for driver function `name` whose real address is f (the
 * per-thread-stream variant when ptsz), NULL when it is not wrapped.
 * cuGetProcAddress asked for itself gives the variant of the version. */
static void *wrapper_for(const char *name, void *f, int version, int ptsz)
{
    if (!strcmp(name, "cuGetProcAddress"))
        return wrapper(version >= 12000 ? W_PROC_V2 : W_PROC);
    char want[128];
    snprintf(want, sizeof want, "%s_ptsz", name);
    int i = ptsz && wrapped_index(want) >= 0 ? wrapped_index(want) : wrapped_index(name);
    if (i < 0)
        return NULL;
    g.real[i] = f;
    return wrapper(i);
}

static CUresult proc_result(CUresult r, const char *symbol, void **pfn, int version,
                            cuuint64_t flags)
{
    if (r == CUDA_SUCCESS && pfn && *pfn && symbol) {
        int ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
        void *w = wrapper_for(symbol, *pfn, version, ptsz);
        tmap_session_trace(g.session, "cuGetProcAddress(%s)%s", symbol, w ? ": wrapped" : "");
        if (w)
            *pfn = w;
    }
    return r;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    init_once();
    CUresult r = REAL(W_PROC, CUresult (*)(const char *, void **, int, cuuint64_t))(
        symbol, pfn, version, flags);
    return proc_result(r, symbol, pfn, version, flags);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    init_once();
    CUresult r = REAL(W_PROC_V2, CUresult (*)(const char *, void **, int, cuuint64_t,
                                              CUdriverProcAddressQueryResult *))(
        symbol, pfn, version, flags, status);
    return proc_result(r, symbol, pfn, version, flags);
}

/* dlsym: the real answer, but a wrapped driver function's wrapper, except
 * for this library's own lookups (threadmap's runtime calls the driver
 * itself and must reach the real one).  Needs no initialization: the
 * driver's own start-up may call it. */
void *dlsym(void *handle, const char *name)
{
    void *f = real_dlsym(handle, name);
    Dl_info caller, self;
    if (!f || strncmp(name, "cu", 2) || wrapped_index(name) < 0)
        return f;
    if (dladdr(__builtin_return_address(0), &caller) && dladdr((void *)dlsym, &self) &&
        caller.dli_fbase == self.dli_fbase)
        return f;
    return wrapper(wrapped_index(name));
}

static void *wrapper(int i)
{
    static void *const table[W_COUNT] = {
        [W_LOAD_DATA] = (void *)cuModuleLoadData,
        [W_LOAD_DATA_EX] = (void *)cuModuleLoadDataEx,
        [W_LOAD_FATBIN] = (void *)cuModuleLoadFatBinary,
        [W_LIBRARY_LOAD] = (void *)cuLibraryLoadData,
        [W_GET_FUNCTION] = (void *)cuModuleGetFunction,
        [W_LIBRARY_GET_KERNEL] = (void *)cuLibraryGetKernel,
        [W_LIBRARY_GET_MODULE] = (void *)cuLibraryGetModule,
        [W_KERNEL_GET_FUNCTION] = (void *)cuKernelGetFunction,
        [W_LAUNCH] = (void *)cuLaunchKernel,
        [W_LAUNCH_PTSZ] = (void *)cuLaunchKernel_ptsz,
        [W_LAUNCH_EX] = (void *)cuLaunchKernelEx,
        [W_LAUNCH_EX_PTSZ] = (void *)cuLaunchKernelEx_ptsz,
        [W_PROC] = (void *)cuGetProcAddress,
        [W_PROC_V2] = (void *)cuGetProcAddress_v2,
    };
    return table[i];
}

static void init(void)
{
    g.libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    for (int i = 0; g.libcuda && i < W_COUNT; i++)
        if (!g.real[i])
            g.real[i] = real_dlsym(g.libcuda, names[i]);
    start_session();
}

/* Run mode's summary, when the process ends. */
__attribute__((destructor)) static void fini(void)
{
    tmap_session_finish(g.session);
}

/*
 * session.h (attach) -- what the injected library knows inside one
 * application process: the options, every module image loaded and the
 * kernel names of the function handles taken from them, which launches are
 * selected, and the kernels profiled so far (session.c).  The driver entry
 * points themselves are in preload.c.  Private to attach/.
 */
#ifndef TMAP_ATTACH_SESSION_H
#define TMAP_ATTACH_SESSION_H

#include "attach/launch.h"
#include "common/base.h"

typedef struct tmap_session tmap_session;

/* Driver calls the session needs from the real driver (preload.c's). */
typedef struct tmap_session_driver {
    CUresult (*func_get_name)(const char **, CUfunction);    /* may be NULL */
    CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*mem_get_address_range)(CUdeviceptr *, size_t *, CUdeviceptr); /* run mode */
} tmap_session_driver;

/* From the environment (attach/env.h); TMAP_ERR_INVALID when threadmap did
 * not start this process. */
tmap_status tmap_session_create(const tmap_session_driver *drv, tmap_session **out,
                                tmap_error *err);
void tmap_session_free(tmap_session *s);

/* A module or library `handle` was loaded from `image` (scanned now: the
 * application may free it), or is the module of library `parent`. */
void tmap_session_image(tmap_session *s, void *handle, const void *image);
void tmap_session_alias(tmap_session *s, void *handle, void *parent);
/* A function or kernel handle named `name` was taken from module, library
 * or kernel `parent`. */
void tmap_session_function(tmap_session *s, void *handle, void *parent, const char *name);

/* 0 once no launch can be selected any more (launch count reached). */
int tmap_session_active(const tmap_session *s);

/* A launch: 1 when the session launched it (instrumented; *cu is the
 * driver's result), 0 when the caller must launch it as usual. */
int tmap_session_launch(tmap_session *s, const tmap_attach_call *c, CUresult *cu);

/* At exit, in run mode: the summary (a line per kernel) into the output
 * folder's summary.txt.  Makes no CUDA call (the runtime may have torn the
 * context down). */
void tmap_session_finish(tmap_session *s);

/* Prints a trace line on stderr when THREADMAP_ATTACH_TRACE is 1. */
void tmap_session_trace(const tmap_session *s, const char *fmt, ...) TMAP_PRINTF(2, 3);

#endif

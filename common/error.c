/*
 * error.c -- status names, setting an error, prefixing its message with a
 * context (a file name, a kernel), refusing NULL pointer arguments.
 */
#include "common/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *tmap_status_string(tmap_status status)
{
    switch (status) {
    case TMAP_OK: return "ok";
    case TMAP_ERR_INVALID: return "invalid argument";
    case TMAP_ERR_NOMEM: return "out of memory";
    case TMAP_ERR_IO: return "i/o error";
    case TMAP_ERR_PARSE: return "parse error";
    case TMAP_ERR_FORMAT: return "bad file format";
    case TMAP_ERR_NVRTC: return "NVRTC compilation failed";
    case TMAP_ERR_CUDA: return "CUDA driver error";
    case TMAP_ERR_NO_DEVICE: return "no CUDA device";
    case TMAP_ERR_UNSUPPORTED: return "unsupported";
    case TMAP_ERR_NUMERIC: return "numerical error";
    }
    return "unknown status";
}

tmap_status tmap_fail(tmap_error *err, tmap_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

tmap_status tmap_need(tmap_error *err, const char *func, const char *names, size_t n,
                      const void *const *ptrs)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(names, ",");
        if (!ptrs[i])
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: argument '%.*s' is NULL", func,
                             (int)len, names);
        names += len + (names[len] == ',');
        names += strspn(names, " ");
    }
    return TMAP_OK;
}

void tmap_error_prefix(tmap_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char head[TMAP_ERROR_MAX], old[TMAP_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    snprintf(err->message, sizeof err->message, "%s: %s", head, old);
}

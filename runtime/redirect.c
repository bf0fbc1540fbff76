/*
 * redirect.c -- reference redirection at run time: load a kernel rewritten
 * by tmap_redirect_instrument and point its __tmap_perm at a permutation.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/cuda.h"

tmap_status tmap_redirect_load(tmap_cuda *c, const char *ptx, const char *kernel,
                               tmap_kernel **out, tmap_error *err)
{
    if (!c || !ptx || !kernel || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_redirect_load: NULL argument");
    *out = NULL;
    tmap_ptx_module *m = NULL;
    char *text = NULL, name[256];
    tmap_status st = tmap_ptx_parse(
        ptx, strlen(ptx),
        tmap_ptx_describe(name, sizeof name, "PTX of %s given to the redirection", kernel),
        &m, err);
    if (st == TMAP_OK)
        st = tmap_redirect_instrument(m, kernel, err);
    if (st == TMAP_OK)
        st = tmap_ptx_print(m, &text, err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(c, text, kernel, out, err);
    free(text);
    tmap_ptx_free(m);
    return st;
}

tmap_status tmap_redirect_set(tmap_kernel *k, uint64_t perm_device_ptr, tmap_error *err)
{
    if (!k)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_redirect_set: NULL kernel");
    uint64_t sym = 0;
    size_t bytes = 0;
    tmap_status st = tmap_kernel_global(k, TMAP_REDIRECT_SYMBOL, &sym, &bytes, err);
    if (st != TMAP_OK)
        return st;
    if (bytes != sizeof perm_device_ptr)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "module variable '%s' has %zu bytes, not 8: not a redirected kernel",
                         TMAP_REDIRECT_SYMBOL, bytes);
    return tmap_cuda_upload(tmap_kernel_cuda(k), sym, &perm_device_ptr, sizeof perm_device_ptr,
                            err);
}

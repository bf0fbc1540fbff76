/*
 * fuzz_safety.c -- libFuzzer target: parse, then the safety analysis of
 * every kernel (its advice in range, its reasons a string), then the
 * redirection of every kernel; the redirected module must print, and what
 * it prints must parse.  Seed corpus: the .ptx files of tests/ptx,
 * tests/sass and examples/divergent/recorded.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/instrument.h"

static void analyze(const tmap_ptx_module *m, const char *kernel)
{
    tmap_safety s;
    tmap_error err;
    if (tmap_safety_analyze(m, kernel, &s, &err) != TMAP_OK)
        return;
    if (s.scope < TMAP_SAFE_GRID || s.scope > TMAP_SAFE_NONE ||
        !memchr(s.reasons, '\0', sizeof s.reasons))
        abort();
    if (!tmap_scope_advice_name(s.scope))
        abort();
}

static void redirect_all(tmap_ptx_module *m)
{
    tmap_error err;
    size_t nk = tmap_ptx_num_kernels(m), done = 0;
    for (size_t k = 0; k < nk; k++)
        done += tmap_redirect_instrument(m, tmap_ptx_kernel_name(m, k), &err) == TMAP_OK;
    if (!done)
        return;
    char *text = NULL;
    tmap_ptx_module *again = NULL;
    if (tmap_ptx_print(m, &text, &err) != TMAP_OK)
        abort();
    if (tmap_ptx_parse(text, strlen(text), "<redirected PTX>", &again, &err) != TMAP_OK)
        abort(); /* the redirected PTX must parse */
    tmap_ptx_free(again);
    free(text);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    tmap_ptx_module *m = NULL;
    tmap_error err;
    if (tmap_ptx_parse((const char *)data, size, "<fuzz input>", &m, &err) != TMAP_OK)
        return 0;
    for (size_t k = 0; k < tmap_ptx_num_kernels(m); k++)
        analyze(m, tmap_ptx_kernel_name(m, k));
    redirect_all(m);
    tmap_ptx_free(m);
    return 0;
}

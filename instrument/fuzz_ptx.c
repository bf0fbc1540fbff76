/*
 * fuzz_ptx.c -- libFuzzer target: parse, print, reparse (the print must be a
 * fixed point, with the same __constant__ bytes), build the CFG of every
 * kernel and instrument it.
 * Seed corpus: tests/ptx/.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/instrument.h"

static void check_kernels(tmap_ptx_module *m)
{
    size_t nk = tmap_ptx_num_kernels(m);
    for (size_t k = 0; k < nk; k++) {
        tmap_cfg *cfg = NULL;
        tmap_error err;
        if (tmap_cfg_build(m, tmap_ptx_kernel_name(m, k), &cfg, &err) == TMAP_OK) {
            for (size_t b = 0; b < cfg->nblocks; b++)
                if (cfg->blocks[b].ipdom >= (int32_t)cfg->nblocks)
                    abort();
            tmap_cfg_free(cfg);
        }
    }
    for (size_t k = 0; k < nk; k++) {
        tmap_error err;
        tmap_cfg *cfg = NULL;
        if (tmap_bbv_instrument(m, tmap_ptx_kernel_name(m, k), &cfg, &err) == TMAP_OK)
            tmap_cfg_free(cfg);
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    tmap_ptx_module *m = NULL, *m2 = NULL;
    tmap_error err;
    if (tmap_ptx_parse((const char *)data, size, "<fuzz input>", &m, &err) != TMAP_OK)
        return 0;
    char *a = NULL, *b = NULL;
    if (tmap_ptx_print(m, &a, &err) != TMAP_OK)
        abort();
    if (tmap_ptx_parse(a, strlen(a), "<printed PTX>", &m2, &err) != TMAP_OK)
        abort(); /* what we print must parse */
    if (tmap_ptx_print(m2, &b, &err) != TMAP_OK || strcmp(a, b))
        abort(); /* and print the same */
    size_t c1 = 0, c2 = 0;
    tmap_status s1 = tmap_access_const_bytes(m, &c1, &err);
    if (s1 != tmap_access_const_bytes(m2, &c2, &err) || (!s1 && c1 != c2))
        abort(); /* the reprinted module declares the same __constant__ data */
    check_kernels(m);
    free(a);
    free(b);
    tmap_ptx_free(m);
    tmap_ptx_free(m2);
    return 0;
}

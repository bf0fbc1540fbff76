/*
 * fuzz_sass.c -- libFuzzer target: a PTX module and an `nvdisasm -gp`
 * listing, separated by a NUL byte; counts every kernel's SASS
 * instructions from the listing and finds its splits, which must name CFG
 * blocks and take no more from a block than it has.
 * Seed corpus: tests/sass/NAME.ptx, NUL, tests/sass/NAME.sass (.ci/run).
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/instrument.h"

static void check_kernel(const tmap_ptx_module *m, const char *kernel, const char *listing)
{
    tmap_cfg *cfg = NULL;
    tmap_error err;
    if (tmap_cfg_build(m, kernel, &cfg, &err) != TMAP_OK)
        return;
    double *counts = calloc(cfg->nblocks ? cfg->nblocks : 1, sizeof *counts);
    tmap_sass_splits sp;
    if (counts && tmap_sass_count_listing(listing, cfg, counts, &sp, &err) == TMAP_OK) {
        for (size_t k = 0; k < sp.n; k++) {
            const tmap_sass_split *e = &sp.v[k];
            if (e->block >= cfg->nblocks || e->ninstr > counts[e->block] || !e->nkey)
                abort();
            for (uint32_t j = 0; j < e->nkey; j++)
                if (e->key[j] >= cfg->nblocks || (j && e->key[j] <= e->key[j - 1]))
                    abort();
        }
        tmap_sass_splits_free(&sp);
    }
    free(counts);
    tmap_cfg_free(cfg);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const unsigned char *nul = memchr(data, 0, size);
    if (!nul)
        return 0;
    size_t plen = (size_t)(nul - data);
    char *listing = malloc(size - plen);
    if (!listing)
        return 0;
    memcpy(listing, nul + 1, size - plen - 1);
    listing[size - plen - 1] = '\0';
    tmap_ptx_module *m = NULL;
    tmap_error err;
    if (tmap_ptx_parse((const char *)data, plen, "<fuzz input>", &m, &err) == TMAP_OK) {
        for (size_t k = 0; k < tmap_ptx_num_kernels(m); k++)
            check_kernel(m, tmap_ptx_kernel_name(m, k), listing);
        tmap_ptx_free(m);
    }
    free(listing);
    return 0;
}

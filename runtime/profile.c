/*
 * profile.c -- profiling runs: a kernel instrumented with the BBV counter
 * pass, loaded next to its counters (a "counting" kernel), launched with the
 * user's own launch, and each thread's basic block vector read back.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/cuda.h"

struct tmap_counting {
    tmap_cuda *cuda;
    tmap_kernel *kernel;
    tmap_cfg *cfg;
    uint64_t counters;  /* device, [cfg->nblocks][nslots] u32 */
    size_t nslots;
    size_t old_stack;   /* the context's stack limit before, 0: unchanged */
};

/* Instrumented .funcs keep the counter pointer live across calls, so their
 * frames grow (24 -> 88 bytes per level for a recursive function seen on
 * sm_90) and deep recursion would overflow the default stack.  While a
 * counting kernel with .funcs exists, the context's stack limit is raised
 * STACK_FACTOR-fold; tmap_counting_free restores it. */
enum { STACK_FACTOR = 4 };

static tmap_status grow_stack(tmap_counting *k, tmap_error *err)
{
    size_t cur = 0;
    const tmap_cuda_api *a = &k->cuda->api;
    if (k->cfg->nfuncs < 2)
        return TMAP_OK;
    tmap_status st = tmap_cuda_check(k->cuda, a->ctx_get_limit(&cur, CU_LIMIT_STACK_SIZE),
                                     "cuCtxGetLimit", err);
    if (st == TMAP_OK)
        st = tmap_cuda_check(k->cuda, a->ctx_set_limit(CU_LIMIT_STACK_SIZE, cur * STACK_FACTOR),
                             "cuCtxSetLimit(CU_LIMIT_STACK_SIZE)", err);
    if (st == TMAP_OK)
        k->old_stack = cur;
    return st;
}

/* Instrumented PTX text of `kernel` and the CFG its counters follow. */
static tmap_status instrument_text(const char *ptx, const char *kernel, char **text,
                                   tmap_cfg **cfg, tmap_error *err)
{
    tmap_ptx_module *m = NULL;
    char name[256];
    tmap_status st = tmap_ptx_parse(
        ptx, strlen(ptx),
        tmap_ptx_describe(name, sizeof name, "PTX of %s given to the counter pass", kernel),
        &m, err);
    if (st == TMAP_OK)
        st = tmap_bbv_instrument(m, kernel, cfg, err);
    if (st == TMAP_OK)
        st = tmap_ptx_print(m, text, err);
    tmap_ptx_free(m);
    return st;
}

static tmap_status set_globals(tmap_counting *k, uint32_t sample, tmap_error *err)
{
    uint64_t base_sym, sample_sym;
    tmap_status st = tmap_kernel_global(k->kernel, TMAP_BBV_BASE_SYMBOL, &base_sym, NULL, err);
    if (st == TMAP_OK)
        st = tmap_kernel_global(k->kernel, TMAP_BBV_STRIDE_SYMBOL, &sample_sym, NULL, err);
    if (st == TMAP_OK)
        st = tmap_cuda_upload(k->cuda, base_sym, &k->counters, sizeof k->counters, err);
    if (st == TMAP_OK)
        st = tmap_cuda_upload(k->cuda, sample_sym, &sample, sizeof sample, err);
    return st;
}

static size_t counter_bytes(const tmap_counting *k)
{
    return k->nslots * k->cfg->nblocks * sizeof(uint32_t);
}

tmap_status tmap_counting_load(tmap_cuda *c, const char *ptx, const char *kernel,
                               const tmap_launch *l, uint32_t sample, tmap_counting **out,
                               tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, ptx, kernel, l, out);
    if (absent)
        return absent;
    *out = NULL;
    if (sample == 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "sample must be at least 1");
    if (tmap_launch_threads(l) == 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "launch of kernel '%s' has no threads", kernel);
    tmap_counting *k = calloc(1, sizeof *k);
    if (!k)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    k->cuda = c;
    uint64_t ctas = tmap_launch_blocks(l);
    k->nslots = (size_t)((ctas + sample - 1) / sample * tmap_launch_block_size(l));
    char *text = NULL;
    tmap_status st = instrument_text(ptx, kernel, &text, &k->cfg, err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(c, text, kernel, &k->kernel, err);
    /* the counter pass computes slots in 32 bits (bbv_pass.c) */
    if (st == TMAP_OK && (uint64_t)k->nslots > UINT32_MAX)
        st = tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                       "%zu profiled threads: the counters take at most %u; sample fewer "
                       "thread blocks", k->nslots, (unsigned)UINT32_MAX);
    if (st == TMAP_OK && k->cfg->nblocks && k->nslots > ((size_t)-1) / 4 / k->cfg->nblocks)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%zu threads x %zu blocks of counters is too large",
                       k->nslots, k->cfg->nblocks);
    if (st == TMAP_OK)
        st = grow_stack(k, err);
    if (st == TMAP_OK)
        st = tmap_cuda_alloc(c, counter_bytes(k), &k->counters, err);
    if (st == TMAP_OK)
        st = tmap_counting_reset(k, err);
    if (st == TMAP_OK)
        st = set_globals(k, sample, err);
    free(text);
    if (st != TMAP_OK) {
        tmap_counting_free(k);
        return st;
    }
    *out = k;
    return TMAP_OK;
}

tmap_kernel *tmap_counting_kernel(tmap_counting *k) { return k ? k->kernel : NULL; }
const tmap_cfg *tmap_counting_cfg(const tmap_counting *k) { return k ? k->cfg : NULL; }

tmap_status tmap_counting_reset(tmap_counting *k, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, k);
    if (absent)
        return absent;
    return tmap_cuda_zero(k->cuda, k->counters, counter_bytes(k), err);
}

/* counters are block-major [nblocks][nslots]; the BBV is [nslots][nblocks]. */
tmap_status tmap_counting_read(tmap_counting *k, tmap_bbv *bbv, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, k, bbv);
    if (absent)
        return absent;
    size_t nb = k->cfg->nblocks, bytes = counter_bytes(k);
    tmap_status st = tmap_bbv_create(bbv, k->nslots, nb, err);
    if (st != TMAP_OK)
        return st;
    uint32_t *host = malloc(bytes ? bytes : 1);
    if (!host) {
        tmap_bbv_free(bbv);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu counter bytes", bytes);
    }
    st = tmap_cuda_download(k->cuda, host, k->counters, bytes, err);
    for (size_t b = 0; st == TMAP_OK && b < nb; b++)
        for (size_t t = 0; t < k->nslots; t++)
            bbv->counts[t * nb + b] = host[b * k->nslots + t];
    free(host);
    if (st != TMAP_OK)
        tmap_bbv_free(bbv);
    return st;
}

void tmap_counting_free(tmap_counting *k)
{
    if (!k)
        return;
    tmap_cuda_free(k->cuda, k->counters);
    if (k->old_stack)
        k->cuda->api.ctx_set_limit(CU_LIMIT_STACK_SIZE, k->old_stack);
    tmap_kernel_free(k->kernel);
    tmap_cfg_free(k->cfg);
    free(k);
}

tmap_status tmap_profile_run(tmap_cuda *c, const char *ptx, const char *kernel,
                             const tmap_launch *l, uint32_t sample, tmap_profile *out,
                             tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, ptx, kernel, l, out);
    if (absent)
        return absent;
    memset(out, 0, sizeof *out);
    out->sample = sample;
    tmap_kernel *orig = NULL;
    tmap_counting *k = NULL;
    tmap_status st = tmap_counting_load(c, ptx, kernel, l, sample, &k, err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(c, ptx, kernel, &orig, err);
    if (st == TMAP_OK)
        st = tmap_kernel_stats_get(orig, l, &out->original, err);
    if (st == TMAP_OK)
        st = tmap_kernel_stats_get(k->kernel, l, &out->instrumented, err);
    if (st == TMAP_OK)
        st = tmap_kernel_run(k->kernel, l, err);
    if (st == TMAP_OK)
        st = tmap_counting_read(k, &out->bbv, err);
    if (st == TMAP_OK) {
        out->cfg = k->cfg; /* ownership moves to the profile */
        k->cfg = NULL;
    }
    tmap_kernel_free(orig);
    tmap_counting_free(k);
    if (st != TMAP_OK)
        tmap_profile_free(out);
    return st;
}

void tmap_profile_free(tmap_profile *p)
{
    if (!p)
        return;
    tmap_bbv_free(&p->bbv);
    tmap_cfg_free(p->cfg);
    memset(p, 0, sizeof *p);
}

/*
 * fuzz_latency.c -- libFuzzer target: the latency table (tmap_lat_parse);
 * what parses is looked up for a few opcodes, and gives the block sums and
 * the per-block chains of a small kernel written here.  Every latency must
 * be a number (not NaN).  Seed corpus: the .tsv tables of latency_tables.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/instrument.h"
#include "threadmap/model.h"

static const char kernel_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<6>;\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n  mov.u32 %r2, %tid.x;\n"
    "  setp.ge.u32 %p1, %r2, %r1;\n  @%p1 bra $L_done;\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.f32 %f1, [%rd3];\n  add.f32 %f2, %f1, %f1;\n  div.rn.f32 %f3, %f2, %f1;\n"
    "  rem.u32 %r3, %r2, 7;\n  st.global.f32 [%rd3], %f3;\n  bar.sync 0;\n"
    "$L_done:\n  ret;\n}\n";

static void use_table(const tmap_lat_table *t)
{
    static const char *ops[] = {"add.f32", "ld.global.f32", "div.rn.f32", "rem.u32",
                                "bar.sync", "class:default", "no.such.op", ""};
    tmap_error err;
    tmap_lat_lookup how;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (tmap_lat_lookup_opcode(t, ops[i], &how, &err) == TMAP_OK && isnan(how.latency))
            abort();
    if (!tmap_lat_arch(t) || !tmap_lat_device(t))
        abort();
    tmap_ptx_module *m = NULL;
    tmap_cfg *cfg = NULL;
    double *lat = NULL, *chain = NULL;
    tmap_lat_report rep = {0};
    if (tmap_ptx_parse(kernel_ptx, sizeof kernel_ptx - 1, "<fuzz input>", &m, &err) ||
        tmap_cfg_build(m, "k", &cfg, &err))
        abort(); /* the kernel above is valid */
    if (tmap_lat_blocks(t, cfg, &lat, &rep, &err) == TMAP_OK) {
        for (size_t b = 0; b < cfg->nblocks; b++)
            if (isnan(lat[b]))
                abort();
        tmap_lat_report_free(&rep);
        free(lat);
    }
    if (tmap_lat_chains(t, m, "k", NULL, 0, 0, &chain, &err) == TMAP_OK)
        free(chain);
    tmap_cfg_free(cfg);
    tmap_ptx_free(m);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    tmap_lat_table *t = NULL;
    tmap_error err;
    if (tmap_lat_parse((const char *)data, size, "fuzz.tsv", &t, &err) == TMAP_OK) {
        use_table(t);
        tmap_lat_free(t);
    }
    return 0;
}

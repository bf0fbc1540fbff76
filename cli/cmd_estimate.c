/*
 * cmd_estimate.c -- `threadmap estimate`: the divergence metrics of a BBV
 * (Liang et al. section IV) with block latencies from a kernel's CFG and a
 * latency table, or given directly; text or JSON output.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "instrument/base.h"
#include "model/model.h"

/* --cfg needs the PTX parser and CFG builder (instrument/ptx.h); a build
 * without them refuses the option instead of failing to link. */
#if defined(__has_include)
#if __has_include("instrument/ptx.h")
#define TMAP_HAVE_CFG_BUILDER 1
#endif
#endif

static const char estimate_usage[] =
    "usage: threadmap estimate --bbv BBV.npy (--cfg FILE.ptx --kernel K | --block-latency LAT.npy)\n"
    "                          [--table FILE.tsv] [--perm PERM.npy] [--sms N]\n"
    "                          [--blocks-per-sm M] [--block-size S] [--json]\n\n"
    "Estimates kernel time from per-thread basic block vectors (Liang et al. TCAD 2016):\n"
    "BBV-weighted (eq. 5), BBV-weighted-scheduled (dynamic round robin), the\n"
    "zero-divergence bound, divergent-warps ratio, divergent branches (estimate) and\n"
    "SIMD efficiency.  Times are in cycles.\n\n"
    "  --bbv BBV.npy          uint32 [threads, blocks] (sidecar BBV.npy.json optional)\n"
    "  --cfg FILE.ptx         PTX module; with --kernel, block latencies come from its CFG\n"
    "  --kernel K             the .entry of FILE.ptx\n"
    "  --block-latency L.npy  block latencies in cycles, [blocks] (no CFG: SIMD efficiency\n"
    "                         and divergent branches are then unavailable)\n"
    "  --table FILE.tsv       latency table (default: sm_90.tsv from $THREADMAP_DATA or\n"
    "                         the build/install data directory)\n"
    "  --perm PERM.npy        permutation [threads]: slot i runs original thread PERM[i]\n"
    "  --sms N                number of SMs (default 132, H100 SXM)\n"
    "  --block-size S         threads per thread block (default 256)\n"
    "  --blocks-per-sm M      resident blocks per SM (default min(32, 2048 / S))\n"
    "  --json                 print one JSON object\n";

typedef struct est_opts {
    const char *bbv, *cfg, *kernel, *lat, *table, *perm;
    long sms, block_size, blocks_per_sm;
    int json;
} est_opts;

static int est_long(const char *opt, const char *s, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || *end || end == s || x < 1 || x > 1000000000L) {
        fprintf(stderr, "threadmap estimate: %s wants a positive integer, got '%s'\n", opt, s);
        return -1;
    }
    *v = x;
    return 0;
}

/* 0: run; 1: --help printed; -1: usage error (message printed). */
static int est_parse(int argc, char **argv, est_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sms = 132;
    o->block_size = 256;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **str = !strcmp(a, "--bbv") ? &o->bbv : !strcmp(a, "--cfg") ? &o->cfg
                         : !strcmp(a, "--kernel") ? &o->kernel : !strcmp(a, "--block-latency") ? &o->lat
                         : !strcmp(a, "--table") ? &o->table : !strcmp(a, "--perm") ? &o->perm : NULL;
        long *num = !strcmp(a, "--sms") ? &o->sms : !strcmp(a, "--block-size") ? &o->block_size
                  : !strcmp(a, "--blocks-per-sm") ? &o->blocks_per_sm : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(estimate_usage, stdout);
            return 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if ((str || num) && !v) {
            fprintf(stderr, "threadmap estimate: %s needs a value\n", a);
            return -1;
        } else if (str) {
            *str = argv[++i];
        } else if (num) {
            if (est_long(a, argv[++i], num))
                return -1;
        } else {
            fprintf(stderr, "threadmap estimate: unknown argument '%s'\n", a);
            return -1;
        }
    }
    if (!o->bbv || (!o->cfg == !o->lat) || (!o->cfg != !o->kernel) || (o->table && !o->cfg)) {
        fprintf(stderr, "threadmap estimate: give --bbv and either --cfg with --kernel or "
                        "--block-latency (--table only with --cfg)\n");
        return -1;
    }
    if (!o->blocks_per_sm) {
        long m = 2048 / o->block_size;
        o->blocks_per_sm = m < 1 ? 1 : m > 32 ? 32 : m;
    }
    return 0;
}

/* Everything the command loads; freed by est_free. */
typedef struct est_data {
    tmap_bbv bbv;
    char **names;
    double *lat;
    uint32_t *perm;
    tmap_cfg *cfg;
    tmap_lat_report report;
    char table[4096];
} est_data;

static void est_free(est_data *d)
{
    tmap_names_free(d->names, d->bbv.nblocks);
    tmap_bbv_free(&d->bbv);
    free(d->lat);
    free(d->perm);
#ifdef TMAP_HAVE_CFG_BUILDER
    tmap_cfg_free(d->cfg);
#endif
    tmap_lat_report_free(&d->report);
}

#ifdef TMAP_HAVE_CFG_BUILDER
/* The BBV sidecar's block names, when present, must be the CFG's. */
static tmap_status est_check_names(const est_data *d, tmap_error *err)
{
    if (!d->names || !d->cfg || d->cfg->nblocks != d->bbv.nblocks)
        return TMAP_OK;
    for (size_t b = 0; b < d->bbv.nblocks; b++)
        if (strcmp(d->names[b], d->cfg->blocks[b].name))
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "BBV column %zu is block '%s' but the CFG's block %zu is '%s'", b,
                             d->names[b], b, d->cfg->blocks[b].name);
    return TMAP_OK;
}

#endif

/* Block latencies from the PTX's CFG and a latency table. */
static tmap_status est_from_cfg(const est_opts *o, est_data *d, tmap_error *err)
{
#ifdef TMAP_HAVE_CFG_BUILDER
    char *text;
    size_t len;
    tmap_ptx_module *m = NULL;
    tmap_lat_table *t = NULL;
    tmap_status s = tmap_file_read(o->cfg, &text, &len, err);
    if (s)
        return s;
    s = tmap_ptx_parse(text, len, o->cfg, &m, err);
    free(text);
    if (!s)
        s = tmap_cfg_build(m, o->kernel, &d->cfg, err);
    tmap_ptx_free(m);
    if (!s && o->table)
        snprintf(d->table, sizeof d->table, "%s", o->table);
    else if (!s)
        s = tmap_lat_default_path("sm_90", d->table, sizeof d->table, err);
    if (!s)
        s = tmap_lat_load(d->table, &t, err);
    if (!s)
        s = tmap_lat_blocks(t, d->cfg, &d->lat, &d->report, err);
    tmap_lat_free(t);
    return s ? s : est_check_names(d, err);
#else
    (void)o;
    (void)d;
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                     "--cfg needs the PTX parser and CFG builder, which this build lacks; "
                     "give --block-latency instead");
#endif
}

static tmap_status est_load(const est_opts *o, est_data *d, tmap_error *err)
{
    tmap_status s = tmap_bbv_load(o->bbv, &d->bbv, &d->names, err);
    size_t dim[2];
    if (!s && o->cfg)
        s = est_from_cfg(o, d, err);
    else if (!s) {
        s = tmap_npy_load_f64(o->lat, TMAP_NPY_1D, &d->lat, dim, err);
        if (!s && dim[0] != d->bbv.nblocks)
            s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu block latencies for a BBV of %zu blocks",
                          o->lat, dim[0], d->bbv.nblocks);
    }
    if (!s && o->perm) {
        s = tmap_npy_load_u32(o->perm, TMAP_NPY_1D, &d->perm, dim, err);
        if (!s && dim[0] != d->bbv.nthreads)
            s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu entries for %zu threads", o->perm,
                          dim[0], d->bbv.nthreads);
        if (!s)
            s = tmap_perm_check(d->perm, dim[0], o->perm, err);
    }
    return s;
}

/* A metric that may be unavailable (NAN) as JSON. */
static json_t *est_num(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static void est_print_json(const est_opts *o, const est_data *d, const tmap_metrics *m)
{
    json_t *root = json_object(), *fb = json_array();
    json_object_set_new(root, "bbv_weighted", json_real(m->bbv_weighted));
    json_object_set_new(root, "bbv_weighted_scheduled", json_real(m->bbv_weighted_scheduled));
    json_object_set_new(root, "zero_divergence_bound", json_real(m->zero_divergence_bound));
    json_object_set_new(root, "divergent_warp_ratio", json_real(m->divergent_warp_ratio));
    json_object_set_new(root, "divergent_branches", est_num(m->divergent_branches));
    json_object_set_new(root, "branch_executions", est_num(m->branch_executions));
    json_object_set_new(root, "branches_unestimated", json_integer((json_int_t)m->branches_unestimated));
    json_object_set_new(root, "simd_efficiency", est_num(m->simd_efficiency));
    json_object_set_new(root, "threads", json_integer((json_int_t)d->bbv.nthreads));
    json_object_set_new(root, "blocks", json_integer((json_int_t)d->bbv.nblocks));
    json_object_set_new(root, "warps", json_integer((json_int_t)m->nwarps));
    json_object_set_new(root, "thread_blocks", json_integer((json_int_t)m->nthread_blocks));
    json_object_set_new(root, "sms", json_integer(o->sms));
    json_object_set_new(root, "blocks_per_sm", json_integer(o->blocks_per_sm));
    json_object_set_new(root, "block_size", json_integer(o->block_size));
    json_object_set_new(root, "latency_table", *d->table ? json_string(d->table) : json_null());
    for (size_t i = 0; i < d->report.n; i++) {
        const tmap_lat_fallback *f = &d->report.items[i];
        json_array_append_new(fb, json_pack("{s:s,s:s,s:s,s:f,s:I}", "opcode", f->opcode, "match",
                                            tmap_lat_match_name(f->how.match), "key", f->how.key,
                                            "latency", f->how.latency, "count",
                                            (json_int_t)f->count));
    }
    json_object_set_new(root, "fallbacks", fb);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    if (s)
        puts(s);
    free(s);
    json_decref(root);
}

static void est_print_text(const est_opts *o, const est_data *d, const tmap_metrics *m)
{
    printf("threads %zu, blocks %zu, warps %zu, thread blocks %zu (size %ld), %ld SMs x %ld "
           "resident\n",
           d->bbv.nthreads, d->bbv.nblocks, m->nwarps, m->nthread_blocks, o->block_size, o->sms,
           o->blocks_per_sm);
    if (*d->table)
        printf("latency table           %s\n", d->table);
    printf("bbv_weighted            %.1f cycles\n", m->bbv_weighted);
    printf("bbv_weighted_scheduled  %.1f cycles\n", m->bbv_weighted_scheduled);
    printf("zero_divergence_bound   %.1f cycles\n", m->zero_divergence_bound);
    printf("divergent_warp_ratio    %.2f %%\n", m->divergent_warp_ratio);
    if (isnan(m->divergent_branches))
        printf("divergent_branches      n/a (needs --cfg)\nsimd_efficiency         n/a (needs --cfg)\n");
    else
        printf("divergent_branches      %.0f of %.0f branch executions (estimate; %zu branch "
               "blocks not estimable)\nsimd_efficiency         %.2f active threads per warp "
               "instruction\n",
               m->divergent_branches, m->branch_executions, m->branches_unestimated,
               m->simd_efficiency);
    for (size_t i = 0; i < d->report.n; i++) {
        const tmap_lat_fallback *f = &d->report.items[i];
        printf("%s %-22s -> %s (%s, %g cycles) x%zu\n", i ? "        " : "fallback", f->opcode,
               f->how.key, tmap_lat_match_name(f->how.match), f->how.latency, f->count);
    }
}

int tmap_cmd_estimate(int argc, char **argv)
{
    est_opts o;
    int r = est_parse(argc, argv, &o);
    if (r) {
        if (r < 0)
            fputs(estimate_usage, stderr);
        return r > 0 ? TMAP_EXIT_OK : TMAP_EXIT_USAGE;
    }
    tmap_error err = {0};
    est_data d = {0};
    tmap_metrics m = {0};
    tmap_model_params p = {(size_t)o.block_size, (size_t)o.sms, (size_t)o.blocks_per_sm};
    tmap_status s = est_load(&o, &d, &err);
    if (!s)
        s = tmap_metrics_compute(&d.bbv, d.lat, d.perm, d.cfg, &p, &m, &err);
    if (!s && o.json)
        est_print_json(&o, &d, &m);
    else if (!s)
        est_print_text(&o, &d, &m);
    tmap_metrics_free(&m);
    est_free(&d);
    return s ? tmap_cli_fail("estimate", &err) : TMAP_EXIT_OK;
}

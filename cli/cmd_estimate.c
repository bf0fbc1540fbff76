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

#include "cli/cliutil.h"
#include "cli/commands.h"
#include "common/base.h"
#include "cli/model_input.h"
#include "threadmap/model.h"

static const char estimate_usage[] =
    "usage: threadmap estimate --bbv BBV.npy (--cfg FILE.ptx --kernel K | --block-latency LAT.npy)\n"
    "                          [--table FILE.tsv] [--perm PERM.npy] [--sms N]\n"
    "                          [--blocks-per-sm M] [--block-size S] [--device] [--json]\n\n"
    "Estimates kernel time from per-thread basic block vectors (Liang et al. TCAD 2016):\n"
    "BBV-weighted (eq. 5), BBV-weighted-scheduled (dynamic round robin), the\n"
    "zero-divergence bound, divergent-warps ratio, divergent branches (estimate) and\n"
    "SIMD efficiency.  Times are in cycles.\n\n"
    ;

typedef struct est_opts {
    tmap_mi_opts in;
    int json;
    int device;   /* take #SM and resident blocks per SM from the GPU */
} est_opts;

static void est_usage(FILE *out)
{
    fprintf(out, "%s%s  --device               take --sms from the GPU and --blocks-per-sm from the\n"
                 "                         occupancy API on the original kernel (needs --cfg,\n"
                 "                         --kernel and a GPU; --block-size is the launch's)\n"
                 "  --json                 print one JSON object\n",
            estimate_usage, tmap_mi_help);
}

/* 0: run; 1: --help printed; -1: usage error (message printed). */
static int est_parse(int argc, char **argv, est_opts *o)
{
    memset(o, 0, sizeof *o);
    tmap_mi_defaults(&o->in);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = tmap_mi_flag(&o->in, "estimate", argc, argv, &i);
        if (r < 0)
            return -1;
        if (r)
            continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            est_usage(stdout);
            return 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--device")) {
            o->device = 1;
        } else {
            fprintf(stderr, "threadmap estimate: unknown argument '%s'\n", a);
            return -1;
        }
    }
    if (o->device && !o->in.cfg) {
        fprintf(stderr, "threadmap estimate: --device needs --cfg and --kernel (the occupancy "
                        "of that kernel)\n");
        return -1;
    }
    return tmap_mi_finish(&o->in, "estimate", 1);
}

/* --device: #SM from the GPU, resident blocks per SM from the occupancy API
 * on the original (uninstrumented) kernel at the given block size. */
static tmap_status est_device(est_opts *o, tmap_error *err)
{
    tmap_cuda *c = NULL;
    tmap_kernel *k = NULL;
    tmap_device_info d;
    tmap_kernel_stats ks;
    char *ptx = NULL;
    tmap_launch l = {{1, 1, 1}, {(unsigned)o->in.block_size, 1, 1}, 0, NULL, 0};
    tmap_status st = tmap_cuda_open(0, &c, err);
    if (!st) st = tmap_cuda_info(c, &d, err);
    if (!st) st = tmap_file_read(o->in.cfg, &ptx, NULL, err);
    if (!st) st = tmap_kernel_load(c, ptx, o->in.kernel, &k, err);
    if (!st) st = tmap_kernel_stats_get(k, &l, &ks, err);
    if (!st) {
        o->in.sms = d.sms;
        o->in.blocks_per_sm = ks.blocks_per_sm;
    }
    tmap_kernel_free(k);
    tmap_cuda_close(c);
    free(ptx);
    return st;
}

static int est_print_json(const est_opts *o, const tmap_mi *d, const tmap_metrics *m)
{
    json_t *root = json_object(), *fb = json_array();
    json_object_set_new(root, "bbv_weighted", json_real(m->bbv_weighted));
    json_object_set_new(root, "bbv_weighted_scheduled", json_real(m->bbv_weighted_scheduled));
    json_object_set_new(root, "zero_divergence_bound", json_real(m->zero_divergence_bound));
    json_object_set_new(root, "divergent_warp_ratio", json_real(m->divergent_warp_ratio));
    json_object_set_new(root, "divergent_branches", tmap_cli_json_num(m->divergent_branches));
    json_object_set_new(root, "branch_executions", tmap_cli_json_num(m->branch_executions));
    json_object_set_new(root, "branches_unestimated", json_integer((json_int_t)m->branches_unestimated));
    json_object_set_new(root, "simd_efficiency", tmap_cli_json_num(m->simd_efficiency));
    json_object_set_new(root, "thread_instructions", tmap_cli_json_num(m->thread_instructions));
    json_object_set_new(root, "warp_instructions", tmap_cli_json_num(m->warp_instructions));
    json_object_set_new(root, "threads", json_integer((json_int_t)d->bbv.nthreads));
    json_object_set_new(root, "blocks", json_integer((json_int_t)d->bbv.nblocks));
    json_object_set_new(root, "warps", json_integer((json_int_t)m->nwarps));
    json_object_set_new(root, "thread_blocks", json_integer((json_int_t)m->nthread_blocks));
    json_object_set_new(root, "sms", json_integer(o->in.sms));
    json_object_set_new(root, "blocks_per_sm", json_integer(o->in.blocks_per_sm));
    json_object_set_new(root, "block_size", json_integer(o->in.block_size));
    json_object_set_new(root, "latency_table", tmap_cli_json_str(d->table));
    for (size_t i = 0; i < d->report.n; i++) {
        const tmap_lat_fallback *f = &d->report.items[i];
        json_array_append_new(fb, json_pack("{s:s,s:s,s:s,s:f,s:I}", "opcode", f->opcode, "match",
                                            tmap_lat_match_name(f->how.match), "key", f->how.key,
                                            "latency", f->how.latency, "count",
                                            (json_int_t)f->count));
    }
    json_object_set_new(root, "fallbacks", fb);
    return tmap_cli_print_json("estimate", root);
}

static void est_print_text(const est_opts *o, const tmap_mi *d, const tmap_metrics *m)
{
    printf("threads %zu, blocks %zu, warps %zu, thread blocks %zu (size %ld), %ld SMs x %ld "
           "resident\n",
           d->bbv.nthreads, d->bbv.nblocks, m->nwarps, m->nthread_blocks, o->in.block_size, o->in.sms,
           o->in.blocks_per_sm);
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
               "instruction (%.4g thread, %.4g warp instructions)\n",
               m->divergent_branches, m->branch_executions, m->branches_unestimated,
               m->simd_efficiency, m->thread_instructions, m->warp_instructions);
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
    if (r)
        return r > 0 ? TMAP_EXIT_OK : (est_usage(stderr), TMAP_EXIT_USAGE);
    tmap_error err = {0};
    tmap_mi d = {0};
    tmap_metrics m = {0};
    tmap_status s = o.device ? est_device(&o, &err) : TMAP_OK;
    if (!s)
        s = tmap_mi_load(&o.in, &d, &err);
    if (!s)
        s = tmap_metrics_compute(&d.bbv, d.lat, d.perm, d.cfg, &d.params, &m, &err);
    int rc = s ? tmap_cli_fail("estimate", &err) : TMAP_EXIT_OK;
    if (!s && o.json)
        rc = est_print_json(&o, &d, &m);
    else if (!s)
        est_print_text(&o, &d, &m);
    tmap_metrics_free(&m);
    tmap_mi_free(&d);
    return rc;
}

/*
 * cmd_estimate.c -- `threadmap estimate`: the divergence metrics of a BBV
 * (Liang et al. section IV) with block latencies from a kernel's CFG and a
 * latency table, or given directly; text or JSON output.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"
#include "common/base.h"
#include "cli/model_input.h"
#include "threadmap/report.h"

static const char estimate_usage[] =
    "usage: threadmap estimate --bbv BBV.npy (--cfg FILE.ptx --kernel K | --block-latency LAT.npy)\n"
    "                          [--table FILE.tsv] [--perm PERM.npy] [--sms N]\n"
    "                          [--blocks-per-sm M] [--block-size S] [--device] [--json]\n\n"
    "Estimates kernel time from per-thread basic block vectors (Liang et al. TCAD 2016):\n"
    "BBV-weighted (eq. 5), BBV-weighted-scheduled (dynamic round robin), the\n"
    "zero-divergence time (the original launch if no warp diverged), divergent warps\n"
    "(%), divergent branches (estimate) and SIMD efficiency (active threads of 32 per\n"
    "warp instruction, and %).  Times are in cycles.\n\n"
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

/* The metrics of the grouping estimated, as text or JSON (report/). */
static int est_print(const est_opts *o, const tmap_mi *d, const tmap_metrics *m)
{
    tmap_report_row row = {.name = d->perm ? "permutation" : "original", .available = 1, .m = m,
                           .outputs_equal = -1};
    tmap_report r = {.bbv = &d->bbv, .lat = d->lat, .params = &d->params,
                     .latency_table = *d->table ? d->table : NULL, .fallbacks = &d->report,
                     .nrows = 1, .rows = &row};
    tmap_error err = {0};
    tmap_status s = o->json ? tmap_report_estimate_json(&r, stdout, &err)
                            : tmap_report_estimate_text(&r, stdout, &err);
    return s ? tmap_cli_fail("estimate", &err) : TMAP_EXIT_OK;
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
    if (!s)
        rc = est_print(&o, &d, &m);
    tmap_metrics_free(&m);
    tmap_mi_free(&d);
    return rc;
}

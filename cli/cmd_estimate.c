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
    "                          [--blocks-per-sm M] [--block-size S] [--device N] [--json] [-q]\n\n"
    "Estimates kernel time from per-thread basic block vectors (Liang et al. TCAD 2016):\n"
    "BBV-weighted (eq. 5), BBV-weighted-scheduled (dynamic round robin), the\n"
    "zero-divergence time (the original launch if no warp diverged), divergent warps\n"
    "(%), divergent branches (estimate) and SIMD efficiency (active threads of 32 per\n"
    "warp instruction, and %).  Times are in cycles.\n\n"
    ;

typedef struct est_opts {
    tmap_mi_opts in;
    long device;  /* --device N: #SM and resident blocks per SM from GPU N; -1: not given */
} est_opts;

static void usage(FILE *out)
{
    fprintf(out, "%s%s"
                 "  --perm PERM.npy        permutation [threads]: slot i runs original thread\n"
                 "                         PERM[i]; the metrics are those of that regrouping\n"
                 "  --device N             take --sms from GPU N and --blocks-per-sm from the\n"
                 "                         occupancy API on the original kernel (needs --cfg,\n"
                 "                         --kernel and a GPU; --block-size is the launch's)\n"
                 "  --json                 print one JSON object (the metrics' keys are in\n"
                 "                         docs/report.md: bbv_weighted_cycles, ...)\n"
                 "  -q, --quiet            print nothing: only check the inputs\n"
                 "  -h, --help             this text\n\n"
                 "example: threadmap estimate --bbv prof/run0.bbv.npy --cfg prof/kernel.ptx\n"
                 "           --kernel divergent --blocks-per-sm 8 --json\n",
            estimate_usage, tmap_mi_help);
}

/* 0: run; -1: stop (exit code in a->rc). */
static int est_parse(tmap_args *a, est_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = -1;
    tmap_mi_defaults(&o->in);
    for (int c; (c = tmap_args_next(a)) != 0;) {
        int r = c < 0 ? -1 : tmap_mi_option(&o->in, a, c);
        if (r < 0)
            return -1;
        if (r)
            continue;
        if (c != 'd')
            return tmap_args_bad(a, "unexpected option %s", a->opt);
        if (tmap_args_long(a, 0, 1024, &o->device))
            return -1;
    }
    if (tmap_args_operands(a, 0, 0))
        return -1;
    if (o->device >= 0 && !o->in.cfg)
        return tmap_args_bad(a, "--device needs --cfg and --kernel (the occupancy of that "
                                "kernel)");
    return tmap_mi_finish(&o->in, a, 1) || tmap_args_files(a) ? -1 : 0;
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
    tmap_status st = tmap_cuda_open((int)o->device, &c, err);
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
static int est_print(const tmap_args *a, const tmap_mi *d, const tmap_metrics *m)
{
    tmap_report_row row = {.name = d->perm ? "permutation" : "original", .available = 1, .m = m,
                           .outputs_equal = -1};
    tmap_report r = {.bbv = &d->bbv, .lat = d->lat, .params = &d->params,
                     .latency_table = *d->table ? d->table : NULL, .fallbacks = &d->report,
                     .nrows = 1, .rows = &row};
    tmap_error err = {0};
    tmap_status s = a->json    ? tmap_report_estimate_json(&r, stdout, &err)
                    : a->quiet ? TMAP_OK
                               : tmap_report_estimate_text(&r, stdout, &err);
    return s ? tmap_cli_fail("estimate", &err) : TMAP_EXIT_OK;
}

int tmap_cmd_estimate(int argc, char **argv)
{
    static const struct option opts[] = {TMAP_MI_OPTIONS, TMAP_MI_PERM_OPTION,
                                          {"device", required_argument, NULL, 'd'},
                                          TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON, {0}};
    est_opts o;
    tmap_args a;
    tmap_args_init(&a, "estimate", usage, argc, argv, opts, "k:hq");
    if (est_parse(&a, &o))
        return a.rc;
    tmap_error err = {0};
    tmap_mi d = {0};
    tmap_metrics m = {0};
    tmap_status s = o.device >= 0 ? est_device(&o, &err) : TMAP_OK;
    if (!s)
        s = tmap_mi_load(&o.in, &d, &err);
    if (!s)
        s = tmap_metrics_compute(&d.bbv, d.lat, d.perm, d.cfg, &d.params, &m, &err);
    int rc = s ? tmap_cli_fail("estimate", &err) : TMAP_EXIT_OK;
    if (!s)
        rc = est_print(&a, &d, &m);
    tmap_metrics_free(&m);
    tmap_mi_free(&d);
    return rc;
}

/*
 * cmd_bench.c -- `threadmap bench`: the paper's evaluation (Liang et al.,
 * TCAD 2016, section VII) in one command.  For each kernel manifest:
 * profile on the profiling seeds, train the predictor, run the whole
 * pipeline on the evaluation seed with every candidate applied and timed
 * (cli/bench_kernel.c); then results.csv, results.json, report.md and the
 * plots (model/bench*.c).  Progress goes to stderr, a summary to stdout.
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "threadmap/report.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "common/base.h"

static const char usage_text[] =
    "usage: threadmap bench [--kernels M1.json,M2.json | --suite DIR] [options]\n"
    "\n"
    "Reproduces section VII of Liang et al. (TCAD 2016) on this GPU.  For each kernel:\n"
    "profiling runs on the profiling seeds, the BBV predictor (eq. 1) trained on them,\n"
    "then on the evaluation seed (a different input) the BBVs predicted, every candidate\n"
    "regrouping scored by the model, applied for real, checked against the original's\n"
    "outputs and timed (CUDA events, median).  Writes into DIR: results.csv,\n"
    "results.json, report.md (Tables IV and V, speedups, the targets), SVG plots, and\n"
    "per kernel KERNEL/model.txt and KERNEL/report.{txt,md,json,html}.\n"
    "\n"
    "options:\n"
    "  --kernels LIST      comma-separated manifests (default: every benchmarks/suite/*.json,\n"
    "                      or benchmarks/manifests/*.json when the suite has none)\n"
    "  --suite DIR         every DIR/*.json\n"
    "  -o, --output DIR    output folder (default bench-results; not -)\n"
    "  --profile-seeds L   comma-separated profiling seeds (default 101,102)\n"
    "  --seed S            evaluation seed (default 7)\n"
    "  --reps N            timed launches per measurement, at least 10 (default 10; capped\n"
    "                      by --budget, never below 10); 3 warm-up launches\n"
    "  --launches L        launches per computed permutation (default 1: computed before each\n"
    "                      launch, as in the paper; L > 1: reused, e.g. a solver's iterations)\n"
    "  --sample K          profile every K-th thread block (default: about 2^18 threads per run)\n"
    "  --bbv-source MODE   predicted (default) or measured (profile the evaluation input)\n"
    "  --table FILE        latency table (default: the GPU's)\n"
    "  --metric M          the model that ranks the candidates: sm90 (default: the SM\n"
    "                      model, docs/model.md) or scheduled (the paper's\n"
    "                      BBV-weighted-scheduled)\n"
    "  --budget SEC        time budget of the whole run for the reps cap (default 540)\n"
    "  -d, --device N      GPU ordinal (default 0)\n"
    "  -q, --quiet         no progress on stderr, no summary on stdout\n"
    "  --json              print results.json instead of the text summary\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 ok, 1 a kernel failed or a regrouping changed the outputs, 2 bad usage,\n"
    "3 no GPU.  Run it from the repository root (the default kernel set is relative).\n"
    "example: threadmap bench --out benchmarks/results/bench\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

typedef struct bench_opts {
    tmap_bench_cfg cfg;
    const char *kernels, *suite;
    long device;
    int launches;
} bench_opts;

/* Splits "a,b" into seeds; -1 on a bad number or too many. */
static int parse_seeds(const char *s, tmap_bench_cfg *c)
{
    c->nseeds = 0;
    char *copy = strdup(s), *save = NULL;
    int rc = copy ? 0 : -1;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !rc; t = strtok_r(NULL, ",", &save)) {
        long v;
        char *end;
        errno = 0;
        v = strtol(t, &end, 10);
        if (c->nseeds == TMAP_BENCH_MAXSEEDS || errno || *end || v < 0)
            rc = -1;
        else
            c->profile_seeds[c->nseeds++] = (uint64_t)v;
    }
    free(copy);
    return rc || !c->nseeds ? -1 : 0;
}

enum { OPT_KERNELS = 0x1800, OPT_SUITE, OPT_PSEEDS, OPT_SEED, OPT_REPS, OPT_LAUNCHES,
       OPT_SAMPLE, OPT_SOURCE, OPT_TABLE, OPT_BUDGET, OPT_METRIC };

/* One option (value in optarg): 0 taken, -1 stop. */
static int bench_option(tmap_args *a, bench_opts *o, int c)
{
    static const char *const sources[] = {"predicted", "measured"};
    static const char *const metrics[] = {"sm90", "scheduled"};
    long v = 0;
    int i, bad = 0;
    switch (c) {
    case OPT_KERNELS: o->kernels = optarg; break;
    case OPT_SUITE: o->suite = optarg; break;
    case 'o': o->cfg.out = tmap_args_output_dir(a, optarg); break;
    case OPT_PSEEDS:
        if (parse_seeds(optarg, &o->cfg))
            return tmap_args_bad(a, "--profile-seeds wants up to %d comma-separated seeds",
                                 TMAP_BENCH_MAXSEEDS);
        break;
    case OPT_SEED: bad = tmap_args_long(a, 0, 1L << 62, &v); o->cfg.seed = (uint64_t)v; break;
    case OPT_REPS: bad = tmap_args_long(a, 10, 100000, &v); o->cfg.reps = (int)v; break;
    case OPT_LAUNCHES: bad = tmap_args_long(a, 1, 1L << 30, &v); o->launches = o->cfg.launches = (int)v; break;
    case OPT_SAMPLE: bad = tmap_args_long(a, 1, 1L << 30, &o->cfg.sample); break;
    case OPT_SOURCE: bad = tmap_args_choice(a, sources, 2, &i); o->cfg.measured_bbv = !bad && i; break;
    case OPT_TABLE: o->cfg.table = tmap_args_input(a, optarg); break;
    case OPT_BUDGET: bad = tmap_args_double(a, 1, 1e6, &o->cfg.budget_s); break;
    case OPT_METRIC: bad = tmap_args_choice(a, metrics, 2, &i); o->cfg.paper_metric = !bad && i; break;
    case 'd': bad = tmap_args_long(a, 0, 1024, &o->device); break;
    default: return tmap_args_bad(a, "unexpected option %s", a->opt);
    }
    return bad;
}

/* 0 run, -1 stop (exit code in a->rc). */
static int parse(tmap_args *a, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->cfg = (tmap_bench_cfg){.out = "bench-results", .seed = 7, .reps = 10, .warmup = 3,
                              .budget_s = 540, .launches = 1};
    o->launches = 1;
    parse_seeds("101,102", &o->cfg);
    for (int c; (c = tmap_args_next(a)) != 0;)
        if (c < 0 || bench_option(a, o, c))
            return -1;
    o->cfg.quiet = a->quiet;
    if (tmap_args_operands(a, 0, 0) || tmap_args_files(a))
        return -1;
    if (o->kernels && o->suite)
        return tmap_args_bad(a, "give --kernels or --suite, not both");
    for (size_t i = 0; i < o->cfg.nseeds; i++)
        if (o->cfg.profile_seeds[i] == o->cfg.seed && !o->cfg.quiet)
            fprintf(stderr, "threadmap bench: warning: the evaluation seed is also a profiling seed\n");
    return 0;
}

static char **glob_dir(const char *dir, size_t *n)
{
    char pattern[4200];
    glob_t g;
    char **out = NULL;
    *n = 0;
    snprintf(pattern, sizeof pattern, "%s/*.json", dir);
    if (glob(pattern, 0, NULL, &g) != 0)
        return NULL;
    out = calloc(g.gl_pathc + 1, sizeof *out);
    for (size_t i = 0; out && i < g.gl_pathc; i++)
        out[(*n)++] = strdup(g.gl_pathv[i]);
    globfree(&g);
    return out;
}

/* The manifests to run (malloc'ed strings); NULL and a message if none. */
static char **kernel_list(const bench_opts *o, size_t *n)
{
    char **out = NULL;
    *n = 0;
    if (o->kernels) {
        char *copy = strdup(o->kernels), *save = NULL;
        out = calloc(strlen(o->kernels) + 2, sizeof *out);
        for (char *t = copy && out ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
            out[(*n)++] = strdup(t);
        free(copy);
    } else if (o->suite) {
        out = glob_dir(o->suite, n);
    } else if (!(out = glob_dir("benchmarks/suite", n))) {
        out = glob_dir("benchmarks/manifests", n);
    }
    if (!*n) {
        fprintf(stderr, "threadmap bench: no manifests (%s) (see threadmap bench --help)\n",
                o->kernels ? "--kernels is empty" : o->suite ? "--suite has no *.json"
                : "benchmarks/suite and benchmarks/manifests have no *.json: run from the "
                  "repository root or give --kernels");
        free(out);
        return NULL;
    }
    return out;
}

/* Whether s is a version number: digits and dots, a dot among them. */
static int is_version(const char *s)
{
    return isdigit((unsigned char)*s) && strchr(s, '.') && strspn(s, "0123456789.") == strlen(s);
}

/* The kernel module's version from /proc/driver/nvidia/version, if any: the
 * first version number of its first line ("NVRM version: NVIDIA UNIX Open
 * Kernel Module for x86_64  580.159.04  Release Build ..."). */
static void driver_version(char *buf, size_t size)
{
    char line[512] = "", *save = NULL;
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    snprintf(buf, size, "unknown");
    if (!f)
        return;
    if (fgets(line, sizeof line, f))
        for (char *w = strtok_r(line, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
            if (is_version(w)) {
                snprintf(buf, size, "%s", w);
                break;
            }
    fclose(f);
}

static void run_info(tmap_bench_run *r, const tmap_device_info *d, const bench_opts *o, int argc,
                     char **argv)
{
    int ma = 0, mi = 0;
    time_t now = time(NULL);
    struct tm tm;
    snprintf(r->device, sizeof r->device, "%s", d->name);
    snprintf(r->arch, sizeof r->arch, "sm_%d%d", d->cc_major, d->cc_minor);
    r->sms = d->sms;
    r->sm_clock_mhz = d->clock_khz / 1000;
    r->mem_clock_mhz = d->mem_clock_khz / 1000;
    r->bus_width_bits = d->mem_bus_width_bits;
    r->peak_gbps = tmap_bench_peak_gbps(d->mem_clock_khz, d->mem_bus_width_bits);
    driver_version(r->driver, sizeof r->driver);
    snprintf(r->cuda, sizeof r->cuda, "%d.%d", d->driver_version / 1000, (d->driver_version % 1000) / 10);
    if (tmap_nvrtc_version(&ma, &mi) == 0)
        snprintf(r->nvrtc, sizeof r->nvrtc, "%d.%d", ma, mi);
    else
        snprintf(r->nvrtc, sizeof r->nvrtc, "unknown");
    gmtime_r(&now, &tm);
    strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    tmap_buf cmd = {0};
    tmap_buf_puts(&cmd, "threadmap");
    for (int i = 0; i < argc; i++)
        tmap_buf_printf(&cmd, strpbrk(argv[i], " \t'\"") ? " '%s'" : " %s", argv[i]);
    snprintf(r->command, sizeof r->command, "%s", cmd.data ? cmd.data : "threadmap bench");
    tmap_buf_free(&cmd);
    snprintf(r->bbv_source, sizeof r->bbv_source, "%s", o->cfg.measured_bbv ? "measured" : "predicted");
    size_t len = 0;
    for (size_t i = 0; i < o->cfg.nseeds && len < sizeof r->profile_seeds; i++)
        len += (size_t)snprintf(r->profile_seeds + len, sizeof r->profile_seeds - len, "%s%llu", i ? "," : "",
                                (unsigned long long)o->cfg.profile_seeds[i]);
    r->seed = (unsigned long long)o->cfg.seed;
    r->launches = o->launches;
}

/* One line per kernel once it is done (stderr, with progress). */
static void kernel_done(const bench_opts *o, size_t i, size_t n, tmap_bench_kernel *k, int launches,
                        double peak)
{
    if (o->cfg.quiet)
        return;
    if (!k->ok) {
        fprintf(stderr, "threadmap bench: [%zu/%zu] %s: FAILED after %.1f s: %s\n", i + 1, n, k->name, k->wall_s,
                k->error);
        return;
    }
    tmap_bench_derive(k, launches, peak);
    int g = tmap_bench_find(k, "greedy-max");
    char gmax[48] = "not available";
    if (g >= 0 && isfinite(k->opt[g].speedup_total))
        snprintf(gmax, sizeof gmax, "%.2fx with overhead", k->opt[g].speedup_total);
    fprintf(stderr, "threadmap bench: [%zu/%zu] %s: %.1f s; original %.3f ms, greedy-max %s, "
                    "regroup() chose %s, outputs %s\n",
            i + 1, n, k->name, k->wall_s, k->opt[0].kernel_ms, gmax, k->opt[k->chosen].name,
            k->outputs_ok ? "equal" : "DIFFER");
}

static void print_summary(const tmap_bench_run *r, const char *out)
{
    printf("%-24s %8s %10s %12s %12s %10s %8s\n", "kernel", "wall s", "orig ms", "gmax x(ovh)", "sched err pp",
           "chosen", "outputs");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok) {
            printf("%-24s %8.1f FAILED: %s\n", k->name, k->wall_s, k->error);
            continue;
        }
        int g = tmap_bench_find(k, "greedy-max");
        char gmax[24] = "-"; /* not available */
        if (g >= 0 && isfinite(k->opt[g].speedup_total))
            snprintf(gmax, sizeof gmax, "%.2f", k->opt[g].speedup_total);
        printf("%-24s %8.1f %10.3f %12s %12.1f %10s %8s\n", k->name, k->wall_s, k->opt[0].kernel_ms, gmax,
               k->error_pp[TMAP_BM_SCHEDULED], k->opt[k->chosen].name, k->outputs_ok ? "equal" : "DIFFER");
    }
    printf("total %.1f s; report: %s/report.md\n", r->wall_s, out);
}

static int print_json(const char *out)
{
    char path[4200], *text = NULL;
    snprintf(path, sizeof path, "%s/results.json", out);
    if (tmap_file_read(path, &text, NULL, NULL) != TMAP_OK)
        return -1;
    fputs(text, stdout);
    free(text);
    return 0;
}

static void free_run(tmap_bench_run *r, char **list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(list[i]);
        if (r->k)
            free(r->k[i].r2);
    }
    free(list);
    free(r->k);
}

/* The per-kernel report, written into the kernel's folder of the run. */
static tmap_status write_kernel_report(const tmap_eval *e, const char *dir, void *user,
                                       tmap_error *err)
{
    tmap_report_row rows[TMAP_ALGO_COUNT];
    const char **names = calloc(e->cfg->nblocks + 1, sizeof *names);
    if (!names)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    tmap_report rep;
    tmap_run_report(e, rows, names, &rep);
    tmap_status st = tmap_report_write_dir(&rep, dir, err);
    free(names);
    return st;
}

int tmap_cmd_bench(int argc, char **argv)
{
    static const struct option opts[] = {
        {"kernels", 1, 0, OPT_KERNELS}, {"suite", 1, 0, OPT_SUITE},
        {"profile-seeds", 1, 0, OPT_PSEEDS}, {"seed", 1, 0, OPT_SEED},
        {"reps", 1, 0, OPT_REPS}, {"launches", 1, 0, OPT_LAUNCHES},
        {"sample", 1, 0, OPT_SAMPLE}, {"bbv-source", 1, 0, OPT_SOURCE},
        {"table", 1, 0, OPT_TABLE}, {"budget", 1, 0, OPT_BUDGET},
        {"metric", 1, 0, OPT_METRIC}, {"device", 1, 0, 'd'},
        TMAP_ARGS_OUTPUT, TMAP_ARGS_QUIET, TMAP_ARGS_JSON, TMAP_ARGS_HELP, {0}};
    bench_opts o;
    tmap_args a;
    tmap_args_init(&a, "bench", usage, argc, argv, opts, "o:d:qh");
    if (parse(&a, &o))
        return a.rc;
    size_t n;
    char **list = kernel_list(&o, &n);
    if (!list)
        return TMAP_EXIT_USAGE;
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_device_info d;
    tmap_bench_run run = {0};
    double t0 = tmap_clock_seconds();
    tmap_status st = tmap_cuda_open((int)o.device, &c, &err);
    if (!st) st = tmap_cuda_info(c, &d, &err);
    if (!st) st = tmap_dir_make(o.cfg.out, &err);
    if (!st && !(run.k = calloc(n, sizeof *run.k)))
        st = tmap_fail(&err, TMAP_ERR_NOMEM, "out of memory");
    if (st) {
        free_run(&run, list, n);
        tmap_cuda_close(c);
        return tmap_cli_fail("bench", &err);
    }
    run_info(&run, &d, &o, argc, argv);
    run.nkernels = n;
    o.cfg.nkernels = n;
    o.cfg.on_eval = write_kernel_report;
    for (size_t i = 0; i < n; i++) {
        tmap_error ke = {0};
        tmap_bench_kernel_run(c, &d, list[i], &o.cfg, i, &run.k[i], &ke);
        kernel_done(&o, i, n, &run.k[i], run.launches, run.peak_gbps);
    }
    run.wall_s = tmap_clock_seconds() - t0;
    st = tmap_bench_write_dir(&run, o.cfg.out, &err);
    if (!st && a.json && print_json(o.cfg.out))
        st = tmap_fail(&err, TMAP_ERR_IO, "%s/results.json: cannot read it back", o.cfg.out);
    else if (!st && !a.json && !a.quiet)
        print_summary(&run, o.cfg.out);
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= !run.k[i].ok || !run.k[i].outputs_ok;
    if (!st && bad)
        st = tmap_fail(&err, TMAP_ERR_INVALID, "a kernel failed or a regrouping changed the outputs "
                       "(see %s/report.md)", o.cfg.out);
    free_run(&run, list, n);
    tmap_cuda_close(c);
    return st ? tmap_cli_fail("bench", &err) : TMAP_EXIT_OK;
}

/*
 * cmd_run.c -- `threadmap run MANIFEST`: the whole pipeline on a new input
 * on the GPU: BBVs (predicted by a trained model, or profiled), the plan,
 * every candidate applied for real and timed, outputs checked against the
 * original launch, and the performance-estimate report.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"
#include "threadmap/report.h"
#include "common/base.h"

static const char usage[] =
    "usage: threadmap run MANIFEST [options]\n"
    "\n"
    "Runs the manifest's kernel on a new input and regroups it before launch: the\n"
    "per-thread BBVs are predicted (--model) or measured by a profiling run, every\n"
    "candidate regrouping is scored by the model (BBV-weighted-scheduled plus the\n"
    "measured cost of applying it), applied for real by layout transform or\n"
    "redirection (as the safety analysis allows), checked against the original\n"
    "launch's outputs and timed (CUDA events, median).  Prints the report.\n"
    "\n"
    "options:\n"
    "  --model MODEL       predictor from `threadmap train` (default: profile this input)\n"
    "  --seed S            the input: seed of the generated arrays (default 7)\n"
    "  --algo A            only this candidate (identity, sorting, greedy, greedy-max, key)\n"
    "  --mechanism M       layout, redirect, or auto (default: layout when safe)\n"
    "  --scope S           grid, block, or auto (default: from the safety analysis)\n"
    "  --groupsize G       threads per group, a multiple of 32 (default 32)\n"
    "  --threads N         CPU threads that find the distinct BBV rows (default 1)\n"
    "  --threshold F       required predicted gain (default 0.05)\n"
    "  --chosen-only       apply and time only the chosen candidate\n"
    "  --launches L        launches that will reuse the regrouping (same input): the\n"
    "                      algorithm's time is spread over them (default 1)\n"
    "  --table FILE        latency table (default: the GPU's, e.g. latency_tables/sm_90.tsv)\n"
    "  --reps N            timed launches per measurement (default 10; 3 warm-up)\n"
    "  --device N          GPU ordinal (default 0)\n"
    "  -o, --out DIR       also write DIR/report.{txt,md,json,html}\n"
    "  --json              print the report as JSON instead of text\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 ok, 1 failed (including outputs that differ), 2 bad usage, 3 no GPU\n"
    "example: threadmap run examples/divergent/manifest.json -o report\n";

typedef struct run_opts {
    tmap_eval_opts e;
    const char *manifest, *out;
    long device;
    int json;
} run_opts;

static int parse_mechanism(const char *s, int *m)
{
    *m = !strcmp(s, "auto") ? -1 : !strcmp(s, "layout") ? TMAP_MECH_LAYOUT
       : !strcmp(s, "redirect") ? TMAP_MECH_REDIRECT : -2;
    return *m == -2 ? -1 : 0;
}

static int parse_scope(const char *s, int *scope)
{
    *scope = !strcmp(s, "auto") ? -1 : !strcmp(s, "grid") ? TMAP_REGROUP_GRID
           : !strcmp(s, "block") ? TMAP_REGROUP_BLOCK : -2;
    return *scope == -2 ? -1 : 0;
}

/* 0 run, 1 help, -1 usage error (message printed). */
static int parse(int argc, char **argv, run_opts *o)
{
    static const struct option lo[] = {
        {"model", 1, 0, 'm'},     {"seed", 1, 0, 's'},     {"algo", 1, 0, 'a'},
        {"mechanism", 1, 0, 'M'}, {"scope", 1, 0, 'S'},    {"groupsize", 1, 0, 'g'},
        {"threshold", 1, 0, 't'}, {"chosen-only", 0, 0, 'c'}, {"table", 1, 0, 'T'},
        {"reps", 1, 0, 'r'},      {"device", 1, 0, 'd'},   {"out", 1, 0, 'o'},
        {"json", 0, 0, 'j'},      {"help", 0, 0, 'h'},     {"launches", 1, 0, 'L'},
        {"threads", 1, 0, 'n'}, {0}};
    long v;
    memset(o, 0, sizeof *o);
    o->e = (tmap_eval_opts){.seed = 7, .warmup = 3, .reps = 10, .threshold = 0.05,
                            .groupsize = 32, .scope = -1, .mechanism = -1, .measure_all = 1};
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1;) {
        int a;
        switch (c) {
        case 'm': o->e.model_path = optarg; break;
        case 's': if (tmap_cli_long(optarg, 0, 1L << 62, &v)) return -1; o->e.seed = (uint64_t)v; break;
        case 'a':
            if ((a = tmap_algo_parse(optarg)) < 0) {
                fprintf(stderr, "threadmap run: unknown algorithm '%s'\n", optarg);
                return -1;
            }
            o->e.algos = 1u << a;
            break;
        case 'M': if (parse_mechanism(optarg, &o->e.mechanism)) return -1; break;
        case 'S': if (parse_scope(optarg, &o->e.scope)) return -1; break;
        case 'g': if (tmap_cli_long(optarg, 32, 1 << 20, &v)) return -1; o->e.groupsize = (size_t)v; break;
        case 't':
            if (tmap_cli_double(optarg, &o->e.threshold) || o->e.threshold < 0 || o->e.threshold >= 1)
                return -1;
            break;
        case 'n':
            if (tmap_cli_long(optarg, 1, TMAP_REGROUP_MAX_THREADS, &v)) return -1;
            o->e.threads = (size_t)v;
            break;
        case 'c': o->e.measure_all = 0; break;
        case 'L':
            if (tmap_cli_double(optarg, &o->e.launches) || o->e.launches < 1) {
                fprintf(stderr, "threadmap run: --launches wants a number >= 1\n");
                return -1;
            }
            break;
        case 'T': o->e.table_path = optarg; break;
        case 'r': if (tmap_cli_long(optarg, 1, 100000, &v)) return -1; o->e.reps = (int)v; break;
        case 'd': if (tmap_cli_long(optarg, 0, 1024, &o->device)) return -1; break;
        case 'o': o->out = optarg; break;
        case 'j': o->json = 1; break;
        case 'h': fputs(usage, stdout); return 1;
        default: return -1;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "threadmap run: give one MANIFEST\n");
        return -1;
    }
    o->manifest = argv[optind];
    return 0;
}

/* Exit status: a regrouping whose outputs differ from the original's is a
 * failure, whatever the timings say. */
static int all_equal(const tmap_eval *e)
{
    for (size_t i = 0; i < e->plan.n; i++)
        if (e->outputs_equal[i] == 0)
            return 0;
    return 1;
}

int tmap_cmd_run(int argc, char **argv)
{
    run_opts o;
    int r = parse(argc, argv, &o);
    if (r)
        return r > 0 ? TMAP_EXIT_OK : (fputs(usage, stderr), TMAP_EXIT_USAGE);
    tmap_error err = {0};
    tmap_manifest *m = NULL;
    tmap_cuda *c = NULL;
    tmap_eval e;
    int have_eval = 0;
    tmap_status st = tmap_manifest_load(o.manifest, &m, &err);
    if (!st) st = tmap_pipeline_open(o.manifest, o.e.seed, (int)o.device, &c, &err);
    if (!st) st = tmap_evaluate(c, m, &o.e, &e, &err);
    have_eval = !st;
    if (!st) {
        tmap_report_row rows[TMAP_ALGO_COUNT];
        const char **names = calloc(e.cfg->nblocks + 1, sizeof *names);
        tmap_report rep;
        tmap_run_report(&e, rows, names, &rep);
        st = o.json ? tmap_report_json(&rep, stdout, &err) : tmap_report_text(&rep, stdout, &err);
        if (!st && o.out)
            st = tmap_report_write_dir(&rep, o.out, &err);
        free(names);
    }
    if (!st && !all_equal(&e))
        st = tmap_fail(&err, TMAP_ERR_INVALID, "a regrouped launch gave outputs different "
                       "from the original's (see the report): this kernel is not safe to "
                       "regroup this way");
    if (have_eval)
        tmap_eval_free(&e);
    tmap_manifest_free(m);
    tmap_cuda_close(c);
    return st ? tmap_cli_fail("run", &err) : TMAP_EXIT_OK;
}

/*
 * cmd_run.c -- `threadmap run MANIFEST`: the whole pipeline on a new input
 * on the GPU: BBVs (predicted by a trained model, or profiled), the plan,
 * every candidate applied for real and timed, outputs checked against the
 * original launch, and the performance-estimate report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmd_attach.h"
#include "cli/commands.h"
#include "threadmap/report.h"
#include "common/base.h"

static void usage(FILE *f)
{
    fputs("usage: threadmap run MANIFEST [options]\n"
          "       threadmap run --key EXPR [options] -- ./app [args...]  (options: run -h --)\n"
    "\n"
    "Runs the manifest's kernel on a new input and regroups it before launch: the\n"
    "per-thread BBVs are predicted (--model) or measured by a profiling run, every\n"
    "candidate regrouping is scored by the model (the SM model, sm90, or --metric,\n"
    "plus the measured cost of applying it), applied for real by layout transform or\n"
    "redirection (as the safety analysis allows), checked against the original\n"
    "launch's outputs and timed (CUDA events, median).  Prints the report.\n"
    "MANIFEST cannot be - (the files it names are relative to its folder).\n"
    "\n"
    "options:\n"
    "  --model MODEL       predictor from `threadmap train` (default: profile this input;\n"
    "                      - reads it from stdin)\n"
    "  --seed S            the input: seed of the generated arrays (default 7)\n"
    "  -a, --algo A        only this candidate (identity, sorting, greedy, greedy-max, key,\n"
    "                      bin-and-deal)\n"
    "  --mechanism M       layout, redirect, or auto (default: layout when safe)\n"
    "  --scope S           grid, block, or auto (default: from the safety analysis)\n"
    "  --groupsize G       threads per group, a multiple of 32 (default 32)\n"
    "  --threads N         CPU threads that find the distinct BBV rows (default 1)\n"
    "  --threshold F       required predicted gain (default 0.05)\n"
    "  --metric M          the model that ranks the candidates: sm90 (default: the SM\n"
    "                      model, docs/model.md) or scheduled (the paper's\n"
    "                      BBV-weighted-scheduled)\n"
    "  --chosen-only       apply and time only the chosen candidate\n"
    "  --launches L        launches that will reuse the regrouping (same input): the\n"
    "                      algorithm's time is spread over them (default 1)\n"
    "  --table FILE        latency table (default: the GPU's, e.g. latency_tables/sm_90.tsv)\n"
    "  --reps N            timed launches per measurement (default 10; 3 warm-up)\n"
    "  -d, --device N      GPU ordinal (default 0)\n"
    "  -o, --output DIR    also write DIR/report.{txt,md,json,html} (not -)\n"
    "  --json              print the report as JSON instead of text (docs/report.md)\n"
    "  -q, --quiet         print nothing (with -o, only write the folder)\n"
    "  -v, --verbose       on a failed compilation print NVRTC's whole log\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 ok, 1 failed (including outputs that differ), 2 bad usage, 3 no GPU\n"
    "example: threadmap run examples/divergent/manifest.json -o report\n", f);
}

typedef struct run_opts {
    tmap_eval_opts e;
    const char *manifest, *out;
    long device;
    int verbose;
} run_opts;

enum { OPT_MODEL = 0x1800, OPT_SEED, OPT_MECH, OPT_SCOPE, OPT_GROUPSIZE, OPT_THRESHOLD,
       OPT_CHOSEN, OPT_TABLE, OPT_REPS, OPT_LAUNCHES, OPT_THREADS, OPT_METRIC };

/* One option (value in optarg): 0 taken, -1 stop. */
static int run_option(tmap_args *a, run_opts *o, int c)
{
    static const char *const mechs[] = {"auto", "layout", "redirect"};
    static const int mech_codes[] = {-1, TMAP_MECH_LAYOUT, TMAP_MECH_REDIRECT};
    static const char *const scopes[] = {"auto", "grid", "block"};
    static const int scope_codes[] = {-1, TMAP_REGROUP_GRID, TMAP_REGROUP_BLOCK};
    static const char *const metrics[] = {"sm90", "scheduled"};
    long v = 0;
    int i, bad = 0;
    switch (c) {
    case OPT_MODEL: o->e.model_path = tmap_args_input(a, optarg); break;
    case OPT_SEED: bad = tmap_args_long(a, 0, 1L << 62, &v); o->e.seed = (uint64_t)v; break;
    case 'a':
        if ((i = tmap_algo_parse(optarg)) < 0)
            return tmap_args_bad(a, "unknown algorithm '%s'", optarg);
        o->e.algos = 1u << i;
        break;
    case OPT_MECH: bad = tmap_args_choice(a, mechs, 3, &i); o->e.mechanism = mech_codes[bad ? 0 : i]; break;
    case OPT_SCOPE: bad = tmap_args_choice(a, scopes, 3, &i); o->e.scope = scope_codes[bad ? 0 : i]; break;
    case OPT_GROUPSIZE:
        bad = tmap_args_long(a, 32, 1 << 20, &v);
        if (!bad && v % 32)
            return tmap_args_bad(a, "--groupsize must be a multiple of 32");
        o->e.groupsize = (size_t)v;
        break;
    case OPT_THRESHOLD: bad = tmap_args_double(a, 0, 0.99, &o->e.threshold); break;
    case OPT_METRIC: bad = tmap_args_choice(a, metrics, 2, &i); o->e.paper_metric = !bad && i; break;
    case OPT_THREADS: bad = tmap_args_long(a, 1, TMAP_REGROUP_MAX_THREADS, &v); o->e.threads = (size_t)v; break;
    case OPT_CHOSEN: o->e.measure_all = 0; break;
    case OPT_LAUNCHES: bad = tmap_args_double(a, 1, 1e12, &o->e.launches); break;
    case OPT_TABLE: o->e.table_path = tmap_args_input(a, optarg); break;
    case OPT_REPS: bad = tmap_args_long(a, 1, 100000, &v); o->e.reps = (int)v; break;
    case 'd': bad = tmap_args_long(a, 0, 1024, &o->device); break;
    case 'o': o->out = tmap_args_output_dir(a, optarg); break;
    case 'v': o->verbose = 1; break;
    default: return tmap_args_bad(a, "unexpected option %s", a->opt);
    }
    return bad;
}

/* 0 run, -1 stop (exit code in a->rc). */
static int parse(tmap_args *a, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->e = (tmap_eval_opts){.seed = 7, .warmup = 3, .reps = 10, .threshold = 0.05,
                            .groupsize = 32, .scope = -1, .mechanism = -1, .measure_all = 1};
    for (int c; (c = tmap_args_next(a)) != 0;)
        if (c < 0 || run_option(a, o, c))
            return -1;
    if (tmap_args_operands(a, 1, 1))
        return -1;
    o->manifest = tmap_args_input(a, a->argv[optind]);
    if (tmap_args_no_stdin(a, a->argv[optind], "MANIFEST"))
        return -1;
    return tmap_args_files(a);
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
    if (tmap_cmd_attach_wanted(argc, argv))
        return tmap_cmd_attach_run(argc, argv);
    static const struct option opts[] = {
        {"model", 1, 0, OPT_MODEL},         {"seed", 1, 0, OPT_SEED},
        {"algo", 1, 0, 'a'},                {"mechanism", 1, 0, OPT_MECH},
        {"scope", 1, 0, OPT_SCOPE},         {"groupsize", 1, 0, OPT_GROUPSIZE},
        {"threshold", 1, 0, OPT_THRESHOLD}, {"chosen-only", 0, 0, OPT_CHOSEN},
        {"table", 1, 0, OPT_TABLE},         {"reps", 1, 0, OPT_REPS},
        {"device", 1, 0, 'd'},              {"launches", 1, 0, OPT_LAUNCHES},
        {"threads", 1, 0, OPT_THREADS},     {"verbose", 0, 0, 'v'},
        {"metric", 1, 0, OPT_METRIC},
        TMAP_ARGS_OUTPUT, TMAP_ARGS_HELP,   TMAP_ARGS_QUIET, TMAP_ARGS_JSON, {0}};
    run_opts o;
    tmap_args a;
    tmap_args_init(&a, "run", usage, argc, argv, opts, "a:d:o:vhq");
    if (parse(&a, &o))
        return a.rc;
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
        st = a.json    ? tmap_report_json(&rep, stdout, &err)
             : a.quiet ? TMAP_OK
                       : tmap_report_text(&rep, stdout, &err);
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
    return st ? tmap_cli_fail_v("run", &err, o.verbose) : TMAP_EXIT_OK;
}

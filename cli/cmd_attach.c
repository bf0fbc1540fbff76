/*
 * cmd_attach.c -- the attach forms: `threadmap profile [options] -- ./app`
 * runs the application unchanged with threadmap's attach library
 * preloaded, which profiles the selected launches (Nsight Compute's
 * selection options) and writes, per kernel, what `threadmap profile
 * MANIFEST` writes; `threadmap run [options] -- ./app` regroups the
 * selected kernels inside the application instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmd_attach.h"
#include "cli/commands.h"

static void usage(FILE *f)
{
    fputs("usage: threadmap profile -o DIR [options] -- ./app [args...]\n"
          "\n"
          "Runs the application unchanged, with threadmap's library injected\n"
          "(LD_PRELOAD), and profiles the selected kernel launches: each runs\n"
          "instrumented with per-thread basic block counters, with the same grid,\n"
          "block, shared memory, stream and arguments, so the results are the\n"
          "application's own.  The kernel's PTX comes from the loaded module (or\n"
          "cuobjdump on the binaries); a binary built without PTX is reported.\n"
          "Writes into DIR, per kernel (DIR/KERNEL/, the mangled name):\n"
          "  kernel.ptx                 the kernel's PTX (what the CFG is built from)\n"
          "  runN.bbv.npy (+ .json)     uint32 [threads, blocks] BBVs of the N-th profiled launch\n"
          "  runN.features.npy          float64 [threads, features] (with --feature)\n"
          "  profile.json               device, features, runs with each launch's configuration\n"
          "and DIR/launches.tsv, one line per profiled launch.  `threadmap train DIR/KERNEL`\n"
          "fits the regression on them.\n"
          "\n"
          "options:\n"
          "  -o, --out DIR            output folder (created if missing)\n"
          "  -k, --kernel-name REGEX  profile kernels whose mangled or demangled name matches\n"
          "                           (POSIX extended regex; default: every kernel)\n"
          "  -s, --launch-skip N      skip the first N launches of matching kernels (default 0)\n"
          "  -c, --launch-count N     then profile N launches (default: all)\n"
          "  --feature SPEC           a per-thread feature from a pointer argument, repeatable:\n"
          "                           NAME=argK:TYPE[t] (or [t+C], [t-C]); TYPE one of\n"
          "                           i8 u8 i32 u32 i64 u64 f32 f64\n"
          "  -q, --quiet              no progress on stderr\n"
          "  -h, --help               this text\n"
          "\n"
          "exit: the application's status when it fails, else 1 when a selected launch\n"
          "could not be profiled (DIR/errors.txt says why) or none was selected.\n"
          "\n"
          "example: threadmap profile -o prof -k count_up --feature 'n=arg0:i32[t]' -- ./app 4096\n",
          f);
}

static void run_usage(FILE *f)
{
    fputs("usage: threadmap run --key EXPR [options] -- ./app [args...]\n"
          "       threadmap run --predictor FILE --feature SPEC... [options] -- ./app [args...]\n"
          "\n"
          "Runs the application unchanged, with threadmap's library injected\n"
          "(LD_PRELOAD), and regroups the selected kernels inside it: at a kernel's\n"
          "first selected launch its PTX (from the loaded module) goes through the\n"
          "safety analysis; a kernel it allows is launched redirected, its threads\n"
          "sorted on the GPU by a key computed from the launch's own arguments.\n"
          "The first launches are a measured trial of the candidates (the original,\n"
          "sorting over the grid or per thread block, bin-and-deal); the fastest is\n"
          "kept if it beats the original by the threshold, else every later launch\n"
          "is the application's own.  The results are the application's (redirection\n"
          "moves no data).  At exit, a line per kernel on stderr: launches seen, in the\n"
          "trial, regrouped, the candidate kept and the time saved (trial medians).\n"
          "\n"
          "options:\n"
          "  --key EXPR               each thread's work (larger: more), an expression over\n"
          "                           the launch's pointer arguments: argK[t], argK[t+C],\n"
          "                           argK[t-C] (argK:TYPE[...] with TYPE one of i8 u8 i32\n"
          "                           u32 i64 u64 f32 f64; i32 when not given), --feature\n"
          "                           names, numbers, + - * / and parentheses\n"
          "  --predictor FILE         instead of --key: a predictor (`threadmap train` on what\n"
          "                           `threadmap profile --` wrote) over the --feature list,\n"
          "                           in its order; the key is each thread's predicted cost\n"
          "  -k, --kernel-name REGEX  regroup kernels whose mangled or demangled name matches\n"
          "                           (POSIX extended regex; default: every kernel)\n"
          "  -s, --launch-skip N      leave the first N launches of matching kernels alone\n"
          "  -c, --launch-count N     then regroup N launches (default: all)\n"
          "  --feature SPEC           a name for the key, or a predictor's feature:\n"
          "                           NAME=argK:TYPE[t] (or [t+C], [t-C]), repeatable\n"
          "  --trial N                timed launches per candidate (default 3, at most 16)\n"
          "  --threshold F            keep a regrouping only when this much faster than the\n"
          "                           original (default 0.03)\n"
          "  -o, --out DIR            keep the run's reports (summary.txt, errors.txt) in DIR\n"
          "  -q, --quiet              no summary on stderr\n"
          "  -h, --help               this text\n"
          "\n"
          "exit: the application's status when it fails, else 1 when a selected kernel\n"
          "could not be regrouped (the reason, with its PTX and source lines) or none\n"
          "was launched.\n"
          "\n"
          "example: threadmap run -k spmv --key 'arg0[t+1]-arg0[t]' -- ./app 4096\n",
          f);
}

int tmap_cmd_attach_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--"))
            return 1;
    return 0;
}

enum { OPT_FEATURE = 0x1800, OPT_KEY, OPT_TRIAL, OPT_THRESHOLD, OPT_PREDICTOR };

/* The options, then "--" and the application: anything between them would
 * be taken for the application (getopt moves operands behind "--").  Run
 * mode takes the key and the trial's options, and -o is optional. */
static int parse(tmap_args *a, tmap_attach_opts *o, int run)
{
    int dashes = 1;
    while (dashes < a->argc && strcmp(a->argv[dashes], "--"))
        dashes++;
    static const struct option profile_lo[] = {
        TMAP_ARGS_OUTPUT, {"kernel-name", 1, 0, 'k'}, {"launch-skip", 1, 0, 's'},
        {"launch-count", 1, 0, 'c'}, {"feature", 1, 0, OPT_FEATURE},
        TMAP_ARGS_QUIET, TMAP_ARGS_HELP, {0}};
    static const struct option run_lo[] = {
        TMAP_ARGS_OUTPUT, {"kernel-name", 1, 0, 'k'}, {"launch-skip", 1, 0, 's'},
        {"launch-count", 1, 0, 'c'}, {"feature", 1, 0, OPT_FEATURE}, {"key", 1, 0, OPT_KEY}, {"predictor", 1, 0, OPT_PREDICTOR},
        {"trial", 1, 0, OPT_TRIAL}, {"threshold", 1, 0, OPT_THRESHOLD},
        TMAP_ARGS_QUIET, TMAP_ARGS_HELP, {0}};
    *o = (tmap_attach_opts){.launch_count = -1, .run = run};
    a->opts = run ? run_lo : profile_lo;
    long trial = 0;
    for (int c; (c = tmap_args_next(a)) != 0;) {
        int bad = c < 0;
        switch (c) {
        case 'o': o->out = tmap_args_output_dir(a, optarg); break;
        case 'k': o->kernel_regex = optarg; break;
        case 's': bad = tmap_args_long(a, 0, 1L << 62, &o->launch_skip); break;
        case 'c': bad = tmap_args_long(a, 0, 1L << 62, &o->launch_count); break;
        case OPT_FEATURE:
            if (o->nfeatures == TMAP_ATTACH_MAX_FEATURES)
                return tmap_args_bad(a, "at most %d --feature", TMAP_ATTACH_MAX_FEATURES);
            o->features[o->nfeatures++] = optarg;
            break;
        case OPT_KEY: o->key = optarg; break;
        case OPT_PREDICTOR: o->predictor = optarg; break;
        case OPT_TRIAL: bad = tmap_args_long(a, 1, 16, &trial); break;
        case OPT_THRESHOLD: bad = tmap_args_double(a, 0, 0.99, &o->threshold); break;
        default: bad = 1; if (c > 0) tmap_args_bad(a, "unexpected option %s", a->opt);
        }
        if (bad)
            return -1;
    }
    o->quiet = a->quiet;
    o->trial_launches = (int)trial;
    if (optind != dashes + 1 || optind >= a->argc)
        return tmap_args_bad(a, "give the application after --, and nothing else");
    if (!o->out && !run)
        return tmap_args_bad(a, "give -o DIR");
    tmap_error err = {0};
    if (tmap_attach_opts_check(o, &err) != TMAP_OK)
        return tmap_args_bad(a, "%s", err.message);
    return tmap_args_files(a);
}

/* Either form: the options, the application run, its status passed on. */
static int attached(int argc, char **argv, int run)
{
    const char *cmd = run ? "run" : "profile";
    tmap_attach_opts o;
    tmap_args a;
    tmap_args_init(&a, cmd, run ? run_usage : usage, argc, argv, NULL, "o:k:s:c:qh");
    if (parse(&a, &o, run))
        return a.rc;
    tmap_error err = {0};
    int app = 0;
    char *summary = NULL;
    tmap_status st = run ? tmap_attach_run(&o, argv + optind, &app, &summary, &err)
                         : tmap_attach_profile(&o, argv + optind, &app, &err);
    if (summary && !o.quiet)
        fputs(summary, stderr);
    free(summary);
    if (app) {
        fprintf(stderr, "threadmap %s: the application exited with status %d\n", cmd, app);
        return app;
    }
    return st == TMAP_OK ? TMAP_EXIT_OK : tmap_cli_fail(cmd, &err);
}

int tmap_cmd_attach_profile(int argc, char **argv) { return attached(argc, argv, 0); }

int tmap_cmd_attach_run(int argc, char **argv) { return attached(argc, argv, 1); }

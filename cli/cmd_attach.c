/*
 * cmd_attach.c -- `threadmap profile [options] -- ./app args...`: runs the
 * application unchanged with threadmap's attach library preloaded, which
 * profiles the selected launches (Nsight Compute's selection options) and
 * writes, per kernel, what `threadmap profile MANIFEST` writes.
 */
#include <stdio.h>
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

int tmap_cmd_attach_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--"))
            return 1;
    return 0;
}

enum { OPT_FEATURE = 0x1800 };

/* The options, then "--" and the application: anything between them would
 * be taken for the application (getopt moves operands behind "--"). */
static int parse(tmap_args *a, tmap_attach_opts *o)
{
    int dashes = 1;
    while (dashes < a->argc && strcmp(a->argv[dashes], "--"))
        dashes++;
    static const struct option lo[] = {
        TMAP_ARGS_OUTPUT, {"kernel-name", 1, 0, 'k'}, {"launch-skip", 1, 0, 's'},
        {"launch-count", 1, 0, 'c'}, {"feature", 1, 0, OPT_FEATURE},
        TMAP_ARGS_QUIET, TMAP_ARGS_HELP, {0}};
    *o = (tmap_attach_opts){.launch_count = -1};
    a->opts = lo;
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
        default: bad = 1; if (c > 0) tmap_args_bad(a, "unexpected option %s", a->opt);
        }
        if (bad)
            return -1;
    }
    o->quiet = a->quiet;
    if (optind != dashes + 1 || optind >= a->argc)
        return tmap_args_bad(a, "give the application after --, and nothing else");
    if (!o->out)
        return tmap_args_bad(a, "give -o DIR");
    tmap_error err = {0};
    if (tmap_attach_opts_check(o, &err) != TMAP_OK)
        return tmap_args_bad(a, "%s", err.message);
    return tmap_args_files(a);
}

int tmap_cmd_attach_profile(int argc, char **argv)
{
    tmap_attach_opts o;
    tmap_args a;
    tmap_args_init(&a, "profile", usage, argc, argv, NULL, "o:k:s:c:qh");
    if (parse(&a, &o))
        return a.rc;
    tmap_error err = {0};
    int app = 0;
    tmap_status st = tmap_attach_profile(&o, argv + optind, &app, &err);
    if (st == TMAP_OK && app == 0)
        return TMAP_EXIT_OK;
    if (app) {
        fprintf(stderr, "threadmap profile: the application exited with status %d\n", app);
        return app;
    }
    return tmap_cli_fail("profile", &err);
}

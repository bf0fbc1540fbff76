/*
 * cmd_check.c -- `threadmap check MANIFEST`: everything short of the launch,
 * without a GPU: the manifest, its kernel and arguments, its arrays and
 * features, and the safety analysis; exit 1 with findings.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/args.h"
#include "cli/cliutil.h"
#include "cli/commands.h"

static void usage(FILE *f)
{
    fputs("usage: threadmap check MANIFEST [--seed S] [--json] [-q]\n\n"
          "Checks a manifest without a GPU: loads it, compiles its kernel (NVRTC) and\n"
          "matches the arguments to the kernel's parameters (count, sizes, pointers),\n"
          "generates the arrays, evaluates every feature for every thread, and runs\n"
          "the safety analysis.  Prints what it found; exit 0 clean, 1 with findings.\n\n"
          "  --seed S         seed of the generated arrays (default 1)\n"
          "  --json           print the check as JSON\n"
          "  -q, --quiet      print nothing: only the exit code says whether it is clean\n"
          "  -h, --help       this text\n\n"
          "example: threadmap check examples/divergent/manifest.json\n", f);
}

int tmap_cmd_check(int argc, char **argv)
{
    enum { OPT_SEED = TMAP_OPT_JSON + 1 };
    static const struct option opts[] = {{"seed", required_argument, NULL, OPT_SEED},
                                          TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON, {0}};
    long seed = 1;
    tmap_args a;
    tmap_args_init(&a, "check", usage, argc, argv, opts, "hq");
    for (int c; (c = tmap_args_next(&a)) != 0;)
        if (c < 0 || tmap_args_long(&a, 0, 1L << 62, &seed))
            return a.rc;
    if (tmap_args_operands(&a, 1, 1) || tmap_args_no_stdin(&a, argv[optind], "a manifest"))
        return a.rc;
    tmap_error err = {0}, perr = {0};
    tmap_check *c = malloc(sizeof *c);
    if (!c) {
        fputs("threadmap check: out of memory\n", stderr);
        return TMAP_EXIT_FAIL;
    }
    tmap_status st = tmap_pipeline_check(argv[optind], (uint64_t)seed, c, &err);
    tmap_status pst = a.quiet ? TMAP_OK : tmap_check_print(c, a.json, stdout, &perr);
    free(c);
    if (pst)
        return tmap_cli_fail("check", &perr);
    return st ? tmap_cli_fail("check", &err) : TMAP_EXIT_OK;
}

/*
 * cmd_check.c -- `threadmap check MANIFEST`: everything short of the launch,
 * without a GPU: the manifest, its kernel and arguments, its arrays and
 * features, and the safety analysis; exit 1 with findings.
 */
#include <getopt.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "cli/cliutil.h"

static const char usage[] =
    "usage: threadmap check MANIFEST [options]\n"
    "\n"
    "Checks a manifest without a GPU: loads it, compiles its kernel (NVRTC) and\n"
    "matches the arguments to the kernel's parameters (count, sizes, pointers),\n"
    "generates the arrays, evaluates every feature for every thread, and runs\n"
    "the safety analysis.  Prints what it found; exit 0 clean, 1 with findings.\n"
    "\n"
    "options:\n"
    "  --seed S          seed of the generated arrays (default 1)\n"
    "  --json            print the check as JSON\n"
    "  -h, --help        this text\n"
    "\n"
    "example: threadmap check examples/divergent/manifest.json\n";

typedef struct opts {
    const char *manifest;
    long seed;
    int json;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"seed", 1, 0, 's'}, {"json", 0, 0, 'j'}, {"help", 0, 0, 'h'}, {0}};
    *o = (opts){.seed = 1};
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        switch (c) {
        case 's': if (tmap_cli_long(optarg, 0, 1L << 62, &o->seed)) return -1; break;
        case 'j': o->json = 1; break;
        case 'h': fputs(usage, stdout); return 1;
        default: return -1;
        }
    }
    if (optind + 1 != argc)
        return -1;
    o->manifest = argv[optind];
    return 0;
}

int tmap_cmd_check(int argc, char **argv)
{
    opts o;
    int r = parse(argc, argv, &o);
    if (r)
        return r > 0 ? TMAP_EXIT_OK : tmap_cli_usage(usage);
    tmap_error err = {0}, perr = {0};
    tmap_check *c = malloc(sizeof *c);
    if (!c) {
        fputs("threadmap check: out of memory\n", stderr);
        return TMAP_EXIT_FAIL;
    }
    tmap_status st = tmap_pipeline_check(o.manifest, (uint64_t)o.seed, c, &err);
    tmap_status pst = tmap_check_print(c, o.json, stdout, &perr);
    free(c);
    if (pst)
        return tmap_cli_fail("check", &perr);
    return st ? tmap_cli_fail("check", &err) : TMAP_EXIT_OK;
}

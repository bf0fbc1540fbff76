/*
 * cmd_profile.c -- `threadmap profile MANIFEST -o DIR`: profiling runs of a
 * manifest's kernel on the GPU, each on its own generated input, writing
 * per-thread BBVs, features, the kernel's PTX and a summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/base.h"

static void usage(FILE *f)
{
    fputs("usage: threadmap profile MANIFEST -o DIR [options]\n"
          "\n"
          "Instruments the manifest's kernel with per-thread basic block counters,\n"
          "launches it on the GPU once per input, and writes into DIR:\n"
          "  kernel.ptx                 the kernel's PTX (what the CFG is built from)\n"
          "  runN.bbv.npy (+ .json)     uint32 [threads, blocks] BBVs, block names\n"
          "  runN.features.npy          float64 [threads, features] (if the manifest has features)\n"
          "  profile.json               device, launch, registers and occupancy, runs\n"
          "MANIFEST cannot be - (stdin): the files it names are relative to its folder.\n"
          "\n"
          "options:\n"
          "  -o, --output DIR  output folder (created if missing; not -)\n"
          "  --runs N          inputs to profile, seeds SEED..SEED+N-1 (default 1)\n"
          "  --seed S          first seed for generated arrays (default 1)\n"
          "  --sample K        count only every K-th thread block (default 1: all)\n"
          "  -d, --device N    GPU ordinal (default 0)\n"
          "  --json            print DIR/profile.json once written\n"
          "  -q, --quiet       no progress on stderr\n"
          "  -v, --verbose     on a failed compilation print NVRTC's whole log\n"
          "  -h, --help        this text\n"
          "\n"
          "example: threadmap profile examples/divergent/manifest.json -o prof --runs 3\n", f);
}

typedef struct opts {
    const char *manifest, *out;
    long runs, seed, sample, device;
    int verbose;
} opts;

enum { OPT_RUNS = 0x1800, OPT_SEED, OPT_SAMPLE };

static int parse(tmap_args *a, opts *o)
{
    static const struct option lo[] = {
        TMAP_ARGS_OUTPUT, {"runs", 1, 0, OPT_RUNS}, {"seed", 1, 0, OPT_SEED},
        {"sample", 1, 0, OPT_SAMPLE}, {"device", 1, 0, 'd'}, {"verbose", 0, 0, 'v'},
        TMAP_ARGS_QUIET, TMAP_ARGS_HELP, TMAP_ARGS_JSON, {0}};
    *o = (opts){.runs = 1, .seed = 1, .sample = 1};
    a->opts = lo;
    for (int c; (c = tmap_args_next(a)) != 0;) {
        int bad = c < 0;
        switch (c) {
        case 'o': o->out = tmap_args_output_dir(a, optarg); break;
        case OPT_RUNS: bad = tmap_args_long(a, 1, 100000, &o->runs); break;
        case OPT_SEED: bad = tmap_args_long(a, 0, 1L << 62, &o->seed); break;
        case OPT_SAMPLE: bad = tmap_args_long(a, 1, 1L << 30, &o->sample); break;
        case 'd': bad = tmap_args_long(a, 0, 1024, &o->device); break;
        case 'v': o->verbose = 1; break;
        default: bad = 1; if (c > 0) tmap_args_bad(a, "unexpected option %s", a->opt);
        }
        if (bad)
            return -1;
    }
    if (tmap_args_operands(a, 1, 1))
        return -1;
    o->manifest = tmap_args_input(a, a->argv[optind]);
    if (tmap_args_no_stdin(a, a->argv[optind], "MANIFEST"))
        return -1;
    if (!o->out)
        return tmap_args_bad(a, "give -o DIR");
    return tmap_args_files(a);
}

/* --json: DIR/profile.json as written. */
static tmap_status print_profile(const char *dir, tmap_error *err)
{
    char path[4200], *text = NULL;
    snprintf(path, sizeof path, "%s/profile.json", dir);
    tmap_status st = tmap_file_read(path, &text, NULL, err);
    if (!st)
        fputs(text, stdout);
    free(text);
    return st;
}

int tmap_cmd_profile(int argc, char **argv)
{
    opts o;
    tmap_args a;
    tmap_args_init(&a, "profile", usage, argc, argv, NULL, "o:d:vqh");
    if (parse(&a, &o))
        return a.rc;
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_profile_dir_opts po = {.out = o.out, .runs = o.runs, .seed = (uint64_t)o.seed,
                                .sample = (uint32_t)o.sample, .quiet = a.quiet};
    tmap_status st = tmap_pipeline_open(o.manifest, (uint64_t)o.seed, (int)o.device, &c, &err);
    if (st == TMAP_OK)
        st = tmap_pipeline_profile(c, o.manifest, &po, &err);
    if (st == TMAP_OK && a.json)
        st = print_profile(o.out, &err);
    tmap_cuda_close(c);
    return st == TMAP_OK ? TMAP_EXIT_OK : tmap_cli_fail_v("profile", &err, o.verbose);
}

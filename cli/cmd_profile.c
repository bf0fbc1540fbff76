/*
 * cmd_profile.c -- `threadmap profile MANIFEST -o DIR`: profiling runs of a
 * manifest's kernel on the GPU, each on its own generated input, writing
 * per-thread BBVs, features, the kernel's PTX and a summary.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/cliutil.h"

static const char usage[] =
    "usage: threadmap profile MANIFEST -o DIR [options]\n"
    "\n"
    "Instruments the manifest's kernel with per-thread basic block counters,\n"
    "launches it on the GPU once per input, and writes into DIR:\n"
    "  kernel.ptx                 the kernel's PTX (what the CFG is built from)\n"
    "  runN.bbv.npy (+ .json)     uint32 [threads, blocks] BBVs, block names\n"
    "  runN.features.npy          float64 [threads, features] (if the manifest has features)\n"
    "  profile.json               device, launch, registers and occupancy, runs\n"
    "\n"
    "options:\n"
    "  -o, --out DIR     output folder (created if missing)\n"
    "  --runs N          inputs to profile, seeds SEED..SEED+N-1 (default 1)\n"
    "  --seed S          first seed for generated arrays (default 1)\n"
    "  --sample K        count only every K-th thread block (default 1: all)\n"
    "  --device N        GPU ordinal (default 0)\n"
    "  -q, --quiet       no progress on stderr\n"
    "  -h, --help        this text\n"
    "\n"
    "example: threadmap profile examples/divergent/manifest.json -o prof --runs 3\n";

typedef struct opts {
    const char *manifest, *out;
    long runs, seed, sample, device;
    int quiet;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"out", 1, 0, 'o'},    {"runs", 1, 0, 'r'},  {"seed", 1, 0, 's'}, {"sample", 1, 0, 'k'},
        {"device", 1, 0, 'd'}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0}};
    *o = (opts){.runs = 1, .seed = 1, .sample = 1};
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "o:qh", lo, NULL)) != -1;) {
        switch (c) {
        case 'o': o->out = optarg; break;
        case 'r': if (tmap_cli_long(optarg, 1, 100000, &o->runs)) return -1; break;
        case 's': if (tmap_cli_long(optarg, 0, 1L << 62, &o->seed)) return -1; break;
        case 'k': if (tmap_cli_long(optarg, 1, 1L << 30, &o->sample)) return -1; break;
        case 'd': if (tmap_cli_long(optarg, 0, 1024, &o->device)) return -1; break;
        case 'q': o->quiet = 1; break;
        case 'h': fputs(usage, stdout); return 1;
        default: return -1;
        }
    }
    if (optind + 1 != argc || !o->out)
        return -1;
    o->manifest = argv[optind];
    return 0;
}

int tmap_cmd_profile(int argc, char **argv)
{
    opts o;
    int r = parse(argc, argv, &o);
    if (r)
        return r > 0 ? TMAP_EXIT_OK : tmap_cli_usage(usage);
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_profile_dir_opts po = {.out = o.out, .runs = o.runs, .seed = (uint64_t)o.seed,
                                .sample = (uint32_t)o.sample, .quiet = o.quiet};
    tmap_status st = tmap_pipeline_open(o.manifest, (uint64_t)o.seed, (int)o.device, &c, &err);
    if (st == TMAP_OK)
        st = tmap_pipeline_profile(c, o.manifest, &po, &err);
    tmap_cuda_close(c);
    return st == TMAP_OK ? TMAP_EXIT_OK : tmap_cli_fail("profile", &err);
}

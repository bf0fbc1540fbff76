/*
 * cmd_profile.c -- `threadmap profile MANIFEST -o DIR`: profiling runs of a
 * manifest's kernel on the GPU, each on its own generated input, writing
 * per-thread BBVs, features, the kernel's PTX and a summary.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/cliutil.h"
#include "instrument/base.h"
#include "threadmap/model.h"
#include "runtime/manifest.h"

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

static char *path_in(const char *dir, const char *fmt, long n)
{
    tmap_buf b = {0};
    tmap_buf_printf(&b, "%s/", dir);
    tmap_buf_printf(&b, fmt, n);
    return b.data;
}

/* Features of the profiled rows only (every sample-th thread block). */
static tmap_status save_features(const tmap_manifest *m, const tmap_profile *p, unsigned tpb,
                                 const char *path, tmap_error *err)
{
    double *f;
    size_t n, q;
    tmap_status st = tmap_manifest_features(m, &f, &n, &q, NULL, err);
    if (st != TMAP_OK)
        return st;
    size_t rows = p->bbv.nthreads;
    double *sel = malloc(rows * q * sizeof *sel);
    if (!sel) {
        free(f);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t r = 0; r < rows; r++) {
        size_t t = (r / tpb) * p->sample * tpb + r % tpb;
        memcpy(&sel[r * q], &f[t * q], q * sizeof *sel);
    }
    size_t dim[2] = {rows, q};
    st = tmap_npy_save_f64(path, sel, 2, dim, err);
    free(sel);
    free(f);
    return st;
}

static json_t *stats_json(const tmap_kernel_stats *s)
{
    return json_pack("{s:i, s:i, s:i, s:i}", "registers", s->registers, "local_bytes",
                     s->local_bytes, "static_shared_bytes", s->static_shared_bytes,
                     "blocks_per_sm", s->blocks_per_sm);
}

static tmap_status profile_one(tmap_manifest *m, tmap_cuda *c, const char *ptx,
                               const char *entry, const opts *o, long run, json_t *runs,
                               json_t *summary, tmap_error *err)
{
    tmap_launch l;
    tmap_profile p;
    tmap_status st = tmap_manifest_generate(m, (uint64_t)(o->seed + run), err);
    if (st == TMAP_OK)
        st = tmap_manifest_bind(m, c, &l, err);
    if (st == TMAP_OK)
        st = tmap_profile_run(c, ptx, entry, &l, (uint32_t)o->sample, &p, err);
    if (st != TMAP_OK)
        return st;
    char *bbv_path = path_in(o->out, "run%ld.bbv.npy", run);
    char *feat_path = path_in(o->out, "run%ld.features.npy", run);
    const char **names = malloc((p.cfg->nblocks + 1) * sizeof *names);
    for (size_t b = 0; names && b < p.cfg->nblocks; b++)
        names[b] = p.cfg->blocks[b].name;
    st = names ? tmap_bbv_save(bbv_path, &p.bbv, names, err)
               : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    int has_features = m->nfeatures > 0;
    if (st == TMAP_OK && has_features)
        st = save_features(m, &p, tmap_launch_block_size(&l), feat_path, err);
    if (st == TMAP_OK) {
        json_array_append_new(runs, json_pack("{s:I, s:s, s:s?}", "seed", (json_int_t)(o->seed + run),
                                              "bbv", strrchr(bbv_path, '/') + 1, "features",
                                              has_features ? strrchr(feat_path, '/') + 1 : NULL));
        if (run == 0) {
            json_object_set_new(summary, "original", stats_json(&p.original));
            json_object_set_new(summary, "instrumented", stats_json(&p.instrumented));
            json_object_set_new(summary, "threads_profiled", json_integer((json_int_t)p.bbv.nthreads));
            json_object_set_new(summary, "blocks", json_integer((json_int_t)p.cfg->nblocks));
        }
        if (!o->quiet)
            fprintf(stderr, "threadmap profile: run %ld/%ld: %zu threads x %zu blocks -> %s\n",
                    run + 1, o->runs, p.bbv.nthreads, p.bbv.nblocks, bbv_path);
    }
    free(names);
    free(bbv_path);
    free(feat_path);
    tmap_profile_free(&p);
    return st;
}

static tmap_status write_summary(const opts *o, json_t *summary, tmap_error *err)
{
    char *path = path_in(o->out, "profile.json", 0);
    char *text = json_dumps(summary, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    tmap_status st = path && text ? tmap_file_write(path, text, strlen(text), err)
                                  : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    free(path);
    free(text);
    return st;
}

int tmap_cmd_profile(int argc, char **argv)
{
    opts o;
    int r = parse(argc, argv, &o);
    if (r)
        return r > 0 ? TMAP_EXIT_OK : tmap_cli_usage(usage);
    tmap_error err = {0};
    tmap_manifest *m = NULL;
    tmap_cuda *c = NULL;
    char *ptx = NULL, *entry = NULL;
    json_t *summary = json_object(), *runs = json_array();
    tmap_device_info d;
    char arch[32];
    tmap_status st = tmap_manifest_load(o.manifest, &m, &err);
    if (st == TMAP_OK) st = tmap_cuda_open((int)o.device, &c, &err);
    if (st == TMAP_OK) st = tmap_dir_make(o.out, &err);
    if (st == TMAP_OK) st = tmap_cuda_info(c, &d, &err);
    if (st == TMAP_OK) {
        tmap_cuda_arch(&d, arch, sizeof arch);
        st = tmap_manifest_ptx(m, m->arch ? NULL : arch, &ptx, &entry, &err);
    }
    if (st == TMAP_OK) {
        char *p = path_in(o.out, "kernel.ptx", 0);
        st = tmap_file_write(p, ptx, strlen(ptx), &err);
        free(p);
        json_object_set_new(summary, "manifest", json_string(o.manifest));
        json_object_set_new(summary, "kernel", json_string(entry));
        json_object_set_new(summary, "device", tmap_cli_device_json(&d));
        json_object_set_new(summary, "grid", json_pack("[i,i,i]", m->grid[0], m->grid[1], m->grid[2]));
        json_object_set_new(summary, "block", json_pack("[i,i,i]", m->block[0], m->block[1], m->block[2]));
        json_object_set_new(summary, "sample", json_integer(o.sample));
        json_object_set_new(summary, "features", json_array());
        for (size_t i = 0; i < m->nfeatures; i++)
            json_array_append_new(json_object_get(summary, "features"), json_string(m->feature_names[i]));
    }
    for (long run = 0; st == TMAP_OK && run < o.runs; run++)
        st = profile_one(m, c, ptx, entry, &o, run, runs, summary, &err);
    json_object_set_new(summary, "runs", runs);
    if (st == TMAP_OK)
        st = write_summary(&o, summary, &err);
    json_decref(summary);
    free(ptx);
    free(entry);
    tmap_manifest_free(m);
    tmap_cuda_close(c);
    return st == TMAP_OK ? TMAP_EXIT_OK : tmap_cli_fail("profile", &err);
}

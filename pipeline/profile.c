/*
 * profile.c -- the profiling folder of a manifest's kernel: one profiling
 * run per input (seeds SEED..SEED+N-1), each writing its per-thread BBVs
 * (runN.bbv.npy and the sidecar) and the features of the profiled threads
 * (runN.features.npy), beside the kernel's PTX and profile.json (device,
 * launch, registers and occupancy, runs).  `threadmap profile` and `threadmap
 * train`'s input; docs/cli.md describes the files.
 */
#include "threadmap/pipeline.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "runtime/manifest.h"

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
                               const char *entry, const tmap_profile_dir_opts *o, long run, json_t *runs,
                               json_t *summary, tmap_error *err)
{
    tmap_launch l;
    tmap_profile p;
    tmap_status st = tmap_manifest_generate(m, o->seed + (uint64_t)run, err);
    if (st == TMAP_OK)
        st = tmap_manifest_bind(m, c, &l, err);
    if (st == TMAP_OK)
        st = tmap_profile_run(c, ptx, entry, &l, o->sample, &p, err);
    if (st != TMAP_OK)
        return st;
    char *bbv_path = path_in(o->out, "run%ld.bbv.npy", run);
    char *feat_path = path_in(o->out, "run%ld.features.npy", run);
    const char **names = NULL;
    st = tmap_cfg_names(p.cfg, &names, err);
    if (!st)
        st = tmap_bbv_save(bbv_path, &p.bbv, names, err);
    int has_features = m->nfeatures > 0;
    if (st == TMAP_OK && has_features)
        st = save_features(m, &p, tmap_launch_block_size(&l), feat_path, err);
    if (st == TMAP_OK) {
        json_array_append_new(runs, json_pack("{s:I, s:s, s:s?}", "seed", (json_int_t)(o->seed + (uint64_t)run),
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

static tmap_status write_summary(const tmap_profile_dir_opts *o, json_t *summary, tmap_error *err)
{
    char *path = path_in(o->out, "profile.json", 0);
    char *text = json_dumps(summary, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    tmap_status st = path && text ? tmap_file_write(path, text, strlen(text), err)
                                  : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    free(path);
    free(text);
    return st;
}

static json_t *device_json(const tmap_device_info *d)
{
    char *s = tmap_device_json(d);
    json_t *o = s ? json_loads(s, 0, NULL) : NULL;
    free(s);
    return o;
}

static json_t *launch_json(const tmap_manifest *m, const char *manifest, const char *entry,
                           const tmap_device_info *d, uint32_t sample)
{
    json_t *summary = json_object(), *features = json_array();
    json_object_set_new(summary, "manifest", json_string(manifest));
    json_object_set_new(summary, "kernel", json_string(entry));
    json_object_set_new(summary, "device", device_json(d));
    json_object_set_new(summary, "grid", json_pack("[i,i,i]", m->grid[0], m->grid[1], m->grid[2]));
    json_object_set_new(summary, "block", json_pack("[i,i,i]", m->block[0], m->block[1], m->block[2]));
    json_object_set_new(summary, "sample", json_integer(sample));
    for (size_t i = 0; i < m->nfeatures; i++)
        json_array_append_new(features, json_string(m->feature_names[i]));
    json_object_set_new(summary, "features", features);
    return summary;
}

tmap_status tmap_pipeline_profile(tmap_cuda *c, const char *manifest,
                                  const tmap_profile_dir_opts *o, tmap_error *err)
{
    if (!c || !manifest || !o || !o->out || o->runs < 1 || o->sample < 1)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_pipeline_profile: bad arguments");
    tmap_manifest *m = NULL;
    char *ptx = NULL, *entry = NULL;
    json_t *summary = NULL, *runs = json_array();
    tmap_device_info d;
    char arch[32];
    tmap_status st = tmap_manifest_load(manifest, &m, err);
    if (st == TMAP_OK) st = tmap_dir_make(o->out, err);
    if (st == TMAP_OK) st = tmap_cuda_info(c, &d, err);
    if (st == TMAP_OK) {
        tmap_cuda_arch(&d, arch, sizeof arch);
        st = tmap_manifest_ptx(m, m->arch ? NULL : arch, &ptx, &entry, err);
    }
    if (st == TMAP_OK) {
        char *p = path_in(o->out, "kernel.ptx", 0);
        st = p ? tmap_file_write(p, ptx, strlen(ptx), err)
               : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        free(p);
        summary = launch_json(m, manifest, entry, &d, o->sample);
    }
    for (long run = 0; st == TMAP_OK && run < o->runs; run++)
        st = profile_one(m, c, ptx, entry, o, run, runs, summary, err);
    if (st == TMAP_OK) {
        json_object_set(summary, "runs", runs);
        st = write_summary(o, summary, err);
    }
    json_decref(runs);
    json_decref(summary);
    free(ptx);
    free(entry);
    tmap_manifest_free(m);
    return st;
}

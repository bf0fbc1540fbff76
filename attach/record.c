/*
 * record.c (attach) -- writing what a profiled launch gave, in the layout
 * of `threadmap profile MANIFEST` so that `threadmap train DIR/KERNEL`
 * reads it: per kernel a folder with kernel.ptx, runN.bbv.npy (+ sidecar),
 * runN.features.npy and profile.json, whose runs also carry each launch's
 * configuration (grid, block, shared memory, stream, parameter bytes).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/env.h"
#include "attach/launch.h"
#include "common/base.h"

static char *join(const char *dir, const char *name, long n)
{
    tmap_buf b = {0};
    tmap_buf_printf(&b, "%s/", dir);
    tmap_buf_printf(&b, name, n);
    return b.data;
}

/* The kernel's folder: its mangled name, cut at 200 bytes. */
static char *kernel_dir(const char *dir, const char *entry)
{
    tmap_buf b = {0};
    tmap_buf_printf(&b, "%s/%.200s", dir, entry);
    return b.data;
}

static json_t *dim3(const unsigned v[3])
{
    return json_pack("[i,i,i]", v[0], v[1], v[2]);
}

static json_t *params_json(const tmap_attach_call *c, const tmap_attach_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->nparams; i++) {
        const tmap_param *p = &r->params[i];
        const unsigned char *v = tmap_attach_param_value(c, p, i);
        tmap_buf hex = {0};
        for (size_t k = 0; v && k < p->size && k < 64; k++)
            tmap_buf_printf(&hex, "%02x", v[k]);
        json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:s?}", "name", p->name, "offset",
                                           (json_int_t)p->offset, "size", (json_int_t)p->size,
                                           "bytes", hex.data));
        tmap_buf_free(&hex);
    }
    return a;
}

static json_t *run_json(const tmap_attach_call *c, const tmap_attach_result *r, long run,
                        long launch)
{
    char bbv[64], feat[64], stream[32];
    snprintf(bbv, sizeof bbv, "run%ld.bbv.npy", run);
    snprintf(feat, sizeof feat, "run%ld.features.npy", run);
    snprintf(stream, sizeof stream, "%p", (void *)c->stream);
    return json_pack("{s:I, s:s, s:s?, s:o, s:o, s:i, s:s, s:o}", "launch", (json_int_t)launch,
                     "bbv", bbv, "features", r->nfeatures ? feat : NULL, "grid", dim3(c->grid),
                     "block", dim3(c->block), "shared_bytes", c->shared_bytes, "stream", stream,
                     "params", params_json(c, r));
}

/* Each block's source line ({"file", "line"}, or null): with -lineinfo. */
static json_t *sources(const tmap_cfg *cfg)
{
    json_t *a = json_array();
    for (size_t b = 0; b < cfg->nblocks; b++) {
        const tmap_cfg_block *k = &cfg->blocks[b];
        json_array_append_new(a, k->src_line ? json_pack("{s:s, s:I}", "file", k->src_file, "line",
                                                         (json_int_t)k->src_line)
                                             : json_null());
    }
    return a;
}

static json_t *summary_new(const char *entry, const tmap_attach_call *c,
                           const tmap_attach_result *r, const tmap_attach_opts *o,
                           const tmap_device_info *d)
{
    char *dev = tmap_device_json(d);
    json_t *s = json_object(), *names = json_array();
    json_object_set_new(s, "kernel", json_string(entry));
    json_object_set_new(s, "device", dev ? json_loads(dev, 0, NULL) : json_null());
    json_object_set_new(s, "grid", dim3(c->grid));
    json_object_set_new(s, "block", dim3(c->block));
    json_object_set_new(s, "sample", json_integer(1));
    for (size_t i = 0; i < r->nfeatures; i++) {
        tmap_attach_feature f;
        if (tmap_attach_feature_parse(o->features[i], &f, NULL) == TMAP_OK)
            json_array_append_new(names, json_string(f.name));
    }
    json_object_set_new(s, "features", names);
    json_object_set_new(s, "threads_profiled", json_integer((json_int_t)r->bbv.nthreads));
    json_object_set_new(s, "blocks", json_integer((json_int_t)r->bbv.nblocks));
    json_object_set_new(s, "sources", sources(tmap_counting_cfg(r->counting)));
    json_object_set_new(s, "runs", json_array());
    free(dev);
    return s;
}

static tmap_status save_bbv(const char *path, const tmap_attach_result *r, tmap_error *err)
{
    const tmap_cfg *cfg = tmap_counting_cfg(r->counting);
    const char **names;
    tmap_status st = tmap_cfg_names(cfg, &names, err);
    if (st)
        return st;
    st = tmap_bbv_save(path, &r->bbv, names, err);
    free(names);
    return st;
}

static tmap_status save_run(const char *kdir, long run, const tmap_attach_result *r,
                            tmap_error *err)
{
    char *bbv = join(kdir, "run%ld.bbv.npy", run), *feat = join(kdir, "run%ld.features.npy", run);
    size_t dim[2] = {r->bbv.nthreads, r->nfeatures};
    tmap_status st = bbv && feat ? save_bbv(bbv, r, err)
                                 : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (st == TMAP_OK && r->nfeatures)
        st = tmap_npy_save_f64(feat, r->features, 2, dim, err);
    free(bbv);
    free(feat);
    return st;
}

static tmap_status write_text(const char *dir, const char *name, const char *text,
                              tmap_error *err)
{
    char *path = join(dir, name, 0);
    tmap_status st = path ? tmap_file_write(path, text, strlen(text), err)
                          : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    free(path);
    return st;
}

static tmap_status log_launch(const char *dir, const char *entry, long run, long launch,
                              const tmap_attach_call *c, tmap_error *err)
{
    char *path = join(dir, TMAP_ATTACH_LAUNCHES, 0);
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%ld\t%s\trun%ld\t%u,%u,%u\t%u,%u,%u\n", launch, entry, run, c->grid[0],
                c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2]);
        fclose(f);
    }
    free(path);
    return f ? TMAP_OK : tmap_fail(err, TMAP_ERR_IO, "%s/%s: cannot append", dir,
                                   TMAP_ATTACH_LAUNCHES);
}

tmap_status tmap_attach_record(const char *dir, const char *entry, const char *ptx,
                               const tmap_attach_call *c, const tmap_attach_result *r,
                               const tmap_attach_opts *o, const tmap_device_info *d,
                               long launch, void **summary, tmap_error *err)
{
    json_t *s = *summary;
    char *kdir = kernel_dir(dir, entry);
    tmap_status st = kdir ? tmap_dir_make(kdir, err) : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (st == TMAP_OK && !s) {
        st = write_text(kdir, "kernel.ptx", ptx, err);
        *summary = s = summary_new(entry, c, r, o, d);
    }
    long run = s ? (long)json_array_size(json_object_get(s, "runs")) : 0;
    if (st == TMAP_OK)
        st = save_run(kdir, run, r, err);
    if (st == TMAP_OK) {
        json_array_append_new(json_object_get(s, "runs"), run_json(c, r, run, launch));
        char *text = json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        st = text ? write_text(kdir, "profile.json", text, err)
                  : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        free(text);
    }
    if (st == TMAP_OK)
        st = log_launch(dir, entry, run, launch, c, err);
    free(kdir);
    return st;
}

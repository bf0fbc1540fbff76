/*
 * model_input.c -- parsing and loading the model inputs shared by the
 * estimate, regroup and report subcommands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/model_input.h"
#include "common/base.h"

const char tmap_mi_help[] =
    "  --bbv BBV.npy          uint32 [threads, blocks] (sidecar BBV.npy.json optional;\n"
    "                         - reads the BBV from stdin, without a sidecar)\n"
    "  --cfg FILE.ptx         PTX module; with --kernel, block latencies come from its CFG\n"
    "  -k, --kernel K         the .entry of FILE.ptx\n"
    "  --block-latency L.npy  block latencies in cycles, [blocks] (no CFG: SIMD efficiency\n"
    "                         and divergent branches are then unavailable)\n"
    "  --table FILE.tsv       latency table (default: sm_90.tsv from $THREADMAP_DATA or\n"
    "                         the build/install data directory)\n"
    "  --sass ARCH            count each block's SASS instructions (ptxas -arch=ARCH and\n"
    "                         nvdisasm of FILE.ptx; ARCH sm_90, or compute_90 assembled as\n"
    "                         sm_90): the SM model issues them and SIMD efficiency weighs\n"
    "                         blocks by them, instead of PTX instructions, counting the\n"
    "                         code a warp may run in parts once per group of its threads\n"
    "                         (docs/model.md); needs --cfg\n"
    "  --sms N                number of SMs (default 132, H100/H200 SXM)\n"
    "  --block-size S         threads per thread block (default 256)\n"
    "  --blocks-per-sm M      resident blocks per SM (default min(32, 2048 / S); give the\n"
    "                         occupancy of the original kernel, e.g. from `threadmap profile`)\n"
    "  --metric M             what ranks groupings: sm90 (default with --cfg: the SM model,\n"
    "                         docs/model.md) or scheduled (the paper's BBV-weighted-\n"
    "                         scheduled; always without --cfg)\n"
    "  --model MODEL          with --features: the BBV was predicted by MODEL (`threadmap\n"
    "                         train`, version 2) from F.npy; the SM model then takes each\n"
    "                         warp's expected slowest lane from MODEL's residuals\n"
    "                         (docs/model.md); needs --cfg\n"
    "  --features F.npy       the threads' features [threads, p] (with --model: those the\n"
    "                         BBV was predicted from); their rows key the kernel's\n"
    "                         __constant__ reads where each takes its row from the\n"
    "                         thread's data (the constant cache's capacity,\n"
    "                         docs/model.md); needs --cfg\n";

void tmap_mi_defaults(tmap_mi_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sms = 132;
    o->block_size = 256;
}

int tmap_mi_option(tmap_mi_opts *o, tmap_args *a, int c)
{
    const char **str = c == TMAP_OPT_BBV ? &o->bbv : c == TMAP_OPT_CFG ? &o->cfg
                     : c == TMAP_OPT_LAT ? &o->lat : c == TMAP_OPT_TABLE ? &o->table
                     : c == TMAP_OPT_PERM ? &o->perm : c == TMAP_OPT_MODEL ? &o->model
                     : c == TMAP_OPT_FEATURES ? &o->features : NULL;
    long *num = c == TMAP_OPT_SMS ? &o->sms : c == TMAP_OPT_BLOCK_SIZE ? &o->block_size
              : c == TMAP_OPT_BPS ? &o->blocks_per_sm : NULL;
    if (c == 'k' || c == TMAP_OPT_SASS) {
        *(c == 'k' ? &o->kernel : &o->sass) = optarg;
        return 1;
    }
    if (c == TMAP_OPT_METRIC) {
        static const char *const metrics[] = {"sm90", "scheduled"};
        int i = 0;
        if (tmap_args_choice(a, metrics, 2, &i))
            return -1;
        o->paper_metric = i == 1;
        return 1;
    }
    if (str) {
        *str = tmap_args_input(a, optarg);
        return 1;
    }
    if (num)
        return tmap_args_long(a, 1, 1000000000L, num) ? -1 : 1;
    return 0;
}

int tmap_mi_finish(tmap_mi_opts *o, tmap_args *a, int need_bbv)
{
    if ((need_bbv && !o->bbv) || (o->bbv && !o->cfg == !o->lat) || (!o->cfg != !o->kernel) ||
        ((o->table || o->sass) && !o->cfg))
        return tmap_args_bad(a, "give --bbv and either --cfg with --kernel or --block-latency "
                                "(--table and --sass only with --cfg)");
    if (o->model && !o->features)
        return tmap_args_bad(a, "--model needs --features (the features it predicted from)");
    if (o->features && (!o->cfg || o->paper_metric))
        return tmap_args_bad(a, "--model and --features need the SM model: --cfg, without "
                                "--metric scheduled");
    if (!o->blocks_per_sm) {
        long m = 2048 / o->block_size;
        o->blocks_per_sm = m < 1 ? 1 : m > 32 ? 32 : m;
    }
    return 0;
}

void tmap_mi_free(tmap_mi *d)
{
    tmap_names_free(d->names, d->bbv.nblocks);
    tmap_bbv_free(&d->bbv);
    free(d->lat);
    free(d->sass);
    tmap_sass_splits_free(&d->splits);
    free(d->perm);
    tmap_sm_model_free(&d->sm);
    tmap_noise_free(&d->noise);
    tmap_cfg_free(d->cfg);
    tmap_lat_report_free(&d->report);
    memset(d, 0, sizeof *d);
}

/* The BBV's columns must be the CFG's blocks, and so must the sidecar's
 * block names when there is one. */
static tmap_status check_names(const tmap_mi_opts *o, const tmap_mi *d, tmap_error *err)
{
    if (d->cfg->nblocks != d->bbv.nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: %zu columns, but kernel %s of %s has %zu blocks", o->bbv,
                         d->bbv.nblocks, o->kernel, o->cfg, d->cfg->nblocks);
    if (!d->names)
        return TMAP_OK;
    for (size_t b = 0; b < d->bbv.nblocks; b++)
        if (strcmp(d->names[b], d->cfg->blocks[b].name))
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "BBV column %zu is block '%s' but the CFG's block %zu is '%s'", b,
                             d->names[b], b, d->cfg->blocks[b].name);
    return TMAP_OK;
}

/* --sass: SIMD efficiency weighs blocks by their SASS instructions. */
static tmap_status sass_weights(const tmap_mi_opts *o, const char *ptx, tmap_mi *d,
                                tmap_error *err)
{
    if (!(d->sass = malloc(d->cfg->nblocks * sizeof *d->sass)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "SASS counts");
    tmap_status s = tmap_sass_block_counts(ptx, d->cfg, o->sass, d->sass, &d->splits, err);
    if (s)
        tmap_error_prefix(err, "%s: SASS counts", o->cfg);
    d->params.simd_weights = d->sass;
    d->params.simd_splits = &d->splits;
    return s;
}

/* Block latencies from the PTX's CFG and a latency table. */
static tmap_status from_cfg(const tmap_mi_opts *o, tmap_mi *d, tmap_error *err)
{
    char *text;
    size_t len;
    tmap_ptx_module *m = NULL;
    tmap_lat_table *t = NULL;
    tmap_status s = tmap_file_read(o->cfg, &text, &len, err);
    if (s)
        return s;
    s = tmap_ptx_parse(text, len, o->cfg, &m, err);
    if (!s)
        s = tmap_cfg_build(m, o->kernel, &d->cfg, err);
    if (!s && o->table)
        snprintf(d->table, sizeof d->table, "%s", o->table);
    else if (!s)
        s = tmap_lat_default_path("sm_90", d->table, sizeof d->table, err);
    if (!s)
        s = tmap_lat_load(d->table, &t, err);
    if (!s)
        s = tmap_lat_blocks(t, d->cfg, &d->lat, &d->report, err);
    if (!s && o->sass)
        s = sass_weights(o, text, d, err);
    /* the grouping is taken to be applied by the layout transform */
    if (!s && !o->paper_metric)
        s = tmap_sm_model_make(t, m, o->kernel, d->cfg, d->sass, d->params.nsms,
                               d->params.blocks_per_sm, d->params.block_size, 0, &d->sm, err);
    if (!s && !o->paper_metric)
        d->params.sm = &d->sm;
    tmap_lat_free(t);
    tmap_ptx_free(m);
    free(text);
    return s ? s : check_names(o, d, err);
}

/* --features: the SM model's groups of equal features, which key the
 * kernel's __constant__ rows (read where the model is keyed) and, with
 * --model, group the lanes whose residuals are shared; *p: the features
 * per thread. */
static tmap_status load_features(const tmap_mi_opts *o, tmap_mi *d, size_t *p, tmap_error *err)
{
    double *feat = NULL;
    size_t dim[2];
    tmap_status s = tmap_npy_load_f64(o->features, TMAP_NPY_ANY, &feat, dim, err);
    if (!s && dim[0] != d->bbv.nthreads)
        s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu threads, but the BBV has %zu", o->features,
                      dim[0], d->bbv.nthreads);
    if (!s)
        s = tmap_sm_model_features(&d->sm, feat, dim[0], dim[1], err);
    if (!s)
        *p = dim[1];
    free(feat);
    return s;
}

/* --model: the predictor's residuals, for the SM model's expected slowest
 * lane (the features' keys group the lanes). */
static tmap_status load_noise(const tmap_mi_opts *o, tmap_mi *d, size_t p, tmap_error *err)
{
    tmap_predictor pr;
    const char **names;
    tmap_status s = tmap_cfg_names(d->cfg, &names, err);
    if (s)
        return s;
    s = tmap_predictor_load(o->model, o->kernel, d->cfg->nblocks, names, &pr, err);
    free(names);
    if (s)
        return s;
    if (!pr.noise.nblocks)
        s = tmap_fail(err, TMAP_ERR_INVALID, "%s: no residuals (a predictor file of version 1): "
                      "train it again with this version", o->model);
    if (!s && p != pr.nfeatures)
        s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu features a thread, but %s has %zu",
                      o->features, p, o->model, pr.nfeatures);
    if (!s) {
        d->noise = pr.noise, memset(&pr.noise, 0, sizeof pr.noise);
        d->sm.noise = &d->noise;
    }
    tmap_predictor_free(&pr);
    return s;
}

static tmap_status load_perm(const tmap_mi_opts *o, tmap_mi *d, tmap_error *err)
{
    size_t dim[2];
    tmap_status s = tmap_npy_load_u32(o->perm, TMAP_NPY_1D, &d->perm, dim, err);
    if (!s && dim[0] != d->bbv.nthreads)
        s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu entries for %zu threads", o->perm, dim[0],
                      d->bbv.nthreads);
    return s ? s : tmap_perm_check(d->perm, dim[0], o->perm, err);
}

tmap_status tmap_mi_load(const tmap_mi_opts *o, tmap_mi *d, tmap_error *err)
{
    memset(d, 0, sizeof *d);
    d->params = (tmap_model_params){.block_size = (size_t)o->block_size,
                                    .nsms = (size_t)o->sms,
                                    .blocks_per_sm = (size_t)o->blocks_per_sm};
    tmap_status s = tmap_bbv_load(o->bbv, &d->bbv, &d->names, err);
    size_t dim[2];
    if (!s && o->cfg)
        s = from_cfg(o, d, err);
    else if (!s) {
        s = tmap_npy_load_f64(o->lat, TMAP_NPY_1D, &d->lat, dim, err);
        if (!s && dim[0] != d->bbv.nblocks)
            s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu block latencies for a BBV of %zu blocks",
                          o->lat, dim[0], d->bbv.nblocks);
        if (!s)
            s = tmap_lat_check(d->lat, dim[0], o->lat, err);
    }
    size_t p = 0;
    if (!s && o->features)
        s = load_features(o, d, &p, err);
    if (!s && o->model)
        s = load_noise(o, d, p, err);
    if (!s && o->perm)
        s = load_perm(o, d, err);
    return s;
}

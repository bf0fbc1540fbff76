/*
 * evaluate.c -- the pipeline of one manifest input on the GPU: BBVs,
 * latencies, safety, the plan, then every (or the chosen) regrouping
 * applied for real, its outputs compared with the original's and its time
 * measured; then regroup() on the GPU with measured feedback (the
 * regrouper) when a model gives it its key.  Each step is one small
 * function; tmap_evaluate runs them in order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base.h"
#include "threadmap/pipeline.h"
#include "runtime/manifest.h"

const char *tmap_mechanism_name(tmap_mechanism m)
{
    return m == TMAP_MECH_LAYOUT ? "layout transform" : m == TMAP_MECH_REDIRECT ? "redirection"
                                                                                : "none";
}

/* Everything the steps share. */
typedef struct ctx {
    tmap_cuda *cuda;
    tmap_manifest *m;
    const tmap_eval_opts *o;
    tmap_eval *e;
    char *ptx;
    tmap_regroup_target target;
    tmap_thread_array *arrays;
    tmap_kernel *original, *redirected;
    void **reference;     /* host copies of the output arrays after the original launch */
    uint64_t perm;        /* device buffer, u32 [threads] */
    tmap_predictor pred;  /* with a model: the predictor, and the input's features */
    double *features;     /* [threads][pred.nfeatures], on the host (the BBVs, the plan) */
    uint64_t features_dev; /* the same on the GPU (tmap_manifest_features_gpu): the GPU path's */
    tmap_timer *features_timer; /* around the features kernel of a timed GPU launch */
} ctx;

static tmap_status step_static(ctx *x, tmap_error *err)
{
    tmap_eval *e = x->e;
    char arch[32], name[4096];
    tmap_ptx_module *mod = NULL;
    tmap_lat_table *t = NULL;
    tmap_status st = tmap_cuda_info(x->cuda, &e->device, err);
    tmap_cuda_arch(&e->device, arch, sizeof arch);
    if (!st) st = tmap_manifest_ptx(x->m, x->m->arch ? NULL : arch, &x->ptx, &e->entry, err);
    if (!st) st = tmap_ptx_parse(x->ptx, strlen(x->ptx),
                                 tmap_manifest_ptx_name(x->m, name, sizeof name), &mod, err);
    if (!st) st = tmap_cfg_build(mod, e->entry, &e->cfg, err);
    if (!st) st = tmap_safety_analyze(mod, e->entry, &e->safety, err);
    tmap_ptx_free(mod);
    if (!st && x->o->table_path)
        snprintf(e->table, sizeof e->table, "%s", x->o->table_path);
    else if (!st) {
        char sm[16];
        snprintf(sm, sizeof sm, "sm_%d%d", e->device.cc_major, e->device.cc_minor);
        if (tmap_lat_default_path(sm, e->table, sizeof e->table, NULL) != TMAP_OK)
            st = tmap_lat_default_path("sm_90", e->table, sizeof e->table, err);
    }
    if (!st) st = tmap_lat_load(e->table, &t, err);
    if (!st) st = tmap_lat_blocks(t, e->cfg, &e->lat, &e->fallbacks, err);
    tmap_lat_free(t);
    return st;
}

/* Fresh input: the manifest's arrays regenerated and uploaded. */
static tmap_status fresh(ctx *x, tmap_launch *l, tmap_error *err)
{
    tmap_status st = tmap_manifest_generate(x->m, x->o->seed, err);
    return st ? st : tmap_manifest_bind(x->m, x->cuda, l, err);
}

static tmap_status predicted_bbv(ctx *x, tmap_error *err)
{
    tmap_eval *e = x->e;
    const char **names;
    tmap_predictor *p = &x->pred;
    size_t n, q;
    tmap_status st = tmap_cfg_names(e->cfg, &names, err);
    if (st)
        return st;
    st = tmap_predictor_load(x->o->model_path, e->entry, e->cfg->nblocks, names, p, err);
    if (!st) st = tmap_manifest_features(x->m, &x->features, &n, &q, NULL, err);
    if (!st && q != p->nfeatures)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s has %zu features, the manifest %zu",
                       x->o->model_path, p->nfeatures, q);
    if (!st) st = tmap_predict(p, x->features, n, &e->bbv, err);
    if (!st) /* the model's: what the predictions leave out (tmap_noise_warp_counts) */
        e->noise = p->noise, memset(&p->noise, 0, sizeof p->noise);
    snprintf(e->origin, sizeof e->origin, "predicted by %s from the input's features (seed %llu)",
             x->o->model_path, (unsigned long long)x->o->seed);
    free(names);
    return st;
}

static tmap_status measured_bbv(ctx *x, tmap_error *err)
{
    tmap_launch l;
    tmap_profile p;
    tmap_status st = fresh(x, &l, err);
    if (!st) st = tmap_profile_run(x->cuda, x->ptx, x->e->entry, &l, 1, &p, err);
    if (st)
        return st;
    x->e->bbv = p.bbv;
    p.bbv = (tmap_bbv){0};
    tmap_profile_free(&p);
    snprintf(x->e->origin, sizeof x->e->origin,
             "measured on %s by a profiling run of this input (seed %llu)", x->e->device.name,
             (unsigned long long)x->o->seed);
    return TMAP_OK;
}

static tmap_status step_bbv(ctx *x, tmap_error *err)
{
    double t0 = (1e3 * tmap_clock_seconds());
    tmap_status st = tmap_manifest_generate(x->m, x->o->seed, err);
    if (!st)
        st = x->o->model_path ? predicted_bbv(x, err) : measured_bbv(x, err);
    x->e->bbv_ms = (1e3 * tmap_clock_seconds()) - t0;
    if (!st && x->e->bbv.nthreads != x->m->threads)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%zu BBV rows for a launch of %zu threads",
                       x->e->bbv.nthreads, x->m->threads);
    return st;
}

/* One launch, the original (TMAP_MECH_NONE) or regrouped, on the input as
 * bound (restored first, outside the timed region); ms as in
 * tmap_regroup_launch. */
static tmap_status launch_once(ctx *x, const tmap_launch *l, tmap_mechanism m, float ms[3],
                               tmap_error *err)
{
    tmap_status st = tmap_manifest_restore(x->m, err);
    ms[0] = ms[1] = ms[2] = 0;
    if (!st && m == TMAP_MECH_NONE)
        return tmap_kernel_time(x->original, l, 0, 1, &ms[1], err);
    return st ? st : tmap_regroup_launch(&x->target, l, m, x->perm, ms, err);
}

/* Medians over reps launches on one fresh input, after the warm-up ones:
 * the kernel, and applying the regrouping (before + after). */
static tmap_status time_series(ctx *x, tmap_mechanism m, double *kernel_ms, double *apply_ms,
                               tmap_error *err)
{
    int n = x->o->reps, w = x->o->warmup;
    double *k = calloc((size_t)n, sizeof *k), *a = calloc((size_t)n, sizeof *a);
    tmap_launch l;
    float ms[3];
    tmap_status st = !k || !a ? tmap_fail(err, TMAP_ERR_NOMEM, "out of memory") : fresh(x, &l, err);
    for (int i = 0; !st && i < w + n; i++) {
        st = launch_once(x, &l, m, ms, err);
        if (i >= w)
            k[i - w] = ms[1], a[i - w] = ms[0] + ms[2];
    }
    if (!st) {
        *kernel_ms = tmap_median(k, n);
        *apply_ms = tmap_median(a, n);
    }
    free(k);
    free(a);
    return st;
}

/* The original launch: reference outputs, occupancy and median time. */
static tmap_status step_original(ctx *x, tmap_error *err)
{
    tmap_launch l;
    tmap_status st = tmap_kernel_load(x->cuda, x->ptx, x->e->entry, &x->original, err);
    if (!st) st = fresh(x, &l, err);
    if (!st) st = tmap_kernel_stats_get(x->original, &l, &x->e->stats, err);
    if (!st) st = tmap_kernel_run(x->original, &l, err);
    x->reference = calloc(x->m->narrays + 1, sizeof *x->reference);
    if (!st && !x->reference)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < x->m->narrays; i++) {
        tmap_marray *a = &x->m->arrays[i];
        size_t bytes = a->count * tmap_elem_size(a->kind);
        if (!a->is_output)
            continue;
        st = tmap_manifest_fetch(x->m, a->name, err);
        if (!st && !(x->reference[i] = malloc(bytes)))
            st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        if (!st)
            memcpy(x->reference[i], a->host, bytes);
    }
    double apply_ms;
    if (!st) st = time_series(x, TMAP_MECH_NONE, &x->e->original_ms, &apply_ms, err);
    return st;
}

tmap_mechanism tmap_mechanism_choose(const tmap_safety *s, int have_arrays)
{
    if (!s)
        return TMAP_MECH_NONE;
    if (s->scope == TMAP_SAFE_NONE || s->scope == TMAP_SAFE_WARPS)
        return TMAP_MECH_NONE;
    if (s->layout_ok && have_arrays)
        return TMAP_MECH_LAYOUT;
    return s->redirect_ok ? TMAP_MECH_REDIRECT : TMAP_MECH_NONE;
}

static tmap_mechanism pick_mechanism(const ctx *x)
{
    if (x->o->mechanism >= 0)
        return (tmap_mechanism)x->o->mechanism;
    return tmap_mechanism_choose(&x->e->safety, x->target.narrays > 0);
}

static tmap_status step_mechanism(ctx *x, tmap_error *err)
{
    size_t n = 0;
    tmap_status st = tmap_manifest_thread_arrays(x->m, &x->arrays, &n, err);
    if (st == TMAP_ERR_UNSUPPORTED)
        st = TMAP_OK, n = 0; /* no layout transform for this manifest */
    x->target = (tmap_regroup_target){x->cuda, x->original, NULL, x->arrays, n, NULL};
    x->e->mechanism = pick_mechanism(x);
    if (!st && x->e->mechanism == TMAP_MECH_REDIRECT) {
        st = tmap_redirect_load(x->cuda, x->ptx, x->e->entry, &x->redirected, err);
        x->target.redirected = x->redirected;
    }
    if (!st && x->e->mechanism == TMAP_MECH_LAYOUT && !n)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: the layout transform needs per-thread arrays "
                       "(per_thread in the manifest)", x->m->path);
    if (!st) st = tmap_cuda_alloc(x->cuda, x->m->threads * sizeof(uint32_t), &x->perm, err);
    if (st || x->e->mechanism == TMAP_MECH_NONE)
        return st;
    /* what applying costs, measured with the identity permutation */
    uint32_t *id = malloc(x->m->threads * sizeof *id);
    if (!id)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < x->m->threads; i++)
        id[i] = (uint32_t)i;
    st = tmap_cuda_upload(x->cuda, x->perm, id, x->m->threads * sizeof *id, err);
    free(id);
    double k = 0, a = 0;
    if (!st) st = time_series(x, x->e->mechanism, &k, &a, err);
    x->e->apply_ms = x->e->mechanism == TMAP_MECH_LAYOUT ? a : fmax(0.0, k - x->e->original_ms);
    return st;
}

/* The feature to sort by: --key, else the manifest's "key"; NULL: none. */
static const char *key_name(const ctx *x)
{
    return x->o->key_feature ? x->o->key_feature : x->m->key;
}

static tmap_status key_values(ctx *x, double **key, tmap_error *err)
{
    const char *want = key_name(x);
    *key = NULL;
    if (!want)
        return TMAP_OK;
    double *f;
    size_t n, q;
    const char *const *names;
    tmap_status st = tmap_manifest_features(x->m, &f, &n, &q, &names, err);
    if (st)
        return st;
    size_t j = 0;
    while (j < q && strcmp(names[j], want))
        j++;
    if (j == q) {
        free(f);
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no feature named '%s' to sort by",
                         x->m->path, want);
    }
    for (size_t t = 0; t < n; t++)
        f[t] = f[t * q + j];
    *key = f;
    return TMAP_OK;
}

/* The threads' groups of equal features, for the SM model: the lanes of
 * a predicted warp whose residuals are shared (noise), and the keys of the
 * __constant__ rows (threads of equal features read the same rows: the
 * model checked that every varying constant address comes from the
 * thread's own data).  x->features where predicted, else the manifest's. */
static tmap_status feature_groups(ctx *x, tmap_error *err)
{
    tmap_eval *e = x->e;
    if (x->features)
        return tmap_sm_model_features(&e->sm, x->features, e->bbv.nthreads, x->pred.nfeatures,
                                      err);
    if (!x->m->nfeatures)
        return TMAP_OK; /* no key: the report's caveat says what is not seen */
    double *f = NULL;
    size_t n, q;
    tmap_status st = tmap_manifest_features(x->m, &f, &n, &q, NULL, err);
    if (!st && q)
        st = tmap_sm_model_features(&e->sm, f, n, q, err);
    free(f);
    return st;
}

/* The SM model of the kernel on this device (SASS counts where ptxas and
 * nvdisasm are found, else PTX counts), unless the paper's metric ranks. */
static tmap_status sm_model(ctx *x, size_t tpb, tmap_error *err)
{
    tmap_eval *e = x->e;
    if (x->o->paper_metric)
        return TMAP_OK;
    char arch[32], name[4096];
    tmap_cuda_arch(&e->device, arch, sizeof arch);
    tmap_ptx_module *mod = NULL;
    tmap_lat_table *t = NULL;
    tmap_error ignored = {0};
    double *sass = malloc((e->cfg->nblocks + 1) * sizeof *sass);
    tmap_status st = sass ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (!st && tmap_sass_block_counts(x->ptx, e->cfg, arch, sass, NULL, &ignored))
        free(sass), sass = NULL; /* PTX counts */
    if (!st) st = tmap_ptx_parse(x->ptx, strlen(x->ptx),
                                 tmap_manifest_ptx_name(x->m, name, sizeof name), &mod, err);
    if (!st) st = tmap_lat_load(e->table, &t, err);
    if (!st)
        st = tmap_sm_model_make(t, mod, e->entry, e->cfg, sass, (size_t)e->device.sms,
                                (size_t)e->stats.blocks_per_sm, tpb,
                                e->mechanism == TMAP_MECH_REDIRECT, &e->sm, err);
    if (!st && e->noise.nblocks)
        e->sm.noise = &e->noise;
    if (!st && (e->noise.nblocks || tmap_sm_model_const_keyed(&e->sm)))
        st = feature_groups(x, err);
    free(sass);
    tmap_lat_free(t);
    tmap_ptx_free(mod);
    return st;
}

static tmap_status step_plan(ctx *x, tmap_error *err)
{
    tmap_eval *e = x->e;
    const tmap_safety *s = &e->safety;
    int block = x->o->scope >= 0 ? x->o->scope == TMAP_REGROUP_BLOCK : s->scope == TMAP_SAFE_BLOCK;
    unsigned tpb = x->m->block[0] * x->m->block[1] * x->m->block[2];
    double *key = NULL;
    tmap_status st = tmap_manifest_generate(x->m, x->o->seed, err);
    if (!st) st = key_values(x, &key, err);
    if (!st) st = sm_model(x, tpb, err);
    tmap_plan_opts po = {{tpb, (size_t)e->device.sms, (size_t)e->stats.blocks_per_sm, NULL, NULL,
                          x->o->paper_metric ? NULL : &e->sm},
                         {x->o->groupsize, block ? TMAP_REGROUP_BLOCK : TMAP_REGROUP_GRID, tpb, x->o->threads},
                         key, x->o->algos, x->o->threshold, e->original_ms, e->apply_ms,
                         x->o->launches};
    e->params = po.model;
    if (!st) st = tmap_plan_make(&e->bbv, e->lat, e->cfg, &po, &e->plan, err);
    free(key);
    if (!st && e->mechanism == TMAP_MECH_NONE && e->plan.chosen) {
        e->plan.chosen = 0;
        size_t len = strlen(e->plan.why);
        snprintf(e->plan.why + len, sizeof e->plan.why - len,
                 "; but no mechanism keeps this kernel's results (see the safety analysis): "
                 "leave the launch alone");
    }
    return st;
}

static int outputs_match(ctx *x)
{
    for (size_t i = 0; i < x->m->narrays; i++) {
        tmap_marray *a = &x->m->arrays[i];
        if (!x->reference[i])
            continue;
        if (tmap_manifest_fetch(x->m, a->name, NULL) != TMAP_OK ||
            memcmp(a->host, x->reference[i], a->count * tmap_elem_size(a->kind)))
            return 0;
    }
    return 1;
}

static tmap_status measure_candidate(ctx *x, size_t i, tmap_error *err)
{
    tmap_eval *e = x->e;
    const tmap_candidate *c = &e->plan.cand[i];
    tmap_launch l;
    float ms[3];
    tmap_status st = tmap_cuda_upload(x->cuda, x->perm, c->perm, x->m->threads * sizeof *c->perm, err);
    if (!st) st = fresh(x, &l, err);
    if (!st) st = tmap_regroup_launch(&x->target, &l, e->mechanism, x->perm, ms, err);
    if (!st)
        e->outputs_equal[i] = outputs_match(x);
    if (!st)
        st = time_series(x, e->mechanism, &e->measured_ms[i], &e->measured_apply_ms[i], err);
    return st;
}

static tmap_status step_measure(ctx *x, tmap_error *err)
{
    tmap_eval *e = x->e;
    e->measured_ms[0] = e->original_ms;
    e->measured_apply_ms[0] = 0;
    e->outputs_equal[0] = 1;
    if (e->mechanism == TMAP_MECH_NONE)
        return TMAP_OK;
    for (size_t i = 1; i < e->plan.n; i++) {
        if (!e->plan.cand[i].available || (!x->o->measure_all && (int)i != e->plan.chosen))
            continue;
        tmap_status st = measure_candidate(x, i, err);
        if (st) {
            tmap_error_prefix(err, "applying %s", tmap_algo_name(e->plan.cand[i].algo));
            return st;
        }
    }
    return TMAP_OK;
}

/* The predictor's feature that the manifest (or --key) names as the key,
 * or -1. */
static int key_feature(const ctx *x)
{
    const char *want = key_name(x);
    for (size_t j = 0; want && j < x->pred.nfeatures; j++)
        if (x->pred.feature_names[j] && !strcmp(x->pred.feature_names[j], want))
            return (int)j;
    return -1;
}

/* Why the GPU path cannot run on this evaluation, or NULL. */
static const char *gpu_blocker(const ctx *x)
{
    const tmap_safety *s = &x->e->safety;
    if (!x->o->model_path)
        return "it takes its key from a trained model (--model)";
    if (x->e->mechanism == TMAP_MECH_NONE)
        return "no mechanism keeps this kernel's results (see the safety analysis)";
    if (!(s->layout_ok && x->target.narrays) && !s->redirect_ok)
        return "neither the layout transform nor redirection is safe for this kernel";
    return NULL;
}

/* One launch through the regrouper on the restored input, as for a new
 * input: its features computed on the GPU (what the key reads) unless the
 * regrouper has kept the original (no launch reads a key then), with
 * overlap the next input announced (its features are these: the series
 * restores one input), then the launch.  Timed whole when t is given, and
 * the features kernel apart (*fms, 0 when skipped). */
static tmap_status gpu_launch(ctx *x, tmap_regrouper *r, uint64_t sig, int overlap, tmap_timer *t,
                              float *ms, float *fms, tmap_error *err)
{
    int ready = 0, key = tmap_regrouper_chosen(r) != TMAP_REGROUPER_ORIGINAL;
    tmap_timer *ft = t && key ? x->features_timer : NULL;
    tmap_status st = tmap_manifest_restore(x->m, err);
    if (fms)
        *fms = 0;
    if (!st && t) st = tmap_timer_start(t, NULL, err);
    if (!st && ft) st = tmap_timer_start(ft, NULL, err);
    if (!st && key) st = tmap_manifest_features_gpu(x->m, x->features_dev, NULL, err);
    if (!st && ft) st = tmap_timer_stop(ft, NULL, err);
    if (!st && overlap) st = tmap_regrouper_prepare(r, sig + 1, NULL, err);
    if (!st) st = tmap_regrouper_launch(r, x->original, sig, NULL, err);
    if (!st && t) st = tmap_timer_stop(t, NULL, err);
    if (!st) st = tmap_regrouper_poll(r, 1, NULL, err);
    if (!st && t) st = tmap_timer_poll(t, &ready, ms, err);
    if (!st && ft) st = tmap_timer_poll(ft, &ready, fms, err);
    return st;
}

/* Median per-launch time over reps launches (after one untimed), each
 * launch timed alone on a new input signature, as the original is, and
 * (features_ms not NULL) the median of its features kernel.  With `overlap`, each next input is
 * announced before the launch (tmap_regrouper_prepare): its key and sort
 * run on the side stream beside this launch's kernel, and the next launch
 * takes them. */
static tmap_status gpu_series(ctx *x, tmap_regrouper *r, tmap_timer *t, uint64_t *sig,
                              int overlap, double *out, double *features_ms, tmap_error *err)
{
    int n = x->o->reps;
    double *v = calloc(2 * (size_t)n, sizeof *v);
    tmap_status st = v ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (int i = -1; !st && i < n; i++) {
        float ms = 0, fms = 0;
        uint64_t now = ++*sig;
        st = gpu_launch(x, r, now, overlap, i < 0 ? NULL : t, &ms, &fms, err);
        if (i >= 0)
            v[i] = ms, v[n + i] = fms;
    }
    if (!st) {
        *out = tmap_median(v, (size_t)n);
        if (features_ms)
            *features_ms = tmap_median(v + n, (size_t)n);
    }
    free(v);
    return st;
}

/* Per-launch time of reps launches back to back after warm-up ones on the
 * restored input, one event pair around them all: through the regrouper
 * (the same signature: the remap cache) or, r NULL, the original kernel,
 * so that the two are timed alike. */
static tmap_status back_to_back(ctx *x, tmap_regrouper *r, const tmap_launch *l, uint64_t sig,
                                tmap_timer *t, double *out, tmap_error *err)
{
    int n = x->o->reps, w = x->o->warmup > 0 ? x->o->warmup : 1;
    float ms = 0;
    tmap_status st = tmap_manifest_restore(x->m, err);
    for (int i = -w; !st && i < n; i++) {
        if (!i) st = tmap_timer_start(t, NULL, err);
        if (!st) st = r ? tmap_regrouper_launch(r, x->original, sig, NULL, err)
                        : tmap_kernel_enqueue(x->original, l, NULL, err);
    }
    if (!st) st = tmap_timer_stop(t, NULL, err);
    if (!st) st = tmap_timer_wait(t, &ms, err);
    *out = (double)ms / n;
    return st;
}

static int updates_an_input(const tmap_manifest *m)
{
    for (size_t i = 0; i < m->narrays; i++)
        if (m->arrays[i].is_input && m->arrays[i].is_output)
            return 1;
    return 0;
}

/* regroup() on the GPU: the trial on real launches, then the chosen path
 * timed with a new input each launch (launch by launch, as original_ms),
 * without and with overlap, and, when no input is updated, with the same one back to back, next to
 * the original back to back. */
static tmap_status gpu_measure(ctx *x, tmap_regrouper *r, const tmap_launch *l, tmap_timer *t,
                               tmap_error *err)
{
    tmap_eval *e = x->e;
    uint64_t sig = 0;
    tmap_status st = TMAP_OK;
    for (int i = 0; !st && tmap_regrouper_chosen(r) < 0 && i < 64; i++)
        st = gpu_launch(x, r, ++sig, 0, NULL, NULL, NULL, err);
    if (!st && tmap_regrouper_chosen(r) < 0)
        st = tmap_fail(err, TMAP_ERR_CUDA, "the regrouper's trial did not finish");
    if (!st) e->gpu_outputs_equal = outputs_match(x);
    if (!st) st = gpu_series(x, r, t, &sig, 0, &e->gpu_fresh_ms, &e->gpu_features_ms, err);
    if (!st) st = gpu_series(x, r, t, &sig, 1, &e->gpu_overlap_ms, NULL, err);
    if (!st) tmap_regrouper_overlap_counts(r, &e->gpu_overlap_taken, &e->gpu_overlap_late);
    if (!st && !updates_an_input(x->m))
        st = back_to_back(x, r, l, sig, t, &e->gpu_cached_ms, err);
    if (!st && !updates_an_input(x->m))
        st = back_to_back(x, NULL, l, sig, t, &e->gpu_original_ms, err);
    if (!st && e->gpu_outputs_equal)
        e->gpu_outputs_equal = outputs_match(x);
    if (!st) {
        e->gpu_ran = 1;
        snprintf(e->gpu_chosen, sizeof e->gpu_chosen, "%s", tmap_regrouper_chosen_name(r));
        snprintf(e->gpu_note, sizeof e->gpu_note, "%s", tmap_regrouper_why(r));
    }
    return st;
}

static tmap_status step_gpu(ctx *x, tmap_error *err)
{
    tmap_eval *e = x->e;
    const char *why = gpu_blocker(x);
    if (why) {
        snprintf(e->gpu_note, sizeof e->gpu_note, "not run: %s", why);
        return TMAP_OK;
    }
    tmap_launch l;
    uint64_t f = 0;
    tmap_regrouper *r = NULL;
    tmap_timer *t = NULL;
    size_t bytes = x->m->threads * x->pred.nfeatures * sizeof(double);
    int block = x->o->scope >= 0 ? x->o->scope == TMAP_REGROUP_BLOCK
                                 : e->safety.scope == TMAP_SAFE_BLOCK;
    int layout = e->safety.layout_ok && x->target.narrays, mech = x->o->mechanism;
    tmap_regrouper_opts o = {.scope = block ? TMAP_REGROUP_BLOCK : TMAP_REGROUP_GRID,
                             .model = &x->pred, .lat = e->lat, .overlap = 1};
    /* the manifest's key feature, when it names one, as a second key: a
     * one-block model that reads it (count = the key, latency 1) */
    double *key_coef = NULL, key_lat = 1;
    char key_name[96];
    tmap_predictor key_model = {.nblocks = 1, .nfeatures = x->pred.nfeatures};
    int j = key_feature(x);
    if (j >= 0 && (key_coef = calloc(x->pred.nfeatures + 2, sizeof *key_coef))) {
        key_coef[1 + j] = 1;
        key_model.coef = key_coef;
        snprintf(key_name, sizeof key_name, "key %s", x->pred.feature_names[j]);
        o.alt_model = &key_model, o.alt_lat = &key_lat, o.alt_name = key_name;
    }
    tmap_status st = TMAP_OK;
    if (e->safety.redirect_ok && mech != TMAP_MECH_LAYOUT && !x->redirected)
        st = tmap_redirect_load(x->cuda, x->ptx, e->entry, &x->redirected, err);
    if (e->safety.redirect_ok && mech != TMAP_MECH_LAYOUT)
        o.redirected = x->redirected;
    if (mech == TMAP_MECH_REDIRECT)
        layout = 0;
    if (!st) st = fresh(x, &l, err);
    if (!st) st = tmap_cuda_alloc(x->cuda, bytes ? bytes : 8, &f, err);
    if (!st) st = tmap_timer_create(x->cuda, &x->features_timer, err);
    x->features_dev = o.features = f;
    if (!st) st = tmap_regrouper_create(x->cuda, &l, layout ? x->target.arrays : NULL,
                                        layout ? x->target.narrays : 0, &o, &r, err);
    if (st == TMAP_ERR_UNSUPPORTED) { /* built without the GPU path: say so, go on */
        snprintf(e->gpu_note, sizeof e->gpu_note, "not run: %s", err ? err->message : "no GPU path");
        st = TMAP_OK;
    } else {
        if (!st) st = tmap_timer_create(x->cuda, &t, err);
        if (!st) st = gpu_measure(x, r, &l, t, err);
    }
    tmap_timer_free(t);
    tmap_timer_free(x->features_timer);
    tmap_regrouper_free(r);
    free(key_coef);
    if (f)
        tmap_cuda_free(x->cuda, f);
    if (st)
        tmap_error_prefix(err, "the GPU path");
    return st;
}

tmap_status tmap_evaluate(tmap_cuda *c, tmap_manifest *m, const tmap_eval_opts *o,
                          tmap_eval *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, m, o, out);
    if (absent)
        return absent;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < TMAP_ALGO_COUNT; i++)
        out->measured_ms[i] = out->measured_apply_ms[i] = NAN, out->outputs_equal[i] = -1;
    out->gpu_fresh_ms = out->gpu_cached_ms = out->gpu_original_ms = out->gpu_overlap_ms = NAN;
    out->gpu_features_ms = NAN;
    out->gpu_outputs_equal = -1;
    if (o->reps < 1 || o->warmup < 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "evaluate: reps must be >= 1 and warmup >= 0");
    ctx x = {.cuda = c, .m = m, .o = o, .e = out};
    tmap_status st = step_static(&x, err);
    if (!st) st = step_bbv(&x, err);
    if (!st) st = step_original(&x, err);
    if (!st) st = step_mechanism(&x, err);
    if (!st) st = step_plan(&x, err);
    if (!st) st = step_measure(&x, err);
    if (!st) st = step_gpu(&x, err);
    for (size_t i = 0; x.reference && i < m->narrays; i++)
        free(x.reference[i]);
    free(x.reference);
    tmap_predictor_free(&x.pred);
    free(x.features);
    free(x.arrays);
    free(x.ptx);
    tmap_cuda_free(c, x.perm);
    tmap_kernel_free(x.original);
    tmap_kernel_free(x.redirected);
    if (st)
        tmap_eval_free(out);
    return st;
}

void tmap_eval_free(tmap_eval *e)
{
    if (!e)
        return;
    free(e->entry);
    tmap_cfg_free(e->cfg);
    free(e->lat);
    tmap_lat_report_free(&e->fallbacks);
    tmap_bbv_free(&e->bbv);
    tmap_plan_free(&e->plan);
    tmap_sm_model_free(&e->sm);
    tmap_noise_free(&e->noise);
    memset(e, 0, sizeof *e);
}

/*
 * bench.c -- one kernel of `threadmap bench` on the GPU, step by step: a
 * probe launch (for the reps cap), profiling runs on the profiling seeds and
 * the predictor trained on them (R^2, cross-validation), the prediction timed
 * on the evaluation input, tmap_evaluate with every candidate applied and
 * checked, the caller's hook (the CLI writes the per-kernel report there),
 * and the plain data of threadmap/pipeline.h.  The evaluation input is never
 * one of the profiling inputs unless the user asks for it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "threadmap/pipeline.h"
#include "common/base.h"
#include "runtime/manifest.h"

/* Profiled rows per run the auto sample aims at (memory and fit time). */
#define BENCH_PROFILE_ROWS (1u << 18)

typedef struct kctx {
    tmap_cuda *c;
    const tmap_device_info *d;
    const tmap_bench_cfg *cfg;
    size_t index;
    tmap_manifest *m;
    char *ptx, *entry;
    char dir[4096];
    char model_path[4200];
    int have_model;
    tmap_bench_kernel *out;
} kctx;

static void progress(const kctx *x, const char *fmt, ...) TMAP_PRINTF(2, 3);
static void progress(const kctx *x, const char *fmt, ...)
{
    if (x->cfg->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "threadmap bench: [%zu/%zu] %s: ", x->index + 1, x->cfg->nkernels, x->out->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The manifest's name made safe as a folder name. */
static void safe_name(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    for (; s && *s && n + 1 < size; s++)
        buf[n++] = (strchr("-_.", *s) || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
                    (*s >= 'A' && *s <= 'Z')) ? *s : '_';
    buf[n] = '\0';
    if (!n)
        snprintf(buf, size, "kernel");
}

static tmap_status step_load(kctx *x, const char *manifest, tmap_error *err)
{
    char arch[32];
    tmap_status st = tmap_manifest_load(manifest, &x->m, err);
    if (st)
        return st;
    safe_name(tmap_manifest_name(x->m), x->out->name, sizeof x->out->name);
    snprintf(x->dir, sizeof x->dir, "%s/%s", x->cfg->out, x->out->name);
    tmap_cuda_arch(x->d, arch, sizeof arch);
    st = tmap_dir_make(x->dir, err);
    if (!st) st = tmap_manifest_ptx(x->m, x->m->arch ? NULL : arch, &x->ptx, &x->entry, err);
    if (!st)
        snprintf(x->out->entry, sizeof x->out->entry, "%s", x->entry);
    return st;
}

static int cmp_float(const void *a, const void *b)
{
    float p = *(const float *)a, q = *(const float *)b;
    return (p > q) - (p < q);
}

/* One warm-up and three timed launches of the original on the evaluation
 * input (restored before each): the kernel time that sizes the reps cap. */
static tmap_status step_probe(kctx *x, double *ms, tmap_error *err)
{
    tmap_kernel *k = NULL;
    tmap_launch l;
    float t[3];
    tmap_status st = tmap_kernel_load(x->c, x->ptx, x->entry, &k, err);
    if (!st) st = tmap_manifest_generate(x->m, x->cfg->seed, err);
    if (!st) st = tmap_manifest_bind(x->m, x->c, &l, err);
    if (!st) st = tmap_manifest_time(x->m, k, &l, 1, 3, t, err);
    tmap_kernel_free(k);
    if (!st) {
        qsort(t, 3, sizeof *t, cmp_float);
        *ms = t[1];
    }
    return st;
}

/* Timed launches the budget allows: warm-up + reps for the original, the
 * identity apply and each candidate, one checking launch per candidate.
 * Never below 10 (the minimum), never above what was asked. */
static int step_reps(kctx *x, double probe_ms)
{
    const tmap_bench_cfg *cfg = x->cfg;
    double per_kernel_s = cfg->budget_s / (double)(cfg->nkernels ? cfg->nkernels : 1) / 3;
    double series = TMAP_ALGO_COUNT + 1;
    double fit = per_kernel_s / (probe_ms * 1e-3 * series) - cfg->warmup;
    int reps = cfg->reps;
    if (fit < reps)
        reps = fit > 10 ? (int)fit : 10;
    if (reps < cfg->reps)
        progress(x, "reps capped to %d (kernel %.3f ms, %.0f s timing budget)", reps, probe_ms, per_kernel_s);
    if (reps > cfg->reps)
        reps = cfg->reps;
    return reps;
}

static long auto_sample(const kctx *x)
{
    if (x->cfg->sample > 0)
        return x->cfg->sample;
    long s = (long)(x->m->threads / BENCH_PROFILE_ROWS);
    return s > 1 ? s : 1;
}

/* The feature rows of the profiled threads (thread blocks 0, S, 2S...). */
static tmap_status sampled_features(const tmap_manifest *m, size_t rows, long sample, double **out,
                                    const char *const **names, size_t *p, tmap_error *err)
{
    double *f;
    size_t n;
    unsigned tpb = m->block[0] * m->block[1] * m->block[2];
    tmap_status st = tmap_manifest_features(m, &f, &n, p, names, err);
    if (st)
        return st;
    double *sel = malloc((rows * *p + 1) * sizeof *sel);
    if (!sel) {
        free(f);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    for (size_t r = 0; r < rows; r++) {
        size_t t = (r / tpb) * (size_t)sample * tpb + r % tpb;
        memcpy(&sel[r * *p], &f[t * *p], *p * sizeof *sel);
    }
    free(f);
    *out = sel;
    return TMAP_OK;
}

/* The CFG's block names, a copy for the training set (NULL if out of
 * memory: the set then goes without names). */
static char **block_names(const tmap_cfg *cfg)
{
    char **names = calloc(cfg->nblocks + 1, sizeof *names);
    for (size_t b = 0; names && b < cfg->nblocks; b++)
        if (!(names[b] = strdup(cfg->blocks[b].name))) {
            tmap_names_free(names, cfg->nblocks);
            return NULL;
        }
    return names;
}

static tmap_status profile_seed(kctx *x, uint64_t seed, long sample, tmap_train_set *t,
                                const char *const **fnames, tmap_error *err)
{
    tmap_launch l;
    tmap_profile pr;
    double *feat = NULL;
    size_t p = 0;
    char what[64];
    tmap_status st = tmap_manifest_generate(x->m, seed, err);
    if (!st) st = tmap_manifest_bind(x->m, x->c, &l, err);
    if (!st) st = tmap_profile_run(x->c, x->ptx, x->entry, &l, (uint32_t)sample, &pr, err);
    if (st)
        return st;
    st = sampled_features(x->m, pr.bbv.nthreads, sample, &feat, fnames, &p, err);
    snprintf(what, sizeof what, "profiling seed %llu", (unsigned long long)seed);
    if (!st)
        st = tmap_train_add(t, feat, pr.bbv.nthreads, p, &pr.bbv, block_names(pr.cfg), what, err);
    tmap_profile_free(&pr);
    return st;
}

/* Fit quality into out: per-block R^2 and the cross-validated RMS. */
static tmap_status fit_quality(kctx *x, const tmap_train_set *t, const tmap_predictor *pr,
                              tmap_error *err)
{
    tmap_bench_kernel *o = x->out;
    tmap_cv_result cv;
    size_t rows = tmap_train_threads(t);
    o->train_threads = rows;
    o->nr2 = pr->nblocks;
    o->r2 = malloc((pr->nblocks + 1) * sizeof *o->r2);
    if (!o->r2)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    memcpy(o->r2, pr->r2, pr->nblocks * sizeof *o->r2);
    o->cv_by_run = t->nruns >= 2;
    if (!o->cv_by_run && rows < 5)
        return TMAP_OK;
    tmap_status st = tmap_regress_cv(t->runs, t->nruns, t->p, 5, o->cv_by_run, &cv, err);
    if (!st) {
        o->cv_rms = cv.total_rms;
        tmap_cv_result_free(&cv);
    }
    return st;
}

static tmap_status step_train(kctx *x, tmap_error *err)
{
    const tmap_bench_cfg *cfg = x->cfg;
    long sample = auto_sample(x);
    tmap_train_set t = {0};
    const char *const *fnames = NULL;
    tmap_predictor pr = {0};
    tmap_status st = TMAP_OK;
    for (size_t i = 0; !st && i < cfg->nseeds; i++) {
        progress(x, "profiling seed %llu (1 thread block in %ld profiled)", (unsigned long long)cfg->profile_seeds[i],
                 sample);
        st = profile_seed(x, cfg->profile_seeds[i], sample, &t, &fnames, err);
    }
    if (!st) {
        progress(x, "training on %zu runs", t.nruns);
        st = tmap_train_fit(&t, x->entry, fnames, &pr, err);
    }
    snprintf(x->model_path, sizeof x->model_path, "%s/model.txt", x->dir);
    if (!st) st = tmap_predictor_save(x->model_path, &pr, err);
    if (!st) st = fit_quality(x, &t, &pr, err);
    if (!st) {
        x->have_model = 1;
        snprintf(x->out->model, sizeof x->out->model, "%s", x->model_path);
    }
    tmap_predictor_free(&pr);
    tmap_train_free(&t);
    if (st)
        tmap_error_prefix(err, "training");
    return st;
}

/* CPU time to turn the evaluation input into BBVs on the CPU path: the
 * features (the manifest's expressions on the host), then eq. 1, timed
 * apart (the predictor file is loaded once, outside).  The GPU path
 * computes the features on the GPU, timed inside it (tmap_evaluate). */
static tmap_status step_predict_time(kctx *x, tmap_error *err)
{
    tmap_predictor pr = {0};
    tmap_bbv bbv = {0};
    double *f = NULL;
    size_t n, q;
    tmap_status st = tmap_predictor_load(x->model_path, x->entry, 0, NULL, &pr, err);
    if (!st) st = tmap_manifest_generate(x->m, x->cfg->seed, err);
    double t0 = tmap_clock_seconds(), t1 = t0;
    if (!st) st = tmap_manifest_features(x->m, &f, &n, &q, NULL, err);
    if (!st) {
        t1 = tmap_clock_seconds();
        st = tmap_predict(&pr, f, n, &bbv, err);
    }
    if (!st) {
        x->out->features_ms = (t1 - t0) * 1e3;
        x->out->predict_ms = (tmap_clock_seconds() - t1) * 1e3;
    }
    tmap_bbv_free(&bbv);
    free(f);
    tmap_predictor_free(&pr);
    return st;
}

/* Minimum DRAM traffic: every input array read once, every output written once. */
static double min_bytes(const tmap_manifest *m)
{
    double bytes = 0;
    for (size_t i = 0; i < tmap_manifest_num_arrays(m); i++) {
        tmap_array_view v;
        if (tmap_manifest_array(m, i, &v) == TMAP_OK)
            bytes += (double)v.elem_size * (double)v.count * (v.is_input + v.is_output);
    }
    return bytes;
}

static void fill_option(tmap_bench_option *o, const tmap_eval *e, size_t i)
{
    const tmap_candidate *c = &e->plan.cand[i];
    snprintf(o->name, sizeof o->name, "%s", i ? tmap_algo_name(c->algo) : "original");
    o->available = c->available;
    snprintf(o->note, sizeof o->note, "%s", c->note);
    o->chosen = (int)i == e->plan.chosen;
    o->kernel_ms = e->measured_ms[i];
    o->apply_ms = e->measured_apply_ms[i];
    o->algo_ms = i ? c->algo_ms : 0;
    o->outputs_equal = e->outputs_equal[i];
    o->m = c->m;
    o->m.warp_cost = o->m.block_cost = o->m.ideal_warp_cost = NULL;
}

/* regroup() on the GPU, as it ran: the option regroup() delivers, so it is
 * the chosen one.  Per launch it costs the kernel and the scatter (the
 * same input again) plus, once per input, the features, key, sort and
 * gather.  The same
 * input's time was taken back to back, next to the original's taken the
 * same way: it enters at the ratio between the two, in the launch-by-launch
 * scale of original_ms and gpu_fresh_ms. */
static void fill_gpu_option(tmap_bench_kernel *k, const tmap_eval *e)
{
    tmap_bench_option *o = &k->opt[k->noptions++];
    double steady = isfinite(e->gpu_cached_ms) && e->gpu_original_ms > 0
                        ? e->original_ms * e->gpu_cached_ms / e->gpu_original_ms
                        : e->gpu_fresh_ms;
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "gpu-path");
    snprintf(o->note, sizeof o->note, "%s", e->gpu_note);
    o->available = 1, o->on_gpu = 1, o->outputs_equal = e->gpu_outputs_equal;
    o->kernel_ms = steady;
    o->apply_ms = 0;
    o->algo_ms = fmax(0.0, e->gpu_fresh_ms - steady);
    k->overlap_algo_ms = isfinite(e->gpu_overlap_ms) ? fmax(0.0, e->gpu_overlap_ms - steady) : NAN;
    k->gpu_features_ms = e->gpu_features_ms;
    for (size_t i = 0; i < k->noptions - 1; i++)
        k->opt[i].chosen = 0;
    o->chosen = 1;
    snprintf(k->decision, sizeof k->decision, "regroup() on the GPU: %s", e->gpu_note);
}

static void fill(kctx *x, const tmap_eval *e)
{
    tmap_bench_kernel *o = x->out;
    o->threads = x->m->threads;
    o->nwarps = e->plan.cand[0].m.nwarps;
    o->branch_executions = e->plan.cand[0].m.branch_executions;
    snprintf(o->mechanism, sizeof o->mechanism, "%s", tmap_mechanism_name(e->mechanism));
    snprintf(o->origin, sizeof o->origin, "%s", e->origin);
    snprintf(o->decision, sizeof o->decision, "%s", e->plan.why);
    o->bytes = min_bytes(x->m);
    o->sm_clock_khz = e->device.clock_khz;
    o->noptions = e->plan.n < TMAP_BENCH_MAXOPT ? e->plan.n : TMAP_BENCH_MAXOPT;
    for (size_t i = 0; i < o->noptions; i++)
        fill_option(&o->opt[i], e, i);
    if (e->gpu_ran && o->noptions < TMAP_BENCH_MAXOPT)
        fill_gpu_option(o, e);
}

static tmap_status step_evaluate(kctx *x, tmap_error *err)
{
    tmap_eval_opts eo = {.seed = x->cfg->seed, .model_path = x->have_model ? x->model_path : NULL,
                         .table_path = x->cfg->table, .warmup = x->cfg->warmup, .reps = x->out->reps,
                         .threshold = 0.05, .groupsize = 32, .scope = -1, .mechanism = -1,
                         .measure_all = 1, .launches = x->cfg->launches,
                         .paper_metric = x->cfg->paper_metric};
    tmap_eval e;
    progress(x, "evaluating on seed %llu (%d reps, every candidate applied)", (unsigned long long)x->cfg->seed,
             x->out->reps);
    tmap_status st = tmap_evaluate(x->c, x->m, &eo, &e, err);
    if (st)
        return st;
    if (x->cfg->on_eval)
        st = x->cfg->on_eval(&e, x->dir, x->cfg->on_eval_user, err);
    if (!st)
        fill(x, &e);
    tmap_eval_free(&e);
    return st;
}

static void no_model_reason(kctx *x)
{
    tmap_bench_kernel *o = x->out;
    o->cv_rms = NAN;
    o->predict_ms = o->features_ms = o->overlap_algo_ms = o->gpu_features_ms = NAN;
    if (x->cfg->measured_bbv)
        snprintf(o->model, sizeof o->model, "none: --bbv measured (BBVs profiled on the evaluation input)");
    else if (!x->m->nfeatures)
        snprintf(o->model, sizeof o->model, "none: the manifest names no features, so the BBVs are "
                                            "measured by profiling the evaluation input");
}

tmap_status tmap_bench_kernel_run(tmap_cuda *c, const tmap_device_info *d, const char *manifest,
                                  const tmap_bench_cfg *cfg, size_t index, tmap_bench_kernel *out,
                                  tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, d, manifest, cfg, out);
    if (absent)
        return absent;
    double t0 = tmap_clock_seconds(), probe_ms = 0;
    kctx x = {c, d, cfg, index, NULL, NULL, NULL, "", "", 0, out};
    memset(out, 0, sizeof *out);
    snprintf(out->manifest, sizeof out->manifest, "%s", manifest);
    safe_name(manifest, out->name, sizeof out->name);
    out->cv_rms = NAN;
    out->predict_ms = out->features_ms = out->overlap_algo_ms = out->gpu_features_ms = NAN;
    tmap_status st = step_load(&x, manifest, err);
    if (!st) st = step_probe(&x, &probe_ms, err);
    if (!st) {
        out->reps = step_reps(&x, probe_ms);
        no_model_reason(&x);
    }
    if (!st && !cfg->measured_bbv && x.m->nfeatures) {
        st = step_train(&x, err);
        if (!st) st = step_predict_time(&x, err);
    }
    if (!st) st = step_evaluate(&x, err);
    out->wall_s = tmap_clock_seconds() - t0;
    out->ok = st == TMAP_OK;
    if (st)
        snprintf(out->error, sizeof out->error, "%s", err ? err->message : "failed");
    free(x.ptx);
    free(x.entry);
    tmap_manifest_free(x.m);
    return st;
}

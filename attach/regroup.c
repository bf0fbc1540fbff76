/*
 * regroup.c (attach) -- run mode: one kernel regrouped inside the
 * application.  Made at the kernel's first selected launch, when the safety
 * analysis allows redirection: the kernel's PTX loaded as it is and
 * redirected (tmap_redirect_load), the key's kernel compiled (key.c) -- or,
 * with a predictor, the features' kernel, the model and its block
 * latencies (the key is then each thread's predicted cost, on the GPU) --
 * and a regrouper (tmap_regrouper: key, GPU sort, redirected launch, measured
 * trial) over the launch's shape.  Each later launch of that shape copies
 * its argument values into the storage the regrouper's launch points at,
 * and goes through the regrouper while the trial runs or after it kept a
 * regrouping; once the trial keeps the original, launches go straight to
 * the application's own kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/launch.h"
#include "common/base.h"
#include "runtime/cuda.h"
#include "runtime/expr.h"

enum { SHARED_DEFAULT_MAX = 48 * 1024 };

struct tmap_attach_regroup {
    tmap_cuda *cuda;
    tmap_attach_regroup_opts opts;
    tmap_param *params;
    size_t nparams;
    unsigned char *storage;     /* the current launch's argument values */
    void **argv;                /* argv[i] = storage + params[i].offset */
    tmap_launch launch;         /* shape of the regrouped launches, args = argv */
    tmap_kernel *original, *redirected, *keyk;
    tmap_attach_key key;        /* the key, or with a predictor the features */
    tmap_predictor pred;        /* with --predictor: the model, its block latencies */
    int have_pred;
    double *lat;
    uint64_t feat;              /* device double [threads][features] */
    tmap_expr_cuda_args key_args; /* the key kernel's: out, n, per slot p, lo, hi */
    tmap_regrouper *r;
};

tmap_status tmap_attach_regroup_check(const char *ptx, const char *entry,
                                      tmap_regroup_scope *scope, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, ptx, entry, scope);
    if (st)
        return st;
    char label[256];
    tmap_ptx_module *m = NULL;
    tmap_safety s;
    st = tmap_ptx_parse(ptx, strlen(ptx), tmap_attach_params_label(entry, label, sizeof label),
                        &m, err);
    if (st == TMAP_OK)
        st = tmap_safety_analyze(m, entry, &s, err);
    tmap_ptx_free(m);
    if (st != TMAP_OK)
        return st;
    if (!s.redirect_ok || (s.scope != TMAP_SAFE_GRID && s.scope != TMAP_SAFE_BLOCK)) {
        size_t n = strlen(s.reasons);
        while (n && s.reasons[n - 1] == '\n')
            s.reasons[--n] = '\0';
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "kernel %s is left alone: the safety "
                         "analysis allows no regrouping by redirection (scope %s): %s", entry,
                         tmap_scope_advice_name(s.scope), s.reasons);
    }
    *scope = s.scope == TMAP_SAFE_GRID ? TMAP_REGROUP_GRID : TMAP_REGROUP_BLOCK;
    return TMAP_OK;
}

/* The regrouper's key: the key kernel over this launch's arguments. */
static int key_fn(void *user, uint64_t key, void *stream)
{
    tmap_attach_regroup *g = user;
    g->key_args.out = key;
    return tmap_expr_cuda_launch(g->keyk, &g->key_args, stream, NULL) != TMAP_OK;
}

/* The expressions' kernel: the key, or with a predictor each feature. */
static tmap_status load_key(tmap_attach_regroup *g, const tmap_attach_regroup_opts *o,
                            tmap_error *err)
{
    const char *names[TMAP_ATTACH_MAX_FEATURES];
    for (size_t j = 0; j < o->nfeatures && j < TMAP_ATTACH_MAX_FEATURES; j++)
        names[j] = o->features[j].name;
    tmap_status st = o->predictor ? tmap_attach_key_make(names, o->nfeatures, o->features,
                                                         o->nfeatures, &g->key, err)
                                  : tmap_attach_key_make(&o->key, 1, o->features, o->nfeatures,
                                                         &g->key, err);
    if (st == TMAP_OK)
        st = tmap_expr_cuda_load(g->cuda, g->key.source, "tmap_key",
                                 "<CUDA source of the key kernel made by threadmap>", &g->keyk, err);
    if (st != TMAP_OK)
        return st;
    g->key_args.nslots = g->key.nslots;
    for (size_t i = 0; i < g->key.nslots; i++) {
        if (g->key.slot[i].arg >= g->nparams || g->params[g->key.slot[i].arg].size != 8)
            return tmap_fail(err, TMAP_ERR_INVALID, "--key: arg%u is not a pointer parameter of "
                             "%s (it has %zu parameters)", g->key.slot[i].arg, o->entry,
                             g->nparams);
    }
    return st;
}

/* The predictor's columns must be the --feature names, in order. */
static tmap_status same_features(const tmap_attach_regroup *g, const tmap_attach_regroup_opts *o,
                                 tmap_error *err)
{
    if (g->pred.nfeatures != o->nfeatures)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s reads %zu features; --feature gives %zu",
                         o->predictor, g->pred.nfeatures, o->nfeatures);
    for (size_t j = 0; j < o->nfeatures; j++)
        if (strcmp(g->pred.feature_names[j], o->features[j].name))
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: feature %zu is '%s', --feature gives "
                             "'%s'", o->predictor, j, g->pred.feature_names[j],
                             o->features[j].name);
    return TMAP_OK;
}

/* With --predictor: the model (fitted on this kernel's CFG), the blocks'
 * latencies from the GPU's default table, the device features. */
static tmap_status load_model(tmap_attach_regroup *g, const char *ptx,
                              const tmap_attach_regroup_opts *o, tmap_error *err)
{
    char label[256], table[4096];
    tmap_ptx_module *m = NULL;
    tmap_cfg *cfg = NULL;
    tmap_lat_table *t = NULL;
    const char **names = NULL;
    tmap_status st = tmap_ptx_parse(ptx, strlen(ptx), tmap_attach_params_label(o->entry, label,
                                                                                sizeof label),
                                    &m, err);
    if (st == TMAP_OK)
        st = tmap_cfg_build(m, o->entry, &cfg, err);
    if (st == TMAP_OK)
        st = tmap_cfg_names(cfg, &names, err);
    if (st == TMAP_OK)
        st = tmap_predictor_load(o->predictor, o->entry, cfg->nblocks, names, &g->pred, err);
    g->have_pred = st == TMAP_OK;
    if (st == TMAP_OK)
        st = same_features(g, o, err);
    if (st == TMAP_OK && tmap_lat_default_path(o->arch, table, sizeof table, NULL) != TMAP_OK)
        st = tmap_lat_default_path("sm_90", table, sizeof table, err);
    if (st == TMAP_OK)
        st = tmap_lat_load(table, &t, err);
    if (st == TMAP_OK)
        st = tmap_lat_blocks(t, cfg, &g->lat, NULL, err);
    if (st == TMAP_OK)
        st = tmap_cuda_alloc(g->cuda, (size_t)g->key_args.n * o->nfeatures * sizeof(double), &g->feat,
                             err);
    tmap_lat_free(t);
    free(names);
    tmap_cfg_free(cfg);
    tmap_ptx_free(m);
    return st;
}

/* Dynamic shared memory beyond the default, as the application set it on
 * its own kernel. */
static tmap_status allow_shared(tmap_attach_regroup *g, tmap_kernel *k, tmap_error *err)
{
    if (g->launch.shared_bytes <= SHARED_DEFAULT_MAX)
        return TMAP_OK;
    return tmap_cuda_check(g->cuda, g->cuda->api.func_set_attribute(
                                        tmap_kernel_function(k),
                                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)g->launch.shared_bytes),
                           "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", err);
}

static tmap_status storage(tmap_attach_regroup *g, tmap_error *err)
{
    size_t end = 0;
    for (size_t i = 0; i < g->nparams; i++)
        if (g->params[i].offset + g->params[i].size > end)
            end = g->params[i].offset + g->params[i].size;
    g->storage = calloc(end ? end : 1, 1);
    g->argv = calloc(g->nparams ? g->nparams : 1, sizeof *g->argv);
    if (!g->storage || !g->argv)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < g->nparams; i++)
        g->argv[i] = g->storage + g->params[i].offset;
    g->launch.args = g->argv;
    g->launch.nargs = g->nparams;
    return TMAP_OK;
}

tmap_status tmap_attach_regroup_create(tmap_cuda *cuda, const char *ptx,
                                       const tmap_attach_call *c,
                                       const tmap_attach_regroup_opts *o,
                                       tmap_attach_regroup **out, tmap_error *err)
{
    *out = NULL;
    tmap_regroup_scope scope;
    tmap_status st = tmap_attach_regroup_check(ptx, o->entry, &scope, err);
    if (st != TMAP_OK)
        return st;
    tmap_attach_regroup *g = calloc(1, sizeof *g);
    if (!g)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    g->cuda = cuda;
    g->opts = *o;
    g->launch = (tmap_launch){.grid = {c->grid[0], c->grid[1], c->grid[2]},
                              .block = {c->block[0], c->block[1], c->block[2]},
                              .shared_bytes = c->shared_bytes};
    g->key_args.n = tmap_launch_threads(&g->launch);
    st = tmap_attach_params(ptx, o->entry, &g->params, &g->nparams, err);
    if (st == TMAP_OK)
        st = storage(g, err);
    if (st == TMAP_OK && o->predictor)
        st = load_model(g, ptx, o, err);
    if (st == TMAP_OK)
        st = load_key(g, o, err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(cuda, ptx, o->entry, &g->original, err);
    if (st == TMAP_OK)
        st = tmap_redirect_load(cuda, ptx, o->entry, &g->redirected, err);
    if (st == TMAP_OK)
        st = allow_shared(g, g->original, err);
    if (st == TMAP_OK)
        st = allow_shared(g, g->redirected, err);
    tmap_regrouper_opts ro = {.scope = scope, .trial_launches = o->trial_launches,
                              .threshold = o->threshold, .redirected = g->redirected};
    if (o->predictor)
        ro.model = &g->pred, ro.lat = g->lat, ro.features = g->feat;
    else
        ro.key = key_fn, ro.key_user = g;
    if (st == TMAP_OK)
        st = tmap_regrouper_create(cuda, &g->launch, NULL, 0, &ro, &g->r, err);
    if (st != TMAP_OK) {
        tmap_attach_regroup_free(g);
        return st;
    }
    *out = g;
    return TMAP_OK;
}

void tmap_attach_regroup_free(tmap_attach_regroup *g)
{
    if (!g)
        return;
    tmap_regrouper_free(g->r);
    tmap_kernel_free(g->keyk);
    tmap_kernel_free(g->redirected);
    tmap_kernel_free(g->original);
    tmap_attach_key_free(&g->key);
    if (g->have_pred)
        tmap_predictor_free(&g->pred);
    if (g->feat)
        tmap_cuda_free(g->cuda, g->feat);
    free(g->lat);
    free(g->params);
    free(g->storage);
    free(g->argv);
    free(g);
}

int tmap_attach_regroup_fits(const tmap_attach_regroup *g, const tmap_attach_call *c)
{
    const tmap_launch *l = &g->launch;
    return !memcmp(l->grid, c->grid, sizeof l->grid) &&
           !memcmp(l->block, c->block, sizeof l->block) && l->shared_bytes == c->shared_bytes;
}

/* This launch's argument values into the storage, and the key's slots:
 * each pointer and the bounds of its allocation in elements. */
static tmap_status take_args(tmap_attach_regroup *g, const tmap_attach_call *c, tmap_error *err)
{
    for (size_t i = 0; i < g->nparams; i++) {
        const void *v = tmap_attach_param_value(c, &g->params[i], i);
        if (!v)
            return tmap_fail(err, TMAP_ERR_INVALID, "the launch gives no argument values");
        memcpy(g->argv[i], v, g->params[i].size);
    }
    for (size_t i = 0; i < g->key.nslots; i++) {
        const tmap_attach_key_slot *s = &g->key.slot[i];
        uint64_t p = 0;
        CUdeviceptr base = 0;
        size_t size = 0;
        memcpy(&p, g->argv[s->arg], 8);
        if (p % s->elem_size) /* a misaligned load would fault the application's context */
            return tmap_fail(err, TMAP_ERR_INVALID, "--key: arg%u (0x%llx) is not aligned for "
                             "%s elements", s->arg, (unsigned long long)p, s->type);
        if (!g->opts.range || g->opts.range(&base, &size, (CUdeviceptr)p) != CUDA_SUCCESS)
            return tmap_fail(err, TMAP_ERR_INVALID, "--key: arg%u (0x%llx) is not device "
                             "memory the driver knows (cuMemGetAddressRange)", s->arg,
                             (unsigned long long)p);
        g->key_args.p[i] = p;
        g->key_args.lo[i] = -(long long)((p - base) / s->elem_size);
        g->key_args.hi[i] = (long long)((base + size - p) / s->elem_size);
    }
    return TMAP_OK;
}

tmap_status tmap_attach_regroup_launch(tmap_attach_regroup *g, const tmap_attach_call *c,
                                       void *stream, tmap_attach_run_stats *s, int *launched,
                                       tmap_error *err)
{
    *launched = 0;
    double t0, t1;
    tmap_status st = tmap_regrouper_poll(g->r, 0, stream, err);
    int chosen = tmap_regrouper_chosen(g->r);
    if (st != TMAP_OK || chosen == TMAP_REGROUPER_ORIGINAL)
        return st; /* the trial kept the original: the application's own launch */
    st = take_args(g, c, err);
    if (st == TMAP_OK && g->have_pred && key_fn(g, g->feat, stream)) /* the model reads them */
        st = tmap_fail(err, TMAP_ERR_CUDA, "the features' kernel could not be launched");
    if (st == TMAP_OK)
        st = tmap_regrouper_launch(g->r, g->original, 0, stream, err);
    if (st != TMAP_OK)
        return st;
    *launched = 1;
    tmap_regrouper_medians(g->r, &t0, &t1);
    if (chosen > 0) {
        s->regrouped++;
        s->saved_ms += t0 - t1;
    } else {
        s->trial++;
    }
    return TMAP_OK;
}

void tmap_attach_regroup_stats(const tmap_attach_regroup *g, tmap_attach_run_stats *s)
{
    tmap_regrouper_medians(g->r, &s->original_ms, &s->chosen_ms);
    snprintf(s->chosen, sizeof s->chosen, "%s", tmap_regrouper_chosen_name(g->r));
    snprintf(s->note, sizeof s->note, "%s", tmap_regrouper_why(g->r));
}

/* One kernel's line: launches seen, regrouped by what, time saved. */
static void summary_line(const tmap_attach_run_stats *s, FILE *f)
{
    fprintf(f, "threadmap run: %s: %ld launch%s seen", s->kernel, s->seen,
            s->seen == 1 ? "" : "es");
    if (s->trial || s->regrouped)
        fprintf(f, ", %ld before the trial decided", s->trial);
    fprintf(f, ", %ld regrouped", s->regrouped);
    if (s->alone)
        fprintf(f, ", %ld left alone (another launch shape, a graph capture, launch attributes "
                   "or an error)", s->alone);
    if (s->regrouped && !isnan(s->chosen_ms))
        fprintf(f, " by %s; saved %.3f ms measured (%.3f ms per launch: %.3f -> %.3f ms, the "
                   "trial's medians, regrouping counted)",
                s->chosen, s->saved_ms, s->original_ms - s->chosen_ms, s->original_ms,
                s->chosen_ms);
    if (s->setup_ms > 0)
        fprintf(f, "; setup %.1f ms, once", s->setup_ms);
    fprintf(f, "%s%s\n", s->note[0] ? "; " : "", s->note);
}

void tmap_attach_regroup_summary(const tmap_attach_run_stats *s, size_t n, FILE *f)
{
    for (size_t i = 0; i < n; i++)
        summary_line(&s[i], f);
    if (!n)
        fprintf(f, "threadmap run: no selected kernel was launched\n");
}

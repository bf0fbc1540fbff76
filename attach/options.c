/*
 * options.c (attach) -- the options of attach mode: per-thread feature
 * specs (`n=arg2:i32[t+1]`), checking them, and carrying them to the
 * injected library through the environment.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/env.h"
#include "attach/key.h"
#include "common/base.h"

/* NAME=argK:TYPE[t+C]: the part after '=' one typed reference, parsed by
 * the expression parser. */
tmap_status tmap_attach_feature_parse(const char *spec, tmap_attach_feature *f,
                                      tmap_error *err)
{
    tmap_status need = TMAP_NEED(err, spec, f);
    if (need)
        return need;
    memset(f, 0, sizeof *f);
    const char *eq = strchr(spec, '=');
    size_t nlen = eq ? (size_t)(eq - spec) : 0;
    if (!nlen || nlen >= sizeof f->name)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "feature '%s': expected NAME=argK:TYPE[t] (e.g. n=arg2:i32[t])", spec);
    memcpy(f->name, spec, nlen);
    tmap_expr x;
    tmap_status st = tmap_expr_parse(eq + 1, &x, err);
    const tmap_expr_node *r = st == TMAP_OK ? &x.node[x.root] : NULL;
    if (r && (r->kind != TMAP_EXPR_REF || !r->typed))
        st = tmap_expr_fail(x.src, r->pos, err, "a feature is one array argK:TYPE[t+C]");
    else if (r)
        st = tmap_attach_key_arg(&x, r, f, err);
    tmap_expr_free(&x);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "feature '%s'", spec);
    return st;
}

/* A predictor that loads, reading as many features as --feature gives. */
static tmap_status predictor_check(const tmap_attach_opts *o, tmap_error *err)
{
    tmap_predictor p;
    tmap_status st = tmap_predictor_load(o->predictor, NULL, 0, NULL, &p, err);
    if (st != TMAP_OK)
        return st;
    if (p.nfeatures != o->nfeatures)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s reads %zu features (%s...); give them with "
                       "--feature, in its order (%zu given)", o->predictor, p.nfeatures,
                       p.nfeatures ? p.feature_names[0] : "", o->nfeatures);
    tmap_predictor_free(&p);
    return st;
}

/* Run mode's options: a key that parses, over the features given, or a
 * predictor. */
static tmap_status run_check(const tmap_attach_opts *o, tmap_error *err)
{
    if (!o->run)
        return o->key || o->predictor ? tmap_fail(err, TMAP_ERR_INVALID, "a key is for run mode")
                                      : TMAP_OK;
    if (!o->key == !o->predictor || (o->key && !o->key[0]))
        return tmap_fail(err, TMAP_ERR_INVALID, "give the key: --key EXPR (e.g. "
                         "'arg0[t+1]-arg0[t]') or --predictor FILE with its --feature list");
    if (o->predictor)
        return predictor_check(o, err);
    if (o->trial_launches < 0 || o->trial_launches > 16 || o->threshold < 0 || o->threshold >= 1)
        return tmap_fail(err, TMAP_ERR_INVALID, "--trial must be 1 to 16 and --threshold in "
                         "[0, 1)");
    tmap_attach_feature f[TMAP_ATTACH_MAX_FEATURES];
    tmap_attach_key k;
    for (size_t i = 0; i < o->nfeatures; i++) /* checked by the caller */
        if (tmap_attach_feature_parse(o->features[i], &f[i], err) != TMAP_OK)
            return TMAP_ERR_INVALID;
    tmap_status st = tmap_attach_key_make(&o->key, 1, f, o->nfeatures, &k, err);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "--key");
    tmap_attach_key_free(&k);
    return st;
}

tmap_status tmap_attach_opts_check(const tmap_attach_opts *o, tmap_error *err)
{
    tmap_status need = TMAP_NEED(err, o);
    if (need)
        return need;
    if (!o->run && (!o->out || !o->out[0])) /* run mode: a temporary one */
        return tmap_fail(err, TMAP_ERR_INVALID, "no output folder (-o DIR)");
    if (o->nfeatures > TMAP_ATTACH_MAX_FEATURES)
        return tmap_fail(err, TMAP_ERR_INVALID, "at most %d features",
                         TMAP_ATTACH_MAX_FEATURES);
    if (o->launch_skip < 0 || o->launch_count < -1)
        return tmap_fail(err, TMAP_ERR_INVALID, "--launch-skip and --launch-count must not be "
                         "negative");
    tmap_attach_feature f;
    for (size_t i = 0; i < o->nfeatures; i++) {
        if (!o->features[i] || strchr(o->features[i], ';'))
            return tmap_fail(err, TMAP_ERR_INVALID, "feature '%s' holds a ';'", o->features[i]);
        tmap_status st = tmap_attach_feature_parse(o->features[i], &f, err);
        if (st != TMAP_OK)
            return st;
    }
    tmap_status st = run_check(o, err);
    if (st != TMAP_OK)
        return st;
    regex_t re;
    if (o->kernel_regex && regcomp(&re, o->kernel_regex, REG_EXTENDED | REG_NOSUB))
        return tmap_fail(err, TMAP_ERR_INVALID, "--kernel-name '%s': not a regular expression",
                         o->kernel_regex);
    if (o->kernel_regex)
        regfree(&re);
    return TMAP_OK;
}

static int set_long(const char *name, long v)
{
    char s[32];
    snprintf(s, sizeof s, "%ld", v);
    return setenv(name, s, 1);
}

tmap_status tmap_attach_env_set(const tmap_attach_opts *o, tmap_error *err)
{
    tmap_buf specs = {0};
    char threshold[64];
    snprintf(threshold, sizeof threshold, "%.17g", o->threshold);
    for (size_t i = 0; i < o->nfeatures; i++)
        tmap_buf_printf(&specs, "%s%s", i ? ";" : "", o->features[i]);
    int bad = specs.oom || setenv(TMAP_ATTACH_ENV_OUT, o->out, 1) ||
              setenv(TMAP_ATTACH_ENV_KERNEL, o->kernel_regex ? o->kernel_regex : "", 1) ||
              set_long(TMAP_ATTACH_ENV_SKIP, o->launch_skip) ||
              set_long(TMAP_ATTACH_ENV_COUNT, o->launch_count) ||
              setenv(TMAP_ATTACH_ENV_FEATURES, specs.data ? specs.data : "", 1) ||
              set_long(TMAP_ATTACH_ENV_QUIET, o->quiet) ||
              set_long(TMAP_ATTACH_ENV_RUN, o->run) ||
              setenv(TMAP_ATTACH_ENV_KEY, o->key ? o->key : "", 1) ||
              setenv(TMAP_ATTACH_ENV_PREDICTOR, o->predictor ? o->predictor : "", 1) ||
              set_long(TMAP_ATTACH_ENV_TRIAL, o->trial_launches) ||
              setenv(TMAP_ATTACH_ENV_THRESHOLD, threshold, 1);
    tmap_buf_free(&specs);
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "cannot set the environment") : TMAP_OK;
}

static long env_long(const char *name, long def)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : def;
}

static tmap_status split_features(tmap_attach_env *e, tmap_error *err)
{
    tmap_attach_opts *o = &e->opts;
    for (char *s = e->specs, *next; s && *s && o->nfeatures < TMAP_ATTACH_MAX_FEATURES; s = next) {
        next = strchr(s, ';');
        if (next)
            *next++ = '\0';
        o->features[o->nfeatures] = s;
        tmap_status st = tmap_attach_feature_parse(s, &e->features[o->nfeatures++], err);
        if (st != TMAP_OK)
            return st;
    }
    return TMAP_OK;
}

tmap_status tmap_attach_env_get(tmap_attach_env *e, tmap_error *err)
{
    memset(e, 0, sizeof *e);
    tmap_attach_opts *o = &e->opts;
    o->out = getenv(TMAP_ATTACH_ENV_OUT);
    if (!o->out || !*o->out)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s is not set", TMAP_ATTACH_ENV_OUT);
    o->kernel_regex = getenv(TMAP_ATTACH_ENV_KERNEL);
    if (o->kernel_regex && !*o->kernel_regex)
        o->kernel_regex = NULL;
    o->launch_skip = env_long(TMAP_ATTACH_ENV_SKIP, 0);
    o->launch_count = env_long(TMAP_ATTACH_ENV_COUNT, -1);
    o->quiet = (int)env_long(TMAP_ATTACH_ENV_QUIET, 0);
    e->trace = (int)env_long(TMAP_ATTACH_ENV_TRACE, 0);
    o->run = (int)env_long(TMAP_ATTACH_ENV_RUN, 0);
    o->key = getenv(TMAP_ATTACH_ENV_KEY);
    if (o->key && !*o->key)
        o->key = NULL;
    o->predictor = getenv(TMAP_ATTACH_ENV_PREDICTOR);
    if (o->predictor && !*o->predictor)
        o->predictor = NULL;
    o->trial_launches = (int)env_long(TMAP_ATTACH_ENV_TRIAL, 0);
    const char *th = getenv(TMAP_ATTACH_ENV_THRESHOLD);
    o->threshold = th && *th ? tmap_strtod(th, NULL) : 0;
    const char *specs = getenv(TMAP_ATTACH_ENV_FEATURES);
    if (specs && *specs && !(e->specs = strdup(specs)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    tmap_status st = split_features(e, err);
    return st == TMAP_OK ? tmap_attach_opts_check(o, err) : st;
}

void tmap_attach_env_free(tmap_attach_env *e)
{
    free(e->specs);
    memset(e, 0, sizeof *e);
}

/*
 * cmd_train.c -- `threadmap train`: fits the BBV regression (Liang et al.
 * eq. 1) on one or more profiling runs, reports per-block fit quality and
 * cross-validation error (a table, or one JSON object with --json), and
 * writes the predictor file.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cliutil.h"
#include "cli/commands.h"
#include "common/base.h"
#include "threadmap/model.h"

static const char train_usage[] =
    "usage: threadmap train PROFILE_DIR [--folds K] [--json] [-q] -o MODEL\n"
    "       threadmap train --features F.npy --bbv BBV.npy [--features F2.npy --bbv BBV2.npy ...]\n"
    "                       --kernel NAME [--folds K] [--feature-names A,B,...] [--json] [-q]\n"
    "                       -o MODEL\n\n"
    "Fits, for each basic block b, BBV_t[b] = c0 + c1*I_t[1] + ... + cp*I_t[p] + c(p+1)*tid\n"
    "(Liang et al. eq. 1) by least squares over every profiled thread of every run\n"
    "(any number of runs).\n\n"
    "  --features F.npy    per-thread features [threads, p] (or [threads] for p = 1), any\n"
    "                      numeric dtype; the i-th --features pairs with the i-th --bbv\n"
    "  --bbv BBV.npy       the run's measured BBV, uint32 [threads, blocks]; its sidecar\n"
    "                      BBV.npy.json names the blocks (stored in the predictor)\n"
    "  -k, --kernel NAME   the kernel the predictor is for\n"
    "  --folds K           k-fold cross-validation over threads (default 5; 0: none);\n"
    "                      with 2+ runs, leave-one-run-out is reported too\n"
    "  --feature-names L   comma-separated feature names (default f0, f1, ...)\n"
    "  -o, --output MODEL  the predictor file to write (- for stdout: nothing else is\n"
    "                      printed then)\n"
    "  --json              instead of the table, print one JSON object once MODEL is written:\n"
    "                      kernel, runs, threads, nblocks, nfeatures, feature_names,\n"
    "                      output, blocks (index, name, r2, rms_error, rank),\n"
    "                      cross_validation (kind, folds, rms_error, rms_error_per_block)\n"
    "  -q, --quiet         print nothing (MODEL is still written)\n"
    "  -h, --help          this text\n"
    "  PROFILE_DIR         a folder written by `threadmap profile`: its profile.json gives\n"
    "                      the kernel, the feature names and every run's files\n\n"
    "example: threadmap profile m.json -o prof --runs 3 && threadmap train prof -o model.txt\n";

typedef struct train_opts {
    const char **features, **bbv; /* the runs' files */
    size_t nfeat, nbbv, capfeat, capbbv;
    const char *kernel, *out, *names;
    const char *dir;           /* PROFILE_DIR, or NULL */
    long folds;
    char **owned;              /* strings made from profile.json */
    size_t nowned, capowned;
} train_opts;

static void usage(FILE *f)
{
    fputs(train_usage, f);
}

/* Appends s to *list (growing it); s NULL (out of memory) or a failed
 * growth: -1. */
static int push(const char ***list, size_t *n, size_t *cap, const char *s)
{
    if (!s || tmap_grow(list, cap, *n + 1, sizeof **list))
        return -1;
    (*list)[(*n)++] = s;
    return 0;
}

/* A string the options own (freed with them); NULL when out of memory. */
static const char *own(train_opts *o, char *s)
{
    if (s && push((const char ***)&o->owned, &o->nowned, &o->capowned, s) == 0)
        return s;
    free(s);
    return NULL;
}

static void train_opts_free(train_opts *o)
{
    for (size_t i = 0; i < o->nowned; i++)
        free(o->owned[i]);
    free(o->owned);
    free(o->features);
    free(o->bbv);
}

static char *join(const char *dir, const char *file)
{
    tmap_buf b = {0};
    tmap_buf_printf(&b, "%s/%s", dir, file);
    return b.data;
}

/* The feature names of profile.json: strings without commas (the
 * predictor file separates them with commas), joined as --feature-names. */
static tmap_status dir_names(train_opts *o, json_t *names, const char *path, tmap_error *err)
{
    tmap_buf b = {0};
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *n = json_string_value(json_array_get(names, i));
        if (!n || !*n || strchr(n, ',')) {
            tmap_buf_free(&b);
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: features[%zu] is not a name (a "
                             "non-empty string without commas)", path, i);
        }
        tmap_buf_printf(&b, "%s%s", i ? "," : "", n);
    }
    if (b.oom || !(o->names = own(o, b.data)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    return TMAP_OK;
}

/* Run i of profile.json: its BBV and features, relative to the folder. */
static tmap_status dir_run(train_opts *o, json_t *runs, size_t i, const char *path,
                           tmap_error *err)
{
    json_t *r = json_array_get(runs, i), *bb = json_object_get(r, "bbv");
    json_t *ff = json_object_get(r, "features");
    if (!json_is_string(bb) || !json_is_string(ff))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: runs[%zu] lacks bbv or features", path, i);
    if (push(&o->bbv, &o->nbbv, &o->capbbv, own(o, join(o->dir, json_string_value(bb)))) ||
        push(&o->features, &o->nfeat, &o->capfeat, own(o, join(o->dir, json_string_value(ff)))))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    return TMAP_OK;
}

/* Fills kernel, feature names and every run from DIR/profile.json. */
static tmap_status train_from_dir(train_opts *o, tmap_error *err)
{
    char *path = join(o->dir, "profile.json");
    json_error_t je;
    json_t *root = path ? json_load_file(path, 0, &je) : NULL;
    tmap_status st = TMAP_OK;
    if (!root)
        st = tmap_fail(err, TMAP_ERR_IO, "%s: %s", path ? path : o->dir, path ? je.text : "out of memory");
    json_t *k = root ? json_object_get(root, "kernel") : NULL, *runs = root ? json_object_get(root, "runs") : NULL;
    json_t *names = root ? json_object_get(root, "features") : NULL;
    if (!st && (!json_is_string(k) || !json_is_array(runs) || !json_is_array(names) || !json_array_size(names)))
        st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: needs 'kernel', 'features' (not empty: the manifest "
                       "must name features) and 'runs'", path);
    if (!st && !(o->kernel = own(o, strdup(json_string_value(k)))))
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (!st)
        st = dir_names(o, names, path, err);
    for (size_t i = 0; !st && i < json_array_size(runs); i++)
        st = dir_run(o, runs, i, path, err);
    if (!st && !o->nbbv)
        st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: no runs", path);
    json_decref(root);
    free(path);
    return st;
}

enum { OPT_FEATURES = 0x1800, OPT_BBV, OPT_NAMES, OPT_FOLDS };

/* One option (value in optarg): 0 taken, -1 stop. */
static int train_option(tmap_args *a, train_opts *o, int c)
{
    switch (c) {
    case OPT_FEATURES:
        return push(&o->features, &o->nfeat, &o->capfeat, tmap_args_input(a, optarg))
                   ? tmap_args_bad(a, "out of memory") : 0;
    case OPT_BBV:
        return push(&o->bbv, &o->nbbv, &o->capbbv, tmap_args_input(a, optarg))
                   ? tmap_args_bad(a, "out of memory") : 0;
    case 'k': o->kernel = optarg; return 0;
    case 'o': o->out = tmap_args_output(a, optarg); return 0;
    case OPT_NAMES: o->names = optarg; return 0;
    case OPT_FOLDS:
        if (tmap_args_long(a, 0, 1000000000L, &o->folds))
            return -1;
        return o->folds == 1 ? tmap_args_bad(a, "--folds wants 0 or an integer >= 2") : 0;
    default: return tmap_args_bad(a, "unexpected option %s", a->opt);
    }
}

/* 0: run; -1: stop (exit code in a->rc). */
static int train_parse(tmap_args *a, train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->folds = 5;
    for (int c; (c = tmap_args_next(a)) != 0;)
        if (c < 0 || train_option(a, o, c))
            return -1;
    if (tmap_args_operands(a, 0, 1))
        return -1;
    o->dir = optind < a->argc ? a->argv[optind] : NULL;
    if (o->dir && (o->nbbv || o->nfeat || o->kernel || o->names))
        return tmap_args_bad(a, "PROFILE_DIR replaces --features, --bbv, --kernel and "
                                "--feature-names");
    if (!o->out || (!o->dir && (!o->nbbv || o->nbbv != o->nfeat || !o->kernel)))
        return tmap_args_bad(a, "give -o and PROFILE_DIR, or --kernel and as many --features "
                                "as --bbv");
    return tmap_args_files(a);
}

typedef struct train_data {
    tmap_train_set set;
    char **fnames;     /* split --feature-names */
    size_t nfnames;
} train_data;

static void train_free(train_data *d)
{
    tmap_train_free(&d->set);
    tmap_names_free(d->fnames, d->nfnames);
}

/* Splits "a,b,c" into names; the count must be p, and none empty. */
static tmap_status train_split_names(const char *list, size_t p, train_data *d, tmap_error *err)
{
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    if (n != p)
        return tmap_fail(err, TMAP_ERR_INVALID, "--feature-names has %zu names for %zu features",
                         n, p);
    d->fnames = calloc(n, sizeof *d->fnames);
    if (!d->fnames)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    d->nfnames = n;
    const char *s = list;
    for (size_t i = 0; i < n; i++) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (!len)
            return tmap_fail(err, TMAP_ERR_INVALID, "--feature-names: name %zu is empty", i);
        if (!(d->fnames[i] = strndup(s, len)))
            return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        s += len + 1;
    }
    return TMAP_OK;
}

/* Loads run r (its features and BBV) into the training set. */
static tmap_status train_load_run(const train_opts *o, size_t r, train_data *d, tmap_error *err)
{
    size_t dim[2];
    char **names = NULL, what[8192];
    double *feat = NULL;
    tmap_bbv bbv = {0};
    tmap_status s = tmap_npy_load_f64(o->features[r], TMAP_NPY_ANY, &feat, dim, err);
    if (!s && (s = tmap_bbv_load(o->bbv[r], &bbv, &names, err)))
        free(feat);
    snprintf(what, sizeof what, "%s and %s", o->features[r], o->bbv[r]);
    return s ? s : tmap_train_add(&d->set, feat, dim[0], dim[1], &bbv, names, what, err);
}

static void train_report(const tmap_predictor *pr)
{
    printf("kernel %s: %zu blocks, %zu features (+ intercept and thread id)\n", pr->kernel,
           pr->nblocks, pr->nfeatures);
    printf("%6s  %-32s %10s %12s %5s\n", "block", "name", "R^2", "RMS error", "rank");
    for (size_t b = 0; b < pr->nblocks; b++)
        printf("%6zu  %-32s %10.6f %12.4g %5zu\n", b, *pr->block_names[b] ? pr->block_names[b] : "-",
               pr->r2[b], pr->rms[b], pr->rank[b]);
}

/* Block b's fit: {"index", "name" (null if unnamed), "r2", "rms_error", "rank"}. */
static json_t *train_block_json(const tmap_predictor *pr, size_t b)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:I}", "index", (json_int_t)b, "name",
                     tmap_cli_json_str(pr->block_names[b]), "r2", tmap_cli_json_num(pr->r2[b]),
                     "rms_error", tmap_cli_json_num(pr->rms[b]), "rank", (json_int_t)pr->rank[b]);
}

/* The --json object without "cross_validation" (train_cv adds it). */
static json_t *train_json(const train_opts *o, const train_data *d, const tmap_predictor *pr)
{
    json_t *names = json_array(), *blocks = json_array();
    for (size_t f = 0; f < pr->nfeatures; f++)
        json_array_append_new(names, json_string(pr->feature_names[f]));
    for (size_t b = 0; b < pr->nblocks; b++)
        json_array_append_new(blocks, train_block_json(pr, b));
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:s, s:o}", "kernel", pr->kernel, "runs",
                     (json_int_t)d->set.nruns, "threads", (json_int_t)tmap_train_threads(&d->set),
                     "nblocks",
                     (json_int_t)pr->nblocks, "nfeatures", (json_int_t)pr->nfeatures,
                     "feature_names", names, "output", o->out, "blocks", blocks);
}

/* One cross-validation result: a line of text, or an object appended to
 * cvs {"kind", "folds", "rms_error", "rms_error_per_block"}. */
static void train_cv_emit(const tmap_cv_result *cv, json_t *cvs)
{
    if (cvs) {
        const char *kind = cv->by_run ? "leave one run out" : "k-fold over threads";
        json_t *per = json_array();
        for (size_t b = 0; b < cv->nblocks; b++)
            json_array_append_new(per, tmap_cli_json_num(cv->rms[b]));
        json_array_append_new(cvs, json_pack("{s:s, s:I, s:o, s:o}", "kind", kind, "folds",
                                             (json_int_t)cv->folds, "rms_error",
                                             tmap_cli_json_num(cv->total_rms),
                                             "rms_error_per_block", per));
        return;
    }
    printf("cross-validation (%s, %zu folds): RMS error %.4g over all blocks; per block:",
           cv->by_run ? "leave one run out" : "threads", cv->folds, cv->total_rms);
    for (size_t b = 0; b < cv->nblocks; b++)
        printf(" %.3g", cv->rms[b]);
    printf("\n");
}

/* k-fold over threads (unless --folds 0 or too few threads) and, with 2+
 * runs, leave-one-run-out; printed, or (root not NULL) root's
 * "cross_validation" array. */
static tmap_status train_cv(const train_opts *o, const train_data *d, json_t *root,
                            tmap_error *err)
{
    json_t *cvs = root ? json_array() : NULL;
    size_t threads = tmap_train_threads(&d->set);
    tmap_status s = TMAP_OK;
    if (root)
        json_object_set_new(root, "cross_validation", cvs);
    for (int by_run = 0; !s && by_run <= (d->set.nruns >= 2); by_run++) {
        if (!by_run && (o->folds == 0 || (size_t)o->folds > threads))
            continue;
        tmap_cv_result cv;
        s = tmap_regress_cv(d->set.runs, d->set.nruns, d->set.p, (size_t)o->folds, by_run, &cv,
                            err);
        if (!s)
            train_cv_emit(&cv, cvs);
        if (!s)
            tmap_cv_result_free(&cv);
    }
    return s;
}

/* Loads every run (from PROFILE_DIR or the flags) and fits the predictor. */
static tmap_status train_fit(train_opts *o, train_data *d, tmap_predictor *pr, tmap_error *err)
{
    tmap_status s = o->dir ? train_from_dir(o, err) : TMAP_OK;
    for (size_t i = 0; !s && i < o->nbbv; i++)
        s = train_load_run(o, i, d, err);
    if (!s && o->names)
        s = train_split_names(o->names, d->set.p, d, err);
    if (!s)
        s = tmap_train_fit(&d->set, o->kernel, (const char *const *)d->fnames, pr, err);
    return s;
}

/* Reports the fit and the cross-validation (table or JSON) and writes MODEL;
 * returns the exit code.  JSON is printed only once MODEL is written. */
static int train_output(const tmap_args *a, const train_opts *o, const train_data *d,
                        const tmap_predictor *pr)
{
    tmap_error err = {0};
    tmap_status s = TMAP_OK;
    /* quiet: the cross-validation still runs (and can fail), into a JSON
     * object left unprinted */
    json_t *root = a->json || a->quiet ? train_json(o, d, pr) : NULL;
    if ((a->json || a->quiet) && !root)
        s = tmap_fail(&err, TMAP_ERR_NOMEM, "out of memory");
    else if (!root)
        train_report(pr);
    if (!s)
        s = train_cv(o, d, root, &err);
    if (!s)
        s = tmap_predictor_save(o->out, pr, &err);
    if (s) {
        json_decref(root);
        return tmap_cli_fail("train", &err);
    }
    if (a->json)
        return tmap_cli_print_json("train", root);
    json_decref(root);
    if (!a->quiet)
        printf("wrote %s\n", o->out);
    return TMAP_EXIT_OK;
}

int tmap_cmd_train(int argc, char **argv)
{
    static const struct option opts[] = {{"features", required_argument, NULL, OPT_FEATURES},
                                          {"bbv", required_argument, NULL, OPT_BBV},
                                          {"kernel", required_argument, NULL, 'k'},
                                          {"feature-names", required_argument, NULL, OPT_NAMES},
                                          {"folds", required_argument, NULL, OPT_FOLDS},
                                          TMAP_ARGS_OUTPUT, TMAP_ARGS_HELP, TMAP_ARGS_QUIET,
                                          TMAP_ARGS_JSON, {0}};
    train_opts o;
    tmap_args a;
    tmap_args_init(&a, "train", usage, argc, argv, opts, "k:o:hq");
    if (train_parse(&a, &o)) {
        train_opts_free(&o);
        return a.rc;
    }
    tmap_error err = {0};
    train_data d = {0};
    tmap_predictor pr = {0};
    tmap_status s = train_fit(&o, &d, &pr, &err);
    int rc = s ? tmap_cli_fail("train", &err) : train_output(&a, &o, &d, &pr);
    tmap_predictor_free(&pr);
    train_free(&d);
    train_opts_free(&o);
    return rc;
}

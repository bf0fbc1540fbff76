/*
 * cmd_predict.c -- `threadmap predict`: BBVs for new per-thread features
 * from a predictor file written by `threadmap train`; says what it wrote in
 * a line, or as one JSON object with --json.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cliutil.h"
#include "cli/commands.h"
#include "common/base.h"
#include "threadmap/model.h"

static const char predict_usage[] =
    "usage: threadmap predict MODEL --features F.npy -o BBV.npy [--kernel NAME] [--json] [-q]\n\n"
    "Predicts each thread's basic block vector with the eq. 1 regression in MODEL\n"
    "(thread id = row of F.npy); counts are rounded to nearest and clamped at 0.\n"
    "Writes BBV.npy (uint32 [threads, blocks]) and its sidecar BBV.npy.json, both\n"
    "or neither.  MODEL or F.npy may be - (stdin).\n\n"
    "  --features F.npy   per-thread features [threads, p] (or [threads] for p = 1)\n"
    "  -k, --kernel NAME  refuse MODEL unless it was trained for this kernel\n"
    "  -o, --output BBV.npy  the predicted BBV to write (not -: it has a sidecar)\n"
    "  --json             then print one JSON object: output, sidecar, model, kernel,\n"
    "                     threads, blocks, nfeatures\n"
    "  -q, --quiet        print nothing\n"
    "  -h, --help         this text\n\n"
    "example: threadmap predict model.txt --features prof/run1.features.npy -o pred.npy\n";

typedef struct predict_opts {
    const char *model, *features, *out, *kernel;
} predict_opts;

static void usage(FILE *f)
{
    fputs(predict_usage, f);
}

enum { OPT_FEATURES = 0x1800 };

/* 0: run; -1: stop (exit code in a->rc). */
static int predict_parse(tmap_args *a, predict_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int c; (c = tmap_args_next(a)) != 0;) {
        if (c < 0)
            return -1;
        if (c == OPT_FEATURES)
            o->features = tmap_args_input(a, optarg);
        else if (c == 'o')
            o->out = tmap_args_output(a, optarg);
        else if (c == 'k')
            o->kernel = optarg;
        else
            return tmap_args_bad(a, "unexpected option %s", a->opt);
    }
    if (tmap_args_operands(a, 0, 1))
        return -1;
    o->model = optind < a->argc ? tmap_args_input(a, a->argv[optind]) : NULL;
    if (!o->model || !o->features || !o->out)
        return tmap_args_bad(a, "give MODEL, --features and -o");
    if (!strcmp(o->out, "-"))
        return tmap_args_bad(a, "-o cannot be - (stdout): BBV.npy has a sidecar BBV.npy.json");
    return tmap_args_files(a);
}

/* Predicts the BBVs of the features' threads and writes BBV.npy and its
 * sidecar (naming the blocks if MODEL does). */
static tmap_status predict_run(const predict_opts *o, tmap_predictor *pr, tmap_bbv *bbv,
                               tmap_error *err)
{
    double *feat = NULL;
    size_t dim[2];
    tmap_status s = tmap_predictor_load(o->model, o->kernel, 0, NULL, pr, err);
    if (!s)
        s = tmap_npy_load_f64(o->features, TMAP_NPY_ANY, &feat, dim, err);
    if (!s && dim[1] != pr->nfeatures)
        s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu features per thread, but %s was trained on %zu",
                      o->features, dim[1], o->model, pr->nfeatures);
    if (!s)
        s = tmap_predict(pr, feat, dim[0], bbv, err);
    int named = 0;
    for (size_t b = 0; !s && b < pr->nblocks; b++)
        named |= *pr->block_names[b] != '\0';
    if (!s)
        s = tmap_bbv_save(o->out, bbv, named ? (const char *const *)pr->block_names : NULL, err);
    free(feat);
    return s;
}

/* {"output", "sidecar", "model", "kernel", "threads", "blocks", "nfeatures"} */
static int predict_print_json(const predict_opts *o, const tmap_predictor *pr,
                              const tmap_bbv *bbv)
{
    char *side = tmap_bbv_sidecar_path(o->out);
    json_t *root = side ? json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "output", o->out,
                                    "sidecar", side, "model", o->model, "kernel", pr->kernel,
                                    "threads", (json_int_t)bbv->nthreads, "blocks",
                                    (json_int_t)bbv->nblocks, "nfeatures",
                                    (json_int_t)pr->nfeatures)
                        : NULL;
    free(side);
    return tmap_cli_print_json("predict", root);
}

int tmap_cmd_predict(int argc, char **argv)
{
    static const struct option opts[] = {{"features", required_argument, NULL, OPT_FEATURES},
                                          {"kernel", required_argument, NULL, 'k'},
                                          TMAP_ARGS_OUTPUT, TMAP_ARGS_HELP, TMAP_ARGS_QUIET,
                                          TMAP_ARGS_JSON, {0}};
    predict_opts o;
    tmap_args a;
    tmap_args_init(&a, "predict", usage, argc, argv, opts, "o:k:hq");
    if (predict_parse(&a, &o))
        return a.rc;
    tmap_error err = {0};
    tmap_predictor pr = {0};
    tmap_bbv bbv = {0};
    tmap_status s = predict_run(&o, &pr, &bbv, &err);
    int rc = s ? tmap_cli_fail("predict", &err) : TMAP_EXIT_OK;
    if (!s && a.json)
        rc = predict_print_json(&o, &pr, &bbv);
    else if (!s && !a.quiet)
        printf("wrote %s: %zu threads x %zu blocks\n", o.out, bbv.nthreads, bbv.nblocks);
    tmap_bbv_free(&bbv);
    tmap_predictor_free(&pr);
    return rc;
}

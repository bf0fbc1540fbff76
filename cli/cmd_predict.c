/*
 * cmd_predict.c -- `threadmap predict`: BBVs for new per-thread features
 * from a predictor file written by `threadmap train`; says what it wrote in
 * a line, or as one JSON object with --json.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"
#include "common/base.h"
#include "threadmap/model.h"

static const char predict_usage[] =
    "usage: threadmap predict MODEL --features F.npy -o BBV.npy [--kernel NAME] [--json]\n\n"
    "Predicts each thread's basic block vector with the eq. 1 regression in MODEL\n"
    "(thread id = row of F.npy); counts are rounded to nearest and clamped at 0.\n"
    "Writes BBV.npy (uint32 [threads, blocks]) and its sidecar BBV.npy.json.\n\n"
    "  --features F.npy   per-thread features [threads, p] (or [threads] for p = 1)\n"
    "  --kernel NAME      refuse MODEL unless it was trained for this kernel\n"
    "  -o BBV.npy         the predicted BBV to write\n"
    "  --json             then print one JSON object: output, sidecar, model, kernel,\n"
    "                     threads, blocks, nfeatures\n";

typedef struct predict_opts {
    const char *model, *features, *out, *kernel;
    int json;
} predict_opts;

/* 0: run; 1: --help printed; -1: usage error (message and usage printed). */
static int predict_parse(int argc, char **argv, predict_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(predict_usage, stdout);
            return 1;
        }
        const char **slot = !strcmp(a, "--features") ? &o->features : !strcmp(a, "-o") ? &o->out
                          : !strcmp(a, "--kernel") ? &o->kernel : NULL;
        if (slot && i + 1 < argc) {
            *slot = argv[++i];
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!slot && a[0] != '-' && !o->model) {
            o->model = a;
        } else {
            fprintf(stderr, "threadmap predict: unexpected argument '%s'\n%s", a, predict_usage);
            return -1;
        }
    }
    if (!o->model || !o->features || !o->out) {
        fprintf(stderr, "threadmap predict: give MODEL, --features and -o\n%s", predict_usage);
        return -1;
    }
    return 0;
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
    predict_opts o;
    int r = predict_parse(argc, argv, &o);
    if (r)
        return r > 0 ? TMAP_EXIT_OK : TMAP_EXIT_USAGE;
    tmap_error err = {0};
    tmap_predictor pr = {0};
    tmap_bbv bbv = {0};
    tmap_status s = predict_run(&o, &pr, &bbv, &err);
    int rc = s ? tmap_cli_fail("predict", &err) : TMAP_EXIT_OK;
    if (!s && o.json)
        rc = predict_print_json(&o, &pr, &bbv);
    else if (!s)
        printf("wrote %s: %zu threads x %zu blocks\n", o.out, bbv.nthreads, bbv.nblocks);
    tmap_bbv_free(&bbv);
    tmap_predictor_free(&pr);
    return rc;
}

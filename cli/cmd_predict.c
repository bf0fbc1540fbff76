/*
 * cmd_predict.c -- `threadmap predict`: BBVs for new per-thread features
 * from a predictor file written by `threadmap train`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "instrument/base.h"
#include "threadmap/model.h"

static const char predict_usage[] =
    "usage: threadmap predict MODEL --features F.npy -o BBV.npy [--kernel NAME]\n\n"
    "Predicts each thread's basic block vector with the eq. 1 regression in MODEL\n"
    "(thread id = row of F.npy); counts are rounded to nearest and clamped at 0.\n"
    "Writes BBV.npy (uint32 [threads, blocks]) and its sidecar BBV.npy.json.\n\n"
    "  --features F.npy   per-thread features [threads, p] (or [threads] for p = 1)\n"
    "  --kernel NAME      refuse MODEL unless it was trained for this kernel\n"
    "  -o BBV.npy         the predicted BBV to write\n";

int tmap_cmd_predict(int argc, char **argv)
{
    const char *model = NULL, *features = NULL, *out = NULL, *kernel = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(predict_usage, stdout);
            return TMAP_EXIT_OK;
        }
        const char **slot = !strcmp(a, "--features") ? &features : !strcmp(a, "-o") ? &out
                          : !strcmp(a, "--kernel") ? &kernel : NULL;
        if (slot && i + 1 < argc) {
            *slot = argv[++i];
        } else if (!slot && a[0] != '-' && !model) {
            model = a;
        } else {
            fprintf(stderr, "threadmap predict: unexpected argument '%s'\n%s", a, predict_usage);
            return TMAP_EXIT_USAGE;
        }
    }
    if (!model || !features || !out) {
        fprintf(stderr, "threadmap predict: give MODEL, --features and -o\n%s", predict_usage);
        return TMAP_EXIT_USAGE;
    }
    tmap_error err = {0};
    tmap_predictor pr = {0};
    tmap_bbv bbv = {0};
    double *feat = NULL;
    size_t dim[2];
    tmap_status s = tmap_predictor_load(model, kernel, 0, NULL, &pr, &err);
    if (!s)
        s = tmap_npy_load_f64(features, TMAP_NPY_ANY, &feat, dim, &err);
    if (!s && dim[1] != pr.nfeatures)
        s = tmap_fail(&err, TMAP_ERR_INVALID, "%s: %zu features per thread, but %s was trained on %zu",
                      features, dim[1], model, pr.nfeatures);
    if (!s)
        s = tmap_predict(&pr, feat, dim[0], &bbv, &err);
    int named = 0;
    for (size_t b = 0; !s && b < pr.nblocks; b++)
        named |= *pr.block_names[b] != '\0';
    if (!s)
        s = tmap_bbv_save(out, &bbv, named ? (const char *const *)pr.block_names : NULL, &err);
    if (!s)
        printf("wrote %s: %zu threads x %zu blocks\n", out, bbv.nthreads, bbv.nblocks);
    free(feat);
    tmap_bbv_free(&bbv);
    tmap_predictor_free(&pr);
    return s ? tmap_cli_fail("predict", &err) : TMAP_EXIT_OK;
}

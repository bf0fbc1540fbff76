/*
 * noise_common.h -- what noise_warps.c and noise_draws.c share: the error
 * check, reading a file, and their common inputs (argv[1..9]: TRUE.npy
 * PRED.npy MODEL FEATURES.npy KERNEL.ptx KERNEL TABLE.tsv BLOCKS_PER_SM
 * BLOCK_SIZE): the true and predicted BBVs, the predictor, each thread's
 * feature key, and the SM model of 132 SMs without and with the noise;
 * and the model's time of a grouping (sm_time).
 */
#ifndef NOISE_COMMON_H
#define NOISE_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/common.h"
#include "threadmap/instrument.h"
#include "threadmap/model.h"

#define CK(x) do { if ((x) != TMAP_OK) { fprintf(stderr, "%s: %s\n", #x, e.message); exit(1); } } while (0)

static tmap_error e;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    size_t n = 0;
    if (f && !fseek(f, 0, SEEK_END) && (long)(n = (size_t)ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
        (s = calloc(n + 1, 1)) && fread(s, 1, n, f) == n) {
        fclose(f);
        return s;
    }
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
}

static int by_value(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The SM model's cycles of the grouping perm of b (its parts into *t). */
static double sm_time(const tmap_sm_model *sm, const tmap_bbv *b, const uint32_t *perm,
                      tmap_sm_time_parts *t)
{
    CK(tmap_sm_model_time(sm, b, perm, t, &e));
    return t->cycles;
}

typedef struct noise_input {
    tmap_bbv tb, pb;       /* true, predicted */
    tmap_predictor pr;
    uint64_t *key;         /* [threads]: the feature keys (noise_draws' hashes) */
    size_t bps, bs;        /* resident blocks per SM, threads per block */
    tmap_sm_model sm, smn; /* smn: the same with pr's noise and the features' groups */
} noise_input;

static void noise_input_load(char **argv, noise_input *in)
{
    double *feat;
    size_t dim[2];
    in->bps = strtoul(argv[8], NULL, 10), in->bs = strtoul(argv[9], NULL, 10);
    CK(tmap_bbv_load(argv[1], &in->tb, NULL, &e));
    CK(tmap_bbv_load(argv[2], &in->pb, NULL, &e));
    CK(tmap_predictor_load(argv[3], NULL, in->pb.nblocks, NULL, &in->pr, &e));
    CK(tmap_npy_load_f64(argv[4], TMAP_NPY_ANY, &feat, dim, &e));
    if (dim[0] != in->pb.nthreads || in->tb.nthreads != in->pb.nthreads) {
        fprintf(stderr, "%zu feature rows, %zu true and %zu predicted threads\n", dim[0],
                in->tb.nthreads, in->pb.nthreads);
        exit(1);
    }
    in->key = malloc(dim[0] * sizeof *in->key);
    tmap_noise_keys(feat, dim[0], dim[1], in->key);
    char *ptx = read_text(argv[5]);
    tmap_ptx_module *m;
    tmap_cfg *cfg;
    tmap_lat_table *t;
    CK(tmap_ptx_parse(ptx, strlen(ptx), argv[5], &m, &e));
    CK(tmap_cfg_build(m, argv[6], &cfg, &e));
    CK(tmap_lat_load(argv[7], &t, &e));
    CK(tmap_sm_model_make(t, m, argv[6], cfg, NULL, 132, in->bps, in->bs, 0, &in->sm, &e));
    in->smn = in->sm, in->smn.noise = &in->pr.noise;
    CK(tmap_sm_model_features(&in->smn, feat, dim[0], dim[1], &e));
    free(feat);
}

#endif

/*
 * noise_warps.c -- an experiment, not built by CMake: what the expected
 * slowest lane (model/noise.c) makes of one kernel's predicted BBVs, against
 * the true BBVs of the same input (issue 16, "what remains" 3: mummer_match).
 * On the CPU, from files a device run wrote (results/mummer-noise.txt):
 *   TRUE.npy      the evaluation input's measured BBV (threadmap profile)
 *   PRED.npy      its BBV predicted by MODEL from FEATURES (threadmap predict)
 * The grouping is the bench's Sorting of the predicted BBV
 * (tmap_regroup_sort).  Prints the SM model's time of the original and of
 * that grouping on the true BBV, on the predicted one as it is, and on the
 * predicted one with the noise; then, for CFG block B, the warps' largest
 * counts summed (c_wb) and over the warps with the largest true count.
 *   gcc -O2 -Iinclude -o /tmp/noise_warps benchmarks/experiments/noise_warps.c \
 *       -Lbuild -lthreadmap -Wl,-rpath,$PWD/build
 *   /tmp/noise_warps TRUE.npy PRED.npy MODEL FEATURES.npy KERNEL.ptx KERNEL \
 *       TABLE.tsv BLOCKS_PER_SM BLOCK_SIZE B
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/common.h"
#include "threadmap/instrument.h"
#include "threadmap/model.h"
#include "threadmap/regroup.h"

#define CK(x) do { if ((x) != TMAP_OK) { fprintf(stderr, "%s: %s\n", #x, e.message); exit(1); } } while (0)

static tmap_error e;

static int by_desc(const void *pa, const void *pb, void *ctx)
{
    const uint32_t *t = ctx, a = t[*(const uint32_t *)pa], b = t[*(const uint32_t *)pb];
    return (a < b) - (a > b);
}

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

static double sm_time(const tmap_sm_model *sm, const tmap_bbv *b, const uint32_t *perm,
                      tmap_sm_time_parts *t)
{
    CK(tmap_sm_model_time(sm, b, perm, t, &e));
    return t->cycles;
}

int main(int argc, char **argv)
{
    if (argc != 11) {
        fprintf(stderr, "usage: %s TRUE.npy PRED.npy MODEL FEATURES.npy KERNEL.ptx KERNEL "
                        "TABLE.tsv BLOCKS_PER_SM BLOCK_SIZE B\n", argv[0]);
        return 2;
    }
    size_t bps = strtoul(argv[8], NULL, 10), bs = strtoul(argv[9], NULL, 10);
    size_t blk = strtoul(argv[10], NULL, 10);
    tmap_bbv tb, pb;
    tmap_predictor pr;
    double *feat;
    size_t dim[2];
    CK(tmap_bbv_load(argv[1], &tb, NULL, &e));
    CK(tmap_bbv_load(argv[2], &pb, NULL, &e));
    CK(tmap_predictor_load(argv[3], NULL, pb.nblocks, NULL, &pr, &e));
    CK(tmap_npy_load_f64(argv[4], TMAP_NPY_ANY, &feat, dim, &e));
    uint64_t *key = malloc(dim[0] * sizeof *key);
    tmap_noise_keys(feat, dim[0], dim[1], key);
    char *ptx = read_text(argv[5]);
    tmap_ptx_module *m;
    tmap_cfg *cfg;
    tmap_lat_table *t;
    CK(tmap_ptx_parse(ptx, strlen(ptx), argv[5], &m, &e));
    CK(tmap_cfg_build(m, argv[6], &cfg, &e));
    CK(tmap_lat_load(argv[7], &t, &e));
    tmap_sm_model sm, smn;
    CK(tmap_sm_model_make(t, m, argv[6], cfg, NULL, 132, bps, bs, 0, &sm, &e));
    CK(tmap_sm_model_make(t, m, argv[6], cfg, NULL, 132, bps, bs, 0, &smn, &e));
    smn.noise = &pr.noise, smn.noise_key = key;
    size_t n = pb.nthreads, nb = pb.nblocks;
    uint32_t *perm = malloc(n * sizeof *perm);
    tmap_regroup_opts ro = {32, TMAP_REGROUP_GRID, bs, 1};
    CK(tmap_regroup_sort(&pb, &ro, perm, &e));
    const char *name[3] = {"true BBV", "predicted BBV", "predicted BBV, noise"};
    const tmap_bbv *bbv[3] = {&tb, &pb, &pb};
    const tmap_sm_model *mod[3] = {&sm, &sm, &smn};
    printf("%-22s %14s %14s %8s   (sorted: issue + stalls, memory)\n", "BBVs", "original", "sorted",
           "gain %");
    for (int i = 0; i < 3; i++) {
        tmap_sm_time_parts a, s;
        double o = sm_time(mod[i], bbv[i], NULL, &a), r = sm_time(mod[i], bbv[i], perm, &s);
        printf("%-22s %14.0f %14.0f %8.1f   (%.0f + %.0f, %.0f)\n", name[i], o, r,
               100 * (1 - r / o), s.issue, s.latency, s.memory);
    }
    tmap_warp_counts wt, wp, wn;
    CK(tmap_warp_counts_make(&tb, perm, bs, &wt, &e));
    CK(tmap_warp_counts_make(&pb, perm, bs, &wp, &e));
    CK(tmap_warp_counts_make(&pb, perm, bs, &wn, &e));
    CK(tmap_noise_warp_counts(&pr.noise, &pb, key, perm, &wn, &e));
    size_t W = wt.nwarps;
    uint32_t *ct = malloc(W * sizeof *ct), *ix = malloc(W * sizeof *ix);
    double st = 0, sp = 0, sn = 0;
    for (size_t k = 0; k < W; k++) {
        ct[k] = wt.c[k * nb + blk], ix[k] = (uint32_t)k;
        st += wt.c[k * nb + blk], sp += wp.c[k * nb + blk], sn += wn.c[k * nb + blk];
    }
    printf("\nblock %zu, sorted: the warps' largest counts summed: true %.0f, predicted %.0f, "
           "with the noise %.0f\n", blk, st, sp, sn);
    qsort_r(ix, W, sizeof *ix, by_desc, ct);
    printf("%12s %10s %10s %10s   (mean largest count of the warps with the largest true one)\n",
           "top warps", "true", "predicted", "noise");
    for (size_t q = 10; q <= W && q <= 10000; q *= 10) {
        double a = 0, b = 0, c = 0;
        for (size_t j = 0; j < q; j++)
            a += wt.c[ix[j] * nb + blk], b += wp.c[ix[j] * nb + blk], c += wn.c[ix[j] * nb + blk];
        printf("%12zu %10.1f %10.1f %10.1f\n", q, a / q, b / q, c / q);
    }
    return 0;
}

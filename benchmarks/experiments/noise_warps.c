/*
 * noise_warps.c -- an experiment, not built by CMake: what the expected
 * slowest lane (model/noise.c) makes of one kernel's predicted BBVs, against
 * the true BBVs of the same input (issue 16: mummer_match's and spmv_csr's
 * errors with predicted BBVs).  On the CPU, from files a device run wrote
 * (results/mummer-noise.txt and spmv-noise.txt say how):
 *   TRUE.npy      the evaluation input's measured BBV (threadmap profile)
 *   PRED.npy      its BBV predicted by MODEL from FEATURES (threadmap predict)
 * The grouping is the bench's Sorting of the predicted BBV
 * (tmap_regroup_sort).  Prints the SM model's time of the original and of
 * that grouping on the true BBV, on the predicted one as it is, and on the
 * predicted one with the noise; the gain on the true BBV with its outlier
 * threads' rows replaced by their predictions; per CFG block, the warps'
 * largest counts (c_wb) and their lanes' counts (a_wb) summed, in both
 * orders; then, for CFG block B, the warps' largest counts summed over the
 * warps with the largest true count; the time with one block's counts
 * raised alone (as the noise raises them, and B's true counts) and the
 * visits that moves; and the expected maximum of k residuals (true -
 * predicted) of B's top bin of predicted counts, from their empirical
 * distribution and from a normal of their deviation.
 *   gcc -O2 -Iinclude -o /tmp/noise_warps benchmarks/experiments/noise_warps.c \
 *       -Lbuild -lthreadmap -Wl,-rpath,$PWD/build -lm
 *   /tmp/noise_warps TRUE.npy PRED.npy MODEL FEATURES.npy KERNEL.ptx KERNEL \
 *       TABLE.tsv BLOCKS_PER_SM BLOCK_SIZE B
 */
#define _GNU_SOURCE /* qsort_r */
#include "noise_common.h"
#include "threadmap/regroup.h"

static int by_desc(const void *pa, const void *pb, void *ctx)
{
    const uint32_t *t = ctx, a = t[*(const uint32_t *)pa], b = t[*(const uint32_t *)pb];
    return (a < b) - (a > b);
}

/* E[max of k standard normals]: the integral of x k phi(x) Phi(x)^(k-1). */
static double normal_max(double k)
{
    double sum = 0, h = 1e-3;
    for (double x = -10; x < 10; x += h) {
        double phi = exp(-x * x / 2) / sqrt(2 * M_PI), Phi = 0.5 * erfc(-x / sqrt(2));
        sum += x * k * phi * pow(Phi, k - 1) * h;
    }
    return sum;
}

/* The model's time of w, and the line that prints it. */
static double time_of(const tmap_warp_counts *w, const tmap_sm_model *sm, const char *label)
{
    tmap_sm_time_parts q;
    CK(tmap_sm_time(w, sm->blocks, &sm->params, &q, &e));
    if (label)
        printf("%-44s %12.0f   (issue %.0f + stalls %.0f, memory %.0f)\n", label, q.cycles,
               q.issue, q.latency, q.memory);
    return q.cycles;
}

/* Block b's counts of w taken from `from` (a_wb at least c_wb when keep_a). */
static void take_block(tmap_warp_counts *w, const tmap_warp_counts *from, size_t b)
{
    for (size_t k = 0, nb = w->nblocks; k < w->nwarps; k++)
        w->c[k * nb + b] = from->c[k * nb + b], w->a[k * nb + b] = from->a[k * nb + b];
}

/* The visits of every block summed over w's warps into v[nblocks]. */
static void visits_of(const tmap_warp_counts *w, const tmap_sm_model *sm, double *v)
{
    size_t nb = w->nblocks;
    double *one = calloc(nb, sizeof *one);
    uint32_t *stack = calloc(nb, sizeof *stack);
    memset(v, 0, nb * sizeof *v);
    for (size_t k = 0; k < w->nwarps; k++) {
        tmap_sm_visits(sm->blocks, nb, &w->c[k * nb], &w->a[k * nb], one, stack);
        for (size_t b = 0; b < nb; b++)
            v[b] += one[b];
    }
    free(one);
    free(stack);
}

/* Per CFG block whose counts differ among them: the warps' largest counts
 * (c) and their lanes' counts (a), summed over the warps, of the true BBV,
 * the predicted one and the predicted one with the noise, in order perm. */
static void block_sums(const char *order, const tmap_warp_counts *w[3])
{
    size_t nb = w[0]->nblocks;
    printf("\n%s: per CFG block, summed over the warps   c: true, predicted, noise"
           "   a: true, predicted, noise\n", order);
    for (size_t b = 0; b < nb; b++) {
        double c[3] = {0}, a[3] = {0};
        for (int i = 0; i < 3; i++)
            for (size_t k = 0; k < w[i]->nwarps; k++)
                c[i] += w[i]->c[k * nb + b], a[i] += w[i]->a[k * nb + b];
        if (c[0] == c[1] && c[1] == c[2] && a[0] == a[1] && a[1] == a[2])
            continue;
        printf("  block %2zu   c %10.0f %10.0f %10.0f   a %10.0f %10.0f %10.0f\n", b, c[0], c[1],
               c[2], a[0], a[1], a[2]);
    }
}

/* The model's gain of the grouping perm on the true BBV with the rows of
 * the threads whose residual (true - predicted) exceeds r in some block
 * replaced by their predicted rows, for r from 2000 down to 125. */
static void outlier_rows(const tmap_sm_model *sm, const tmap_bbv *tb, const tmap_bbv *pb,
                         const uint32_t *perm)
{
    size_t n = tb->nthreads, nb = tb->nblocks;
    tmap_bbv x;
    CK(tmap_bbv_create(&x, n, nb, &e));
    memcpy(x.counts, tb->counts, n * nb * sizeof *x.counts);
    printf("\nthe true BBV with the rows of the threads whose residual exceeds r in some block "
           "replaced by their predicted rows:\n%8s %8s %14s %14s %8s\n", "r", "rows", "original",
           "sorted", "gain %");
    for (double r = 2000; r >= 125; r /= 2) {
        size_t rows = 0;
        for (size_t i = 0; i < n; i++) {
            int big = 0;
            for (size_t b = 0; b < nb; b++)
                big |= (double)tb->counts[i * nb + b] - (double)pb->counts[i * nb + b] > r;
            rows += (size_t)big;
            if (big)
                memcpy(&x.counts[i * nb], &pb->counts[i * nb], nb * sizeof *x.counts);
        }
        tmap_sm_time_parts a, s;
        double o = sm_time(sm, &x, NULL, &a), t = sm_time(sm, &x, perm, &s);
        printf("%8.0f %8zu %14.0f %14.0f %8.1f\n", r, rows, o, t, 100 * (1 - t / o));
    }
    tmap_bbv_free(&x);
}

int main(int argc, char **argv)
{
    if (argc != 11) {
        fprintf(stderr, "usage: %s TRUE.npy PRED.npy MODEL FEATURES.npy KERNEL.ptx KERNEL "
                        "TABLE.tsv BLOCKS_PER_SM BLOCK_SIZE B\n", argv[0]);
        return 2;
    }
    noise_input in;
    noise_input_load(argv, &in);
    size_t bs = in.bs, blk = strtoul(argv[10], NULL, 10);
    tmap_bbv tb = in.tb, pb = in.pb;
    tmap_predictor pr = in.pr;
    const uint32_t *group = in.smn.group;
    const tmap_sm_model sm = in.sm, smn = in.smn;
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
    outlier_rows(&sm, &tb, &pb, perm);
    for (int sorted = 0; sorted < 2; sorted++) {
        const uint32_t *q = sorted ? perm : NULL;
        tmap_warp_counts o[3];
        CK(tmap_warp_counts_make(&tb, q, bs, &o[0], &e));
        CK(tmap_warp_counts_make(&pb, q, bs, &o[1], &e));
        CK(tmap_warp_counts_make(&pb, q, bs, &o[2], &e));
        CK(tmap_noise_warp_counts(&pr.noise, &pb, group, q, &o[2], &e));
        block_sums(sorted ? "sorted" : "original", (const tmap_warp_counts *[3]){&o[0], &o[1], &o[2]});
        for (int i = 0; i < 3; i++)
            tmap_warp_counts_free(&o[i]);
    }
    tmap_warp_counts wt, wp, wn;
    CK(tmap_warp_counts_make(&tb, perm, bs, &wt, &e));
    CK(tmap_warp_counts_make(&pb, perm, bs, &wp, &e));
    CK(tmap_warp_counts_make(&pb, perm, bs, &wn, &e));
    CK(tmap_noise_warp_counts(&pr.noise, &pb, group, perm, &wn, &e));
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
    /* one block at a time raised as the noise raises it, on the predicted counts */
    printf("\nsorted, the predicted counts with one block's raised by the noise (and B's true):\n");
    double base = time_of(&wp, &sm, "as predicted");
    for (size_t b = 0; b < nb; b++) {
        int moved = 0;
        for (size_t k = 0; k < W && !moved; k++)
            moved = wn.c[k * nb + b] != wp.c[k * nb + b] || wn.a[k * nb + b] != wp.a[k * nb + b];
        if (!moved)
            continue;
        take_block(&wp, &wn, b);
        double t1 = time_of(&wp, &sm, NULL);
        if (b == blk) {
            double *v0 = malloc(nb * sizeof *v0), *v1 = malloc(nb * sizeof *v1);
            tmap_warp_counts raw;
            CK(tmap_warp_counts_make(&pb, perm, bs, &raw, &e));
            visits_of(&raw, &sm, v0);
            visits_of(&wp, &sm, v1);
            for (size_t x = 0; x < nb; x++)
                if (v0[x] != v1[x])
                    printf("    block %zu raised: visits of block %zu summed %.0f -> %.0f\n", b,
                           x, v0[x], v1[x]);
            take_block(&wp, &wt, b);
            printf("    block %zu with its true counts: %.0f\n", b, time_of(&wp, &sm, NULL));
            take_block(&wp, &raw, b);
            tmap_warp_counts_free(&raw);
            free(v0), free(v1);
        } else {
            tmap_warp_counts raw;
            CK(tmap_warp_counts_make(&pb, perm, bs, &raw, &e));
            take_block(&wp, &raw, b);
            tmap_warp_counts_free(&raw);
        }
        printf("  block %2zu raised alone: %12.0f (%+.0f)\n", b, t1, t1 - base);
    }
    /* the residuals' tail in B's top bin of predicted counts */
    const double *edge = &pr.noise.edge[blk * (TMAP_NOISE_BINS - 1)];
    double *r = malloc(n * sizeof *r), mean = 0, var = 0;
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        if (pb.counts[i * nb + blk] >= edge[TMAP_NOISE_BINS - 2])
            r[nr++] = (double)tb.counts[i * nb + blk] - (double)pb.counts[i * nb + blk];
    for (size_t i = 0; i < nr; i++)
        mean += r[i] / nr;
    for (size_t i = 0; i < nr; i++)
        var += (r[i] - mean) * (r[i] - mean) / nr;
    qsort(r, nr, sizeof *r, by_value);
    printf("\nblock %zu's top bin (predicted >= %g): %zu threads, residual mean %.2f, deviation "
           "%.2f, largest %.0f\n%8s %14s %14s\n", blk, edge[TMAP_NOISE_BINS - 2], nr, mean,
           sqrt(var), r[nr - 1], "k", "E[max] empir.", "mean + normal");
    for (double k = 32; k <= 2048; k *= 8) {
        double emp = 0;
        for (size_t i = 1; i <= nr; i++)
            emp += r[i - 1] * (pow((double)i / nr, k) - pow((double)(i - 1) / nr, k));
        printf("%8.0f %14.1f %14.1f\n", k, emp, mean + sqrt(var) * normal_max(k));
    }
    return 0;
}

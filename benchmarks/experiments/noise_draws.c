/*
 * noise_draws.c -- an experiment, not built by CMake: the SM model's time of
 * groupings of one kernel's predicted BBVs by drawing what the predictions
 * leave out, instead of the expected slowest lane (model/noise.c), against
 * the same model on the true BBVs (issue 16; results/noise-draws.txt).
 * On the CPU, from the files noise_warps.c reads (results/mummer-noise.txt
 * and spmv-noise.txt say how a device run writes them) and permutations
 * written by `threadmap regroup --bbv PRED.npy` (slot i runs thread perm[i]).
 *
 * A draw gives every thread t and CFG block b a count: its prediction plus a
 * residual at z = sqrt(rho_b) z_key + sqrt(1 - rho_b) z_t, z_key and z_t
 * standard normals drawn from hashes of the thread's feature key and of t
 * (threads of equal features share the part rho_b), rounded and within
 * [0, cap_b].  The residual is the one at normal score z of the block's bin
 * (the predictor's bins):
 *   normal     the bin's mean + z x its deviation (the predictor's law);
 *   empirical  the quantile at Phi(z) of the bin's residuals, interpolated
 *              between z = -4.5, -4, ..., 4.5 -- taken from the evaluation
 *              input's own residuals (true - predicted), so a proxy better
 *              than any fit on training inputs could give.
 * Draws depend on the thread, not the slot: every grouping sees the same
 * draw.  Prints, per grouping, the model's cycles on the true BBV, with the
 * expected slowest lane, and the mean (and deviation) over DRAWS draws of
 * each law, with each one's gain over the original order.
 *   gcc -O2 -Iinclude -o /tmp/noise_draws benchmarks/experiments/noise_draws.c \
 *       -Lbuild -lthreadmap -Wl,-rpath,$PWD/build -lm
 *   /tmp/noise_draws TRUE.npy PRED.npy MODEL FEATURES.npy KERNEL.ptx KERNEL \
 *       TABLE.tsv BLOCKS_PER_SM BLOCK_SIZE DRAWS PERM.npy...
 */
#include "noise_common.h"

enum { NB = TMAP_NOISE_BINS, NZ = 19, MAXP = 8 };
static const double Z0 = -4.5, DZ = 0.5; /* the normal scores of the quantiles */


static size_t bin_of(const double *edge, double v)
{
    size_t k = 0;
    while (k < NB - 1 && edge[k] < v)
        k++;
    return k;
}

/* splitmix64: a hash that serves as a counter-based generator. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A standard normal from a seed (Box-Muller on two hashes). */
static double gauss(uint64_t seed)
{
    double u = ((mix(seed) >> 11) + 0.5) / 9007199254740992.0;
    double v = ((mix(seed ^ 0x5851f42d4c957f2dULL) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* The quantiles q[NZ] of one bin's residuals at the normal scores. */
static void empirical(double *r, size_t n, double *q)
{
    qsort(r, n, sizeof *r, by_value);
    for (int j = 0; j < NZ; j++) {
        double p = 0.5 * erfc(-(Z0 + DZ * j) / sqrt(2));
        size_t i = (size_t)(p * (double)n);
        q[j] = n ? r[i < n ? i : n - 1] : 0;
    }
}

/* q at score z, linear between the scores, its ends beyond them. */
static double at_score(const double *q, double z)
{
    double x = (z - Z0) / DZ;
    if (x <= 0)
        return q[0];
    if (x >= NZ - 1)
        return q[NZ - 1];
    int j = (int)x;
    return q[j] + (q[j + 1] - q[j]) * (x - j);
}

/* Draw d of the counts into x (q: [nblocks][NB][NZ]). */
static void draw(const tmap_bbv *pb, const tmap_bbv_noise *nz, const uint64_t *key,
                 const double *q, int d, tmap_bbv *x)
{
    size_t nb = pb->nblocks;
    for (size_t t = 0; t < pb->nthreads; t++) {
        double zt = gauss(t * 0x9e3779b97f4a7c15ULL + (uint64_t)d);
        double zk = gauss(key[t] ^ (0xd1b54a32d192ed03ULL * (uint64_t)(d + 1)));
        for (size_t b = 0; b < nb; b++) {
            double p = pb->counts[t * nb + b], rho = nz->rho[b];
            size_t k = bin_of(&nz->edge[b * (NB - 1)], p);
            double v = p + at_score(&q[(b * NB + k) * NZ], sqrt(rho) * zk + sqrt(1 - rho) * zt);
            v = fmin(nz->cap[b], fmax(0, v));
            x->counts[t * nb + b] = (uint32_t)floor(v + 0.5);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 12 || argc - 11 > MAXP) {
        fprintf(stderr, "usage: %s TRUE.npy PRED.npy MODEL FEATURES.npy KERNEL.ptx KERNEL "
                        "TABLE.tsv BLOCKS_PER_SM BLOCK_SIZE DRAWS PERM.npy... (at most %d)\n",
                argv[0], MAXP);
        return 2;
    }
    int ndraws = atoi(argv[10]), np = argc - 10;
    noise_input in;
    noise_input_load(argv, &in);
    const tmap_bbv tb = in.tb, pb = in.pb;
    const tmap_predictor pr = in.pr;
    const tmap_sm_model sm = in.sm, smn = in.smn;
    size_t n = pb.nthreads, nb = pb.nblocks;
    tmap_bbv x;
    /* the two laws' quantiles per block and bin */
    double *q[2] = {malloc(nb * NB * NZ * sizeof(double)), malloc(nb * NB * NZ * sizeof(double))};
    double *r = malloc(n * sizeof *r);
    for (size_t b = 0; b < nb; b++)
        for (size_t k = 0; k < NB; k++) {
            size_t c = 0;
            for (size_t i = 0; i < n; i++)
                if (bin_of(&pr.noise.edge[b * (NB - 1)], pb.counts[i * nb + b]) == k)
                    r[c++] = (double)tb.counts[i * nb + b] - (double)pb.counts[i * nb + b];
            for (int j = 0; j < NZ; j++)
                q[0][(b * NB + k) * NZ + j] = pr.noise.mean[b * NB + k] +
                                              pr.noise.sd[b * NB + k] * (Z0 + DZ * j);
            empirical(r, c, &q[1][(b * NB + k) * NZ]);
        }
    uint32_t *perm[MAXP + 1] = {NULL};
    for (int i = 1; i < np; i++) {
        int64_t *v;
        size_t pd[2];
        CK(tmap_npy_load_i64(argv[10 + i], TMAP_NPY_1D, &v, pd, &e));
        if (pd[0] != n) {
            fprintf(stderr, "%s: %zu entries, the BBV has %zu threads\n", argv[10 + i], pd[0], n);
            return 1;
        }
        perm[i] = malloc(n * sizeof *perm[i]);
        for (size_t j = 0; j < n; j++)
            perm[i][j] = (uint32_t)v[j];
        free(v);
    }
    tmap_sm_time_parts parts;
    double tt[MAXP + 1], te[MAXP + 1], mean[2][MAXP + 1] = {{0}}, sq[2][MAXP + 1] = {{0}};
    for (int i = 0; i < np; i++)
        tt[i] = sm_time(&sm, &tb, perm[i], &parts), te[i] = sm_time(&smn, &pb, perm[i], &parts);
    CK(tmap_bbv_create(&x, n, nb, &e));
    for (int law = 0; law < 2; law++)
        for (int d = 0; d < ndraws; d++) {
            draw(&pb, &pr.noise, in.key, q[law], d, &x);
            for (int i = 0; i < np; i++) {
                double c = sm_time(&sm, &x, perm[i], &parts);
                mean[law][i] += c / ndraws, sq[law][i] += c * c / ndraws;
            }
        }
    printf("%-16s %12s %12s %12s %6s %12s %6s   gain %%: %6s %6s %6s %6s\n", "grouping", "true",
           "expected", "normal", "sd %", "empirical", "sd %", "true", "exp.", "norm.", "emp.");
    for (int i = 0; i < np; i++) {
        double sd[2];
        for (int law = 0; law < 2; law++)
            sd[law] = 100 * sqrt(fmax(0, sq[law][i] - mean[law][i] * mean[law][i])) / mean[law][i];
        printf("%-16s %12.0f %12.0f %12.0f %6.1f %12.0f %6.1f          %+6.1f %+6.1f %+6.1f %+6.1f\n",
               i ? argv[10 + i] : "original", tt[i], te[i], mean[0][i], sd[0], mean[1][i], sd[1],
               100 * (1 - tt[i] / tt[0]), 100 * (1 - te[i] / te[0]),
               100 * (1 - mean[0][i] / mean[0][0]), 100 * (1 - mean[1][i] / mean[1][0]));
    }
    return 0;
}

/*
 * noise.c -- what a predicted BBV does not know: the residuals of the
 * regression by predicted value (fitted on the training rows), and the
 * expected slowest lane of a warp whose counts are predictions.
 *
 * A warp runs a block as often as its busiest lane.  The max of predicted
 * counts is below the expected max of the true ones: lanes predicted alike
 * still differ, and a grouping sorted by predictions looks more uniform
 * than it runs.  Each lane's true count is taken as normal about its
 * prediction plus its bin's mean residual, with its bin's deviation
 * (residuals are not homoscedastic: escape_time's loop is exact far from
 * the set and off by thousands near it), and the maximum by Clark's
 * moment matching.
 */
#include "threadmap/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

enum { NB = TMAP_NOISE_BINS };

tmap_status tmap_noise_create(tmap_bbv_noise *nz, size_t nblocks, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, nz);
    if (st)
        return st;
    nz->nblocks = nblocks;
    nz->edge = calloc(nblocks * (NB - 1) + 1, sizeof *nz->edge);
    nz->mean = calloc(nblocks * NB + 1, sizeof *nz->mean);
    nz->sd = calloc(nblocks * NB + 1, sizeof *nz->sd);
    nz->cap = calloc(nblocks + 1, sizeof *nz->cap);
    nz->rho = calloc(nblocks + 1, sizeof *nz->rho);
    if (nz->edge && nz->mean && nz->sd && nz->cap && nz->rho)
        return TMAP_OK;
    tmap_noise_free(nz);
    return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the noise of %zu blocks", nblocks);
}

void tmap_noise_free(tmap_bbv_noise *nz)
{
    if (!nz)
        return;
    free(nz->edge);
    free(nz->mean);
    free(nz->sd);
    free(nz->cap);
    free(nz->rho);
    memset(nz, 0, sizeof *nz);
}

uint64_t tmap_noise_key(const double *row, size_t p)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a 64 */
    const unsigned char *b = (const unsigned char *)row;
    for (size_t i = 0; i < p * sizeof *row; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static int noise_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The bin of value v: the number of edges below it. */
static size_t noise_bin(const double *edge, double v)
{
    size_t k = 0;
    while (k < NB - 1 && edge[k] < v)
        k++;
    return k;
}

/* Empty bins (count 0) take the nearest filled bin's mean and deviation,
 * the lower one first. */
static void noise_fill(const size_t *count, double *mean, double *sd)
{
    for (size_t k = 0; k < NB; k++) {
        if (count[k])
            continue;
        size_t from = NB;
        for (size_t d = 1; d < NB && from == NB; d++) {
            if (k >= d && count[k - d])
                from = k - d;
            else if (k + d < NB && count[k + d])
                from = k + d;
        }
        mean[k] = from < NB ? mean[from] : 0;
        sd[k] = from < NB ? sd[from] : 0;
    }
}

typedef struct noise_row { uint64_t key; double r; } noise_row;

static int noise_row_cmp(const void *x, const void *y)
{
    const noise_row *a = x, *b = y;
    return (a->key > b->key) - (a->key < b->key);
}

/* rho: over the rows whose key repeats, 1 - (the residuals' variance within
 * their key's group) / (their variance); 0 where no key repeats. */
static tmap_status noise_rho(const double *pred, const double *truth, const uint64_t *key,
                             size_t n, double *rho, tmap_error *err)
{
    *rho = 0;
    noise_row *row = key && n ? malloc(n * sizeof *row) : NULL;
    if (key && n && !row)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu residuals", n);
    for (size_t i = 0; row && i < n; i++)
        row[i] = (noise_row){key[i], truth[i] - pred[i]};
    if (row)
        qsort(row, n, sizeof *row, noise_row_cmp);
    double within = 0, sum = 0, sum2 = 0, m = 0;
    for (size_t i = 0, j; row && i < n; i = j) {
        double g = 0;
        for (j = i; j < n && row[j].key == row[i].key; j++)
            g += row[j].r;
        if (j - i < 2)
            continue;
        g /= (double)(j - i);
        for (size_t k = i; k < j; k++) {
            double r = row[k].r;
            within += (r - g) * (r - g), sum += r, sum2 += r * r, m += 1;
        }
    }
    free(row);
    double total = m > 0 ? sum2 - sum * sum / m : 0;
    if (total > 0)
        *rho = fmin(1, fmax(0, 1 - within / total));
    return TMAP_OK;
}

tmap_status tmap_noise_fit(const double *pred, const double *truth, const uint64_t *key, size_t n,
                           double *edge, double *mean, double *sd, double *cap, double *rho,
                           tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, edge, mean, sd, cap, rho);
    if (!st && n && (st = TMAP_NEED(err, pred, truth)))
        return st;
    if (st)
        return st;
    double *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu residuals", n);
    memcpy(sorted, pred, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, noise_cmp);
    for (size_t k = 0; k < NB - 1; k++)
        edge[k] = n ? sorted[(k + 1) * n / NB < n ? (k + 1) * n / NB : n - 1] : 0;
    free(sorted);
    size_t count[NB] = {0};
    double sum2[NB] = {0};
    memset(mean, 0, NB * sizeof *mean);
    *cap = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = noise_bin(edge, pred[i]);
        double r = truth[i] - pred[i];
        count[k]++, mean[k] += r, sum2[k] += r * r;
        *cap = fmax(*cap, truth[i]);
    }
    for (size_t k = 0; k < NB; k++) {
        mean[k] = count[k] ? mean[k] / (double)count[k] : 0;
        sd[k] = count[k] ? sqrt(fmax(0, sum2[k] / (double)count[k] - mean[k] * mean[k])) : 0;
    }
    noise_fill(count, mean, sd);
    return noise_rho(pred, truth, key, n, rho, err);
}

/* Standard normal density and distribution. */
static double noise_phi(double z) { return 0.3989422804014327 * exp(-0.5 * z * z); }
static double noise_Phi(double z) { return 0.5 * erfc(-z * 0.7071067811865476); }

/* The running maximum (m, v: mean and variance) with one more normal. */
static void noise_clark(double *m, double *v, double m2, double v2)
{
    double theta = sqrt(*v + v2);
    if (!(theta > 0)) {
        *m = fmax(*m, m2);
        return;
    }
    double a = (*m - m2) / theta, pa = noise_Phi(a), pb = 1 - pa, f = noise_phi(a);
    double e1 = *m * pa + m2 * pb + theta * f;
    double e2 = (*m * *m + *v) * pa + (m2 * m2 + v2) * pb + (*m + m2) * theta * f;
    *m = e1;
    *v = fmax(0, e2 - e1 * e1);
}

/* E[min(X, cap)] for X normal (m, v). */
static double noise_capped(double m, double v, double cap)
{
    if (!(v > 0))
        return fmin(m, cap);
    double s = sqrt(v), z = (cap - m) / s;
    return m - (s * noise_phi(z) + (m - cap) * noise_Phi(-z));
}

/* Groups whose mean lies this many deviations below the warp's highest
 * mean change the maximum by less than 1e-9 of a deviation: left out. */
#define NOISE_REACH 6.0

/* A warp's lanes in groups of equal keys: lane[first[g] .. first[g + 1]). */
typedef struct noise_warp {
    uint32_t lane[32];
    size_t first[33], ngroups;
} noise_warp;

/* The max over group g's k lanes of block b as one normal (*m, *v): each
 * lane N(p + mean, sd^2) of its prediction p's bin, the lanes sharing rho
 * of the variance; Clark's moments for the lanes' own parts. */
static void noise_group(const tmap_bbv_noise *nz, const tmap_bbv *bbv, const noise_warp *g,
                        size_t i, size_t b, double *m, double *v)
{
    size_t nb = bbv->nblocks;
    double rho = nz->rho[b], shared = 0;
    for (size_t j = g->first[i]; j < g->first[i + 1]; j++) {
        double p = bbv->counts[(size_t)g->lane[j] * nb + b];
        size_t k = noise_bin(nz->edge + b * (NB - 1), p);
        double mu = p + nz->mean[b * NB + k], var = nz->sd[b * NB + k] * nz->sd[b * NB + k];
        if (j == g->first[i])
            *m = mu, *v = (1 - rho) * var;
        else
            noise_clark(m, v, mu, (1 - rho) * var);
        shared = fmax(shared, rho * var);
    }
    *v += shared;
}

/* The warp's expected max of block b, at most its cap. */
static double noise_warp_max(const tmap_bbv_noise *nz, const tmap_bbv *bbv, const noise_warp *g,
                             size_t b)
{
    double m[32], v[32], top = -INFINITY;
    for (size_t i = 0; i < g->ngroups; i++) {
        noise_group(nz, bbv, g, i, b, &m[i], &v[i]);
        top = fmax(top, m[i]);
    }
    double mm = top, vv = 0;
    int first = 1;
    for (size_t i = 0; i < g->ngroups; i++) {
        if (m[i] + NOISE_REACH * sqrt(v[i]) < top)
            continue;
        if (first)
            mm = m[i], vv = v[i], first = 0;
        else
            noise_clark(&mm, &vv, m[i], v[i]);
    }
    return noise_capped(mm, vv, nz->cap[b]);
}

/* Warp k's lanes, grouped by key (in order of first appearance). */
static void noise_lanes(const tmap_warp_counts *w, const uint64_t *key, const uint32_t *perm,
                        size_t k, noise_warp *g)
{
    size_t bs = w->block_size, wpb = (bs + 31) / 32;
    size_t first = k / wpb * bs + k % wpb * 32, end = k / wpb * bs + bs;
    end = end < first + 32 ? end : first + 32;
    end = end < w->nthreads ? end : w->nthreads;
    uint32_t in[32];
    size_t n = 0, used = 0;
    for (size_t i = first; i < end; i++)
        in[n++] = perm ? perm[i] : (uint32_t)i;
    int taken[32] = {0};
    g->ngroups = 0;
    for (size_t i = 0; i < n; i++) {
        if (taken[i])
            continue;
        g->first[g->ngroups++] = used;
        for (size_t j = i; j < n; j++)
            if (j == i || (!taken[j] && key && key[in[j]] == key[in[i]]))
                taken[j] = 1, g->lane[used++] = in[j];
    }
    g->first[g->ngroups] = used;
}

tmap_status tmap_noise_warp_counts(const tmap_bbv_noise *nz, const tmap_bbv *bbv,
                                   const uint64_t *key, const uint32_t *perm, tmap_warp_counts *w,
                                   tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, nz, bbv, w);
    if (st)
        return st;
    if (nz->nblocks != bbv->nblocks || w->nblocks != bbv->nblocks || w->nthreads != bbv->nthreads)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_noise_warp_counts: noise of %zu blocks, "
                         "counts of %zu, a BBV of %zu threads and %zu blocks", nz->nblocks,
                         w->nblocks, bbv->nthreads, bbv->nblocks);
    size_t nb = bbv->nblocks;
    noise_warp g;
    for (size_t k = 0; k < w->nwarps; k++) {
        noise_lanes(w, key, perm, k, &g);
        for (size_t b = 0; g.ngroups && b < nb; b++) {
            double e = floor(noise_warp_max(nz, bbv, &g, b) + 0.5);
            uint32_t *c = &w->c[k * nb + b], *a = &w->a[k * nb + b];
            if (e > *c)
                *c = e >= 4294967295.0 ? UINT32_MAX : (uint32_t)e;
            if (*a < *c)
                *a = *c;
        }
    }
    return TMAP_OK;
}

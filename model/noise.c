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
 * the set and off by thousands near it).  Lanes of equal features share
 * the part rho of the variance.  Equal normals are taken together exactly
 * (a table of the maximum of k standard normals), distinct ones by Clark's
 * moment matching.
 */
#include "threadmap/model.h"

#include <assert.h>
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
    return tmap_fnv1a(row, p * sizeof *row);
}

void tmap_noise_keys(const double *features, size_t n, size_t p, uint64_t *key)
{
    for (size_t t = 0; t < n; t++)
        key[t] = tmap_noise_key(features + t * p, p);
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

typedef struct noise_row { uint64_t key; uint32_t i; } noise_row;

static int noise_row_cmp(const void *x, const void *y)
{
    const noise_row *a = x, *b = y;
    return (a->key > b->key) - (a->key < b->key);
}

tmap_status tmap_noise_groups(const uint64_t *key, size_t n, uint32_t *group, size_t *ngroups,
                              tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, group, ngroups);
    if (!st && n && (st = TMAP_NEED(err, key)))
        return st;
    if (st)
        return st;
    if (n > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%zu rows: at most 2^32 - 1", n);
    noise_row *row = malloc((n ? n : 1) * sizeof *row);
    if (!row)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu keys", n);
    for (size_t i = 0; i < n; i++)
        row[i] = (noise_row){key[i], (uint32_t)i};
    qsort(row, n, sizeof *row, noise_row_cmp);
    size_t g = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && row[i].key != row[i - 1].key)
            g++;
        group[row[i].i] = (uint32_t)g;
    }
    *ngroups = n ? g + 1 : 0;
    free(row);
    return TMAP_OK;
}

/* rho: over the rows whose group has two or more, 1 - (the residuals'
 * variance within their groups) / (their variance); 0 where none has. */
static tmap_status noise_rho(const double *pred, const double *truth, const uint32_t *group,
                             size_t ngroups, size_t n, double *rho, tmap_error *err)
{
    *rho = 0;
    if (!group || !n)
        return TMAP_OK;
    double *sum = calloc(ngroups + 1, sizeof *sum);
    size_t *count = calloc(ngroups + 1, sizeof *count);
    if (!sum || !count) {
        free(sum), free(count);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu groups", ngroups);
    }
    for (size_t i = 0; i < n; i++)
        sum[group[i]] += truth[i] - pred[i], count[group[i]]++;
    double sq = 0, s = 0, between = 0, m = 0;
    for (size_t i = 0; i < n; i++)
        if (count[group[i]] > 1) {
            double r = truth[i] - pred[i];
            sq += r * r, s += r, m += 1;
        }
    for (size_t g = 0; g < ngroups; g++)
        if (count[g] > 1)
            between += sum[g] * sum[g] / (double)count[g];
    free(sum), free(count);
    double total = m > 0 ? sq - s * s / m : 0, within = sq - between;
    if (total > 0)
        *rho = fmin(1, fmax(0, 1 - within / total));
    return TMAP_OK;
}

/* The 7 edges: the quantiles k/8 of the predictions, from a sorted sample
 * of at most NOISE_SAMPLE of them (evenly spaced rows). */
#define NOISE_SAMPLE 65536

tmap_status tmap_noise_fit(const double *pred, const double *truth, const uint32_t *group,
                           size_t ngroups, size_t n, double *edge, double *mean, double *sd,
                           double *cap, double *rho, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, edge, mean, sd, cap, rho);
    if (!st && n && (st = TMAP_NEED(err, pred, truth)))
        return st;
    if (st)
        return st;
    size_t ns = n < NOISE_SAMPLE ? n : NOISE_SAMPLE;
    double *sorted = malloc((ns ? ns : 1) * sizeof *sorted);
    if (!sorted)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu predictions", ns);
    for (size_t i = 0; i < ns; i++)
        sorted[i] = pred[i * n / ns];
    qsort(sorted, ns, sizeof *sorted, noise_cmp);
    for (size_t k = 0; k < NB - 1; k++)
        edge[k] = ns ? sorted[(k + 1) * ns / NB < ns ? (k + 1) * ns / NB : ns - 1] : 0;
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
    return noise_rho(pred, truth, group, ngroups, n, rho, err);
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

/* The maximum of k independent standard normals, k = 1..32: its mean and
 * its standard deviation (numerical integration of k phi Phi^(k-1)). */
static const double noise_max_mean[33] = {0,
    0.0000000000, 0.5641895835, 0.8462843753, 1.0293753730, 1.1629644736, 1.2672063606,
    1.3521783756, 1.4236003060, 1.4850131622, 1.5387527308, 1.5864363519, 1.6292276399,
    1.6679901770, 1.7033815541, 1.7359134449, 1.7659913931, 1.7939419809, 1.8200318790,
    1.8444815116, 1.8674750598, 1.8891679149, 1.9096923219, 1.9291617118, 1.9476740743,
    1.9653146098, 1.9821578398, 1.9982693020, 2.0137069241, 2.0285221461, 2.0427608442,
    2.0564640976, 2.0696688279};
static const double noise_max_sd[33] = {0,
    1.0000000000, 0.8256452712, 0.7479754032, 0.7012240989, 0.6689798719, 0.6449241110,
    0.6260333666, 0.6106530466, 0.5977903699, 0.5868081656, 0.5772758809, 0.5688904877,
    0.5614315490, 0.5547342629, 0.5486725529, 0.5431480544, 0.5380827108, 0.5334136573,
    0.5290896004, 0.5250682011, 0.5213141507, 0.5177977277, 0.5144937062, 0.5113805083,
    0.5084395513, 0.5056547295, 0.5030120019, 0.5004990618, 0.4981050691, 0.4958204307,
    0.4936366212, 0.4915460332};

/* A warp's lanes in groups of equal keys: lane[first[g] .. first[g + 1]). */
typedef struct noise_warp {
    uint32_t lane[32];
    size_t first[33], ngroups;
} noise_warp;

/* A normal: mean, variance, and how many independent copies of it. */
typedef struct noise_normal { double m, v; size_t k; } noise_normal;

/* The maximum of x.k independent copies of x, exactly (the table). */
static noise_normal noise_copies(noise_normal x)
{
    assert(x.k >= 1 && x.k <= 32 && x.v >= 0); /* a warp's lanes; a variance */
    double s = noise_max_sd[x.k];
    return (noise_normal){x.m + noise_max_mean[x.k] * sqrt(x.v), x.v * s * s, 1};
}

/* A group of k lanes of one key predicted p in block b as one normal: p
 * plus its bin's mean, the bin's variance, rho of it shared by the lanes. */
static noise_normal noise_group(const tmap_bbv_noise *nz, size_t b, double p, size_t k)
{
    size_t bin = noise_bin(nz->edge + b * (NB - 1), p);
    double var = nz->sd[b * NB + bin] * nz->sd[b * NB + bin], rho = nz->rho[b];
    noise_normal own = noise_copies((noise_normal){p + nz->mean[b * NB + bin], (1 - rho) * var, k});
    return (noise_normal){own.m, own.v + rho * var, 1};
}

/* The warp's expected max of block b, at most its cap.  Groups of equal
 * prediction and size are equal normals, taken together exactly (the
 * table); the distinct ones by Clark's moments.  Lanes of one key have one
 * feature row, hence one prediction; where the thread id's coefficient
 * parts them, the group takes its largest. */
static double noise_warp_max(const tmap_bbv_noise *nz, const tmap_bbv *bbv, const noise_warp *g,
                             size_t b)
{
    size_t nb = bbv->nblocks, u = 0;
    double p[32];
    size_t k[32], copies[32];
    for (size_t i = 0; i < g->ngroups; i++) {
        double q = 0;
        size_t size = g->first[i + 1] - g->first[i], j = 0;
        for (size_t l = g->first[i]; l < g->first[i + 1]; l++)
            q = fmax(q, bbv->counts[(size_t)g->lane[l] * nb + b]);
        while (j < u && !(p[j] == q && k[j] == size))
            j++;
        if (j == u)
            p[u] = q, k[u] = size, copies[u++] = 0;
        copies[j]++;
    }
    noise_normal x[32];
    double top = -INFINITY, m = 0, v = 0;
    for (size_t j = 0; j < u; j++) {
        noise_normal one = noise_group(nz, b, p[j], k[j]);
        x[j] = noise_copies((noise_normal){one.m, one.v, copies[j]});
        top = fmax(top, x[j].m);
    }
    int first = 1;
    for (size_t j = 0; j < u; j++) {
        if (x[j].m + NOISE_REACH * sqrt(x[j].v) < top)
            continue;
        if (first)
            m = x[j].m, v = x[j].v, first = 0;
        else
            noise_clark(&m, &v, x[j].m, x[j].v);
    }
    return noise_capped(m, v, nz->cap[b]);
}

/* The warp's expected executions of block b summed over its lanes: each
 * lane's prediction plus its bin's mean residual, within [0, cap] (the sum
 * of the true counts, whose mean that is). */
static double noise_warp_sum(const tmap_bbv_noise *nz, const tmap_bbv *bbv, const noise_warp *g,
                             size_t b)
{
    size_t nb = bbv->nblocks;
    double sum = 0;
    for (size_t l = 0; l < g->first[g->ngroups]; l++) {
        double p = bbv->counts[(size_t)g->lane[l] * nb + b];
        double m = p + nz->mean[b * NB + noise_bin(nz->edge + b * (NB - 1), p)];
        sum += fmin(nz->cap[b], fmax(0, m));
    }
    return sum;
}

/* A count for a tmap_warp_counts entry: v rounded, within uint32_t. */
static uint32_t noise_count(double v)
{
    v = floor(v + 0.5);
    return v >= 4294967295.0 ? UINT32_MAX : v > 0 ? (uint32_t)v : 0;
}

/* Whether block b's predictions are exact: no bin with a mean or a
 * deviation (the warp's max is then the predicted one). */
static int noise_exact(const tmap_bbv_noise *nz, size_t b)
{
    for (size_t k = 0; k < NB; k++)
        if (nz->mean[b * NB + k] != 0 || nz->sd[b * NB + k] != 0)
            return 0;
    return 1;
}

/* Warp k's lanes, grouped by group (in order of first appearance). */
static void noise_lanes(const tmap_warp_counts *w, const uint32_t *group, const uint32_t *perm,
                        size_t k, noise_warp *g)
{
    uint32_t thread[32], lane_of[32];
    size_t used = 0, n = tmap_warp_counts_lanes(w, group, perm, k, thread, lane_of, &g->ngroups);
    for (size_t j = 0; j < g->ngroups; j++) {
        g->first[j] = used;
        for (size_t i = 0; i < n; i++)
            if (lane_of[i] == j)
                g->lane[used++] = thread[i];
    }
    g->first[g->ngroups] = used;
}

tmap_status tmap_noise_warp_counts(const tmap_bbv_noise *nz, const tmap_bbv *bbv,
                                   const uint32_t *group, const uint32_t *perm, tmap_warp_counts *w,
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
    unsigned char *exact = malloc(nb + 1);
    if (!exact)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu blocks", nb);
    for (size_t b = 0; b < nb; b++)
        exact[b] = (unsigned char)noise_exact(nz, b);
    noise_warp g;
    for (size_t k = 0; k < w->nwarps; k++) {
        noise_lanes(w, group, perm, k, &g);
        for (size_t b = 0; g.ngroups && b < nb; b++) {
            if (exact[b])
                continue;
            uint32_t e = noise_count(noise_warp_max(nz, bbv, &g, b));
            uint32_t *c = &w->c[k * nb + b], *a = &w->a[k * nb + b];
            if (e > *c)
                *c = e;
            *a = noise_count(noise_warp_sum(nz, bbv, &g, b));
            if (*a < *c)
                *a = *c;
        }
    }
    free(exact);
    return TMAP_OK;
}

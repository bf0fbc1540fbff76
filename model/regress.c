/*
 * regress.c -- BBV estimation by regression (Liang et al. eq. 1): for each
 * basic block b, least squares of BBV_t[b] on the thread's input features,
 * its thread id and an intercept, with GSL; k-fold and leave-one-run-out
 * cross-validation; and prediction of BBVs for new features.
 *
 * GSL's error handler is process-global, so it is left alone; instead every
 * input is checked before GSL sees it (dimensions match, rows >= columns,
 * finite values, workspace sized for the matrix), so GSL never reaches an
 * error path that would call the (aborting) default handler, and every GSL
 * return value is still checked.
 */
#include "threadmap/model.h"

#include <assert.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

/* Singular values below this fraction of the largest are truncated. */
#define REGRESS_TSVD_TOL 1e-10

uint64_t tmap_cfg_hash(size_t nblocks, const char *const *names)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a 64 offset basis */
    char num[32];
    int n = snprintf(num, sizeof num, "%zu", nblocks);
    for (int i = 0; i <= n; i++) /* includes the NUL */
        h = (h ^ (unsigned char)num[i]) * 1099511628211ull;
    for (size_t b = 0; b < nblocks; b++) {
        const char *s = names && names[b] ? names[b] : "";
        for (size_t i = 0;; i++) {
            h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
            if (!s[i])
                break;
        }
    }
    return h;
}

/* ------------------------------------------------------------- design */

/* All rows of all runs, stacked: row r has features feat[r*p..] and thread
 * id tid[r]; its counts are y[r][0..nblocks). */
typedef struct design {
    size_t nrows, p, nblocks;
    const double **feat;   /* [nrows] pointers into the runs' features */
    double *tid;           /* [nrows] */
    const uint32_t **y;    /* [nrows] BBV rows */
    size_t *run;           /* [nrows] run index */
} design;

static void design_free(design *d)
{
    free(d->feat);
    free(d->tid);
    free(d->y);
    free(d->run);
}

static tmap_status design_build(const tmap_regress_run *runs, size_t nruns, size_t p,
                                design *d, tmap_error *err)
{
    memset(d, 0, sizeof *d);
    if (!nruns)
        return tmap_fail(err, TMAP_ERR_INVALID, "regression needs at least one profiling run");
    d->p = p;
    d->nblocks = runs[0].bbv->nblocks;
    for (size_t r = 0; r < nruns; r++) {
        if (runs[r].bbv->nblocks != d->nblocks)
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "run %zu: BBV has %zu blocks, run 0 has %zu", r,
                             runs[r].bbv->nblocks, d->nblocks);
        if (p && !runs[r].features && runs[r].bbv->nthreads)
            return tmap_fail(err, TMAP_ERR_INVALID, "run %zu: no features", r);
        d->nrows += runs[r].bbv->nthreads;
    }
    d->feat = malloc((d->nrows ? d->nrows : 1) * sizeof *d->feat);
    d->tid = malloc((d->nrows ? d->nrows : 1) * sizeof *d->tid);
    d->y = malloc((d->nrows ? d->nrows : 1) * sizeof *d->y);
    d->run = malloc((d->nrows ? d->nrows : 1) * sizeof *d->run);
    if (!d->feat || !d->tid || !d->y || !d->run) {
        design_free(d);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu regression rows", d->nrows);
    }
    size_t i = 0;
    for (size_t r = 0; r < nruns; r++)
        for (size_t t = 0; t < runs[r].bbv->nthreads; t++, i++) {
            d->feat[i] = p ? runs[r].features + t * p : NULL;
            for (size_t j = 0; j < p; j++)
                if (!isfinite(d->feat[i][j])) {
                    design_free(d);
                    return tmap_fail(err, TMAP_ERR_INVALID,
                                     "run %zu: feature %zu of thread %zu is not finite", r, j, t);
                }
            d->tid[i] = (double)t;
            d->y[i] = runs[r].bbv->counts + t * d->nblocks;
            d->run[i] = r;
        }
    return TMAP_OK;
}

/* Value of coefficient column j (0 intercept, 1..p features, p+1 tid). */
static double design_x(const design *d, size_t row, size_t j)
{
    if (j == 0)
        return 1.0;
    return j <= d->p ? d->feat[row][j - 1] : d->tid[row];
}

/* ---------------------------------------------------------------- fit */

/* One least-squares problem over a subset of rows, shared by all blocks:
 * every block fits the same X (only y differs), so X is decomposed once. */
typedef struct fit_ctx {
    const design *d;
    const size_t *rows;
    size_t n;
    size_t *cols;  /* kept coefficient columns (intercept always first) */
    size_t ncols;
    size_t rank;   /* singular values above REGRESS_TSVD_TOL of the largest */
    gsl_matrix *X;
    gsl_vector *y, *t, *c;
    gsl_multifit_linear_workspace *w; /* X's column-balanced SVD */
} fit_ctx;

static void fit_free(fit_ctx *f)
{
    free(f->cols);
    if (f->X) gsl_matrix_free(f->X);
    if (f->y) gsl_vector_free(f->y);
    if (f->t) gsl_vector_free(f->t);
    if (f->c) gsl_vector_free(f->c);
    if (f->w) gsl_multifit_linear_free(f->w);
}

/* Keeps the intercept and every column that is not constant over the rows
 * (a constant column is collinear with the intercept; it gets coefficient 0
 * and the intercept absorbs it). */
static tmap_status fit_prepare(fit_ctx *f, const design *d, const size_t *rows, size_t n,
                               tmap_error *err)
{
    memset(f, 0, sizeof *f);
    f->d = d;
    f->rows = rows;
    f->n = n;
    size_t P = d->p + 2;
    f->cols = malloc(P * sizeof *f->cols);
    if (!f->cols)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    f->cols[f->ncols++] = 0;
    for (size_t j = 1; j < P; j++) {
        size_t r = 1;
        while (r < n && design_x(d, rows[r], j) == design_x(d, rows[0], j))
            r++;
        if (r < n)
            f->cols[f->ncols++] = j;
    }
    if (n < f->ncols || n == 0)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "regression needs at least %zu threads for %zu coefficients, got %zu",
                         f->ncols, f->ncols, n);
    /* GSL's default handler aborts the process (on a failed allocation, for
     * one); off, GSL returns codes, which every call here checks.  The
     * handler is process-wide: model.h says so to the host. */
    gsl_set_error_handler_off();
    f->X = gsl_matrix_alloc(n, f->ncols);
    f->y = gsl_vector_alloc(n);
    f->t = gsl_vector_alloc(f->ncols);
    f->c = gsl_vector_alloc(f->ncols);
    f->w = gsl_multifit_linear_alloc(n, f->ncols);
    if (!f->X || !f->y || !f->t || !f->c || !f->w)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for a %zu x %zu regression", n,
                         f->ncols);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < f->ncols; k++)
            gsl_matrix_set(f->X, i, k, design_x(d, rows[i], f->cols[k]));
    int g = gsl_multifit_linear_bsvd(f->X, f->w);
    if (g != GSL_SUCCESS)
        return tmap_fail(err, TMAP_ERR_NUMERIC, "the SVD of the %zu x %zu features failed: %s",
                         n, f->ncols, gsl_strerror(g));
    f->rank = gsl_multifit_linear_rank(REGRESS_TSVD_TOL, f->w);
    return TMAP_OK;
}

/* The truncated-SVD solution from X's decomposition (w->A = U, w->Q, w->S,
 * the balance w->D): c = D^-1 Q_r S_r^-1 U_r^T y, r = f->rank; what
 * gsl_multifit_linear_tsvd computes, without decomposing X again for each
 * block.  Returns chi^2 = |y - X c|^2 and leaves y - X c in f->y. */
static double fit_solve(fit_ctx *f)
{
    const gsl_multifit_linear_workspace *w = f->w;
    assert(f->rank > 0); /* the intercept's column is all ones */
    gsl_vector_view t = gsl_vector_subvector(f->t, 0, f->rank);
    gsl_vector_const_view s = gsl_vector_const_subvector(w->S, 0, f->rank);
    gsl_matrix_const_view q = gsl_matrix_const_submatrix(w->Q, 0, 0, f->ncols, f->rank);
    gsl_blas_dgemv(CblasTrans, 1.0, w->A, f->y, 0.0, f->t);
    gsl_vector_div(&t.vector, &s.vector);
    gsl_blas_dgemv(CblasNoTrans, 1.0, &q.matrix, &t.vector, 0.0, f->c);
    gsl_vector_div(f->c, w->D);
    gsl_blas_dgemv(CblasNoTrans, -1.0, f->X, f->c, 1.0, f->y);
    double chisq;
    gsl_blas_ddot(f->y, f->y, &chisq);
    return chisq;
}

/* Fits block b: coef[0..p+2) (zeros for dropped columns), R^2, RMS, rank. */
static tmap_status fit_block(fit_ctx *f, size_t b, double *coef, double *r2, double *rms,
                             size_t *rank, tmap_error *err)
{
    double mean = 0, tss = 0, *y = f->y->data; /* f->y is contiguous (alloc'ed) */
    for (size_t i = 0; i < f->n; i++)
        mean += y[i] = f->d->y[f->rows[i]][b];
    mean /= (double)f->n;
    for (size_t i = 0; i < f->n; i++)
        tss += (y[i] - mean) * (y[i] - mean);
    double chisq = fit_solve(f);
    memset(coef, 0, (f->d->p + 2) * sizeof *coef);
    for (size_t k = 0; k < f->ncols; k++) {
        coef[f->cols[k]] = gsl_vector_get(f->c, k);
        if (!isfinite(coef[f->cols[k]]))
            return tmap_fail(err, TMAP_ERR_NUMERIC, "block %zu: coefficient %zu is not finite", b,
                             f->cols[k]);
    }
    *rms = sqrt(chisq / (double)f->n);
    *r2 = tss > 0 ? 1.0 - chisq / tss : 1.0;
    *rank = f->rank;
    return TMAP_OK;
}

/* Fits every block on the given rows. */
static tmap_status fit_rows(const design *d, const size_t *rows, size_t n, double *coef,
                            double *r2, double *rms, size_t *rank, tmap_error *err)
{
    fit_ctx f;
    tmap_status s = fit_prepare(&f, d, rows, n, err);
    for (size_t b = 0; !s && b < d->nblocks; b++)
        s = fit_block(&f, b, coef + b * (d->p + 2), &r2[b], &rms[b], &rank[b], err);
    fit_free(&f);
    return s;
}

/* ------------------------------------------------------------- public */

/* Copies n names, or makes "<prefix><i>" / "" when names is NULL. */
static char **regress_names(const char *const *names, size_t n, const char *prefix)
{
    char **v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        char tmp[32];
        const char *s = names && names[i] ? names[i] : tmp;
        snprintf(tmp, sizeof tmp, "%s%zu", prefix, i);
        if (!names && !*prefix)
            s = "";
        if (!(v[i] = strdup(s))) {
            tmap_names_free(v, n);
            return NULL;
        }
    }
    return v;
}

/* The rounded, clamped prediction of eq. 1 for one thread. */
static uint32_t regress_predict_one(const double *coef, size_t p, const double *feat,
                                    double tid)
{
    double v = coef[0] + coef[p + 1] * tid;
    for (size_t j = 0; j < p; j++)
        v += coef[j + 1] * feat[j];
    v = floor(v + 0.5);
    if (!(v > 0))
        return 0; /* negative, zero or NaN */
    return v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
}

/* The noise of every block (tmap_noise_fit) on the training rows. */
static tmap_status regress_noise(const design *d, const double *coef, tmap_bbv_noise *nz,
                                 tmap_error *err)
{
    size_t B = d->nblocks, P = d->p + 2, n = d->nrows;
    double *pred = malloc((n ? n : 1) * sizeof *pred), *truth = malloc((n ? n : 1) * sizeof *truth);
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    uint32_t *group = malloc((n ? n : 1) * sizeof *group);
    size_t ngroups = 0;
    tmap_status s = pred && truth && key && group
                        ? tmap_noise_create(nz, B, err)
                        : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the residuals");
    for (size_t i = 0; !s && i < n; i++)
        key[i] = tmap_noise_key(d->feat[i], d->p);
    if (!s)
        s = tmap_noise_groups(key, n, group, &ngroups, err);
    for (size_t b = 0; !s && b < B; b++) {
        for (size_t i = 0; i < n; i++) {
            pred[i] = regress_predict_one(coef + b * P, d->p, d->feat[i], d->tid[i]);
            truth[i] = d->y[i][b];
        }
        s = tmap_noise_fit(pred, truth, group, ngroups, n, nz->edge + b * (TMAP_NOISE_BINS - 1),
                           nz->mean + b * TMAP_NOISE_BINS, nz->sd + b * TMAP_NOISE_BINS,
                           nz->cap + b, nz->rho + b, err);
    }
    free(pred);
    free(truth);
    free(key);
    free(group);
    return s;
}

void tmap_predictor_free(tmap_predictor *p)
{
    if (!p)
        return;
    free(p->kernel);
    tmap_names_free(p->block_names, p->nblocks);
    tmap_names_free(p->feature_names, p->nfeatures);
    free(p->coef);
    free(p->r2);
    free(p->rms);
    free(p->rank);
    tmap_noise_free(&p->noise);
    memset(p, 0, sizeof *p);
}

tmap_status tmap_regress_fit(const tmap_regress_run *runs, size_t nruns,
                             size_t nfeatures, const char *kernel,
                             const char *const *block_names,
                             const char *const *feature_names,
                             tmap_predictor *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, runs, out);
    if (absent)
        return absent;
    memset(out, 0, sizeof *out);
    design d;
    tmap_status s = design_build(runs, nruns, nfeatures, &d, err);
    if (s)
        return s;
    size_t B = d.nblocks, P = nfeatures + 2;
    tmap_predictor p = {0};
    size_t *rows = malloc((d.nrows ? d.nrows : 1) * sizeof *rows);
    p.kernel = strdup(kernel ? kernel : "");
    p.nblocks = B;
    p.nfeatures = nfeatures;
    p.block_names = regress_names(block_names, B, "");
    p.feature_names = regress_names(feature_names, nfeatures, "f");
    p.coef = calloc(B ? B * P : 1, sizeof *p.coef);
    p.r2 = calloc(B ? B : 1, sizeof *p.r2);
    p.rms = calloc(B ? B : 1, sizeof *p.rms);
    p.rank = calloc(B ? B : 1, sizeof *p.rank);
    if (!rows || !p.kernel || !p.block_names || !p.feature_names || !p.coef || !p.r2 || !p.rms ||
        !p.rank)
        s = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the predictor");
    for (size_t i = 0; !s && i < d.nrows; i++)
        rows[i] = i;
    if (!s)
        s = fit_rows(&d, rows, d.nrows, p.coef, p.r2, p.rms, p.rank, err);
    if (!s)
        s = regress_noise(&d, p.coef, &p.noise, err);
    p.cfg_hash = tmap_cfg_hash(B, (const char *const *)p.block_names);
    free(rows);
    design_free(&d);
    if (s) {
        tmap_predictor_free(&p);
        return s;
    }
    *out = p;
    return TMAP_OK;
}

tmap_status tmap_predict(const tmap_predictor *p, const double *features,
                         size_t nthreads, tmap_bbv *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, p, features, out);
    if (absent)
        return absent;
    for (size_t i = 0; i < nthreads * p->nfeatures; i++)
        if (!isfinite(features[i]))
            return tmap_fail(err, TMAP_ERR_INVALID, "feature %zu of thread %zu is not finite",
                             i % p->nfeatures, i / p->nfeatures);
    tmap_status s = tmap_bbv_create(out, nthreads, p->nblocks, err);
    if (s)
        return s;
    size_t P = p->nfeatures + 2;
    for (size_t t = 0; t < nthreads; t++)
        for (size_t b = 0; b < p->nblocks; b++)
            out->counts[t * p->nblocks + b] = regress_predict_one(
                p->coef + b * P, p->nfeatures, features + t * p->nfeatures, (double)t);
    return TMAP_OK;
}

/* ------------------------------------------------------ cross-validation */

void tmap_cv_result_free(tmap_cv_result *r)
{
    if (!r)
        return;
    free(r->rms);
    memset(r, 0, sizeof *r);
}

/* Trains on the rows outside fold f and adds the held-out squared errors. */
static tmap_status cv_fold(const design *d, size_t f, size_t k, int by_run, size_t *train,
                           double *coef, double *scratch, size_t *rank, double *sse,
                           tmap_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < d->nrows; i++)
        if ((by_run ? d->run[i] : i % k) != f)
            train[n++] = i;
    tmap_status s = fit_rows(d, train, n, coef, scratch, scratch + d->nblocks, rank, err);
    if (s) {
        tmap_error_prefix(err, "cross-validation fold %zu", f);
        return s;
    }
    size_t P = d->p + 2;
    for (size_t i = 0; i < d->nrows; i++) {
        if ((by_run ? d->run[i] : i % k) != f)
            continue;
        for (size_t b = 0; b < d->nblocks; b++) {
            double e = (double)regress_predict_one(coef + b * P, d->p, d->feat[i], d->tid[i]) -
                       (double)d->y[i][b];
            sse[b] += e * e;
        }
    }
    return TMAP_OK;
}

tmap_status tmap_regress_cv(const tmap_regress_run *runs, size_t nruns,
                            size_t nfeatures, size_t k, int by_run,
                            tmap_cv_result *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, runs, out);
    if (absent)
        return absent;
    memset(out, 0, sizeof *out);
    if (by_run && nruns < 2)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "leave-one-run-out cross-validation needs at least 2 runs");
    design d;
    tmap_status s = design_build(runs, nruns, nfeatures, &d, err);
    if (s)
        return s;
    size_t folds = by_run ? nruns : k;
    if (!by_run && (k < 2 || k > d.nrows)) {
        design_free(&d);
        return tmap_fail(err, TMAP_ERR_INVALID, "%zu folds for %zu threads: need 2 <= k <= threads",
                         k, d.nrows);
    }
    size_t B = d.nblocks, P = nfeatures + 2;
    size_t *train = malloc((d.nrows ? d.nrows : 1) * sizeof *train);
    size_t *rank = malloc((B ? B : 1) * sizeof *rank);
    double *coef = malloc((B ? B * P : 1) * sizeof *coef);
    double *scratch = malloc((B ? 2 * B : 1) * sizeof *scratch);
    double *sse = calloc(B ? B : 1, sizeof *sse);
    if (!train || !rank || !coef || !scratch || !sse)
        s = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for cross-validation");
    for (size_t f = 0; !s && f < folds; f++)
        s = cv_fold(&d, f, k, by_run, train, coef, scratch, rank, sse, err);
    double total = 0;
    for (size_t b = 0; !s && b < B; b++) {
        total += sse[b];
        sse[b] = sqrt(sse[b] / (double)d.nrows);
    }
    if (!s) {
        out->nblocks = B;
        out->rms = sse;
        out->total_rms = B && d.nrows ? sqrt(total / ((double)B * (double)d.nrows)) : 0;
        out->folds = folds;
        out->by_run = by_run != 0;
        sse = NULL;
    }
    free(train);
    free(rank);
    free(coef);
    free(scratch);
    free(sse);
    design_free(&d);
    return s;
}

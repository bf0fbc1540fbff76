/*
 * predictor.c -- the predictor file: a versioned, checksummed text file that
 * holds the eq. 1 coefficients of one kernel, tied to its CFG by a hash of
 * the block count and names.  Loading refuses a corrupt file (checksum), a
 * file for another kernel, or one for a different block count or CFG.
 *
 * Layout (one item per line, fields separated by one space):
 *   threadmap-predictor
 *   version 1
 *   kernel NAME
 *   cfg_hash HEX16
 *   nblocks B
 *   nfeatures P
 *   feature I NAME          (P lines)
 *   block B NAME            (B lines; "-" stands for an empty name)
 *   coef B C0 ... C(P+1)    (B lines, %.17g)
 *   fit B R2 RMS RANK       (B lines)
 *   checksum HEX16          (FNV-1a 64 of every byte before this line)
 */
#include "threadmap/model.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

#define PRED_MAGIC "threadmap-predictor"
#define PRED_VERSION 2 /* 2: the noise lines; 1 is read too */
#define PRED_NOISE (3 * TMAP_NOISE_BINS + 1) /* a noise line: edges, means, deviations, cap, rho */

/* A name is written as one token: non-empty, printable, no whitespace. */
static int pred_name_ok(const char *s)
{
    for (; *s; s++)
        if (!isgraph((unsigned char)*s))
            return 0;
    return 1;
}

static tmap_status pred_check_name(const char *path, const char *what, size_t i,
                                   const char *s, tmap_error *err)
{
    if (!pred_name_ok(s) || !strcmp(s, "-"))
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: %s %zu '%s' contains whitespace or is '-' (not storable)", path,
                         what, i, s);
    return TMAP_OK;
}

tmap_status tmap_predictor_save(const char *path, const tmap_predictor *p,
                                tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, p);
    if (absent)
        return absent;
    tmap_status s = pred_check_name(path, "kernel name", 0, p->kernel, err);
    if (!s && !*p->kernel)
        s = tmap_fail(err, TMAP_ERR_INVALID, "%s: the predictor has no kernel name", path);
    for (size_t i = 0; !s && i < p->nfeatures; i++)
        s = pred_check_name(path, "feature", i, p->feature_names[i], err);
    for (size_t b = 0; !s && b < p->nblocks; b++)
        s = pred_check_name(path, "block", b, p->block_names[b], err);
    if (s)
        return s;
    tmap_buf buf = {0};
    locale_t old = tmap_locale_c();
    int noise = p->noise.nblocks == p->nblocks && p->nblocks;
    tmap_buf_printf(&buf, PRED_MAGIC "\nversion %d\nkernel %s\ncfg_hash %016" PRIx64
                          "\nnblocks %zu\nnfeatures %zu\n",
                    noise ? PRED_VERSION : 1, p->kernel, p->cfg_hash, p->nblocks, p->nfeatures);
    for (size_t i = 0; i < p->nfeatures; i++)
        tmap_buf_printf(&buf, "feature %zu %s\n", i, p->feature_names[i]);
    for (size_t b = 0; b < p->nblocks; b++)
        tmap_buf_printf(&buf, "block %zu %s\n", b, *p->block_names[b] ? p->block_names[b] : "-");
    size_t P = p->nfeatures + 2;
    for (size_t b = 0; b < p->nblocks; b++) {
        tmap_buf_printf(&buf, "coef %zu", b);
        for (size_t j = 0; j < P; j++)
            tmap_buf_printf(&buf, " %.17g", p->coef[b * P + j]);
        tmap_buf_puts(&buf, "\n");
    }
    for (size_t b = 0; b < p->nblocks; b++)
        tmap_buf_printf(&buf, "fit %zu %.17g %.17g %zu\n", b, p->r2[b], p->rms[b], p->rank[b]);
    for (size_t b = 0; noise && b < p->nblocks; b++) {
        const double *e = p->noise.edge + b * (TMAP_NOISE_BINS - 1);
        tmap_buf_printf(&buf, "noise %zu", b);
        for (size_t k = 0; k < TMAP_NOISE_BINS - 1; k++)
            tmap_buf_printf(&buf, " %.17g", e[k]);
        for (size_t k = 0; k < TMAP_NOISE_BINS; k++)
            tmap_buf_printf(&buf, " %.17g", p->noise.mean[b * TMAP_NOISE_BINS + k]);
        for (size_t k = 0; k < TMAP_NOISE_BINS; k++)
            tmap_buf_printf(&buf, " %.17g", p->noise.sd[b * TMAP_NOISE_BINS + k]);
        tmap_buf_printf(&buf, " %.17g %.17g\n", p->noise.cap[b], p->noise.rho[b]);
    }
    if (!buf.oom)
        tmap_buf_printf(&buf, "checksum %016" PRIx64 "\n", tmap_fnv1a(buf.data, buf.len));
    tmap_locale_restore(old);
    if (buf.oom) {
        tmap_buf_free(&buf);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    }
    s = tmap_file_write(path, buf.data, buf.len, err);
    tmap_buf_free(&buf);
    return s;
}

/* ------------------------------------------------------------- loading */

/* A cursor over the file's lines; tokens are split in place. */
typedef struct pred_reader {
    const char *path;
    char *p, *end;
    unsigned line;
    size_t ntok;
    char **big;      /* tokens of a long line (coef), malloc'ed */
    size_t bigcap;
    size_t version;
} pred_reader;

/* Reads the next line and splits it at single spaces into tokens. */
static tmap_status pred_next(pred_reader *r, const char *want, size_t ntok, tmap_error *err)
{
    if (r->p >= r->end)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: unexpected end of file (expected '%s')",
                         r->path, r->line + 1, want);
    char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!nl)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: line not terminated", r->path, r->line + 1);
    *nl = '\0';
    r->line++;
    r->ntok = 0;
    for (char *t = r->p; t;) {
        if (tmap_grow(&r->big, &r->bigcap, r->ntok + 1, sizeof *r->big))
            return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", r->path);
        r->big[r->ntok++] = t;
        t = strchr(t, ' ');
        if (t)
            *t++ = '\0';
    }
    r->p = nl + 1;
    if (strcmp(r->big[0], want) || r->ntok != ntok)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: expected '%s' with %zu fields", r->path,
                         r->line, want, ntok - 1);
    return TMAP_OK;
}

static tmap_status pred_size(pred_reader *r, const char *tok, size_t *v, tmap_error *err)
{
    char *end;
    if (!isdigit((unsigned char)*tok))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: '%s' is not a count", r->path, r->line, tok);
    unsigned long long x = strtoull(tok, &end, 10);
    if (*end || x > (1ull << 32))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: '%s' is not a count", r->path, r->line, tok);
    *v = (size_t)x;
    return TMAP_OK;
}

static tmap_status pred_double(pred_reader *r, const char *tok, double *v, tmap_error *err)
{
    char *end;
    *v = tmap_strtod(tok, &end);
    if (!*tok || *end || !isfinite(*v))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: '%s' is not a finite number", r->path,
                         r->line, tok);
    return TMAP_OK;
}

/* Reads "WHAT I NAME" for i = 0..n-1 into names. */
static tmap_status pred_names(pred_reader *r, const char *what, size_t n, char **names,
                              tmap_error *err)
{
    for (size_t i = 0; i < n; i++) {
        size_t idx;
        tmap_status s = pred_next(r, what, 3, err);
        if (!s)
            s = pred_size(r, r->big[1], &idx, err);
        if (!s && idx != i)
            s = tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: expected %s %zu", r->path, r->line, what, i);
        if (s)
            return s;
        names[i] = strdup(strcmp(r->big[2], "-") ? r->big[2] : "");
        if (!names[i])
            return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", r->path);
    }
    return TMAP_OK;
}

/* Reads "WHAT B v1 .. vn" lines for every block into vals[b*n..]. */
static tmap_status pred_rows(pred_reader *r, const char *what, size_t nb, size_t n,
                             double *vals, tmap_error *err)
{
    for (size_t b = 0; b < nb; b++) {
        size_t idx;
        tmap_status s = pred_next(r, what, n + 2, err);
        if (!s)
            s = pred_size(r, r->big[1], &idx, err);
        if (!s && idx != b)
            s = tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: expected %s %zu", r->path, r->line, what, b);
        for (size_t j = 0; !s && j < n; j++)
            s = pred_double(r, r->big[j + 2], &vals[b * n + j], err);
        if (s)
            return s;
    }
    return TMAP_OK;
}

/* Verifies the checksum line and cuts it off (r->end then excludes it). */
static tmap_status pred_checksum(pred_reader *r, char *text, size_t len, tmap_error *err)
{
    if (len < 2 || text[len - 1] != '\n')
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: truncated (no final checksum line)", r->path);
    char *last = text + len - 1;
    while (last > text && last[-1] != '\n')
        last--;
    uint64_t want;
    char hex[17];
    if (strncmp(last, "checksum ", 9) || (size_t)(text + len - 1 - (last + 9)) != 16)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: truncated or corrupt (no final checksum line)",
                         r->path);
    memcpy(hex, last + 9, 16);
    hex[16] = '\0';
    char *end;
    want = strtoull(hex, &end, 16);
    if (*end || tmap_fnv1a(text, (size_t)(last - text)) != want)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: checksum mismatch: the file is corrupt",
                         r->path);
    r->end = last;
    return TMAP_OK;
}

/* Parses the header lines up to the counts. */
static tmap_status pred_header(pred_reader *r, tmap_predictor *p, tmap_error *err)
{
    size_t ver;
    tmap_status s = pred_next(r, PRED_MAGIC, 1, err);
    if (s)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: not a threadmap predictor file", r->path);
    if ((s = pred_next(r, "version", 2, err)) || (s = pred_size(r, r->big[1], &ver, err)))
        return s;
    if (ver < 1 || ver > PRED_VERSION)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: predictor format version %zu (this build "
                         "reads 1 to %d)", r->path, r->line, ver, PRED_VERSION);
    r->version = ver;
    if ((s = pred_next(r, "kernel", 2, err)))
        return s;
    if (!(p->kernel = strdup(r->big[1])))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if ((s = pred_next(r, "cfg_hash", 2, err)))
        return s;
    char *end;
    p->cfg_hash = strtoull(r->big[1], &end, 16);
    if (*end || strlen(r->big[1]) != 16)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: bad cfg_hash", r->path, r->line);
    if ((s = pred_next(r, "nblocks", 2, err)) || (s = pred_size(r, r->big[1], &p->nblocks, err)))
        return s;
    if ((s = pred_next(r, "nfeatures", 2, err)) ||
        (s = pred_size(r, r->big[1], &p->nfeatures, err)))
        return s;
    if (p->nfeatures > 4096)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: %zu features is implausible", r->path,
                         r->line, p->nfeatures);
    return TMAP_OK;
}

/* The noise lines (version 2): per block the bins' edges (ascending), the
 * residuals' means, their deviations (>= 0), the cap (>= 0) and rho (in
 * [0, 1]), all finite. */
static tmap_status pred_noise(pred_reader *r, tmap_predictor *p, tmap_error *err)
{
    size_t B = p->nblocks, N = TMAP_NOISE_BINS;
    double *v = malloc((B ? B * PRED_NOISE : 1) * sizeof *v);
    tmap_status s = v ? tmap_noise_create(&p->noise, B, err)
                      : tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", r->path);
    if (!s)
        s = pred_rows(r, "noise", B, PRED_NOISE, v, err);
    for (size_t b = 0; !s && b < B; b++) {
        const double *x = v + b * PRED_NOISE;
        for (size_t k = 0; !s && k < PRED_NOISE; k++)
            if (!isfinite(x[k]) || (k >= 2 * N - 1 && x[k] < 0) ||
                (k > 0 && k < N - 1 && x[k] < x[k - 1]) || (k == 3 * N && x[k] > 1))
                s = tmap_fail(err, TMAP_ERR_FORMAT, "%s: noise %zu: value %zu (%g) is not finite, "
                              "an edge below the last, a negative deviation or cap, or a rho "
                              "outside [0, 1]", r->path, b, k, x[k]);
        memcpy(p->noise.edge + b * (N - 1), x, (N - 1) * sizeof *x);
        memcpy(p->noise.mean + b * N, x + N - 1, N * sizeof *x);
        memcpy(p->noise.sd + b * N, x + 2 * N - 1, N * sizeof *x);
        p->noise.cap[b] = x[3 * N - 1];
        p->noise.rho[b] = x[3 * N];
    }
    free(v);
    return s;
}

/* Parses everything after the checksum was verified. */
static tmap_status pred_body(pred_reader *r, tmap_predictor *p, tmap_error *err)
{
    tmap_status s = pred_header(r, p, err);
    if (s)
        return s;
    size_t B = p->nblocks, P = p->nfeatures + 2;
    /* a block takes three lines, at least 2P + 24 bytes: refuse a count that
     * the file cannot hold before allocating for it */
    if (B > (size_t)(r->end - r->p) / (2 * P + 24))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: nblocks %zu with %zu features does not fit "
                         "in the %zu bytes left", r->path, B, p->nfeatures,
                         (size_t)(r->end - r->p));
    p->feature_names = calloc(p->nfeatures ? p->nfeatures : 1, sizeof *p->feature_names);
    p->block_names = calloc(B ? B : 1, sizeof *p->block_names);
    p->coef = calloc(B ? B * P : 1, sizeof *p->coef);
    p->r2 = calloc(B ? B : 1, sizeof *p->r2);
    p->rms = calloc(B ? B : 1, sizeof *p->rms);
    p->rank = calloc(B ? B : 1, sizeof *p->rank);
    double *fit = calloc(B ? 3 * B : 1, sizeof *fit);
    if (!p->feature_names || !p->block_names || !p->coef || !p->r2 || !p->rms || !p->rank || !fit)
        s = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", r->path);
    if (!s)
        s = pred_names(r, "feature", p->nfeatures, p->feature_names, err);
    if (!s)
        s = pred_names(r, "block", B, p->block_names, err);
    if (!s)
        s = pred_rows(r, "coef", B, P, p->coef, err);
    if (!s)
        s = pred_rows(r, "fit", B, 3, fit, err);
    if (!s && r->version >= 2)
        s = pred_noise(r, p, err);
    for (size_t b = 0; !s && b < B; b++) {
        double rank = fit[3 * b + 2];
        if (!(rank >= 0 && rank <= (double)P && rank == floor(rank)))
            s = tmap_fail(err, TMAP_ERR_FORMAT, "%s: block %zu: rank %g is not a count from 0 "
                          "to %zu", r->path, b, rank, P);
        p->r2[b] = fit[3 * b];
        p->rms[b] = fit[3 * b + 1];
        p->rank[b] = s ? 0 : (size_t)rank;
    }
    free(fit);
    if (!s && r->p != r->end)
        s = tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: unexpected text before the checksum", r->path,
                      r->line + 1);
    if (!s && tmap_cfg_hash(B, (const char *const *)p->block_names) != p->cfg_hash)
        s = tmap_fail(err, TMAP_ERR_FORMAT, "%s: cfg_hash does not match the block names", r->path);
    return s;
}

/* Checks the loaded predictor against what the caller expects. */
static tmap_status pred_expect(const char *path, const tmap_predictor *p, const char *kernel,
                               size_t nblocks, const char *const *names, tmap_error *err)
{
    if (kernel && strcmp(kernel, p->kernel))
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: predictor is for kernel '%s', not '%s'", path,
                         p->kernel, kernel);
    if (nblocks && nblocks != p->nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: predictor has %zu blocks but the kernel's CFG has %zu", path,
                         p->nblocks, nblocks);
    if (names && tmap_cfg_hash(p->nblocks, names) != p->cfg_hash)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: predictor was fitted on a different CFG (block names differ)", path);
    return TMAP_OK;
}

tmap_status tmap_predictor_load(const char *path, const char *kernel, size_t nblocks,
                                const char *const *block_names, tmap_predictor *out,
                                tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, out);
    if (absent)
        return absent;
    memset(out, 0, sizeof *out);
    char *text;
    size_t len;
    tmap_status s = tmap_file_read(path, &text, &len, err);
    if (s)
        return s;
    pred_reader r = {.path = path, .p = text, .end = text + len};
    tmap_predictor p = {0};
    if (memchr(text, '\0', len))
        s = tmap_fail(err, TMAP_ERR_FORMAT, "%s: binary data: not a predictor file", path);
    if (!s)
        s = pred_checksum(&r, text, len, err);
    if (!s)
        s = pred_body(&r, &p, err);
    if (!s)
        s = pred_expect(path, &p, kernel, nblocks, block_names, err);
    free(r.big);
    free(text);
    if (s) {
        tmap_predictor_free(&p);
        return s;
    }
    *out = p;
    return TMAP_OK;
}

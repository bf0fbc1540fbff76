/*
 * test_regress.c -- eq. 1 regression: planted coefficients are recovered,
 * constant and collinear feature columns, cross-validation, prediction,
 * and the predictor file (roundtrip, corruption, wrong kernel / CFG).
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include "tests/testutil.h"

#include "common/base.h"
#include "threadmap/model.h"

#define DIR TMAP_BINARY_DIR "/"
#define P 3 /* features: f0, f1 and the constant f2 */
#define B 3 /* blocks */

/* Planted model: block 0 = 3 + 2 f0 + tid; block 1 = 5 f1; block 2 = 7. */
static const double planted[B][P + 2] = {
    {3, 2, 0, 0, 1},
    {0, 0, 5, 0, 0},
    {7, 0, 0, 0, 0},
};

static void make_run(size_t n, unsigned seed, double *feat, tmap_bbv *bbv)
{
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(bbv, n, B, &err), TMAP_OK);
    for (size_t t = 0; t < n; t++) {
        double *f = feat + t * P;
        f[0] = (double)((t * 7 + seed) % 13);
        f[1] = (double)((t * t + seed) % 11);
        f[2] = 4;
        for (size_t b = 0; b < B; b++) {
            double v = planted[b][0] + planted[b][P + 1] * (double)t;
            for (size_t j = 0; j < P; j++)
                v += planted[b][j + 1] * f[j];
            bbv->counts[t * B + b] = (uint32_t)v;
        }
    }
}

static const char *bnames[B] = {"k/$L__BB0_0", "k/$L__BB0_1", "k/$L__BB0_2"};

static void fit(tmap_predictor *pr)
{
    double feat[50 * P];
    tmap_bbv bbv;
    make_run(50, 1, feat, &bbv);
    tmap_regress_run run = {feat, &bbv};
    tmap_error err = {0};
    const char *fn[P] = {"degree", "flag", "const"};
    tmap_status s = tmap_regress_fit(&run, 1, P, "k", bnames, fn, pr, &err);
    if (s)
        fail_msg("%s", err.message);
    tmap_bbv_free(&bbv);
}

static void test_planted_recovered(void **state)
{
    (void)state;
    tmap_predictor pr;
    fit(&pr);
    for (size_t b = 0; b < B; b++) {
        for (size_t j = 0; j < P + 2; j++)
            if (fabs(pr.coef[b * (P + 2) + j] - planted[b][j]) > 1e-9)
                fail_msg("block %zu coef %zu: %.17g, planted %g", b, j, pr.coef[b * (P + 2) + j],
                         planted[b][j]);
        assert_true(pr.r2[b] > 1 - 1e-12);
        assert_true(pr.rms[b] < 1e-9);
    }
    /* The constant feature was dropped: exactly 0. */
    assert_true(pr.coef[0 * (P + 2) + 3] == 0);
    assert_string_equal(pr.feature_names[0], "degree");
    /* Prediction on new threads (another "input"). */
    double feat[20 * P];
    tmap_bbv want, got;
    make_run(20, 5, feat, &want);
    tmap_error err = {0};
    assert_int_equal(tmap_predict(&pr, feat, 20, &got, &err), TMAP_OK);
    assert_memory_equal(got.counts, want.counts, 20 * B * sizeof(uint32_t));
    tmap_bbv_free(&want);
    tmap_bbv_free(&got);
    tmap_predictor_free(&pr);
}

static void test_collinear_and_clamp(void **state)
{
    (void)state;
    /* f0 equals the thread id: rank deficient; TSVD still fits exactly. */
    enum { N = 40 };
    double feat[N];
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, N, 1, &err), TMAP_OK);
    for (size_t t = 0; t < N; t++) {
        feat[t] = (double)t;
        bbv.counts[t] = (uint32_t)(2 * t + 1);
    }
    tmap_regress_run run = {feat, &bbv};
    tmap_predictor pr;
    assert_int_equal(tmap_regress_fit(&run, 1, 1, "k", NULL, NULL, &pr, &err), TMAP_OK);
    assert_int_equal(pr.rank[0], 2);
    assert_true(pr.rms[0] < 1e-9);
    assert_string_equal(pr.feature_names[0], "f0");
    /* f0 + tid together carry the slope 2. */
    assert_true(fabs(pr.coef[1] + pr.coef[2] - 2) < 1e-9);
    /* Negative predictions clamp to 0; values round to nearest. */
    double nf[3] = {-10, 0, 0};
    tmap_bbv out;
    assert_int_equal(tmap_predict(&pr, nf, 3, &out, &err), TMAP_OK);
    assert_int_equal(out.counts[0], 0);  /* 2*(-10)/2... + tid 0 -> negative */
    assert_int_equal(out.counts[1], 2);  /* f0 = 0, tid 1: 1 + coef[2] */
    tmap_bbv_free(&out);
    nf[0] = NAN;
    assert_int_equal(tmap_predict(&pr, nf, 3, &out, &err), TMAP_ERR_INVALID);
    tmap_predictor_free(&pr);
    /* Too few threads for the coefficients. */
    bbv.nthreads = 1; /* one row: every column is constant, intercept only */
    assert_int_equal(tmap_regress_fit(&run, 1, 1, "k", NULL, NULL, &pr, &err), TMAP_OK);
    assert_true(pr.coef[0] == 1 && pr.coef[1] == 0 && pr.coef[2] == 0);
    tmap_predictor_free(&pr);
    bbv.nthreads = 0;
    assert_int_equal(tmap_regress_fit(&run, 1, 1, "k", NULL, NULL, &pr, &err), TMAP_ERR_INVALID);
    bbv.nthreads = N;
    feat[3] = INFINITY;
    assert_int_equal(tmap_regress_fit(&run, 1, 1, "k", NULL, NULL, &pr, &err), TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "not finite"));
    tmap_bbv_free(&bbv);
}

static void test_cross_validation(void **state)
{
    (void)state;
    double f1[50 * P], f2[30 * P];
    tmap_bbv b1, b2;
    make_run(50, 1, f1, &b1);
    make_run(30, 4, f2, &b2);
    tmap_regress_run runs[2] = {{f1, &b1}, {f2, &b2}};
    tmap_cv_result cv;
    tmap_error err = {0};
    assert_int_equal(tmap_regress_cv(runs, 2, P, 5, 0, &cv, &err), TMAP_OK);
    assert_int_equal(cv.folds, 5);
    assert_true(cv.total_rms < 1e-9);
    tmap_cv_result_free(&cv);
    assert_int_equal(tmap_regress_cv(runs, 2, P, 0, 1, &cv, &err), TMAP_OK);
    assert_int_equal(cv.folds, 2);
    assert_true(cv.by_run);
    assert_true(cv.total_rms < 1e-9);
    tmap_cv_result_free(&cv);
    /* Noise shows up in the held-out error. */
    b1.counts[10 * B + 1] += 40;
    assert_int_equal(tmap_regress_cv(runs, 2, P, 4, 0, &cv, &err), TMAP_OK);
    assert_true(cv.rms[1] > 1);
    assert_true(cv.rms[2] < 1e-9);
    tmap_cv_result_free(&cv);
    assert_int_equal(tmap_regress_cv(runs, 1, P, 0, 1, &cv, &err), TMAP_ERR_INVALID);
    assert_int_equal(tmap_regress_cv(runs, 2, P, 1, 0, &cv, &err), TMAP_ERR_INVALID);
    tmap_bbv_free(&b1);
    tmap_bbv_free(&b2);
}

static void test_predictor_file(void **state)
{
    (void)state;
    tmap_predictor pr, back;
    fit(&pr);
    tmap_error err = {0};
    const char *path = DIR "k.predictor";
    assert_int_equal(tmap_predictor_save(path, &pr, &err), TMAP_OK);
    assert_int_equal(tmap_predictor_load(path, "k", B, bnames, &back, &err), TMAP_OK);
    assert_string_equal(back.kernel, "k");
    assert_int_equal(back.nblocks, B);
    assert_int_equal(back.nfeatures, P);
    assert_true(back.cfg_hash == pr.cfg_hash);
    assert_memory_equal(back.coef, pr.coef, B * (P + 2) * sizeof(double));
    assert_memory_equal(back.r2, pr.r2, B * sizeof(double));
    assert_string_equal(back.feature_names[1], "flag");
    assert_string_equal(back.block_names[2], "k/$L__BB0_2");
    /* the residuals by predicted value, exactly (version 2) */
    assert_int_equal(back.noise.nblocks, B);
    assert_memory_equal(back.noise.edge, pr.noise.edge, B * (TMAP_NOISE_BINS - 1) * sizeof(double));
    assert_memory_equal(back.noise.mean, pr.noise.mean, B * TMAP_NOISE_BINS * sizeof(double));
    assert_memory_equal(back.noise.sd, pr.noise.sd, B * TMAP_NOISE_BINS * sizeof(double));
    assert_memory_equal(back.noise.cap, pr.noise.cap, B * sizeof(double));
    assert_memory_equal(back.noise.rho, pr.noise.rho, B * sizeof(double));
    tmap_predictor_free(&back);
    /* Another kernel, another block count, another CFG. */
    assert_int_equal(tmap_predictor_load(path, "other", 0, NULL, &back, &err), TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "for kernel 'k', not 'other'"));
    assert_int_equal(tmap_predictor_load(path, NULL, 4, NULL, &back, &err), TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "3 blocks but the kernel's CFG has 4"));
    const char *other[B] = {"k/$L__BB0_0", "k/$L__BB0_1", "k/$L__BB0_9"};
    assert_int_equal(tmap_predictor_load(path, NULL, 0, other, &back, &err), TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "different CFG"));
    /* Flip one byte anywhere before the checksum: refused. */
    char *text;
    size_t len;
    assert_int_equal(tmap_file_read(path, &text, &len, &err), TMAP_OK);
    for (size_t i = 0; i < len - 30; i += 7) {
        text[i] ^= 0x01;
        assert_int_equal(tmap_file_write(DIR "bad.predictor", text, len, &err), TMAP_OK);
        assert_int_not_equal(tmap_predictor_load(DIR "bad.predictor", NULL, 0, NULL, &back, &err),
                             TMAP_OK);
        text[i] ^= 0x01;
    }
    assert_int_equal(tmap_file_write(DIR "bad.predictor", text, len / 2, &err), TMAP_OK);
    assert_int_equal(tmap_predictor_load(DIR "bad.predictor", NULL, 0, NULL, &back, &err),
                     TMAP_ERR_FORMAT);
    assert_int_equal(tmap_file_write(DIR "bad.predictor", "", 0, &err), TMAP_OK);
    assert_int_equal(tmap_predictor_load(DIR "bad.predictor", NULL, 0, NULL, &back, &err),
                     TMAP_ERR_FORMAT);
    text[5] ^= 0x20;
    assert_int_equal(tmap_file_write(DIR "bad.predictor", text, len, &err), TMAP_OK);
    assert_int_equal(tmap_predictor_load(DIR "bad.predictor", NULL, 0, NULL, &back, &err),
                     TMAP_ERR_FORMAT);
    assert_non_null(strstr(err.message, "checksum mismatch"));
    free(text);
    /* Names that cannot be stored. */
    free(pr.feature_names[0]);
    pr.feature_names[0] = strdup("two words");
    assert_int_equal(tmap_predictor_save(path, &pr, &err), TMAP_ERR_INVALID);
    tmap_predictor_free(&pr);
}

/* The child: a fit whose GSL matrices do not fit the address space left
 * (RLIMIT_AS): exits 0 when it fails with TMAP_ERR_NOMEM. */
static int fit_without_memory(void)
{
    enum { N = 4 << 20 };
    tmap_bbv bbv;
    tmap_error e = {0};
    double *f = malloc(N * 2 * sizeof *f);
    if (!f || tmap_bbv_create(&bbv, N, 1, &e))
        return 2;
    for (size_t t = 0; t < N; t++) {
        f[2 * t] = (double)(t % 3);
        f[2 * t + 1] = (double)(t % 5);
        bbv.counts[t] = (uint32_t)(t % 7);
    }
    FILE *statm = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!statm || fscanf(statm, "%lu", &pages) != 1)
        return 3;
    fclose(statm);
    /* room for what the fit allocates itself, not for the 4M x 4 design
     * matrix and the workspace GSL allocates (over 250 MB) */
    rlim_t room = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)(250 << 20);
    struct rlimit rl = {room, room};
    if (setrlimit(RLIMIT_AS, &rl))
        return 4;
    tmap_regress_run r = {f, &bbv};
    tmap_predictor p;
    tmap_status s = tmap_regress_fit(&r, 1, 2, "k", NULL, NULL, &p, &e);
    fprintf(stderr, "fit: %s\n", s ? e.message : "ok");
    return s == TMAP_ERR_NOMEM ? 0 : 5;
}

/* GSL's default handler aborted the host process on a failed allocation
 * (issue 14 item 16); the fit now fails with a status. */
static void test_gsl_never_aborts(void **state)
{
    (void)state;
    if (TEST_ASAN) { /* its allocator aborts on an impossible malloc: nothing to test */
        print_message("[  SKIPPED ] test_gsl_never_aborts: AddressSanitizer's allocator "
                      "aborts on out-of-memory before GSL can report it\n");
        skip();
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL); /* not cmocka's: an abort must kill the child */
        _exit(fit_without_memory());
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st))
        fail_msg("the fit died of signal %d", WTERMSIG(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* Loads `body` with its right checksum line appended (the file is
 * DIR/sum.predictor); returns the status, the message in err. */
static tmap_status load_checksummed(const char *body, tmap_error *err)
{
    size_t n = strlen(body);
    char *text = malloc(n + 32);
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)body[i]) * 1099511628211ull;
    memcpy(text, body, n);
    n += (size_t)snprintf(text + n, 32, "checksum %016llx\n", (unsigned long long)h);
    assert_int_equal(tmap_file_write(DIR "sum.predictor", text, n, err), TMAP_OK);
    free(text);
    tmap_predictor back;
    tmap_status s = tmap_predictor_load(DIR "sum.predictor", NULL, 0, NULL, &back, err);
    if (s == TMAP_OK)
        tmap_predictor_free(&back);
    return s;
}

/* A predictor header claiming 2^32 blocks of 4000 features in 100 bytes
 * (its checksum right): refused before anything that size is allocated. */
static void test_predictor_counts_fit(void **state)
{
    (void)state;
    tmap_error err = {0};
    assert_int_equal(load_checksummed("threadmap-predictor\nversion 1\nkernel k\ncfg_hash "
                                      "0000000000000000\nnblocks 4294967296\nnfeatures 4000\n",
                                      &err),
                     TMAP_ERR_FORMAT);
    assert_non_null(strstr(err.message, "nblocks 4294967296 with 4000 features does not fit"));
}

/* A fit line whose rank is not a count of 0..P+2 (fuzz_predictor: -20 was
 * converted to size_t): refused, naming the block. */
static void test_predictor_rank(void **state)
{
    (void)state;
    tmap_predictor pr;
    fit(&pr);
    tmap_error err = {0};
    char *text;
    size_t len;
    assert_int_equal(tmap_predictor_save(DIR "k.predictor", &pr, &err), TMAP_OK);
    tmap_predictor_free(&pr);
    assert_int_equal(tmap_file_read(DIR "k.predictor", &text, &len, &err), TMAP_OK);
    strstr(text, "checksum ")[0] = '\0';
    assert_int_equal(load_checksummed(text, &err), TMAP_OK);
    const char *bad[] = {"-20", "6", "2.5", "1e300"}; /* P + 2 = 5 columns */
    char *end = strchr(strstr(text, "\nfit 1 ") + 1, '\n'), *rank = end;
    while (rank[-1] != ' ')
        rank--;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char body[4096];
        snprintf(body, sizeof body, "%.*s%s%s", (int)(rank - text), text, bad[i], end);
        assert_int_equal(load_checksummed(body, &err), TMAP_ERR_FORMAT);
        assert_non_null(strstr(err.message, "block 1: rank"));
    }
    free(text);
}

/* A version-1 file (no noise lines) still loads, without noise; a noise
 * line with a negative deviation or edges out of order is refused. */
static void test_predictor_noise_lines(void **state)
{
    (void)state;
    tmap_predictor pr, back;
    fit(&pr);
    tmap_error err = {0};
    char *text;
    size_t len;
    assert_int_equal(pr.noise.nblocks, B);
    assert_int_equal(tmap_predictor_save(DIR "k.predictor", &pr, &err), TMAP_OK);
    tmap_predictor_free(&pr);
    assert_int_equal(tmap_file_read(DIR "k.predictor", &text, &len, &err), TMAP_OK);
    strstr(text, "checksum ")[0] = '\0';
    assert_non_null(strstr(text, "\nversion 2\n"));
    char v1[8192];
    snprintf(v1, sizeof v1, "%.*s", (int)(strstr(text, "noise 0 ") - text), text);
    memcpy(strstr(v1, "version 2"), "version 1", 9);
    assert_int_equal(load_checksummed(v1, &err), TMAP_OK);
    size_t n = strlen(v1);
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)v1[i]) * 1099511628211ull;
    snprintf(v1 + n, sizeof v1 - n, "checksum %016llx\n", (unsigned long long)h);
    assert_int_equal(tmap_file_write(DIR "v1.predictor", v1, strlen(v1), &err), TMAP_OK);
    assert_int_equal(tmap_predictor_load(DIR "v1.predictor", NULL, 0, NULL, &back, &err), TMAP_OK);
    assert_int_equal(back.noise.nblocks, 0);
    assert_null(back.noise.sd);
    tmap_predictor_free(&back);
    /* version 2 without its noise lines: refused at the checksum line's place */
    memcpy(strstr(v1, "version 1"), "version 2", 9);
    strstr(v1, "checksum ")[0] = '\0';
    assert_int_equal(load_checksummed(v1, &err), TMAP_ERR_FORMAT);
    /* block 1's first deviation (the 16th value) made negative */
    char body[8192], *line = strstr(text, "\nnoise 1 ") + 1, *at = line;
    for (int k = 0; k < 2 + 2 * TMAP_NOISE_BINS - 1; k++)
        at = strchr(at, ' ') + 1;
    snprintf(body, sizeof body, "%.*s-1%s", (int)(at - text), text, at);
    assert_int_equal(load_checksummed(body, &err), TMAP_ERR_FORMAT);
    assert_non_null(strstr(err.message, "noise 1: value 15"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_recovered),
        cmocka_unit_test(test_gsl_never_aborts),
        cmocka_unit_test(test_collinear_and_clamp),
        cmocka_unit_test(test_cross_validation),
        cmocka_unit_test(test_predictor_file),
        cmocka_unit_test(test_predictor_counts_fit),
        cmocka_unit_test(test_predictor_rank),
        cmocka_unit_test(test_predictor_noise_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_train.c -- the training set (pipeline/train.c): runs are checked
 * against the first as they are added (features, rows, blocks, block
 * names), a refused run is freed with its names, and the fit over the
 * runs recovers a planted count exactly.
 */
#include "tests/testutil.h"

/* A run of n threads, p = 2 features (v = 7t mod 13, 1), nblocks blocks:
 * counts v, then 3. */
static void run(size_t n, size_t nblocks, double **feat, tmap_bbv *bbv, char ***names,
                const char *second)
{
    *feat = malloc(n * 2 * sizeof **feat);
    TMAP_CHECK(tmap_bbv_create(bbv, n, nblocks, err));
    for (size_t t = 0; t < n; t++) {
        uint32_t v = (uint32_t)(t * 7 % 13);
        (*feat)[2 * t] = v, (*feat)[2 * t + 1] = 1;
        bbv->counts[t * nblocks] = v;
        for (size_t b = 1; b < nblocks; b++)
            bbv->counts[t * nblocks + b] = 3;
    }
    *names = calloc(nblocks + 1, sizeof **names);
    for (size_t b = 0; b < nblocks; b++)
        (*names)[b] = strdup(b == 1 && second ? second : b ? "loop" : "entry");
}

static void test_add_checks_and_fit(void **state)
{
    tmap_train_set t = {0};
    double *f;
    tmap_bbv b;
    char **names;
    run(64, 2, &f, &b, &names, NULL);
    TMAP_CHECK(tmap_train_add(&t, f, 64, 2, &b, names, "run 0", err));
    run(32, 2, &f, &b, &names, NULL);
    TMAP_CHECK(tmap_train_add(&t, f, 32, 2, &b, names, "run 1", err));
    assert_int_equal(t.nruns, 2);
    assert_int_equal(tmap_train_threads(&t), 96);
    assert_ptr_equal(t.runs[1].bbv, &t.bbv[1]); /* the views follow the arrays */
    tmap_error e;
    run(16, 2, &f, &b, &names, NULL);
    assert_int_equal(tmap_train_add(&t, f, 15, 2, &b, names, "short run", &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "short run: 15 feature rows for 16 threads"));
    run(16, 2, &f, &b, &names, NULL);
    assert_int_equal(tmap_train_add(&t, f, 16, 3, &b, names, "wide run", &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "wide run: 3 features"));
    run(16, 3, &f, &b, &names, NULL);
    assert_int_equal(tmap_train_add(&t, f, 16, 2, &b, names, "other CFG", &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "3 blocks"));
    run(16, 2, &f, &b, &names, "body");
    assert_int_equal(tmap_train_add(&t, f, 16, 2, &b, names, "renamed", &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "block 1 is 'body', in the first run 'loop'"));
    assert_int_equal(t.nruns, 2);
    tmap_predictor p = {0};
    TMAP_CHECK(tmap_train_fit(&t, "k", NULL, &p, err));
    double x[2] = {9, 1};
    tmap_bbv out;
    TMAP_CHECK(tmap_predict(&p, x, 1, &out, err));
    assert_int_equal(out.counts[0], 9);
    assert_int_equal(out.counts[1], 3);
    tmap_bbv_free(&out);
    tmap_predictor_free(&p);
    tmap_train_free(&t);
    tmap_train_free(&t); /* twice: a freed set is empty */
    assert_int_equal(tmap_train_fit(&t, "k", NULL, &p, &e), TMAP_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_add_checks_and_fit)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

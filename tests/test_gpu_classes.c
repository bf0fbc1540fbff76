/*
 * test_gpu_classes.c -- value classes on the GPU (runtime/gpu_classes.cu)
 * against the CPU references on the same keys, on several sizes (partial
 * last warp and block included) and class counts: the class sizes equal
 * the CPU's count of tmap_regroup_value_class; Greedy and Greedy-Max
 * expanded from the table's runs equal the class-sorted order (stable)
 * composed with tmap_regroup_greedy / greedy_max on the one-block rows of
 * that order; LAM equals tmap_regroup_lam (grid, warps of 32), also when
 * its graph is relaunched on new keys.  Every result is a permutation.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap.h"
#include "tests/testutil.h"

static double uniform01(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Keys near `levels` values, in runs of up to 80 (pure and mixed warps). */
static double *random_keys(size_t n, size_t levels, uint64_t *s)
{
    double *key = malloc(n * sizeof *key);
    assert_non_null(key);
    for (size_t t = 0; t < n;) {
        double v = floor(uniform01(s) * (double)levels) * 3.0 - 7.0;
        size_t run = 1 + (size_t)(uniform01(s) * 80);
        for (size_t i = 0; i < run && t < n; i++)
            key[t++] = v + 0.5 * uniform01(s);
    }
    return key;
}

static uint32_t *cpu_classes(const double *key, size_t n, size_t R)
{
    double lo = key[0], hi = key[0];
    for (size_t t = 1; t < n; t++)
        lo = fmin(lo, key[t]), hi = fmax(hi, key[t]);
    uint32_t *cls = malloc(n * sizeof *cls);
    for (size_t t = 0; t < n; t++)
        cls[t] = tmap_regroup_value_class(key[t], lo, hi, R);
    return cls;
}

static void expect_equal(tmap_cuda *c, uint64_t d_perm, const uint32_t *want, size_t n,
                         const char *what, size_t R)
{
    uint32_t *got = malloc(n * sizeof *got);
    TMAP_CHECK(tmap_cuda_download(c, got, d_perm, n * sizeof *got, err));
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 1};
    TMAP_CHECK(tmap_regroup_check(got, n, &o, err));
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s, %zu threads, %zu classes: slot %zu holds thread %u, the CPU's %u", what,
                     n, R, i, got[i], want[i]);
    free(got);
}

/* The CPU reference of algo on the classes: the class-sorted order
 * composed with the algorithm on its one-block rows. */
static uint32_t *cpu_table_algo(const uint32_t *cls, size_t n, size_t R, tmap_algo algo)
{
    uint32_t *start = calloc(R + 1, sizeof *start), *order = malloc(n * sizeof *order);
    uint32_t *pos = malloc(n * sizeof *pos), *want = malloc(n * sizeof *want);
    for (size_t t = 0; t < n; t++)
        start[cls[t] + 1]++;
    for (size_t k = 0; k < R; k++)
        start[k + 1] += start[k];
    tmap_bbv b;
    TMAP_CHECK(tmap_bbv_create(&b, n, 1, err));
    for (size_t t = 0; t < n; t++) {
        size_t j = start[cls[t]]++;
        order[j] = (uint32_t)t, b.counts[j] = cls[t] + 1;
    }
    double lat = 1;
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 1};
    TMAP_CHECK(tmap_algo_run(algo, &b, &lat, NULL, &o, pos, err));
    for (size_t s = 0; s < n; s++)
        want[s] = order[pos[s]];
    tmap_bbv_free(&b);
    free(start), free(order), free(pos);
    return want;
}

static size_t check_size(tmap_cuda *c, size_t n, size_t R, uint64_t *seed)
{
    double *key = random_keys(n, 1 + R % 13, seed);
    uint32_t *cls = cpu_classes(key, n, R), size[TMAP_GPU_CLASSES_MAX], want_size[256] = {0};
    static uint32_t runs[2 * TMAP_REGROUP_MAX_RUNS];
    uint64_t d_key, d_perm;
    tmap_gpu_classes *g = NULL;
    TMAP_CHECK(tmap_gpu_classes_create(c, n, &g, err));
    TMAP_CHECK(tmap_cuda_alloc(c, n * sizeof(double), &d_key, err));
    TMAP_CHECK(tmap_cuda_alloc(c, n * sizeof(uint32_t), &d_perm, err));
    TMAP_CHECK(tmap_cuda_upload(c, d_key, key, n * sizeof(double), err));
    TMAP_CHECK(tmap_gpu_classes_table(g, d_key, R, size, NULL, err));
    for (size_t t = 0; t < n; t++)
        want_size[cls[t]]++;
    assert_memory_equal(size, want_size, R * sizeof *size);
    tmap_algo algos[2] = {TMAP_ALGO_GREEDY, TMAP_ALGO_GREEDY_MAX};
    for (int a = 0; a < 2; a++) {
        size_t nruns = 0;
        TMAP_CHECK(tmap_regroup_class_runs(algos[a], size, R, 32, runs, &nruns, err));
        TMAP_CHECK(tmap_cuda_zero(c, d_perm, n * sizeof(uint32_t), err));
        TMAP_CHECK(tmap_gpu_classes_expand(g, runs, nruns, d_perm, NULL, err));
        uint32_t *want = cpu_table_algo(cls, n, R, algos[a]);
        expect_equal(c, d_perm, want, n, tmap_algo_name(algos[a]), R);
        free(want);
    }
    uint32_t *want = malloc(n * sizeof *want);
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 1};
    TMAP_CHECK(tmap_regroup_lam(key, n, R, &o, want, err));
    TMAP_CHECK(tmap_cuda_zero(c, d_perm, n * sizeof(uint32_t), err));
    TMAP_CHECK(tmap_gpu_classes_lam(g, d_key, R, d_perm, NULL, err));
    expect_equal(c, d_perm, want, n, "lam", R);
    size_t moved = 0;
    for (size_t t = 0; t < n; t++)
        moved += want[t] != t;
    /* the graph relaunched on new keys in the same buffer */
    double *key2 = random_keys(n, 2 + R % 7, seed);
    TMAP_CHECK(tmap_cuda_upload(c, d_key, key2, n * sizeof(double), err));
    TMAP_CHECK(tmap_regroup_lam(key2, n, R, &o, want, err));
    TMAP_CHECK(tmap_gpu_classes_lam(g, d_key, R, d_perm, NULL, err));
    expect_equal(c, d_perm, want, n, "lam relaunched", R);
    free(key2);
    tmap_gpu_classes_free(g);
    tmap_cuda_free(c, d_key);
    tmap_cuda_free(c, d_perm);
    free(key), free(cls), free(want);
    return moved;
}

static void test_equal_to_cpu(void **state)
{
    (void)state;
    tmap_cuda *c = test_gpu_open();
    uint64_t seed = 2026;
    size_t sizes[] = {1, 31, 100, 1000 + 17, 65536 + 5, 300000 + 77};
    size_t Rs[] = {1, 2, 10, 256};
    size_t moved = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof Rs / sizeof *Rs; j++)
            moved += check_size(c, sizes[i], Rs[j], &seed);
    assert_true(moved > 1000); /* LAM moved threads: the comparison is not of identities */
    tmap_cuda_close(c);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    tmap_cuda *c = test_gpu_open();
    tmap_gpu_classes *g = NULL;
    uint64_t d_key;
    uint32_t size[4], runs[2] = {1, 0};
    tmap_error e = {0};
    TMAP_CHECK(tmap_gpu_classes_create(c, 64, &g, err));
    TMAP_CHECK(tmap_cuda_alloc(c, 64 * sizeof(double), &d_key, err));
    assert_int_equal(tmap_gpu_classes_table(g, d_key, 0, size, NULL, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_gpu_classes_table(g, d_key, 257, size, NULL, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_gpu_classes_lam(g, 0, 4, d_key, NULL, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_gpu_classes_expand(g, runs, 1, d_key, NULL, &e), TMAP_ERR_INVALID);
    tmap_gpu_classes_free(g);
    assert_int_equal(tmap_gpu_classes_create(c, 0, &g, &e), TMAP_ERR_INVALID);
    assert_null(g);
    tmap_cuda_free(c, d_key);
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_to_cpu),
        cmocka_unit_test(test_bad_arguments),
    };
    return test_gpu_main(tests, NULL, NULL);
}

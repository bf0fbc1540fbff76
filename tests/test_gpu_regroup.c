/*
 * test_gpu_regroup.c -- the GPU regroup path (runtime/gpu_regroup.cu)
 * against the CPU references on the same inputs: each thread's eq. 11
 * latency from its features must equal, bit for bit, tmap_predict followed
 * by the CPU's latency sum; the device sort's permutation must equal
 * tmap_regroup_sort_key's on the keys rounded to bfloat16, over
 * the grid and within thread blocks (a last partial block included),
 * descending and ascending, with many ties; and the one-graph path (cost
 * then sort) must give the same permutation, also when relaunched and when
 * the model changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap.h"
#include "tests/testutil.h"

enum { N = 100000 + 77, P = 3, B = 12 };

static double uniform(uint64_t *s, double lo, double hi)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* The CPU reference: counts by tmap_predict, then sum_b lat[b] * count;
 * *zeros counts the predictions clamped at zero. */
static double *cpu_cost(const double *x, double *coef, const double *lat, size_t *zeros)
{
    tmap_predictor pred = {.nblocks = B, .nfeatures = P, .coef = coef};
    tmap_bbv bbv;
    TMAP_CHECK(tmap_predict(&pred, x, N, &bbv, err));
    double *cost = malloc(N * sizeof *cost);
    *zeros = 0;
    for (size_t t = 0; t < N; t++) {
        double s = 0;
        for (size_t b = 0; b < B; b++) {
            s += lat[b] * (double)bbv.counts[t * B + b];
            *zeros += bbv.counts[t * B + b] == 0;
        }
        cost[t] = s;
    }
    tmap_bbv_free(&bbv);
    return cost;
}

/* key rounded to single precision, then to bfloat16 (round to nearest
 * even on the 16 dropped bits), as the device sort keys it. */
static double bf16_round(double key)
{
    float f = (float)key;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The CPU's permutation of the keys as the device sort rounds them. */
static uint32_t *cpu_sort(const double *key, int descending, size_t block_size)
{
    uint32_t *want = malloc(N * sizeof *want);
    double *q = malloc(N * sizeof *q);
    for (size_t t = 0; t < N; t++)
        q[t] = bf16_round(key[t]);
    tmap_regroup_opts o = {32, block_size ? TMAP_REGROUP_BLOCK : TMAP_REGROUP_GRID,
                           block_size, 1};
    TMAP_CHECK(tmap_regroup_sort_key(q, N, descending, &o, want, err));
    free(q);
    return want;
}

static void expect_perm(tmap_cuda *c, uint64_t d_perm, const uint32_t *want, const char *what)
{
    uint32_t *got = malloc(N * sizeof *got);
    TMAP_CHECK(tmap_cuda_download(c, got, d_perm, N * sizeof *got, err));
    for (size_t i = 0; i < N; i++)
        if (got[i] != want[i])
            fail_msg("%s: slot %zu holds thread %u, the CPU's %u", what, i, got[i], want[i]);
    free(got);
}

static void check_sort(tmap_cuda *c, tmap_gpu_regroup *g, const double *key, int descending,
                       size_t block_size)
{
    uint64_t d_key, d_perm;
    uint32_t *want = cpu_sort(key, descending, block_size);
    TMAP_CHECK(tmap_cuda_alloc(c, N * sizeof(double), &d_key, err));
    TMAP_CHECK(tmap_cuda_alloc(c, N * sizeof(uint32_t), &d_perm, err));
    TMAP_CHECK(tmap_cuda_upload(c, d_key, key, N * sizeof(double), err));
    TMAP_CHECK(tmap_gpu_regroup_sort(g, d_key, descending, block_size, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    char what[64];
    snprintf(what, sizeof what, "descending %d, block size %zu", descending, block_size);
    expect_perm(c, d_perm, want, what);
    tmap_cuda_free(c, d_key);
    tmap_cuda_free(c, d_perm);
    free(want);
}

static void test_equal_to_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    uint64_t s = 99;
    double *x = malloc(N * P * sizeof *x), coef[B * (P + 2)], lat[B];
    for (size_t i = 0; i < N * P; i++)
        x[i] = uniform(&s, 0, 50);
    for (size_t i = 0; i < B * (P + 2); i++)
        coef[i] = uniform(&s, -3, 3);
    for (size_t b = 0; b < B; b++) {
        coef[b * (P + 2) + P + 1] = uniform(&s, -1e-4, 1e-4); /* the thread id term */
        lat[b] = uniform(&s, 1, 40);
    }
    size_t zeros;
    double *want = cpu_cost(x, coef, lat, &zeros), *got = malloc(N * sizeof *got);
    assert_true(zeros > 0 && zeros < (size_t)N * B); /* the clamp at zero is exercised */
    tmap_gpu_regroup *g = NULL;
    uint64_t d_x, d_perm;
    TMAP_CHECK(tmap_gpu_regroup_create(c, N, &g, err));
    TMAP_CHECK(tmap_cuda_alloc(c, N * P * sizeof *x, &d_x, err));
    TMAP_CHECK(tmap_cuda_alloc(c, N * sizeof(uint32_t), &d_perm, err));
    TMAP_CHECK(tmap_cuda_upload(c, d_x, x, N * P * sizeof *x, err));
    TMAP_CHECK(tmap_gpu_regroup_model(g, coef, lat, B, P, err));
    TMAP_CHECK(tmap_gpu_regroup_cost(g, d_x, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    TMAP_CHECK(tmap_cuda_download(c, got, tmap_gpu_regroup_cost_ptr(g), N * sizeof *got, err));
    for (size_t t = 0; t < N; t++)
        if (memcmp(&got[t], &want[t], sizeof got[t]))
            fail_msg("thread %zu: GPU cost %.17g, CPU %.17g", t, got[t], want[t]);
    /* the one-graph path, twice, then after the model changes */
    uint32_t *ref = cpu_sort(want, 1, 256);
    for (int i = 0; i < 2; i++) {
        TMAP_CHECK(tmap_cuda_zero(c, d_perm, N * sizeof(uint32_t), err));
        TMAP_CHECK(tmap_gpu_regroup_run(g, d_x, 1, 256, d_perm, NULL, err));
        TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
        expect_perm(c, d_perm, ref, "the graph path");
    }
    free(ref);
    for (size_t b = 0; b < B; b++)
        lat[b] = B - (double)b;
    double *want2 = cpu_cost(x, coef, lat, &zeros);
    ref = cpu_sort(want2, 1, 256);
    TMAP_CHECK(tmap_gpu_regroup_model(g, coef, lat, B, P, err));
    TMAP_CHECK(tmap_gpu_regroup_run(g, d_x, 1, 256, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    expect_perm(c, d_perm, ref, "the graph path after a new model");
    free(ref), free(want2);
    check_sort(c, g, want, 1, 0);
    check_sort(c, g, want, 0, 256);
    for (size_t t = 0; t < N; t++) /* few distinct keys: ties broken by thread index */
        want[t] = (double)((int)want[t] / 500) - 3.0;
    check_sort(c, g, want, 1, 0);
    check_sort(c, g, want, 1, 128);
    check_sort(c, g, want, 0, 0);
    tmap_gpu_regroup_free(g);
    tmap_cuda_free(c, d_x);
    tmap_cuda_free(c, d_perm);
    free(x), free(want), free(got);
    tmap_cuda_close(c);
}

/* Bin-and-deal: the GPU's deal of a grid order equals the CPU's. */
static void test_deal_equal_to_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    enum { ND = 400 * 256 };
    uint64_t s = 7, d_sorted, d_perm;
    double *key = malloc(ND * sizeof *key);
    uint32_t *sorted = malloc(ND * sizeof *sorted), *want = malloc(ND * sizeof *want);
    uint32_t *got = malloc(ND * sizeof *got);
    for (size_t t = 0; t < ND; t++)
        key[t] = (double)(int)uniform(&s, 0, 40);
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 1};
    TMAP_CHECK(tmap_regroup_sort_key(key, ND, 1, &o, sorted, err));
    TMAP_CHECK(tmap_regroup_deal(sorted, ND, 256, 32, want, err));
    tmap_gpu_regroup *g = NULL;
    TMAP_CHECK(tmap_gpu_regroup_create(c, ND, &g, err));
    TMAP_CHECK(tmap_cuda_alloc(c, ND * sizeof(uint32_t), &d_sorted, err));
    TMAP_CHECK(tmap_cuda_alloc(c, ND * sizeof(uint32_t), &d_perm, err));
    TMAP_CHECK(tmap_cuda_upload(c, d_sorted, sorted, ND * sizeof(uint32_t), err));
    TMAP_CHECK(tmap_gpu_regroup_deal(g, d_sorted, 256, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    TMAP_CHECK(tmap_cuda_download(c, got, d_perm, ND * sizeof(uint32_t), err));
    for (size_t i = 0; i < ND; i++)
        if (got[i] != want[i])
            fail_msg("deal: slot %zu holds thread %u, the CPU's %u", i, got[i], want[i]);
    tmap_error e;
    assert_int_equal(tmap_gpu_regroup_deal(g, d_sorted, 128, d_perm, NULL, &e), TMAP_OK);
    assert_int_equal(tmap_gpu_regroup_deal(g, d_sorted, 48, d_perm, NULL, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_gpu_regroup_deal(g, d_sorted, 256, d_sorted, NULL, &e),
                     TMAP_ERR_INVALID);
    tmap_gpu_regroup_free(g);
    tmap_cuda_free(c, d_sorted);
    tmap_cuda_free(c, d_perm);
    free(key), free(sorted), free(want), free(got);
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_to_cpu),
        cmocka_unit_test(test_deal_equal_to_cpu),
    };
    return test_gpu_main(tests, NULL, NULL);
}

/*
 * test_lam.c -- LAM (regroup/lam.c): the value classes exactly; a
 * hand-worked example (exact permutation); properties on random inputs: a
 * permutation within the scope, threads of pure segments never move, pure
 * segments never fewer, moves at most the threads.  (The class runs of
 * Greedy and Greedy-Max: tests/test_class_runs.c.)
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

static void test_value_class(void **state)
{
    (void)state;
    assert_int_equal(tmap_regroup_value_class(0, 0, 1, 10), 0);
    assert_int_equal(tmap_regroup_value_class(1, 0, 1, 10), 9);
    assert_int_equal(tmap_regroup_value_class(0.5, 0, 1, 10), 5);
    assert_int_equal(tmap_regroup_value_class(0.29, 0, 1, 10), 2);
    assert_int_equal(tmap_regroup_value_class(0.99, 0, 1, 10), 9);
    assert_int_equal(tmap_regroup_value_class(7, 7, 7, 10), 0);
    assert_int_equal(tmap_regroup_value_class(5, 0, 10, 1), 0);
    assert_int_equal(tmap_regroup_value_class(-1e308, -1e308, 1e308, 4), 0);
    assert_int_equal(tmap_regroup_value_class(1e308, -1e308, 1e308, 4), 3);
    assert_int_equal(tmap_regroup_value_class(0, -1e308, 1e308, 4), 2);
}

/* 104 threads, groups of 32, keys 0 or 1 (R = 2): segment 0 all 1 (pure),
 * segment 1 all 0 but slots 40 and 41, segment 2 all 1 but slot 70, the
 * partial segment 96-99 of 1 and 100-103 of 0.  Quotas: class 1 (69
 * threads) 2, class 0 (35) 1.  Labels: segment 0 -> 1 (pure, first),
 * segment 1 -> 0, segment 2 -> 1.  Holes: class 0 {40, 41}, class 1 {70}.
 * Thread 40 (class 1) fills 70; 41 waits (no class-1 hole left); 70
 * (class 0) fills 40; in the partial segment, 100 (class 0) fills 41 and
 * the waiting 41 takes slot 100. */
static void test_hand(void **state)
{
    (void)state;
    enum { N = 104 };
    double key[N];
    for (size_t t = 0; t < N; t++)
        key[t] = t < 32 || t == 40 || t == 41 || (t >= 64 && t < 100 && t != 70);
    uint32_t perm[N], want[N];
    tmap_regroup_opts o = {.groupsize = 32, .scope = TMAP_REGROUP_GRID};
    TMAP_CHECK(tmap_regroup_lam(key, N, 2, &o, perm, err));
    for (uint32_t t = 0; t < N; t++)
        want[t] = t;
    want[70] = 40, want[40] = 70, want[41] = 100, want[100] = 41;
    assert_memory_equal(perm, want, sizeof perm);
}

static double uniform01(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Keys from `levels` values, in runs (so that some segments are pure). */
static void random_keys(double *key, size_t n, size_t levels, uint64_t *s)
{
    size_t t = 0;
    while (t < n) {
        double v = floor(uniform01(s) * (double)levels);
        size_t run = 1 + (size_t)(uniform01(s) * 80);
        for (size_t i = 0; i < run && t < n; i++)
            key[t++] = v + 0.01 * uniform01(s);
    }
}

/* Pure full segments of the order perm (NULL: the identity) in [first, first + len). */
static size_t pure_segments(const uint32_t *perm, size_t first, size_t len, size_t gs,
                            const uint8_t *cls)
{
    size_t pure = 0;
    for (size_t g = 0; (g + 1) * gs <= len; g++) {
        size_t s0 = first + g * gs, ok = 1;
        uint8_t c = cls[perm ? perm[s0] : s0];
        for (size_t i = 1; i < gs && ok; i++)
            ok = cls[perm ? perm[s0 + i] : s0 + i] == c;
        pure += ok;
    }
    return pure;
}

static void check_random(size_t n, size_t gs, size_t R, size_t levels, tmap_regroup_scope scope,
                         uint64_t *s)
{
    double *key = malloc(n * sizeof *key);
    uint32_t *perm = malloc(n * sizeof *perm);
    uint8_t *cls = malloc(n);
    assert_non_null(key), assert_non_null(perm), assert_non_null(cls);
    random_keys(key, n, levels, s);
    tmap_regroup_opts o = {.groupsize = gs, .scope = scope, .block_size = 4 * gs};
    TMAP_CHECK(tmap_regroup_lam(key, n, R, &o, perm, err));
    TMAP_CHECK(tmap_regroup_check(perm, n, &o, err));
    size_t span = scope == TMAP_REGROUP_BLOCK ? o.block_size : n;
    size_t moved = 0;
    for (size_t first = 0; first < n; first += span) {
        size_t len = n - first < span ? n - first : span;
        double lo = key[first], hi = key[first];
        for (size_t t = first; t < first + len; t++)
            lo = fmin(lo, key[t]), hi = fmax(hi, key[t]);
        for (size_t t = first; t < first + len; t++)
            cls[t] = (uint8_t)tmap_regroup_value_class(key[t], lo, hi, R);
        size_t before = pure_segments(NULL, first, len, gs, cls);
        size_t after = pure_segments(perm, first, len, gs, cls);
        assert_true(after >= before);
        /* threads of pure segments stay */
        for (size_t g = 0; (g + 1) * gs <= len; g++) {
            size_t s0 = first + g * gs, ok = 1;
            for (size_t i = 1; i < gs && ok; i++)
                ok = cls[s0 + i] == cls[s0];
            for (size_t i = 0; ok && i < gs; i++)
                assert_int_equal(perm[s0 + i], s0 + i);
        }
    }
    for (size_t t = 0; t < n; t++)
        moved += perm[t] != t;
    assert_true(moved <= n);
    free(key), free(perm), free(cls);
}

static void test_random(void **state)
{
    (void)state;
    uint64_t s = 12345;
    size_t sizes[] = {1, 31, 32, 100, 1000, 4096 + 17, 50000};
    size_t Rs[] = {1, 2, 5, 10, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof Rs / sizeof *Rs; j++)
            for (int scope = 0; scope < 2; scope++)
                for (size_t gs = 32; gs <= 64; gs += 32)
                    check_random(sizes[i], gs, Rs[j], 1 + j * 3, scope ? TMAP_REGROUP_BLOCK
                                                                      : TMAP_REGROUP_GRID, &s);
}

/* One value (or R = 1): nothing moves.  Bad arguments fail. */
static void test_edges(void **state)
{
    (void)state;
    enum { N = 200 };
    double key[N];
    uint32_t perm[N];
    uint64_t s = 7;
    for (size_t t = 0; t < N; t++)
        key[t] = uniform01(&s);
    tmap_regroup_opts o = {.groupsize = 32, .scope = TMAP_REGROUP_GRID};
    TMAP_CHECK(tmap_regroup_lam(key, N, 1, &o, perm, err));
    for (uint32_t t = 0; t < N; t++)
        assert_int_equal(perm[t], t);
    for (size_t t = 0; t < N; t++)
        key[t] = 3;
    TMAP_CHECK(tmap_regroup_lam(key, N, 10, &o, perm, err));
    for (uint32_t t = 0; t < N; t++)
        assert_int_equal(perm[t], t);
    tmap_error e = {0};
    assert_int_equal(tmap_regroup_lam(key, N, 0, &o, perm, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_lam(key, N, 257, &o, perm, &e), TMAP_ERR_INVALID);
    key[5] = NAN;
    assert_int_equal(tmap_regroup_lam(key, N, 10, &o, perm, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_lam(NULL, N, 10, &o, perm, &e), TMAP_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_class),
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

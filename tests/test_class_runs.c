/*
 * test_class_runs.c -- Greedy and Greedy-Max on a table of value classes
 * (regroup/class_runs.c): hand-worked examples exactly, and on random
 * tables (small and large, sizes not multiples of 32, empty classes, one
 * class, up to 256 classes, groups of 32, 64 and 96) the runs equal, run
 * for run, those of the reference: the CPU algorithm on the expanded
 * class-sorted problem (N one-block rows), its permutation compressed into
 * runs -- the O(N) host step class_runs.c replaced.
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

static uint32_t got[2 * TMAP_REGROUP_MAX_RUNS], want[2 * TMAP_REGROUP_MAX_RUNS];

/* The reference: algo on the rows c + 1 of the class-sorted order, its
 * permutation as maximal runs of consecutive positions. */
static size_t reference(tmap_algo algo, const uint32_t *size, size_t R, size_t gs, uint32_t *runs)
{
    size_t n = 0, nruns = 0;
    for (size_t c = 0; c < R; c++)
        n += size[c];
    tmap_bbv b;
    TMAP_CHECK(tmap_bbv_create(&b, n, 1, err));
    for (size_t c = 0, j = 0; c < R; c++)
        for (size_t i = 0; i < size[c]; i++)
            b.counts[j++] = (uint32_t)c + 1;
    uint32_t *perm = malloc(n * sizeof *perm);
    assert_non_null(perm);
    double lat = 1;
    tmap_regroup_opts o = {.groupsize = gs, .scope = TMAP_REGROUP_GRID};
    TMAP_CHECK(tmap_algo_run(algo, &b, &lat, NULL, &o, perm, err));
    for (size_t s = 0; s < n; s++)
        if (!s || perm[s] != perm[s - 1] + 1) {
            assert_true(nruns < TMAP_REGROUP_MAX_RUNS);
            runs[2 * nruns] = (uint32_t)s, runs[2 * nruns + 1] = perm[s], nruns++;
        }
    free(perm);
    tmap_bbv_free(&b);
    return nruns;
}

/* class_runs equals the reference on this table. */
static void same(tmap_algo algo, const uint32_t *size, size_t R, size_t gs)
{
    size_t nruns = 0, nref = reference(algo, size, R, gs, want);
    TMAP_CHECK(tmap_regroup_class_runs(algo, size, R, gs, got, &nruns, err));
    assert_int_equal(nruns, nref);
    assert_memory_equal(got, want, 2 * nruns * sizeof *got);
}

/* Greedy-Max on 40 threads of class 0 and 24 of class 1 (positions
 * 40..63): the group starts at position 40 (count 2), takes class 1, then
 * the lowest positions of class 0 (every gain 0): slots 0..23 <- 40..63,
 * slots 24..63 <- 0..39. */
static void test_gmax_hand(void **state)
{
    (void)state;
    uint32_t size[2] = {40, 24};
    size_t nruns = 0;
    TMAP_CHECK(tmap_regroup_class_runs(TMAP_ALGO_GREEDY_MAX, size, 2, 32, got, &nruns, err));
    assert_int_equal(nruns, 2);
    assert_int_equal(got[0], 0), assert_int_equal(got[1], 40);
    assert_int_equal(got[2], 24), assert_int_equal(got[3], 0);
}

/* Greedy, groups of 32, on classes 0..3 (values 1..4) of 50, 70, 45 and 33
 * threads at positions 0, 50, 120, 165; 198 threads, K = 7 (6 finished by
 * merging, the 7th what is left).  Gain of a union: 2 min - max.
 *   class 3 (gain 4): warp 165..196, residual {197};
 *   class 2 (gain 3): warp 120..151, residual 152..164;
 *   class 1 (gain 2, tied with 152..164 + {197}: 2*3 - 4; its id 50 is
 *     lower): warps 50..81, 82..113, residual 114..119;
 *   152..164 + {197} (gain 2) before class 0 (gain 1): a group [3, 4];
 *   class 0 (gain 1): warp 0..31, residual 32..49 (5 warps finished);
 *   gain 0 twice: 32..49 + 114..119 (id 32) before 114..119 + [3, 4] (id
 *     114); then that [1, 2] + [3, 4] (gain -2), 38 threads: the sixth
 *     warp 32..49, 114..119, 152..159; the last 160..164, 197.
 * Slots: 0 <- 165, 32 <- 120, 64 <- 50..113, 128 <- 0..49 (two warps'
 * worth of consecutive positions: one run), 178 <- 114..119, 184 <-
 * 152..164 (the sixth warp's end and the last group's start), 197 <- 197. */
static void test_greedy_hand(void **state)
{
    (void)state;
    uint32_t size[4] = {50, 70, 45, 33};
    const uint32_t runs[] = {0, 165, 32, 120, 64, 50, 128, 0, 178, 114, 184, 152, 197, 197};
    size_t nruns = 0;
    TMAP_CHECK(tmap_regroup_class_runs(TMAP_ALGO_GREEDY, size, 4, 32, got, &nruns, err));
    assert_int_equal(nruns, 7);
    assert_memory_equal(got, runs, sizeof runs);
    same(TMAP_ALGO_GREEDY, size, 4, 32);
}

static double uniform01(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Small tables: 1 to 12 classes of 0 to 300 threads (a fifth empty),
 * groups of 32, 64, 96; both algorithms. */
static void test_small(void **state)
{
    (void)state;
    uint64_t s = 99;
    for (int trial = 0; trial < 1200; trial++) {
        size_t R = 1 + (size_t)trial / 6 % 12, n = 0, gs = 32 * (1 + (size_t)trial / 2 % 3);
        uint32_t size[12];
        for (size_t c = 0; c < R; c++)
            n += size[c] = uniform01(&s) < 0.2 ? 0 : (uint32_t)(uniform01(&s) * 300);
        if (n)
            same(trial % 2 ? TMAP_ALGO_GREEDY : TMAP_ALGO_GREEDY_MAX, size, R, gs);
    }
}

/* Shapes that stress the merges between residuals: many classes of one to
 * a few threads, sizes of whole warps, warps plus one, one class, one
 * thread. */
static void test_shapes(void **state)
{
    (void)state;
    static uint32_t size[256];
    uint64_t s = 5;
    for (int trial = 0; trial < 600; trial++) {
        size_t R = 1 + (size_t)(uniform01(&s) * 256), gs = 32 * (1 + (size_t)trial % 3), n = 0;
        for (size_t c = 0; c < R; c++) {
            double u = uniform01(&s);
            switch (trial / 3 % 5) {
            case 0: size[c] = u < 0.3 ? 0 : 1 + (uint32_t)(u * 4); break;
            case 1: size[c] = 32 * (uint32_t)(u * 4) + (uniform01(&s) < 0.5); break;
            case 2: size[c] = u < 0.5 ? 1 : (uint32_t)(u * 100); break;
            case 3: size[c] = c == R / 2 ? 1 + (uint32_t)(u * 1000) : 0; break;
            default: size[c] = (uint32_t)(u * 40); break;
            }
            n += size[c];
        }
        if (n)
            same(TMAP_ALGO_GREEDY, size, R, gs);
    }
    uint32_t one = 1, warp = 32, more = 33;
    same(TMAP_ALGO_GREEDY, &one, 1, 32);
    same(TMAP_ALGO_GREEDY, &warp, 1, 32);
    same(TMAP_ALGO_GREEDY, &more, 1, 32);
}

/* Large tables: 10 classes (as the regrouper) and 256, up to 10^6
 * threads. */
static void test_large(void **state)
{
    (void)state;
    static uint32_t size[256];
    uint64_t s = 17;
    const size_t total[] = {100000, 300000, 1000000};
    for (int trial = 0; trial < 6; trial++) {
        size_t R = trial % 2 ? 256 : 10, n = total[trial / 2];
        for (size_t c = 0; c < R; c++)
            size[c] = (uint32_t)(uniform01(&s) * 2.0 * (double)n / (double)R) + (c % 7 == 3);
        same(TMAP_ALGO_GREEDY, size, R, 32);
        same(TMAP_ALGO_GREEDY_MAX, size, R, 32);
    }
}

/* Bad arguments fail; fewer threads than a group: Greedy's identity. */
static void test_args(void **state)
{
    (void)state;
    uint32_t size[3] = {5, 0, 7}, zero[2] = {0, 0};
    size_t nruns = 0;
    tmap_error e = {0};
    assert_int_equal(tmap_regroup_class_runs(TMAP_ALGO_GREEDY, zero, 2, 32, got, &nruns, &e),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_class_runs(TMAP_ALGO_SORTING, size, 3, 32, got, &nruns, &e),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_class_runs(TMAP_ALGO_GREEDY, size, 3, 48, got, &nruns, &e),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_class_runs(TMAP_ALGO_GREEDY, size, 0, 32, got, &nruns, &e),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_class_runs(TMAP_ALGO_GREEDY, size, 257, 32, got, &nruns, &e),
                     TMAP_ERR_INVALID);
    /* 12 threads, one group: the identity, one run */
    TMAP_CHECK(tmap_regroup_class_runs(TMAP_ALGO_GREEDY, size, 3, 32, got, &nruns, err));
    assert_int_equal(nruns, 1);
    assert_int_equal(got[0], 0), assert_int_equal(got[1], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gmax_hand),  cmocka_unit_test(test_greedy_hand),
        cmocka_unit_test(test_small),      cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_large),      cmocka_unit_test(test_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

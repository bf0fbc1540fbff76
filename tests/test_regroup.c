/*
 * test_regroup.c -- the regrouping algorithms: valid permutations in both
 * scopes, Sorting's zero divergence on two classes, Sorting == its
 * definition (a stable sort of the rows) on random inputs, fast == literal
 * Greedy and Greedy-Max on random inputs, hand-worked cases, Greedy-Max's
 * group order, the same classes and permutations on any number of CPU
 * threads, and argument errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap/regroup.h"
#include "tests/literal.h"
#include "regroup/classes.h"
#include "regroup/gain.h"

typedef tmap_status (*algo_fn)(const tmap_bbv *, const double *,
                               const tmap_regroup_opts *, uint32_t *,
                               tmap_error *);

static tmap_status sort_adapter(const tmap_bbv *b, const double *lat,
                                const tmap_regroup_opts *o, uint32_t *p,
                                tmap_error *e)
{
    return tmap_regroup_sort(b, o, p, e);
}

static const struct {
    const char *name;
    algo_fn fn;
} algos[] = {
    {"sort", sort_adapter},
    {"greedy", tmap_regroup_greedy},
    {"greedy_literal", tmap_regroup_greedy_literal},
    {"greedy_max", tmap_regroup_greedy_max},
    {"greedy_max_literal", tmap_regroup_greedy_max_literal},
};
#define NALGOS (sizeof algos / sizeof algos[0])

/* xorshift64*: deterministic inputs */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Random BBV: `distinct` distinct candidate rows (0: every row random),
 * counts below `range`. */
static void random_bbv(tmap_bbv *b, size_t n, size_t nb, size_t distinct,
                       uint32_t range, uint64_t *seed)
{
    assert_int_equal(tmap_bbv_create(b, n, nb, NULL), TMAP_OK);
    uint32_t *proto = malloc((distinct ? distinct : 1) * nb * sizeof *proto);
    for (size_t i = 0; i < (distinct ? distinct : 1) * nb; i++)
        proto[i] = (uint32_t)(rnd(seed) % range);
    for (size_t t = 0; t < n; t++) {
        if (distinct) {
            size_t k = rnd(seed) % distinct;
            memcpy(b->counts + t * nb, proto + k * nb, nb * sizeof *proto);
        } else {
            for (size_t j = 0; j < nb; j++)
                b->counts[t * nb + j] = (uint32_t)(rnd(seed) % range);
        }
    }
    free(proto);
}

static double *random_lat(size_t nb, uint64_t *seed, int integer)
{
    double *lat = malloc(nb * sizeof *lat);
    for (size_t b = 0; b < nb; b++)
        lat[b] = integer ? (double)(rnd(seed) % 4)
                         : (double)(rnd(seed) % 1000) / 7.0;
    return lat;
}

/* ------------------------------------------------------------- validity */

static void test_valid_permutations(void **state)
{
    uint64_t seed = 42;
    for (int scope = 0; scope < 2; scope++) {
        for (size_t n = 1; n < 300; n += 37) {
            tmap_bbv b;
            random_bbv(&b, n, 5, 4, 6, &seed);
            double *lat = random_lat(5, &seed, 0);
            tmap_regroup_opts o = {32, scope, 64, 0};
            uint32_t *perm = malloc(n * sizeof *perm);
            for (size_t a = 0; a < NALGOS; a++) {
                tmap_error err;
                assert_int_equal(algos[a].fn(&b, lat, &o, perm, &err),
                                 TMAP_OK);
                if (tmap_regroup_check(perm, n, &o, &err) != TMAP_OK)
                    fail_msg("%s n=%zu scope=%d: %s", algos[a].name, n,
                             scope, err.message);
            }
            double *key = malloc(n * sizeof *key);
            for (size_t t = 0; t < n; t++)
                key[t] = (double)(rnd(&seed) % 5) - 2;
            assert_int_equal(tmap_regroup_sort_key(key, n, 1, &o, perm, NULL),
                             TMAP_OK);
            assert_int_equal(tmap_regroup_check(perm, n, &o, NULL), TMAP_OK);
            free(key);
            free(perm);
            free(lat);
            tmap_bbv_free(&b);
        }
    }
}

static void test_check_rejects(void **state)
{
    tmap_regroup_opts o = {32, TMAP_REGROUP_BLOCK, 64, 0};
    uint32_t perm[128];
    for (uint32_t i = 0; i < 128; i++)
        perm[i] = i;
    assert_int_equal(tmap_regroup_check(perm, 128, &o, NULL), TMAP_OK);
    perm[0] = 64, perm[64] = 0; /* crosses thread blocks */
    assert_int_equal(tmap_regroup_check(perm, 128, &o, NULL),
                     TMAP_ERR_INVALID);
    o.scope = TMAP_REGROUP_GRID;
    assert_int_equal(tmap_regroup_check(perm, 128, &o, NULL), TMAP_OK);
    perm[1] = 0; /* duplicate */
    assert_int_equal(tmap_regroup_check(perm, 128, &o, NULL),
                     TMAP_ERR_INVALID);
}

/* ------------------------------------------------ homogeneous groupings */

/* Two classes of 64 threads each, interleaved: Sorting makes every group of
 * 32 homogeneous, with class "lower row" first. */
static void test_sort_two_classes(void **state)
{
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, 128, 3, NULL), TMAP_OK);
    for (size_t t = 0; t < 128; t++) {
        b.counts[t * 3 + 0] = 1;
        b.counts[t * 3 + 1] = t % 2 ? 5 : 9;
        b.counts[t * 3 + 2] = t % 2 ? 7 : 0;
    }
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 0};
    uint32_t perm[128];
    assert_int_equal(tmap_regroup_sort(&b, &o, perm, NULL), TMAP_OK);
    for (size_t i = 0; i < 128; i++) {
        assert_int_equal(perm[i] % 2, i < 64 ? 1 : 0); /* {1,5,7} < {1,9,0} */
        if (i % 64)
            assert_true(perm[i] > perm[i - 1]); /* stable */
    }
    tmap_bbv_free(&b);
}

/* Sorting's definition: thread indices sorted by row, lexicographically,
 * ties by index (qsort has no context: the rows are file-scope). */
static const uint32_t *def_rows;
static size_t def_nb;

static int cmp_def(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = tmap_regroup_row_cmp(def_rows + (size_t)x * def_nb,
                                 def_rows + (size_t)y * def_nb, def_nb);
    return c ? c : (x > y) - (x < y);
}

static void check_sort_definition(const tmap_bbv *b, tmap_regroup_opts o)
{
    size_t n = b->nthreads;
    size_t span = o.scope == TMAP_REGROUP_BLOCK ? o.block_size : n;
    uint32_t *perm = malloc(n * sizeof *perm), *want = malloc(n * sizeof *want);
    for (size_t t = 0; t < n; t++)
        want[t] = (uint32_t)t;
    def_rows = b->counts;
    def_nb = b->nblocks;
    for (size_t first = 0; first < n; first += span)
        qsort(want + first, n - first < span ? n - first : span,
              sizeof *want, cmp_def);
    assert_int_equal(tmap_regroup_sort(b, &o, perm, NULL), TMAP_OK);
    for (size_t i = 0; i < n; i++)
        if (perm[i] != want[i])
            fail_msg("sort n=%zu nb=%zu scope=%d: slot %zu has %u, want %u",
                     n, b->nblocks, (int)o.scope, i, perm[i], want[i]);
    free(perm);
    free(want);
}

/* Many duplicate rows (ties), leading columns equal in every row, and one
 * problem with over 64 Ki distinct rows whose two leading varying words
 * often tie (the radix ranking and its tie-breaking by whole rows). */
static void test_sort_definition(void **state)
{
    uint64_t seed = 2024;
    size_t distincts[] = {1, 2, 3, 7, 40, 0};
    for (int rep = 0; rep < 4; rep++)
        for (size_t d = 0; d < 6; d++)
            for (int scope = 0; scope < 2; scope++) {
                size_t n = 1 + rnd(&seed) % 700, nb = 1 + rnd(&seed) % 7;
                tmap_bbv b;
                random_bbv(&b, n, nb, distincts[d],
                           2 + (uint32_t)(rnd(&seed) % 4), &seed);
                if (rep % 2) /* leading columns equal in every row */
                    for (size_t t = 0; t < n; t++)
                        for (size_t j = 0; j + 1 < nb && j < 2; j++)
                            b.counts[t * nb + j] = 9;
                check_sort_definition(&b, (tmap_regroup_opts){32, scope, 128, 0});
                tmap_bbv_free(&b);
            }
    size_t n = 160000, nb = 4;
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, n, nb, NULL), TMAP_OK);
    for (size_t t = 0; t < n; t++) {
        uint32_t *r = b.counts + t * nb;
        if (t && rnd(&seed) % 4 == 0) { /* a copy of an earlier row */
            memcpy(r, b.counts + rnd(&seed) % t * nb, nb * sizeof *r);
            continue;
        }
        r[0] = 5;
        r[1] = (uint32_t)(rnd(&seed) % 8);
        r[2] = (uint32_t)(rnd(&seed) % 8);
        r[3] = (uint32_t)(rnd(&seed) % (1u << 20));
    }
    check_sort_definition(&b, (tmap_regroup_opts){32, TMAP_REGROUP_GRID, 0, 0});
    tmap_bbv_free(&b);
    /* rows wider than the 16 words the classes pass's hint cache hashes,
     * sharing those words in five families and differing after them, with
     * more distinct rows than hint slots: hints collide, go stale and miss */
    n = 30000, nb = 40;
    assert_int_equal(tmap_bbv_create(&b, n, nb, NULL), TMAP_OK);
    for (size_t t = 0; t < n; t++) {
        uint32_t *r = b.counts + t * nb, f = (uint32_t)(rnd(&seed) % 5);
        if (t && rnd(&seed) % 3 == 0) {
            memcpy(r, b.counts + rnd(&seed) % t * nb, nb * sizeof *r);
            continue;
        }
        for (size_t j = 0; j < nb; j++)
            r[j] = j < 16 ? f + (uint32_t)j
                   : j < 22 ? (uint32_t)(rnd(&seed) % 4) : 3;
    }
    check_sort_definition(&b, (tmap_regroup_opts){32, TMAP_REGROUP_GRID, 0, 0});
    tmap_bbv_free(&b);
}

/* Sets of identical threads whose sizes are multiples of the group size
 * end up in homogeneous groups with Greedy and Greedy-Max. */
static void test_identical_together(void **state)
{
    uint64_t seed = 7;
    size_t sizes[] = {64, 32, 96, 32};
    size_t n = 224, nb = 4;
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, n, nb, NULL), TMAP_OK);
    uint32_t *cls = malloc(n * sizeof *cls);
    size_t t = 0;
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < sizes[k]; i++)
            cls[t++] = (uint32_t)k;
    for (t = n - 1; t > 0; t--) { /* shuffle */
        size_t j = rnd(&seed) % (t + 1);
        uint32_t x = cls[t];
        cls[t] = cls[j];
        cls[j] = x;
    }
    for (t = 0; t < n; t++)
        for (size_t j = 0; j < nb; j++)
            b.counts[t * nb + j] = (cls[t] * 7 + (uint32_t)j * 3) % 11 + 1;
    double lat[] = {1, 2, 3, 4};
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 0};
    uint32_t *perm = malloc(n * sizeof *perm);
    for (size_t a = 0; a < NALGOS; a++) {
        assert_int_equal(algos[a].fn(&b, lat, &o, perm, NULL), TMAP_OK);
        for (size_t i = 0; i < n; i++)
            if (cls[perm[i]] != cls[perm[i - i % 32]])
                fail_msg("%s: group %zu mixes classes", algos[a].name,
                         i / 32);
    }
    free(perm);
    free(cls);
    tmap_bbv_free(&b);
}

/* ------------------------------------------------ fast == literal */

static void compare_fast_literal(size_t n, size_t nb, size_t distinct,
                                 uint32_t range, int integer_lat,
                                 tmap_regroup_opts o, uint64_t *seed)
{
    tmap_bbv b;
    random_bbv(&b, n, nb, distinct, range, seed);
    double *lat = random_lat(nb, seed, integer_lat);
    uint32_t *f = malloc(n * sizeof *f), *l = malloc(n * sizeof *l);
    tmap_error err;
    for (int pass = 0; pass < 2; pass++) {
        algo_fn fast = pass ? tmap_regroup_greedy_max : tmap_regroup_greedy;
        algo_fn lit = pass ? tmap_regroup_greedy_max_literal
                           : tmap_regroup_greedy_literal;
        if (fast(&b, lat, &o, f, &err) != TMAP_OK)
            fail_msg("fast: %s", err.message);
        assert_int_equal(lit(&b, lat, &o, l, NULL), TMAP_OK);
        for (size_t i = 0; i < n; i++)
            if (f[i] != l[i])
                fail_msg("%s n=%zu nb=%zu distinct=%zu gs=%zu scope=%d: "
                         "slot %zu fast %u literal %u",
                         pass ? "greedy_max" : "greedy", n, nb, distinct,
                         o.groupsize, (int)o.scope, i, f[i], l[i]);
    }
    free(f);
    free(l);
    free(lat);
    tmap_bbv_free(&b);
}

static void test_fast_equals_literal(void **state)
{
    uint64_t seed = 12345;
    size_t distincts[] = {1, 2, 3, 5, 12, 0};
    size_t gss[] = {32, 64, 96};
    int cases = 0;
    for (int rep = 0; rep < 6; rep++)
        for (size_t d = 0; d < 6; d++)
            for (size_t g = 0; g < 3; g++)
                for (int scope = 0; scope < 2; scope++) {
                    size_t n = 1 + rnd(&seed) % 256;
                    size_t nb = 1 + rnd(&seed) % 6;
                    uint32_t range = d == 5 ? 4 + (uint32_t)(rnd(&seed) % 50)
                                            : 3 + (uint32_t)(rnd(&seed) % 5);
                    tmap_regroup_opts o = {gss[g], scope, gss[g] * 2, 0};
                    compare_fast_literal(n, nb, distincts[d], range, rep % 2,
                                         o, &seed);
                    cases++;
                }
    print_message("fast == literal on %d random inputs (x2 algorithms)\n",
                  cases);
}

/* ------------------------------------------------ hand-worked cases */

/* Greedy, N = 96, groupsize 32, one block (lat = 1):
 *   threads 0..31 have count 3 (class X), 32..63 count 1 (Y), 64..95
 *   count 2 (Z), except that the classes are interleaved: thread t has
 *   count c(t) = {3, 1, 2}[t % 3].
 * Gains: X-X = 3, Z-Z = 2, Y-Y = 1, X-Z = 2*2-3 = 1, Z-Y = 2-2 = 0,
 * X-Y = 2-3 = -1.  Greedy first merges X threads (gain 3) in id order:
 * 0+3, then {0,3}+6, ... until 32 X threads {0,3,...,93} are emitted (the
 * first finished group; there are exactly 32 X threads).  Then Z (gain 2):
 * threads 2,5,...,95 emitted as group 2.  Then K-1 = 2 groups are done and
 * the Y threads 1,4,...,94 (singletons, ascending id) form the last. */
static void test_greedy_hand(void **state)
{
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, 96, 1, NULL), TMAP_OK);
    const uint32_t c[3] = {3, 1, 2};
    for (size_t t = 0; t < 96; t++)
        b.counts[t] = c[t % 3];
    double lat[1] = {1};
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 0};
    uint32_t perm[96];
    for (int lit = 0; lit < 2; lit++) {
        algo_fn fn = lit ? tmap_regroup_greedy_literal : tmap_regroup_greedy;
        assert_int_equal(fn(&b, lat, &o, perm, NULL), TMAP_OK);
        for (size_t i = 0; i < 32; i++) {
            assert_int_equal(perm[i], 3 * i);
            assert_int_equal(perm[32 + i], 3 * i + 2);
            assert_int_equal(perm[64 + i], 3 * i + 1);
        }
    }
    tmap_bbv_free(&b);
}

/* Greedy, a cross merge: N = 64, groupsize 32, one block, lat = 1.
 * Thread 0 has count 10, threads 1..31 count 4, threads 32..63 count 1.
 * Gains: (4,4) = 4, (10,4) = 8-10 = -2, (1,1) = 1, (4,1) = 2-4 = -2,
 * (10,1) = 2-10 = -8, (10,10) n/a.  First the 31 fours merge (gain 4) into
 * group 1 = {1..31} (size 31), then the ones (gain 1) merge into group 32 =
 * {32..62} (size 31, not yet 32 because thread 63 is added last: after
 * {32..62} + 63 the size is 32 -> finished group 1 is {32..63}).  K - 1 = 1
 * group is done; the last group is the remaining groups by ascending id:
 * {0} then {1..31}. */
static void test_greedy_hand_cross(void **state)
{
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, 64, 1, NULL), TMAP_OK);
    for (size_t t = 0; t < 64; t++)
        b.counts[t] = t == 0 ? 10 : t < 32 ? 4 : 1;
    double lat[1] = {1};
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 0};
    uint32_t perm[64];
    for (int lit = 0; lit < 2; lit++) {
        algo_fn fn = lit ? tmap_regroup_greedy_literal : tmap_regroup_greedy;
        assert_int_equal(fn(&b, lat, &o, perm, NULL), TMAP_OK);
        for (size_t i = 0; i < 32; i++) {
            assert_int_equal(perm[i], 32 + i);
            assert_int_equal(perm[32 + i], i);
        }
    }
    tmap_bbv_free(&b);
}

/* Greedy-Max, N = 64, groupsize 32, 2 blocks, lat = {1, 10}.
 * Threads t < 40: row {t % 4, 0}; threads t >= 40: row {0, 1}.
 * Lat: rows {3,0}: 3, {2,0}: 2, {1,0}: 1, {0,0}: 0, {0,1}: 10.
 * Group 1 starts at thread 40 (Lat 10, lowest index) and takes the 24
 * identical threads 40..63; then no identical remains and the gain
 * decides: with g = {0,1}: gain(+{a,0}) = 1*(2*0 - a) + 10*(0 - 1) =
 * -a - 10, maximal for a = 0: threads 0, 4, ..., 28 (identical to the
 * first) fill the 8 remaining slots (0,4,8,...,28).  Group 2 starts at the
 * max Lat 3: thread 3, then the identical 7, 11, ..., 39 (10 threads);
 * then gain(+{a,0}) with g = {3,0}: 2*min(a,3) - 3 = 2a - 3, max at a = 2:
 * threads 2, 6, ..., 38 (10); then g = {2..3, 0}: 2a - 3 for a < 2: a = 1:
 * 1, 5, ..., 37 (10); then a = 0: the two left, 32 and 36. */
static void test_greedy_max_hand(void **state)
{
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, 64, 2, NULL), TMAP_OK);
    for (size_t t = 0; t < 64; t++) {
        b.counts[2 * t] = t < 40 ? (uint32_t)(t % 4) : 0;
        b.counts[2 * t + 1] = t < 40 ? 0 : 1;
    }
    double lat[2] = {1, 10};
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 0};
    uint32_t want[64], perm[64];
    size_t k = 0;
    for (uint32_t t = 40; t < 64; t++)
        want[k++] = t;
    for (uint32_t t = 0; t <= 28; t += 4)
        want[k++] = t;
    for (uint32_t a = 3; a >= 1; a--)
        for (uint32_t t = a; t < 40; t += 4)
            want[k++] = t;
    want[k++] = 32;
    want[k++] = 36;
    assert_int_equal(k, 64);
    for (int lit = 0; lit < 2; lit++) {
        algo_fn fn = lit ? tmap_regroup_greedy_max_literal
                         : tmap_regroup_greedy_max;
        assert_int_equal(fn(&b, lat, &o, perm, NULL), TMAP_OK);
        assert_memory_equal(perm, want, sizeof want);
    }
    tmap_bbv_free(&b);
}

/* Groups come out in non-increasing Lat of their first thread. */
static void test_greedy_max_order(void **state)
{
    uint64_t seed = 99;
    for (int rep = 0; rep < 20; rep++) {
        size_t n = 100 + rnd(&seed) % 2000, nb = 8;
        tmap_bbv b;
        random_bbv(&b, n, nb, rep % 2 ? 0 : 20, 30, &seed);
        double *lat = random_lat(nb, &seed, 0);
        tmap_regroup_opts o = {64, TMAP_REGROUP_GRID, 0, 0};
        uint32_t *perm = malloc(n * sizeof *perm);
        assert_int_equal(tmap_regroup_greedy_max(&b, lat, &o, perm, NULL),
                         TMAP_OK);
        double prev = 0;
        for (size_t i = 0; i < n; i += 64) {
            double l = tmap_regroup_latency(b.counts + perm[i] * nb, lat, nb);
            if (i)
                assert_true(l <= prev);
            prev = l;
        }
        free(perm);
        free(lat);
        tmap_bbv_free(&b);
    }
}

/* --------------------------------------------------------- sort by key */

static void test_sort_key(void **state)
{
    double key[6] = {2, -1, 2, 0.0, -0.0, 5};
    uint32_t perm[6];
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 0};
    assert_int_equal(tmap_regroup_sort_key(key, 6, 0, &o, perm, NULL),
                     TMAP_OK);
    uint32_t asc[6] = {1, 3, 4, 0, 2, 5};
    assert_memory_equal(perm, asc, sizeof asc);
    assert_int_equal(tmap_regroup_sort_key(key, 6, 1, &o, perm, NULL),
                     TMAP_OK);
    uint32_t desc[6] = {5, 0, 2, 3, 4, 1};
    assert_memory_equal(perm, desc, sizeof desc);

    /* the radix path (large n) agrees with the comparison path */
    size_t n = 100000;
    double *k = malloc(n * sizeof *k);
    uint32_t *p = malloc(n * sizeof *p);
    uint64_t seed = 5;
    for (size_t i = 0; i < n; i++)
        k[i] = (double)(rnd(&seed) % 1000) - 500.5;
    for (int desc_ = 0; desc_ < 2; desc_++) {
        assert_int_equal(tmap_regroup_sort_key(k, n, desc_, &o, p, NULL),
                         TMAP_OK);
        for (size_t i = 1; i < n; i++) {
            double a = k[p[i - 1]], c = k[p[i]];
            assert_true(desc_ ? a >= c : a <= c);
            if (a == c)
                assert_true(p[i - 1] < p[i]);
        }
    }
    free(k);
    free(p);
}

/* ------------------------------------------------------- CPU threads */

/* The classes of p found by `threads` CPU threads equal those found by
 * one, field by field (the classes are numbered by first member). */
static void check_classes_threads(const tmap_bbv *b, size_t threads)
{
    tmap_regroup_part p = {.rows = b->counts, .nblocks = b->nblocks,
                           .n = b->nthreads, .groupsize = 32};
    tmap_regroup_classes one, many;
    assert_int_equal(tmap_regroup_classes_find(&p, &one, NULL), TMAP_OK);
    p.threads = threads;
    assert_int_equal(tmap_regroup_classes_find(&p, &many, NULL), TMAP_OK);
    assert_int_equal(many.count, one.count);
    assert_memory_equal(many.of, one.of, one.n * sizeof *one.of);
    assert_memory_equal(many.first, one.first, one.count * sizeof *one.first);
    assert_memory_equal(many.size, one.size, one.count * sizeof *one.size);
    for (size_t k = 1; k < one.count; k++)
        assert_true(one.first[k - 1] < one.first[k]);
    tmap_regroup_classes_free(&one);
    tmap_regroup_classes_free(&many);
}

/* Inputs large enough for several spans (8192 threads at least each):
 * few classes of wide rows (the hint cache's prefix is not the row), some
 * hundred classes of narrow rows, ~17000 classes of which many first occur
 * after the first span and recur in later ones (Sorting only: too many for
 * Greedy), and runs of equal rows crossing span borders. */
static void test_threads_same(void **state)
{
    uint64_t seed = 99;
    size_t n = 4 * 8192 + 123;
    const struct { size_t nb, distinct; uint32_t range; } in[] = {
        {20, 50, 5}, {3, 0, 8}, {2, 0, 150}};
    for (size_t c = 0; c < 4; c++) {
        tmap_bbv b;
        if (c < 3) {
            random_bbv(&b, n, in[c].nb, in[c].distinct, in[c].range, &seed);
        } else { /* runs of 40 equal rows, 30 classes */
            random_bbv(&b, n, 17, 30, 4, &seed);
            for (size_t t = 0; t < n; t++)
                memcpy(b.counts + t * 17, b.counts + (t / 40 * 40) * 17,
                       17 * sizeof *b.counts);
        }
        double *lat = random_lat(b.nblocks, &seed, 0);
        uint32_t *p1 = malloc(n * sizeof *p1), *pn = malloc(n * sizeof *pn);
        size_t threads[] = {2, 3, 4, 64};
        for (size_t t = 0; t < 4; t++) {
            check_classes_threads(&b, threads[t]);
            for (size_t a = 0; a < NALGOS; a++) {
                if (strstr(algos[a].name, "literal") ||
                    (c == 2 && algos[a].fn != sort_adapter))
                    continue;
                tmap_regroup_opts o1 = {32, TMAP_REGROUP_GRID, 0, 1};
                tmap_regroup_opts on = {32, TMAP_REGROUP_GRID, 0, threads[t]};
                assert_int_equal(algos[a].fn(&b, lat, &o1, p1, NULL), TMAP_OK);
                assert_int_equal(algos[a].fn(&b, lat, &on, pn, NULL), TMAP_OK);
                assert_memory_equal(p1, pn, n * sizeof *p1);
            }
        }
        free(p1);
        free(pn);
        free(lat);
        tmap_bbv_free(&b);
    }
}

/* ------------------------------------------------------ bad arguments */

static void test_bad_arguments(void **state)
{
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, 64, 2, NULL), TMAP_OK);
    double lat[2] = {1, 1}, badlat[2] = {1, -1};
    uint32_t perm[64];
    tmap_error err;
    tmap_regroup_opts ok = {32, TMAP_REGROUP_GRID, 0, 0};
    tmap_regroup_opts gs = {48, TMAP_REGROUP_GRID, 0, 0};
    tmap_regroup_opts zero = {0, TMAP_REGROUP_GRID, 0, 0};
    tmap_regroup_opts blk = {64, TMAP_REGROUP_BLOCK, 96, 0};
    tmap_regroup_opts many = {32, TMAP_REGROUP_GRID, 0, TMAP_REGROUP_MAX_THREADS + 1};
    tmap_bbv empty = {0, 2, NULL};
    for (size_t a = 0; a < NALGOS; a++) {
        algo_fn fn = algos[a].fn;
        assert_int_equal(fn(&b, lat, &gs, perm, &err), TMAP_ERR_INVALID);
        assert_non_null(strstr(err.message, "multiple of 32"));
        assert_int_equal(fn(&b, lat, &zero, perm, NULL), TMAP_ERR_INVALID);
        assert_int_equal(fn(&b, lat, &blk, perm, NULL), TMAP_ERR_INVALID);
        assert_int_equal(fn(&b, lat, &many, perm, &err), TMAP_ERR_INVALID);
        assert_non_null(strstr(err.message, "at most 64"));
        assert_int_equal(fn(&b, lat, NULL, perm, NULL), TMAP_ERR_INVALID);
        assert_int_equal(fn(NULL, lat, &ok, perm, NULL), TMAP_ERR_INVALID);
        assert_int_equal(fn(&empty, lat, &ok, perm, NULL), TMAP_ERR_INVALID);
        assert_int_equal(fn(&b, lat, &ok, NULL, NULL), TMAP_ERR_INVALID);
        if (fn != sort_adapter) {
            assert_int_equal(fn(&b, NULL, &ok, perm, NULL), TMAP_ERR_INVALID);
            assert_int_equal(fn(&b, badlat, &ok, perm, NULL),
                             TMAP_ERR_INVALID);
        }
    }
    double key[2] = {1, 0.0 / 0.0};
    assert_int_equal(tmap_regroup_sort_key(key, 2, 0, &ok, perm, NULL),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_sort_key(key, 0, 0, &ok, perm, NULL),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_identity(0, perm, NULL), TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_identity(4, NULL, NULL), TMAP_ERR_INVALID);
    assert_int_equal(tmap_regroup_identity(4, perm, NULL), TMAP_OK);
    tmap_bbv_free(&b);
}

/* Bin-and-deal by hand: 256 threads in 4 blocks of 64, groups of 32, the
 * order 255, 254, ..., 0: group g holds 224 - 32g .. 255 - 32g and goes to
 * block g % 4 as its group g / 4, its threads ascending. */
static void test_deal_hand(void **state)
{
    uint32_t sorted[256], perm[256];
    for (uint32_t i = 0; i < 256; i++)
        sorted[i] = 255 - i;
    assert_int_equal(tmap_regroup_deal(sorted, 256, 64, 32, perm, NULL), TMAP_OK);
    assert_int_equal(perm[0], 224);    /* block 0: groups 0 and 4 */
    assert_int_equal(perm[31], 255);
    assert_int_equal(perm[32], 96);
    assert_int_equal(perm[64], 192);   /* block 1: groups 1 and 5 */
    assert_int_equal(perm[96], 64);
    assert_int_equal(perm[255], 31);   /* block 3, second: group 7 */
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t b = i / 64, j = (i % 64) / 32, g = 4 * j + b;
        assert_int_equal(perm[i], 224 - 32 * g + i % 32);
    }
    tmap_error e;
    assert_int_equal(tmap_regroup_deal(sorted, 250, 64, 32, perm, &e), TMAP_ERR_UNSUPPORTED);
    assert_int_equal(tmap_regroup_deal(sorted, 256, 48, 32, perm, &e), TMAP_ERR_UNSUPPORTED);
    assert_int_equal(tmap_regroup_deal(sorted, 256, 64, 32, sorted, &e), TMAP_ERR_INVALID);
}

/* Bin-and-deal from BBVs: one heavy thread in 8 per block goes first, whole
 * warps of heavy threads are spread one per block, and it needs grid scope. */
static void test_bin_deal(void **state)
{
    tmap_bbv b;
    assert_int_equal(tmap_bbv_create(&b, 512, 1, NULL), TMAP_OK);
    for (size_t t = 0; t < 512; t++)
        b.counts[t] = t % 8 == 0 ? 100 : 1; /* 64 heavy threads: two warps */
    const double lat[1] = {1};
    tmap_regroup_opts o = {.groupsize = 32, .scope = TMAP_REGROUP_GRID, .block_size = 128};
    uint32_t perm[512];
    assert_int_equal(tmap_regroup_bin_deal(&b, lat, &o, perm, NULL), TMAP_OK);
    assert_int_equal(tmap_regroup_check(perm, 512, &o, NULL), TMAP_OK);
    for (size_t blk = 0; blk < 4; blk++)
        for (size_t i = 0; i < 32; i++) {
            uint32_t t = perm[blk * 128 + i];
            assert_true(blk < 2 ? t % 8 == 0 : t % 8 != 0); /* heavy warps in blocks 0, 1 */
            if (i)
                assert_true(t > perm[blk * 128 + i - 1]);   /* ascending in the warp */
        }
    o.scope = TMAP_REGROUP_BLOCK;
    tmap_error e;
    assert_int_equal(tmap_regroup_bin_deal(&b, lat, &o, perm, &e), TMAP_ERR_UNSUPPORTED);
    tmap_bbv_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_permutations),
        cmocka_unit_test(test_check_rejects),
        cmocka_unit_test(test_sort_two_classes),
        cmocka_unit_test(test_sort_definition),
        cmocka_unit_test(test_identical_together),
        cmocka_unit_test(test_fast_equals_literal),
        cmocka_unit_test(test_greedy_hand),
        cmocka_unit_test(test_greedy_hand_cross),
        cmocka_unit_test(test_greedy_max_hand),
        cmocka_unit_test(test_greedy_max_order),
        cmocka_unit_test(test_sort_key),
        cmocka_unit_test(test_threads_same),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_deal_hand),
        cmocka_unit_test(test_bin_deal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_noise.c -- the residuals by predicted value (tmap_noise_fit) on a
 * hand case, rho on hand groups, and the expected slowest lane
 * (tmap_noise_warp_counts): exact for two lanes (Clark's moments are exact
 * for the maximum of two normals), the expected maximum of 32 equal
 * standard normals, the cap, no change without deviation, lanes of equal
 * features one draw when rho is 1.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "threadmap/model.h"

enum { NB = TMAP_NOISE_BINS };

/* pred 0 (residuals 0, 2, 0, 2) and 10 (-5, 5, -5, 5): the edges are the
 * sorted predictions' k/8 quantiles, 0 0 0 10 10 10 10; bin 0 holds the
 * zeros (mean 1, sd 1), bin 3 the tens (mean 0, sd 5); the empty bins take
 * the nearest filled one, the lower first. */
static void test_fit_hand(void **state)
{
    (void)state;
    double pred[] = {0, 0, 0, 0, 10, 10, 10, 10}, truth[] = {0, 2, 0, 2, 5, 15, 5, 15};
    double edge[NB - 1], mean[NB], sd[NB], cap, rho;
    tmap_error err = {0};
    assert_int_equal(tmap_noise_fit(pred, truth, NULL, 0, 8, edge, mean, sd, &cap, &rho, &err),
                     TMAP_OK);
    assert_true(rho == 0);
    double want_edge[NB - 1] = {0, 0, 0, 10, 10, 10, 10};
    double want_mean[NB] = {1, 1, 0, 0, 0, 0, 0, 0}, want_sd[NB] = {1, 1, 5, 5, 5, 5, 5, 5};
    for (int k = 0; k < NB - 1; k++)
        assert_true(edge[k] == want_edge[k]);
    for (int k = 0; k < NB; k++) {
        assert_true(fabs(mean[k] - want_mean[k]) < 1e-12);
        assert_true(fabs(sd[k] - want_sd[k]) < 1e-12);
    }
    assert_true(cap == 15);
    assert_int_equal(tmap_noise_fit(NULL, NULL, NULL, 0, 0, edge, mean, sd, &cap, &rho, &err),
                     TMAP_OK);
    assert_true(cap == 0 && sd[0] == 0 && rho == 0);
}

/* rho: residuals 1 1 3 3 in groups a a b b vary only between the groups
 * (rho 1); in groups a b a b only within them (rho 0); a single row per
 * key tells nothing (rho 0).  The groups come from the keys, in one sort. */
static double rho_of(const uint64_t *key)
{
    double pred[4] = {0}, truth[4] = {1, 1, 3, 3}, edge[NB - 1], mean[NB], sd[NB], cap, rho;
    uint32_t group[4];
    size_t ng;
    tmap_error err = {0};
    assert_int_equal(tmap_noise_groups(key, 4, group, &ng, &err), TMAP_OK);
    assert_int_equal(tmap_noise_fit(pred, truth, group, ng, 4, edge, mean, sd, &cap, &rho, &err),
                     TMAP_OK);
    return rho;
}

static void test_fit_rho(void **state)
{
    (void)state;
    uint64_t same[4] = {7, 7, 9, 9}, apart[4] = {7, 9, 7, 9}, each[4] = {1, 2, 3, 4};
    assert_true(fabs(rho_of(same) - 1) < 1e-12);
    assert_true(fabs(rho_of(apart)) < 1e-12);
    assert_true(rho_of(each) == 0);
    uint32_t group[4];
    size_t ng;
    tmap_error err = {0};
    assert_int_equal(tmap_noise_groups(apart, 4, group, &ng, &err), TMAP_OK);
    assert_int_equal(ng, 2);
    assert_true(group[0] == group[2] && group[1] == group[3] && group[0] != group[1]);
    double row[2] = {1.5, -2}, row2[2] = {1.5, -2}, row3[2] = {1.5, 2};
    assert_true(tmap_noise_key(row, 2) == tmap_noise_key(row2, 2));
    assert_true(tmap_noise_key(row, 2) != tmap_noise_key(row3, 2));
}

/* One bin for every value: mean m, deviation s, cap c, rho 0, on one
 * block. */
static void one_bin(tmap_bbv_noise *nz, double m, double s, double c)
{
    tmap_error err = {0};
    assert_int_equal(tmap_noise_create(nz, 1, &err), TMAP_OK);
    for (int k = 0; k < NB - 1; k++)
        nz->edge[k] = 1e300;
    for (int k = 0; k < NB; k++)
        nz->mean[k] = m, nz->sd[k] = s;
    nz->cap[0] = c;
}

/* c of warp 0 for n lanes predicted `value`, with one_bin(m, s, cap) and
 * the lanes' groups (NULL: apart) and rho. */
static uint32_t warp_keyed(size_t n, uint32_t value, double m, double s, double cap,
                           const uint32_t *group, double rho, uint32_t *a)
{
    tmap_bbv bbv;
    tmap_warp_counts w;
    tmap_bbv_noise nz;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, n, 1, &err), TMAP_OK);
    for (size_t t = 0; t < n; t++)
        bbv.counts[t] = value;
    assert_int_equal(tmap_warp_counts_make(&bbv, NULL, 32, &w, &err), TMAP_OK);
    one_bin(&nz, m, s, cap);
    nz.rho[0] = rho;
    assert_int_equal(tmap_noise_warp_counts(&nz, &bbv, group, NULL, &w, &err), TMAP_OK);
    uint32_t c = w.c[0];
    if (a)
        *a = w.a[0];
    tmap_noise_free(&nz);
    tmap_warp_counts_free(&w);
    tmap_bbv_free(&bbv);
    return c;
}

static uint32_t warp_c(size_t n, uint32_t value, double m, double s, double cap, uint32_t *a)
{
    return warp_keyed(n, value, m, s, cap, NULL, 0, a);
}

static void test_expected_max(void **state)
{
    (void)state;
    uint32_t a;
    /* two lanes N(1000, 100^2): 1000 + 100 / sqrt(pi) = 1056.42 */
    assert_int_equal(warp_c(2, 1000, 0, 100, 1e9, &a), 1056);
    assert_int_equal(a, 2000);
    /* 32 lanes N(1000, 100^2), equal normals taken together: the expected
     * max of 32 standard normals, 2.0697 */
    uint32_t c = warp_c(32, 1000, 0, 100, 1e9, NULL);
    assert_int_equal(c, 1207);
    /* no deviation, no mean: unchanged; a mean alone shifts it */
    assert_int_equal(warp_c(32, 1000, 0, 0, 1e9, NULL), 1000);
    assert_int_equal(warp_c(32, 1000, 7, 0, 1e9, NULL), 1007);
    /* the cap: E[min(max, 1010)] of the two lanes above, below 1010; never
     * below the predicted max */
    c = warp_c(2, 1000, 0, 100, 1010, NULL);
    assert_true(c >= 1000 && c < 1010);
    assert_int_equal(warp_c(2, 1000, -500, 1, 1e9, NULL), 1000);
    /* lanes predicted 0 that run 5 on average: c 5, a the four lanes' 20 */
    assert_int_equal(warp_c(4, 0, 5, 0, 1e9, &a), 5);
    assert_int_equal(a, 20);
    /* a is each lane's prediction plus its bin's mean, within [0, cap],
     * summed (the mean of the true counts' sum), and never below c: two
     * lanes of 1000 + 20 at cap 1010 sum to 2020; four lanes of 3 - 5 to 0,
     * raised to c, 3 */
    c = warp_c(2, 1000, 20, 0, 1010, &a);
    assert_int_equal(a, 2020);
    assert_int_equal(warp_c(4, 3, -5, 0, 1e9, &a), 3);
    assert_int_equal(a, 3);
    /* a mean of half an execution over 32 lanes: 16 more in the sum, the
     * max rounds 0.5 up to 1 */
    assert_int_equal(warp_c(32, 0, 0.5, 0, 1e9, &a), 1);
    assert_int_equal(a, 16);
    /* 32 lanes of one key: rho 1, one draw (its mean, 1000); rho 0, as apart;
     * two keys of 16 lanes, rho 1: two draws (1056) */
    uint32_t one[32] = {0}, two[32];
    for (int i = 0; i < 32; i++)
        two[i] = (uint32_t)(i % 2);
    assert_int_equal(warp_keyed(32, 1000, 0, 100, 1e9, one, 1, NULL), 1000);
    assert_int_equal(warp_keyed(32, 1000, 0, 100, 1e9, one, 0, NULL), 1207);
    assert_int_equal(warp_keyed(32, 1000, 0, 100, 1e9, two, 1, NULL), 1056);
}

/* Two lanes predicted 1000 and 1100, deviation 100: Clark's moments,
 * exact for two normals: 1100 Phi(a) + 1000 Phi(-a) + t phi(a), t = 100
 * sqrt 2, a = 100 / t: 1119.96. */
static void test_two_means(void **state)
{
    (void)state;
    tmap_bbv bbv;
    tmap_warp_counts w;
    tmap_bbv_noise nz;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 2, 1, &err), TMAP_OK);
    bbv.counts[0] = 1000, bbv.counts[1] = 1100;
    assert_int_equal(tmap_warp_counts_make(&bbv, NULL, 32, &w, &err), TMAP_OK);
    one_bin(&nz, 0, 100, 1e9);
    assert_int_equal(tmap_noise_warp_counts(&nz, &bbv, NULL, NULL, &w, &err), TMAP_OK);
    assert_int_equal(w.c[0], 1120);
    assert_int_equal(w.a[0], 2100);
    tmap_noise_free(&nz);
    tmap_warp_counts_free(&w);
    tmap_bbv_free(&bbv);
}

static void test_mismatch(void **state)
{
    (void)state;
    tmap_bbv bbv;
    tmap_warp_counts w;
    tmap_bbv_noise nz;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 4, 2, &err), TMAP_OK);
    assert_int_equal(tmap_warp_counts_make(&bbv, NULL, 32, &w, &err), TMAP_OK);
    one_bin(&nz, 0, 1, 10);
    assert_int_equal(tmap_noise_warp_counts(&nz, &bbv, NULL, NULL, &w, &err), TMAP_ERR_INVALID);
    assert_int_equal(tmap_noise_warp_counts(NULL, &bbv, NULL, NULL, &w, &err), TMAP_ERR_INVALID);
    tmap_noise_free(&nz);
    tmap_noise_free(&nz); /* a zeroed struct */
    tmap_warp_counts_free(&w);
    tmap_bbv_free(&bbv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_hand),
        cmocka_unit_test(test_fit_rho),
        cmocka_unit_test(test_expected_max),
        cmocka_unit_test(test_two_means),
        cmocka_unit_test(test_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

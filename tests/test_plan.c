/*
 * test_plan.c -- choosing a regrouping: it pays on a two-class input, not on
 * a uniform one, and not when applying it costs more than it saves.
 */
#include <math.h>

#include "tests/testutil.h"
#include "threadmap/regroup.h"

/* Two blocks: an entry run once, a loop run `long_trips` times by odd
 * threads and never by even ones (interleaved: every warp diverges). */
static void two_class(tmap_bbv *b, size_t n, uint32_t long_trips)
{
    TMAP_CHECK(tmap_bbv_create(b, n, 2, err));
    for (size_t t = 0; t < n; t++) {
        b->counts[t * 2] = 1;
        b->counts[t * 2 + 1] = (t & 1) ? long_trips : 0;
    }
}

static tmap_plan_opts opts(void)
{
    tmap_plan_opts o = {0};
    o.model = (tmap_model_params){.block_size = 256, .nsms = 4, .blocks_per_sm = 2};
    o.regroup.groupsize = 32;
    o.regroup.scope = TMAP_REGROUP_GRID;
    o.threshold = 0.05;
    return o;
}

static const double lat[2] = {10, 20};

static void regrouping_pays_on_two_classes(void **state)
{
    tmap_bbv b;
    two_class(&b, 4096, 100);
    tmap_plan_opts o = opts();
    tmap_plan p;
    TMAP_CHECK(tmap_plan_make(&b, lat, NULL, &o, &p, err));
    /* identity, sorting, greedy, greedy-max, bin-and-deal: no key given */
    assert_int_equal(p.n, 5);
    assert_int_not_equal(p.chosen, 0);
    for (size_t i = 1; i < p.n; i++) {
        assert_true(p.cand[i].available);
        TMAP_CHECK(tmap_perm_check(p.cand[i].perm, b.nthreads, "perm", err));
        /* every warp homogeneous after regrouping */
        assert_true(p.cand[i].m.divergent_warps_pct == 0.0);
        assert_true(p.cand[i].gain > 0.4);
    }
    assert_true(p.cand[0].m.divergent_warps_pct == 100.0);
    assert_non_null(strstr(p.why, "apply it"));
    assert_non_null(strstr(p.why, "model only"));
    tmap_plan_free(&p);
    tmap_bbv_free(&b);
}

static void uniform_input_is_left_alone(void **state)
{
    tmap_bbv b;
    TMAP_CHECK(tmap_bbv_create(&b, 2048, 2, err));
    for (size_t t = 0; t < 2048; t++)
        b.counts[t * 2] = 1, b.counts[t * 2 + 1] = 7;
    tmap_plan_opts o = opts();
    tmap_plan p;
    TMAP_CHECK(tmap_plan_make(&b, lat, NULL, &o, &p, err));
    assert_int_equal(p.chosen, 0);
    assert_non_null(strstr(p.why, "leave"));
    tmap_plan_free(&p);
    tmap_bbv_free(&b);
}

static void costs_can_outweigh_gains(void **state)
{
    tmap_bbv b;
    two_class(&b, 4096, 100);
    tmap_plan_opts o = opts();
    o.original_ms = 1000.0; /* large, so the algorithms' own time (ms) is noise */
    o.apply_ms = 900.0;     /* the predicted ~50% gain is smaller than this */
    tmap_plan p;
    TMAP_CHECK(tmap_plan_make(&b, lat, NULL, &o, &p, err));
    assert_int_equal(p.chosen, 0);
    assert_non_null(strstr(p.why, "misses"));
    for (size_t i = 1; i < p.n; i++)
        assert_true(fabs(p.cand[i].total_ms -
                         (1000.0 * (1.0 - p.cand[i].gain) + p.cand[i].algo_ms + 900.0)) < 1e-6);
    tmap_plan_free(&p);
    o.apply_ms = 10.0;
    TMAP_CHECK(tmap_plan_make(&b, lat, NULL, &o, &p, err));
    assert_int_not_equal(p.chosen, 0);
    assert_non_null(strstr(p.why, "beats"));
    tmap_plan_free(&p);
    tmap_bbv_free(&b);
}

static void key_candidate_and_selection(void **state)
{
    tmap_bbv b;
    two_class(&b, 4096, 50); /* 16 thread blocks on 8 slots: order matters */
    double *key = malloc(4096 * sizeof *key);
    for (size_t t = 0; t < 4096; t++)
        key[t] = (double)(t & 1);
    tmap_plan_opts o = opts();
    o.key = key;
    o.algos = 1u << TMAP_ALGO_KEY;
    tmap_plan p;
    TMAP_CHECK(tmap_plan_make(&b, lat, NULL, &o, &p, err));
    assert_int_equal(p.n, 2);
    assert_int_equal(p.cand[1].algo, TMAP_ALGO_KEY);
    assert_int_equal(p.chosen, 1);
    /* descending key: the long (odd) threads first */
    assert_int_equal(p.cand[1].perm[0] & 1, 1);
    tmap_plan_free(&p);
    tmap_bbv_free(&b);
    free(key);
}

static void names_and_bad_options(void **state)
{
    for (int a = 0; a < TMAP_ALGO_COUNT; a++)
        assert_int_equal(tmap_algo_parse(tmap_algo_name((tmap_algo)a)), a);
    assert_int_equal(tmap_algo_parse("bogus"), -1);
    tmap_bbv b;
    two_class(&b, 64, 3);
    tmap_plan_opts o = opts();
    o.threshold = 1.5;
    tmap_plan p;
    tmap_error e = {0};
    assert_int_equal(tmap_plan_make(&b, lat, NULL, &o, &p, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "threshold"));
    o = opts();
    o.regroup.groupsize = 48;
    assert_int_not_equal(tmap_plan_make(&b, lat, NULL, &o, &p, &e), TMAP_OK);
    tmap_bbv_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regrouping_pays_on_two_classes),
        cmocka_unit_test(uniform_input_is_left_alone),
        cmocka_unit_test(costs_can_outweigh_gains),
        cmocka_unit_test(key_candidate_and_selection),
        cmocka_unit_test(names_and_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

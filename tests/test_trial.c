/*
 * test_trial.c -- measured feedback's bookkeeping (pipeline/trial.c): the
 * order of the trial launches, the original while times are pending, and
 * the choice: the least median wins only if it beats the original by the
 * threshold; one slow outlier does not decide.
 */
#include "tests/testutil.h"
#include "pipeline/trial.h"

/* Hands out every trial launch and records times[cand][rep]. */
static void run(tmap_trial *t, const float times[][3])
{
    int seen[TMAP_TRIAL_MAX_CAND] = {0}, timed;
    for (int i = 0; i < t->ncand * t->reps; i++) {
        int c = tmap_trial_next(t, &timed);
        assert_int_equal(c, i % t->ncand); /* in turns, the original first */
        assert_true(timed);
        assert_int_equal(t->chosen, -1);
        tmap_trial_record(t, c, times[c][seen[c]++]);
    }
}

static void test_order_and_choice(void **state)
{
    tmap_trial t;
    TMAP_CHECK(tmap_trial_init(&t, 3, 3, 0.03, err));
    const float times[3][3] = {{1.0f, 1.1f, 0.9f}, {0.5f, 9.0f, 0.6f}, {0.7f, 0.7f, 0.7f}};
    run(&t, times);
    assert_int_equal(t.chosen, 1); /* median 0.6 despite one 9.0 */
    assert_float_equal(t.median_ms[0], 1.0, 1e-6);
    assert_float_equal(t.median_ms[1], 0.6, 1e-6);
    int timed;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tmap_trial_next(&t, &timed), 1);
        assert_false(timed);
    }
}

static void test_threshold_keeps_original(void **state)
{
    tmap_trial t;
    TMAP_CHECK(tmap_trial_init(&t, 2, 3, 0.03, err));
    const float times[2][3] = {{1.0f, 1.0f, 1.0f}, {0.98f, 0.98f, 0.98f}}; /* 2%: not enough */
    run(&t, times);
    assert_int_equal(t.chosen, 0);
    TMAP_CHECK(tmap_trial_init(&t, 2, 3, 0.03, err));
    const float slower[2][3] = {{1.0f, 1.0f, 1.0f}, {1.5f, 1.4f, 1.6f}};
    run(&t, slower);
    assert_int_equal(t.chosen, 0);
}

static void test_pending_runs_original(void **state)
{
    tmap_trial t;
    TMAP_CHECK(tmap_trial_init(&t, 2, 2, 0.03, err));
    int timed;
    for (int i = 0; i < 4; i++)
        tmap_trial_next(&t, &timed);
    for (int i = 0; i < 3; i++) { /* handed out, no time in yet */
        assert_int_equal(tmap_trial_next(&t, &timed), 0);
        assert_false(timed);
    }
    tmap_trial_record(&t, 1, 0.5f);
    tmap_trial_record(&t, 0, 1.0f);
    tmap_trial_record(&t, 1, 0.5f);
    assert_int_equal(t.chosen, -1);
    tmap_trial_record(&t, 0, 1.0f); /* the last time in, in any order */
    assert_int_equal(t.chosen, 1);
}

static void test_bad_arguments(void **state)
{
    tmap_trial t;
    tmap_error e;
    assert_int_equal(tmap_trial_init(&t, 0, 3, 0.03, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_trial_init(&t, TMAP_TRIAL_MAX_CAND + 1, 3, 0.03, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_trial_init(&t, 2, 0, 0.03, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_trial_init(&t, 2, 3, 1.0, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_trial_init(NULL, 2, 3, 0.03, &e), TMAP_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_choice),
        cmocka_unit_test(test_threshold_keeps_original),
        cmocka_unit_test(test_pending_runs_original),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

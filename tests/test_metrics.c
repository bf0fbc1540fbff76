/*
 * test_metrics.c -- the metrics on hand-computed BBV matrices, Fig. 4
 * (static vs dynamic round robin) and Fig. 5 (ordered vs unordered queue)
 * of Liang et al., permutations, partial warps and blocks, and the
 * divergent-branch estimate on small hand-built CFGs, the zero-divergence
 * time (one per kernel), and SIMD efficiency as written out in both forms.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <jansson.h>

#include "threadmap/model.h"
#include "threadmap/report.h"

/* A hand-built CFG: blocks with ninstr, term, successors (test data). */
typedef struct test_cfg {
    tmap_cfg cfg;
    tmap_cfg_func func;
    tmap_cfg_block blocks[8];
    uint32_t succ[8][4];
} test_cfg;

static void cfg_init(test_cfg *t, size_t n)
{
    memset(t, 0, sizeof *t);
    t->func = (tmap_cfg_func){"k", 1, 0, (uint32_t)n};
    t->cfg = (tmap_cfg){1, &t->func, n, t->blocks};
    for (size_t b = 0; b < n; b++) {
        t->blocks[b].name = "k/b";
        t->blocks[b].succ = t->succ[b];
        t->blocks[b].ipdom = -1;
    }
}

static void cfg_block(test_cfg *t, size_t b, uint32_t ninstr, tmap_term term, int pred,
                      uint32_t nsucc, const uint32_t *succ)
{
    t->blocks[b].ninstr = ninstr;
    t->blocks[b].term = term;
    t->blocks[b].predicated_term = pred;
    t->blocks[b].nsucc = nsucc;
    if (nsucc)
        memcpy(t->succ[b], succ, nsucc * sizeof *succ);
}

/* The loop CFG: b0 -> b1, b1 -> {b1, b2} (latch), b2 ret. */
static void loop_cfg(test_cfg *t)
{
    cfg_init(t, 3);
    cfg_block(t, 0, 2, TMAP_TERM_FALL, 0, 1, (uint32_t[]){1});
    cfg_block(t, 1, 5, TMAP_TERM_CBRA, 1, 2, (uint32_t[]){1, 2});
    cfg_block(t, 2, 1, TMAP_TERM_RET, 0, 0, NULL);
}

/* b0 -> {b1, b2}, b1 -> b2 (a skipped block), 2, 4 and 2 instructions. */
static void skip_cfg(test_cfg *t)
{
    cfg_init(t, 3);
    cfg_block(t, 0, 2, TMAP_TERM_CBRA, 1, 2, (uint32_t[]){1, 2});
    cfg_block(t, 1, 4, TMAP_TERM_FALL, 0, 1, (uint32_t[]){2});
    cfg_block(t, 2, 2, TMAP_TERM_RET, 0, 0, NULL);
}

static void test_hand_computed(void **state)
{
    (void)state;
    /* 40 threads in one thread block of 40: warp 0 is 32 threads, warp 1
     * is 8.  Thread 5 runs the loop 3 times, the rest of warp 0 once,
     * warp 1 twice each. */
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 40, 3, &err), TMAP_OK);
    for (uint32_t t = 0; t < 40; t++) {
        bbv.counts[t * 3 + 0] = 1;
        bbv.counts[t * 3 + 1] = t < 32 ? (t == 5 ? 3 : 1) : 2;
        bbv.counts[t * 3 + 2] = 1;
    }
    double lat[3] = {10, 100, 1};
    test_cfg c;
    loop_cfg(&c);
    tmap_model_params p = {.block_size = 40, .nsms = 2, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err), TMAP_OK);
    assert_int_equal(m.nwarps, 2);
    assert_int_equal(m.nthread_blocks, 1);
    assert_true(m.warp_cost[0] == 311);         /* 10*1 + 100*3 + 1*1 */
    assert_true(m.warp_cost[1] == 211);         /* 10 + 100*2 + 1 */
    assert_true(m.block_cost[0] == 522);        /* eq. 4 */
    assert_true(m.bbv_weighted == 261);         /* eq. 5: 522 / 2 SMs */
    assert_true(m.bbv_weighted_scheduled == 522);
    assert_true(m.ideal_warp_cost[0] == 117.25); /* 10 + 100*34/32 + 1 */
    assert_true(m.zero_divergence == 117.25 + 211);
    assert_true(m.divergent_warps_pct == 50.0);
    /* thread-instructions 370 over warp-instructions 31 */
    assert_true(fabs(m.simd_active_threads_per_inst - 370.0 / 31.0) < 1e-12);
    /* latch: in warp 0, round 0 has 31 threads leaving and thread 5
     * staying: 1 divergent execution of 3; warp 1 none of 2. */
    assert_true(m.divergent_branches == 1);
    assert_true(m.branch_executions == 5);
    assert_int_equal(m.branches_unestimated, 0);
    tmap_metrics_free(&m);
    /* Without a CFG the CFG-based metrics are unavailable. */
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &p, &m, &err), TMAP_OK);
    assert_true(isnan(m.simd_active_threads_per_inst) && isnan(m.divergent_branches));
    assert_true(m.bbv_weighted == 261);
    tmap_metrics_free(&m);
    tmap_bbv_free(&bbv);
}

static void test_branch_estimates(void **state)
{
    (void)state;
    /* if-then-else: b0 -> {b1, b2}, both -> b3.  32 threads alternate. */
    test_cfg c;
    cfg_init(&c, 4);
    cfg_block(&c, 0, 1, TMAP_TERM_CBRA, 1, 2, (uint32_t[]){1, 2});
    cfg_block(&c, 1, 1, TMAP_TERM_BRA, 0, 1, (uint32_t[]){3});
    cfg_block(&c, 2, 1, TMAP_TERM_FALL, 0, 1, (uint32_t[]){3});
    cfg_block(&c, 3, 1, TMAP_TERM_RET, 0, 0, NULL);
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 64, 4, &err), TMAP_OK);
    for (uint32_t t = 0; t < 64; t++) {
        uint32_t *r = bbv.counts + t * 4;
        r[0] = r[3] = 1;
        /* warp 0 alternates; warp 1 all take b1 */
        r[1] = t < 32 ? t % 2 : 1;
        r[2] = 1 - r[1];
    }
    double lat[4] = {1, 1, 1, 1};
    tmap_model_params p = {.block_size = 64, .nsms = 1, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err), TMAP_OK);
    assert_true(m.divergent_branches == 1);
    assert_true(m.branch_executions == 2);
    assert_true(m.warp_cost[0] == 4 && m.warp_cost[1] == 3);
    tmap_metrics_free(&m);
    /* b1 and b2 also reachable from elsewhere: no known successor count. */
    cfg_block(&c, 3, 1, TMAP_TERM_CBRA, 1, 2, (uint32_t[]){1, 2});
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err), TMAP_OK);
    assert_int_equal(m.branches_unestimated, 2);
    assert_true(m.divergent_branches == 0);
    tmap_metrics_free(&m);
    /* A CFG for another kernel is refused. */
    c.cfg.nblocks = 3;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err),
                     TMAP_ERR_INVALID);
    tmap_bbv_free(&bbv);
}

static void test_predicated_exit(void **state)
{
    (void)state;
    /* b0: @p exit, falls to b1 (its only predecessor); 32 threads, 10 leave. */
    test_cfg c;
    cfg_init(&c, 2);
    cfg_block(&c, 0, 3, TMAP_TERM_EXIT, 1, 1, (uint32_t[]){1});
    cfg_block(&c, 1, 4, TMAP_TERM_RET, 0, 0, NULL);
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 32, 2, &err), TMAP_OK);
    for (uint32_t t = 0; t < 32; t++) {
        bbv.counts[t * 2] = 1;
        bbv.counts[t * 2 + 1] = t >= 10;
    }
    double lat[2] = {3, 4};
    tmap_model_params p = {.block_size = 32, .nsms = 1, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err), TMAP_OK);
    assert_true(m.divergent_branches == 1);
    /* (3*32 + 4*22) thread-instructions over 7 warp-instructions */
    assert_true(fabs(m.simd_active_threads_per_inst - (3.0 * 32 + 4.0 * 22) / 7.0) < 1e-12);
    tmap_metrics_free(&m);
    /* SASS weights replace the PTX counts: 2 and 9 instructions */
    double w[2] = {2, 9};
    p.simd_weights = w;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err), TMAP_OK);
    assert_true(fabs(m.simd_active_threads_per_inst - (2.0 * 32 + 9.0 * 22) / 11.0) < 1e-12);
    assert_true(m.thread_instructions == 2.0 * 32 + 9.0 * 22 && m.warp_instructions == 11);
    assert_true(m.bbv_weighted == 7); /* times keep the latencies */
    tmap_metrics_free(&m);
    w[1] = NAN;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err),
                     TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "SIMD weight 1"));
    tmap_bbv_free(&bbv);
}

/* Splits (tmap_sass_split): a loop b0 whose exit has no reconvergence
 * barrier, then b1 (6 SASS instructions, of which 4 run once per group of
 * threads that left the loop together, key {b0}).  Warp 0: b0 runs 1..4
 * times (8 threads each), so 4 groups; warp 1: all threads alike, 1 group. */
static void test_splits(void **state)
{
    (void)state;
    test_cfg c;
    cfg_init(&c, 2);
    cfg_block(&c, 0, 3, TMAP_TERM_CBRA, 1, 2, (uint32_t[]){0, 1});
    cfg_block(&c, 1, 4, TMAP_TERM_RET, 0, 0, NULL);
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 64, 2, &err), TMAP_OK);
    for (uint32_t t = 0; t < 64; t++) {
        bbv.counts[t * 2] = t < 32 ? 1 + t % 4 : 2;
        bbv.counts[t * 2 + 1] = 1;
    }
    double lat[2] = {1, 1}, w[2] = {9, 6};
    tmap_sass_split sp = {1, 4, 1, (uint32_t[]){0}};
    tmap_sass_splits splits = {1, &sp, NULL};
    tmap_model_params p = {.block_size = 64, .nsms = 1, .blocks_per_sm = 1,
                           .simd_weights = w, .simd_splits = &splits};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err), TMAP_OK);
    /* warp 0: 9*4 + 2*1 + 4*4 = 54; warp 1: 9*2 + 6*1 = 24 */
    assert_true(m.warp_instructions == 54 + 24);
    assert_true(m.thread_instructions == 9.0 * (8 * (1 + 2 + 3 + 4) + 64) + 6.0 * 64);
    assert_true(m.bbv_weighted == 4 + 1 + 2 + 1); /* times keep eq. 2-5 */
    tmap_metrics_free(&m);
    /* a split may not take more than its block has, nor name a block past
     * the BBV's */
    sp.ninstr = 7;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err),
                     TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "block 1"));
    sp.ninstr = 4;
    sp.key = (uint32_t[]){2};
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err),
                     TMAP_ERR_INVALID);
    tmap_bbv_free(&bbv);
}

static void test_permutation(void **state)
{
    (void)state;
    /* 64 threads, one block: odd threads cost 10, even 1. */
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 64, 1, &err), TMAP_OK);
    for (uint32_t t = 0; t < 64; t++)
        bbv.counts[t] = t % 2 ? 10 : 1;
    double lat[1] = {1};
    tmap_model_params p = {.block_size = 64, .nsms = 1, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &p, &m, &err), TMAP_OK);
    assert_true(m.warp_cost[0] == 10 && m.warp_cost[1] == 10 && m.block_cost[0] == 20);
    assert_true(m.divergent_warps_pct == 100);
    tmap_metrics_free(&m);
    uint32_t perm[64];
    for (uint32_t i = 0; i < 32; i++) {
        perm[i] = 2 * i;          /* evens in warp 0 */
        perm[32 + i] = 2 * i + 1; /* odds in warp 1 */
    }
    assert_int_equal(tmap_metrics_compute(&bbv, lat, perm, NULL, &p, &m, &err), TMAP_OK);
    assert_true(m.warp_cost[0] == 1 && m.warp_cost[1] == 10 && m.block_cost[0] == 11);
    assert_true(m.divergent_warps_pct == 0);
    assert_true(m.zero_divergence == 11);
    tmap_metrics_free(&m);
    /* The zero-divergence time is the kernel's, whatever the grouping: with
     * two thread blocks of 32 on two slots the original's blocks each cost
     * 5.5 at mean counts; the grouping's own blocks would cost 1 and 10. */
    p.block_size = 32, p.blocks_per_sm = 2;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, perm, NULL, &p, &m, &err), TMAP_OK);
    assert_true(m.bbv_weighted_scheduled == 10 && m.zero_divergence == 5.5);
    assert_true(m.ideal_warp_cost[0] == 5.5 && m.ideal_warp_cost[1] == 5.5);
    tmap_metrics_free(&m);
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &p, &m, &err), TMAP_OK);
    assert_true(m.zero_divergence == 5.5);
    tmap_metrics_free(&m);
    perm[5] = perm[6]; /* not a permutation */
    assert_int_equal(tmap_metrics_compute(&bbv, lat, perm, NULL, &p, &m, &err), TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "not a permutation"));
    tmap_bbv_free(&bbv);
}

/* Runs a report writer on one grouping into a string (caller frees). */
static char *write_estimate(tmap_status (*w)(const tmap_report *, FILE *, tmap_error *),
                            const tmap_bbv *bbv, const double *lat, const tmap_model_params *p,
                            const tmap_metrics *m)
{
    tmap_report_row row = {.name = "original", .available = 1, .m = m, .outputs_equal = -1};
    tmap_report r = {.bbv = bbv, .lat = lat, .params = p, .nrows = 1, .rows = &row};
    tmap_error err = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(w(&r, f, &err), TMAP_OK);
    fclose(f);
    return text;
}

static void test_simd_both_forms(void **state)
{
    (void)state;
    /* b0 (2 instructions) and b2 (2) run by all 32 threads, b1 (4) by 16:
     * 2*32 + 4*16 + 2*32 = 192 thread-instructions over 2 + 4 + 2 = 8 warp
     * instructions: 24 of 32 active threads per instruction, 75 percent. */
    tmap_error err = {0};
    tmap_bbv bbv;
    assert_int_equal(tmap_bbv_create(&bbv, 32, 3, &err), TMAP_OK);
    for (uint32_t t = 0; t < 32; t++)
        bbv.counts[t * 3] = bbv.counts[t * 3 + 2] = 1, bbv.counts[t * 3 + 1] = t < 16;
    test_cfg c;
    skip_cfg(&c);
    double lat[3] = {1, 1, 1};
    tmap_model_params p = {.block_size = 32, .nsms = 1, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err), TMAP_OK);
    assert_true(m.thread_instructions == 192 && m.warp_instructions == 8);
    assert_true(m.simd_active_threads_per_inst == 24);
    char *j = write_estimate(tmap_report_estimate_json, &bbv, lat, &p, &m);
    json_t *o = json_loads(j, 0, NULL);
    assert_non_null(o);
    assert_true(json_real_value(json_object_get(o, "simd_active_threads_per_inst")) == 24.0);
    assert_true(json_real_value(json_object_get(o, "simd_efficiency_pct")) == 75.0);
    assert_null(json_object_get(o, "simd_efficiency"));
    json_decref(o);
    free(j);
    char *t = write_estimate(tmap_report_estimate_text, &bbv, lat, &p, &m);
    assert_non_null(strstr(t, "SIMD efficiency          24.00 of 32 active threads per warp "
                              "instruction, 75.0 %"));
    free(t);
    tmap_metrics_free(&m);
    tmap_bbv_free(&bbv);
}

static void test_partial_warps_and_blocks(void **state)
{
    (void)state;
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 70, 1, &err), TMAP_OK);
    for (uint32_t t = 0; t < 70; t++)
        bbv.counts[t] = 1;
    double lat[1] = {5};
    tmap_model_params p = {.block_size = 64, .nsms = 4, .blocks_per_sm = 1};
    tmap_metrics m;
    /* block 0: warps of 32 + 32; block 1: 6 threads, one partial warp. */
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &p, &m, &err), TMAP_OK);
    assert_int_equal(m.nwarps, 3);
    assert_int_equal(m.nthread_blocks, 2);
    assert_true(m.block_cost[0] == 10 && m.block_cost[1] == 5);
    assert_true(m.bbv_weighted == 15.0 / 4);
    assert_true(m.bbv_weighted_scheduled == 10);
    tmap_metrics_free(&m);
    /* block size 48: each block is a 32-thread warp and a 16-thread warp. */
    p.block_size = 48;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &p, &m, &err), TMAP_OK);
    assert_int_equal(m.nwarps, 3); /* block 0: 32 + 16; block 1: 22 */
    assert_int_equal(m.nthread_blocks, 2);
    tmap_metrics_free(&m);
    p.block_size = 0;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &p, &m, &err), TMAP_ERR_INVALID);
    tmap_bbv_free(&bbv);
}

static void test_fig4_static_vs_dynamic(void **state)
{
    (void)state;
    /* Two SMs, one resident block each.  Static: TB2 goes to SM0 after TB0;
     * dynamic: SM1 frees first (t=2), so TB2 goes to SM1. */
    double cost[4] = {4, 2, 3, 1};
    tmap_sched_slot w[4];
    double end;
    tmap_error err = {0};
    assert_int_equal(tmap_sched_static(cost, 4, 2, 1, &end, w, &err), TMAP_OK);
    assert_true(end == 7);
    assert_int_equal(w[2].sm, 0);
    assert_true(w[2].start == 4 && w[2].finish == 7);
    assert_int_equal(w[3].sm, 1);
    assert_int_equal(tmap_sched_dynamic(cost, 4, 2, 1, &end, w, &err), TMAP_OK);
    assert_true(end == 5);
    assert_int_equal(w[0].sm, 0);
    assert_int_equal(w[1].sm, 1);
    assert_int_equal(w[2].sm, 1);
    assert_true(w[2].start == 2 && w[2].finish == 5);
    assert_int_equal(w[3].sm, 0);
    assert_true(w[3].start == 4 && w[3].finish == 5);
    /* One SM with two resident slots behaves like two servers. */
    assert_int_equal(tmap_sched_dynamic(cost, 4, 1, 2, &end, w, &err), TMAP_OK);
    assert_true(end == 5);
    assert_int_equal(w[2].sm, 0);
    assert_int_equal(w[2].slot, 1);
    /* Ties go to the lowest SM. */
    double ones[3] = {1, 1, 1};
    assert_int_equal(tmap_sched_dynamic(ones, 3, 2, 1, &end, w, &err), TMAP_OK);
    assert_int_equal(w[2].sm, 0);
    assert_true(end == 2);
    assert_int_equal(tmap_sched_dynamic(ones, 3, 0, 1, &end, w, &err), TMAP_ERR_INVALID);
    double negative[1] = {-1};
    assert_int_equal(tmap_sched_dynamic(negative, 1, 1, 1, &end, w, &err), TMAP_ERR_INVALID);
    assert_int_equal(tmap_sched_dynamic(NULL, 0, 2, 2, &end, NULL, &err), TMAP_OK);
    assert_true(end == 0);
}

static void test_fig5_ordered_queue(void **state)
{
    (void)state;
    /* Three SMs, occupancy 1.  Q1 unordered (ascending) ends at 9; Q2,
     * sorted in descending order, ends at 7 = 21 / 3, a perfect balance. */
    double q1[6] = {1, 2, 3, 4, 5, 6}, q2[6] = {6, 5, 4, 3, 2, 1};
    double e1, e2;
    tmap_sched_slot w[6];
    tmap_error err = {0};
    assert_int_equal(tmap_sched_dynamic(q1, 6, 3, 1, &e1, w, &err), TMAP_OK);
    assert_true(e1 == 9);
    assert_int_equal(w[3].sm, 0); /* SM0 frees first, at t=1 */
    assert_true(w[5].start == 3 && w[5].finish == 9);
    assert_int_equal(tmap_sched_dynamic(q2, 6, 3, 1, &e2, w, &err), TMAP_OK);
    assert_true(e2 == 7);
    assert_int_equal(w[3].sm, 2);
    assert_true(w[3].start == 4);
    /* The same through the metrics: 6 thread blocks of one warp each, the
     * thread-block order reversed by a permutation. */
    tmap_bbv bbv;
    assert_int_equal(tmap_bbv_create(&bbv, 6 * 32, 1, &err), TMAP_OK);
    uint32_t perm[6 * 32];
    for (uint32_t t = 0; t < 6 * 32; t++) {
        bbv.counts[t] = t / 32 + 1;
        perm[t] = (5 - t / 32) * 32 + t % 32;
    }
    double lat[1] = {1};
    tmap_model_params p = {.block_size = 32, .nsms = 3, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &p, &m, &err), TMAP_OK);
    assert_true(m.bbv_weighted == 7 && m.bbv_weighted_scheduled == 9);
    tmap_metrics_free(&m);
    assert_int_equal(tmap_metrics_compute(&bbv, lat, perm, NULL, &p, &m, &err), TMAP_OK);
    assert_true(m.bbv_weighted == 7 && m.bbv_weighted_scheduled == 7);
    assert_true(m.block_cost[0] == 6);
    tmap_metrics_free(&m);
    tmap_bbv_free(&bbv);
}

/* A BBV with more columns than the CFG has blocks: lat has the CFG's 3
 * entries, and they end where the memory does (a guard page after them), so
 * reading lat[3] faults.  The block count is checked first (issue 14 item 5:
 * it was checked after the latencies were read). */
static void test_more_columns_than_blocks(void **state)
{
    (void)state;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *mem = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    assert_int_equal(mprotect(mem + page, page, PROT_NONE), 0);
    double *lat = (double *)(mem + page) - 3;
    lat[0] = lat[1] = lat[2] = 1;
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 32, 5, &err), TMAP_OK);
    test_cfg c;
    skip_cfg(&c);
    tmap_model_params p = {.block_size = 32, .nsms = 1, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, &c.cfg, &p, &m, &err),
                     TMAP_ERR_INVALID);
    assert_string_equal(err.message, "the CFG has 3 blocks but the BBV matrix has 5 columns");
    tmap_bbv_free(&bbv);
    munmap(mem, 2 * page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_branch_estimates),
        cmocka_unit_test(test_predicated_exit),
        cmocka_unit_test(test_splits),
        cmocka_unit_test(test_permutation),
        cmocka_unit_test(test_simd_both_forms),
        cmocka_unit_test(test_partial_warps_and_blocks),
        cmocka_unit_test(test_fig4_static_vs_dynamic),
        cmocka_unit_test(test_fig5_ordered_queue),
        cmocka_unit_test(test_more_columns_than_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

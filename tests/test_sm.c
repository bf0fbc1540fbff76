/*
 * test_sm.c -- the sub-partition model (model/sm.c) on cases computed by
 * hand: one block latency-bound and issue-bound, warps sharing a
 * sub-partition, co-resident blocks sharing the issue slots, blocks in one
 * slot chaining their latencies, list placement over SMs, and the warp
 * costs of a small BBV under a grouping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap/model.h"
#include "tests/testutil.h"

static double run(const double *wi, const double *wl, size_t nwarps, size_t nsms, size_t r,
                  size_t wpb)
{
    tmap_sm_params p = {nsms, r, 4, wpb};
    double t = -1;
    TMAP_CHECK(tmap_sm_schedule(wi, wl, nwarps, &p, &t, err));
    return t;
}

/* One block of 4 warps, one per sub-partition: the longest chain or the
 * busiest sub-partition, whichever is larger. */
static void test_one_block(void **state)
{
    double wi[] = {10, 20, 30, 40}, lat_bound[] = {100, 5, 5, 5}, issue_bound[] = {1, 1, 1, 1};
    assert_true(run(wi, lat_bound, 4, 1, 1, 4) == 100);
    assert_true(run(wi, issue_bound, 4, 1, 1, 4) == 40);
}

/* Eight warps: warps j and j+4 share sub-partition j; the serial sum of
 * all eight (the paper's eq. 4) would be 200. */
static void test_shared_subpartition(void **state)
{
    double wi[] = {10, 20, 30, 40, 15, 5, 0, 30}, wl[8] = {0};
    assert_true(run(wi, wl, 8, 1, 1, 8) == 70); /* s3: 40 + 30 */
}

/* Two blocks of 4 warps on one SM.  R = 2: resident together, their issue
 * adds per sub-partition (s3: 40 + 40) while their chains overlap (max of
 * the two slots).  R = 1: one after the other, the chains add. */
static void test_residents(void **state)
{
    double wi[] = {10, 20, 30, 40, 10, 20, 30, 40}, wl[] = {50, 0, 0, 0, 60, 0, 0, 0};
    assert_true(run(wi, wl, 8, 1, 2, 4) == 80);
    double long_chain[] = {200, 0, 0, 0, 150, 0, 0, 0};
    assert_true(run(wi, long_chain, 8, 1, 2, 4) == 200);
    assert_true(run(wi, long_chain, 8, 1, 1, 4) == 350);
}

/* Three one-warp blocks on two SMs, R = 1: block durations d = 100, 10, 10
 * (latency-bound); list placement puts 0 on SM0, 1 on SM1, 2 on SM1 (free
 * at 10): SM1 chains 10 + 10, SM0 takes 100. */
static void test_placement(void **state)
{
    double wi[] = {1, 1, 1}, wl[] = {100, 10, 10};
    assert_true(run(wi, wl, 3, 2, 1, 1) == 100);
    double wl2[] = {10, 100, 10}; /* 0->SM0, 1->SM1, 2->SM0 after 10: 20 */
    assert_true(run(wi, wl2, 3, 2, 1, 1) == 100);
    double wl3[] = {30, 10, 10, 10}; /* 0->SM0; 1,2,3->SM1 at 0, 10, 20: 30 */
    double wi3[] = {1, 1, 1, 1};
    assert_true(run(wi3, wl3, 4, 2, 1, 1) == 30);
}

/* Warp costs: 64 threads, 2 CFG blocks; every thread runs block 0 once and
 * odd threads run block 1 once.  Under the identity every warp has both
 * (c = 1, 1); grouped even threads first, warp 0 never runs block 1. */
static void test_warps_of_bbv(void **state)
{
    tmap_bbv b;
    TMAP_CHECK(tmap_bbv_create(&b, 64, 2, err));
    uint32_t perm[64];
    for (uint32_t t = 0; t < 64; t++) {
        b.counts[t * 2 + 0] = 1;
        b.counts[t * 2 + 1] = t % 2;
    }
    for (uint32_t i = 0; i < 32; i++)
        perm[i] = 2 * i, perm[32 + i] = 2 * i + 1;
    double issue[] = {3, 7}, lat[] = {20, 100}, wi[2], wl[2];
    TMAP_CHECK(tmap_sm_warps(&b, NULL, issue, lat, wi, wl, err));
    assert_true(wi[0] == 10 && wi[1] == 10 && wl[0] == 120 && wl[1] == 120);
    TMAP_CHECK(tmap_sm_warps(&b, perm, issue, lat, wi, wl, err));
    assert_true(wi[0] == 3 && wl[0] == 20 && wi[1] == 10 && wl[1] == 120);
    perm[5] = perm[6];
    tmap_error e = {0};
    assert_int_equal(tmap_sm_warps(&b, perm, issue, lat, wi, wl, &e), TMAP_ERR_INVALID);
    tmap_bbv_free(&b);
}

/* Chains computed by hand.  Block 0: mov issues at 0 (ready 2), the two
 * adds of %r1 at 2 and 3 (ready 6 and 7), the mul of both at 7 (ready 12),
 * setp at 12 (ready 15), the guarded bra waits for %p1: 15, ends 16; the
 * summed latencies (tmap_lat_blocks) are 19.  Block 1: a store reads its
 * first operand, so it waits for the ld.param's %rd1. */
static void test_chain(void **state)
{
    static const char table[] = "mov.u32\t2\t-\tt\nadd.u32\t4\t-\tt\n"
                                "mul.lo.u32\t5\t-\tt\nret\t1\t-\tt\n"
                                "setp.lt.u32\t3\t-\tt\nst.global.u32\t10\t-\tt\n"
                                "class:default\t1\t-\tt\n";
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n"
        "  .reg .b32 %r<6>;\n  .reg .b64 %rd<2>;\n  .reg .pred %p<2>;\n"
        "  mov.u32 %r1, 5;\n  add.u32 %r2, %r1, 1;\n  add.u32 %r3, %r1, 2;\n"
        "  mul.lo.u32 %r4, %r2, %r3;\n  setp.lt.u32 %p1, %r4, 9;\n"
        "  @%p1 bra DONE;\n  ld.param.u64 %rd1, [p];\n"
        "  st.global.u32 [%rd1], %r4;\nDONE:\n  ret;\n}\n";
    tmap_lat_table *t = NULL;
    tmap_ptx_module *m = NULL;
    double *chain = NULL, *sum = NULL;
    tmap_cfg *cfg = NULL;
    TMAP_CHECK(tmap_lat_parse(table, strlen(table), "t.tsv", &t, err));
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "k.ptx", &m, err));
    TMAP_CHECK(tmap_cfg_build(m, "k", &cfg, err));
    TMAP_CHECK(tmap_lat_chains(t, m, "k", &chain, err));
    TMAP_CHECK(tmap_lat_blocks(t, cfg, &sum, NULL, err));
    assert_int_equal(cfg->nblocks, 3);
    /* block 0: mov 0-2, add 2-6, add 3-7, mul 7-12, setp 12-15, bra 15-16 */
    assert_true(chain[0] == 16 && sum[0] == 2 + 4 + 4 + 5 + 3 + 1);
    /* block 1: ld.param (default 1) 0-1, st waits for %rd1: 1-11 */
    assert_true(chain[1] == 11 && sum[1] == 11);
    assert_true(chain[2] == 1);
    free(chain), free(sum);
    tmap_cfg_free(cfg);
    tmap_ptx_free(m);
    tmap_lat_free(t);
}

static void test_bad_input(void **state)
{
    double wi[] = {1}, wl[] = {-1}, t;
    tmap_sm_params p = {1, 1, 4, 1}, zero = {0, 1, 4, 1}, wide = {1, 1, 99, 1};
    tmap_error e = {0};
    assert_int_equal(tmap_sm_schedule(wi, wl, 1, &p, &t, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "warp 0"));
    wl[0] = 1;
    assert_int_equal(tmap_sm_schedule(wi, wl, 1, &zero, &t, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_sm_schedule(wi, wl, 1, &wide, &t, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_sm_schedule(wi, wl, 1, NULL, &t, &e), TMAP_ERR_INVALID);
    TMAP_CHECK(tmap_sm_schedule(wi, wl, 0, &p, &t, err));
    assert_true(t == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_block),   cmocka_unit_test(test_shared_subpartition),
        cmocka_unit_test(test_residents),   cmocka_unit_test(test_placement),
        cmocka_unit_test(test_warps_of_bbv), cmocka_unit_test(test_chain),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

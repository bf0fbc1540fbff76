/*
 * test_sm.c -- the SM model (model/sm.c, "sm90") on cases computed by hand:
 * one block issue-bound and latency-bound, warps sharing a sub-partition,
 * co-resident blocks sharing the issue slots, blocks in one slot adding
 * their stalls, the first wave spread over the SMs, the memory term's
 * sector counts (thread-affine, one level of indirection in and out of the
 * original order, gathered) and a lane's own sectors at the gather rate,
 * constant replays, the warp counts of a BBV
 * under a grouping, latency chains (tmap_lat_chains) and the classes of a
 * kernel's accesses (tmap_access_list), the walk term (a warp waits for its
 * slowest lane) and its costs from tmap_sm_blocks (none two loops deep), a
 * warp running a block whenever any lane does (tmap_sm_visits) and the
 * visit parents of a loop with an if inside (tmap_sm_visit_parents),
 * the local rows in the L1 (live warps' rows against its capacity) and their
 * costs from tmap_sm_blocks (a fill loop, a nested loop, a spill slot).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap/instrument.h"
#include "threadmap/model.h"
#include "tests/testutil.h"

enum { MAXW = 16 };

/* Hand-made warp counts of one CFG block: warp w ran it c[w] times (its
 * busiest thread) and a[w] times summed over its threads. */
typedef struct hand {
    uint32_t c[MAXW], a[MAXW], d[MAXW];
    tmap_warp_counts w;
} hand;

static void hand_init(hand *h, size_t nthreads, size_t block_size, const uint32_t *c,
                      const uint32_t *a)
{
    memset(h, 0, sizeof *h);
    size_t nw = (nthreads + 31) / 32;
    assert_true(nw <= MAXW && block_size % 32 == 0);
    for (size_t k = 0; k < nw; k++)
        h->c[k] = c[k], h->a[k] = a ? a[k] : 32 * c[k], h->d[k] = 4; /* original order */
    h->w = (tmap_warp_counts){nthreads, block_size, nw, 1, h->c, h->a, h->d, NULL, NULL};
}

static double time_of(const hand *h, const tmap_sm_block *b, size_t nsms, size_t r,
                      double bw, tmap_sm_time_parts *parts)
{
    tmap_sm_params p = {.nsms = nsms, .blocks_per_sm = r, .subpartitions = 4,
                        .warps_per_block = h->w.block_size / 32, .bytes_per_cycle = bw};
    tmap_sm_time_parts t;
    TMAP_CHECK(tmap_sm_time(&h->w, b, &p, parts ? parts : &t, err));
    return parts ? parts->cycles : t.cycles;
}

/* One block of 4 warps, one per sub-partition, running a CFG block of 10
 * issue cycles c = 1, 2, 3, 4 times.  Latency 10 (= issue): the busiest
 * sub-partition, 40.  Latency 100: warp 3's chain is 400, 40 of it its own
 * issue; its 360 cycles of stalls add to the issue: 400. */
static void test_one_block(void **state)
{
    hand h;
    uint32_t c[] = {1, 2, 3, 4};
    hand_init(&h, 128, 128, c, NULL);
    tmap_sm_block issue_bound = {.issue = 10, .latency = 10};
    tmap_sm_block latency_bound = {.issue = 10, .latency = 100};
    tmap_sm_time_parts t;
    assert_true(time_of(&h, &issue_bound, 1, 1, 0, &t) == 40);
    assert_true(t.issue == 40 && t.latency == 0 && t.memory == 0);
    assert_true(time_of(&h, &latency_bound, 1, 1, 0, &t) == 400);
    assert_true(t.issue == 40 && t.latency == 360);
}

/* Eight warps in one block: warps j and j+4 share sub-partition j; the
 * serial sum of all eight (the paper's eq. 4) would be 280. */
static void test_shared_subpartition(void **state)
{
    hand h;
    uint32_t c[] = {1, 2, 3, 4, 3, 1, 0, 4};
    hand_init(&h, 256, 256, c, NULL);
    tmap_sm_block b = {.issue = 10, .latency = 10};
    assert_true(time_of(&h, &b, 1, 1, 0, NULL) == 80); /* s3: 40 + 40 */
}

/* Two blocks of 4 warps (issue 10, 20, 30, 40) on one SM.  R = 2:
 * resident together, the second in slot 1, so its warp j on sub-partition
 * (j + 1) mod 4: s0 10 + 40, s1 20 + 10, s2 30 + 20, s3 40 + 30 = 70; each
 * slot holds its own stalls (each 4 x 30 = 120: warp 3 runs the block 4
 * times, 30 stalled cycles each).  R = 1: one after the other in slot 0
 * (s3: 40 + 40), the stalls add. */
static void test_residents(void **state)
{
    hand h;
    uint32_t c[] = {1, 2, 3, 4, 1, 2, 3, 4};
    hand_init(&h, 256, 128, c, NULL);
    tmap_sm_block b = {.issue = 10, .latency = 40}; /* stall 30 per execution */
    assert_true(time_of(&h, &b, 1, 2, 0, NULL) == 70 + 120);
    assert_true(time_of(&h, &b, 1, 1, 0, NULL) == 80 + 240);
}

/* Two one-warp blocks on two SMs with two slots each: the first wave goes
 * round the SMs (block 1 to SM 1, not to SM 0's second slot), so the time
 * is one block's.  On one SM the second block's warp, in slot 1, issues on
 * s1: still one block's time.  Five blocks on two SMs of 4 slots: SM 0 holds
 * blocks 0, 2 and 4 in slots 0, 1 and 2, their warps on s0, s1 and s2. */
static void test_first_wave(void **state)
{
    hand h;
    uint32_t c[] = {5, 5};
    hand_init(&h, 64, 32, c, NULL);
    tmap_sm_block b = {.issue = 10, .latency = 10};
    assert_true(time_of(&h, &b, 2, 2, 0, NULL) == 50);
    assert_true(time_of(&h, &b, 1, 2, 0, NULL) == 50);
    uint32_t c4[] = {5, 5, 5, 5, 5};
    hand_init(&h, 160, 32, c4, NULL);
    assert_true(time_of(&h, &b, 2, 4, 0, NULL) == 50);
    assert_true(time_of(&h, &b, 1, 1, 0, NULL) == 250); /* one slot: all on s0 */
}

/* The memory term, 32 bytes a cycle (so M = sectors): one warp of 32
 * threads running the block c = 3 times, a = 96 (every lane). */
static void test_sectors(void **state)
{
    hand h;
    uint32_t c[] = {3}, a[] = {96};
    hand_init(&h, 32, 32, c, a);
    tmap_sm_time_parts t;
    /* thread-affine 4-byte access: 4 sectors a request, 3 requests */
    tmap_sm_block affine = {.issue = 1, .latency = 1, .affine_n = 1, .affine_bytes = 4};
    time_of(&h, &affine, 1, 1, 32, &t);
    assert_true(t.memory == 12);
    /* gathered: a sector per lane and access */
    tmap_sm_block gather = {.issue = 1, .latency = 1, .gather_n = 1};
    time_of(&h, &gather, 1, 1, 32, &t);
    assert_true(t.memory == 96);
    /* one level of indirection, 4 bytes: 96 x 4 / 32 = 12 in the original
     * order (d = 4 groups of 8 ids); with 32 scattered ids each of the 32
     * lanes starts a sector of its own: 12 + 32 */
    tmap_sm_block data = {.issue = 1, .latency = 1, .data_n = 1, .data_bytes = 4};
    time_of(&h, &data, 1, 1, 32, &t);
    assert_true(t.memory == 12);
    h.d[0] = 32;
    time_of(&h, &data, 1, 1, 32, &t);
    assert_true(t.memory == 12 + 32);
    /* half scattered: (18 - 4) / (32 - 4) = 1/2 of a sector per lane */
    h.d[0] = 18;
    time_of(&h, &data, 1, 1, 32, &t);
    assert_true(t.memory == 12 + 16);
    /* the gather's 32 lines a request are 32 wavefronts, a cycle apart: 31
     * cycles of each of the 3 requests wait (latency 1, issue 1: 3 + 93 - 3) */
    time_of(&h, &gather, 1, 1, 32, &t);
    assert_true(t.latency == 93);
    /* a scattered walk hits the L1 and waits for its busiest bank: of 32
     * lanes at unrelated offsets 3.532941 on one bank on average, so 2.532941
     * cycles of each of the 3 requests wait; half scattered (d = 18), half */
    h.d[0] = 32;
    time_of(&h, &data, 1, 1, 32, &t);
    assert_true(fabs(t.latency - 3 * 2.532941) < 1e-9);
    h.d[0] = 18;
    time_of(&h, &data, 1, 1, 32, &t);
    assert_true(fabs(t.latency - 3 * 2.532941 / 2) < 1e-9);
    h.d[0] = 4;
    /* the L2 serves all SMs: 2 blocks on 2 SMs, only block 0 gathers (96
     * sectors): 96 / 2 cycles, not 96 on SM 0; SM 0's time is then its
     * chain, 3 issue + 93 wavefront stalls (above) */
    uint32_t c2[] = {3, 0}, a2[] = {96, 0};
    hand h2;
    hand_init(&h2, 64, 32, c2, a2);
    time_of(&h2, &gather, 2, 1, 32, &t);
    assert_true(t.memory == 48);
    assert_true(t.cycles == 96);
    /* uniform accesses are L1 hits: no sectors */
    tmap_sm_block uni = {.issue = 1, .latency = 1, .uniform_n = 2};
    time_of(&h, &uni, 1, 1, 32, &t);
    assert_true(t.memory == 0);
}

/* A lane's own sectors at the measured rate of gathered sectors, shared
 * ones at the bandwidth: one warp (c = 3, a = 96) with a 4-byte access of
 * one level of indirection, its 32 ids scattered (12 shared sectors, 32
 * of a lane each), and a gather (96 of a lane each); 32 bytes a cycle,
 * 0.5 gathered sectors a cycle: 12 + 32 / 0.5 = 76 and 96 / 0.5 = 192. */
static void test_gather_rate(void **state)
{
    hand h;
    uint32_t c[] = {3}, a[] = {96};
    hand_init(&h, 32, 32, c, a);
    h.d[0] = 32;
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4,
                        .warps_per_block = 1, .bytes_per_cycle = 32,
                        .gather_sectors_per_cycle = 0.5};
    tmap_sm_block data = {.issue = 1, .latency = 1, .data_n = 1, .data_bytes = 4};
    tmap_sm_block gather = {.issue = 1, .latency = 1, .gather_n = 1};
    tmap_sm_time_parts t;
    TMAP_CHECK(tmap_sm_time(&h.w, &data, &p, &t, err));
    assert_true(t.memory == 12 + 64);
    TMAP_CHECK(tmap_sm_time(&h.w, &gather, &p, &t, err));
    assert_true(t.memory == 192);
    /* no memory term without the bandwidth, whatever the gather rate */
    p.bytes_per_cycle = 0;
    TMAP_CHECK(tmap_sm_time(&h.w, &gather, &p, &t, err));
    assert_true(t.memory == 0);
    /* a rate that is not a number is refused */
    p.bytes_per_cycle = 32, p.gather_sectors_per_cycle = -1;
    tmap_error e = {0};
    assert_int_equal(tmap_sm_time(&h.w, &gather, &p, &t, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "gathered sectors"));
}

/* One SM's own rate: two SMs, one thread block each; block 0's warp
 * gathers 96 sectors (c = 3, a = 96), block 1's runs nothing.  The pool
 * (0.5 gathered sectors a cycle per SM) serves the 96 in 96 / (2 x 0.5) =
 * 96 cycles; an SM's own rate of 0.75 needs 128 (the memory term), one of 2
 * only 48 (the pool's 96 stays).  The block's own sectors add to its chain:
 * issue 3, stalls 3 x 31 wavefronts = 93, so 3 + 93 + 128 = 224 and
 * 3 + 93 + 48 = 144; without own rates, max(3 + 93, 96) = 96. */
static void test_own_rate(void **state)
{
    hand h;
    uint32_t c[] = {3, 0}, a[] = {96, 0};
    hand_init(&h, 64, 32, c, a);
    tmap_sm_params p = {.nsms = 2, .blocks_per_sm = 1, .subpartitions = 4,
                        .warps_per_block = 1, .bytes_per_cycle = 32,
                        .gather_sectors_per_cycle = 0.5};
    tmap_sm_block gather = {.issue = 1, .latency = 1, .gather_n = 1};
    tmap_sm_time_parts t;
    TMAP_CHECK(tmap_sm_time(&h.w, &gather, &p, &t, err));
    assert_true(t.memory == 96 && t.cycles == 96); /* no own rates: the pool alone */
    p.one_sm_bytes_per_cycle = 64, p.one_sm_gather_sectors_per_cycle = 0.75;
    TMAP_CHECK(tmap_sm_time(&h.w, &gather, &p, &t, err));
    assert_true(t.memory == 128 && t.issue == 3 && t.latency == 93 + 128 && t.cycles == 224);
    p.one_sm_gather_sectors_per_cycle = 2;
    TMAP_CHECK(tmap_sm_time(&h.w, &gather, &p, &t, err));
    assert_true(t.memory == 96 && t.cycles == 144);
    p.one_sm_gather_sectors_per_cycle = -1;
    tmap_error e = {0};
    assert_int_equal(tmap_sm_time(&h.w, &gather, &p, &t, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "one SM's"));
}

/* Constant reads at varying addresses: a warp whose lanes all ran the
 * block as often (h = 1) reads one entry per request; one where 8 lanes ran
 * it 4 times (a = 32, c = 4, h = 1/4) replays (a - c)(1 - h) = 28 x 3/4 = 21
 * times, 10 cycles each. */
static void test_constant_replays(void **state)
{
    uint32_t c[] = {4}, a_full[] = {128}, a_part[] = {32};
    tmap_sm_block b = {.issue = 2, .latency = 2, .const_n = 1};
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4,
                        .warps_per_block = 1, .const_replay = 10};
    tmap_sm_time_parts t;
    hand h;
    hand_init(&h, 32, 32, c, a_full);
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    assert_true(t.issue == 8);
    hand_init(&h, 32, 32, c, a_part);
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    assert_true(t.issue == 8 + 10 * 21);
}

/* Warp counts: 64 threads in blocks of 64, 2 CFG blocks; every thread runs
 * block 0 once and odd threads run block 1 twice.  Under the identity both
 * warps have c = (1, 2), a = (32, 32), d = 4; grouped even threads first,
 * warp 0 never runs block 1 and its ids (0, 2, ..., 62) fall in 8 groups. */
static void test_warp_counts(void **state)
{
    tmap_bbv b;
    TMAP_CHECK(tmap_bbv_create(&b, 64, 2, err));
    uint32_t perm[64];
    for (uint32_t t = 0; t < 64; t++)
        b.counts[t * 2 + 0] = 1, b.counts[t * 2 + 1] = 2 * (t % 2);
    for (uint32_t i = 0; i < 32; i++)
        perm[i] = 2 * i, perm[32 + i] = 2 * i + 1;
    tmap_warp_counts w;
    TMAP_CHECK(tmap_warp_counts_make(&b, NULL, 64, &w, err));
    assert_int_equal(w.nwarps, 2);
    assert_true(w.c[0] == 1 && w.c[1] == 2 && w.a[0] == 32 && w.a[1] == 32 && w.d[0] == 4);
    tmap_warp_counts_free(&w);
    TMAP_CHECK(tmap_warp_counts_make(&b, perm, 64, &w, err));
    assert_true(w.c[1] == 0 && w.a[1] == 0 && w.c[3] == 2 && w.a[3] == 64 && w.d[0] == 8);
    tmap_warp_counts_free(&w);
    /* blocks of 48: warps of 32 and 16 threads from each block's start */
    TMAP_CHECK(tmap_warp_counts_make(&b, NULL, 48, &w, err));
    assert_int_equal(w.nwarps, 3);
    assert_true(w.a[1 * 2 + 0] == 16 && w.a[2 * 2 + 0] == 16);
    tmap_warp_counts_free(&w);
    perm[5] = perm[6];
    tmap_error e = {0};
    assert_int_equal(tmap_warp_counts_make(&b, perm, 64, &w, &e), TMAP_ERR_INVALID);
    tmap_bbv_free(&b);
}

/* A kernel k of one PTX module with its CFG (nblocks blocks) under a
 * latency table (NULL: latency_tables/sm_90.tsv) and, with blocks, the
 * costs tmap_sm_blocks gives its blocks. */
typedef struct sm_kernel {
    tmap_lat_table *t;
    tmap_ptx_module *m;
    tmap_cfg *cfg;
    tmap_sm_block *blk;
} sm_kernel;

static sm_kernel kernel_open(const char *table, const char *ptx, size_t nblocks, int blocks)
{
    sm_kernel k = {0};
    if (table)
        TMAP_CHECK(tmap_lat_parse(table, strlen(table), "t.tsv", &k.t, err));
    else
        TMAP_CHECK(tmap_lat_load(TMAP_SOURCE_DIR "/latency_tables/sm_90.tsv", &k.t, err));
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "k.ptx", &k.m, err));
    TMAP_CHECK(tmap_cfg_build(k.m, "k", &k.cfg, err));
    assert_int_equal(k.cfg->nblocks, nblocks);
    if (blocks)
        TMAP_CHECK(tmap_sm_blocks(k.t, k.m, "k", k.cfg, NULL, 100, &k.blk, err));
    return k;
}

static void kernel_close(sm_kernel *k)
{
    free(k->blk);
    tmap_cfg_free(k->cfg);
    tmap_ptx_free(k->m);
    tmap_lat_free(k->t);
}

static double *chains_of(const char *table, const char *ptx, size_t nblocks)
{
    sm_kernel k = kernel_open(table, ptx, nblocks, 0);
    double *chain = NULL;
    TMAP_CHECK(tmap_lat_chains(k.t, k.m, "k", NULL, 0, 0, &chain, err));
    kernel_close(&k);
    return chain;
}

/* Block 0: mov issues at 0 (ready 2), the two adds of %r1 at 2 and 3
 * (ready 6 and 7), the mul of both at 7 (ready 12), setp at 12 (ready 15),
 * the guarded bra waits for %p1: 15, ends 16.  Block 1: the ld.param goes
 * first (ready 1), the store reads %rd1: 1 to 11. */
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
    double *chain = chains_of(table, ptx, 3);
    assert_true(chain[0] == 16 && chain[1] == 11 && chain[2] == 1);
    free(chain);
}

/* A block's issue (tmap_sm_blocks): the larger of its count and its busiest
 * class.  Block 1's three sin.approx at an interval of 8 are 24 cycles of
 * one class: 24 with PTX counts (4 instructions) or a SASS count of 2, and
 * 0 with a SASS count of 0 (its code ran in another block's SASS). */
static void test_block_issue(void **state)
{
    static const char table[] = "sin.approx.f32\t20\t8\tt\nclass:default\t1\t-\tt\n";
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u32 n)\n{\n"
        "  .reg .b32 %r<3>;\n  .reg .f32 %f<4>;\n  .reg .pred %p<2>;\n"
        "  ld.param.u32 %r1, [n];\n  setp.lt.u32 %p1, %r1, 9;\n  @%p1 bra DONE;\n"
        "  sin.approx.f32 %f1, %f1;\n  sin.approx.f32 %f2, %f1;\n"
        "  sin.approx.f32 %f3, %f2;\n  mov.b32 %r2, %f3;\nDONE:\n  ret;\n}\n";
    sm_kernel k = kernel_open(table, ptx, 3, 1);
    assert_true(k.blk[0].issue == 3 && k.blk[1].issue == 24 && k.blk[2].issue == 1);
    const double sass[][3] = {{5, 2, 1}, {5, 0, 1}};
    const double want[] = {24, 0};
    for (size_t i = 0; i < 2; i++) {
        tmap_sm_block *blk = NULL;
        TMAP_CHECK(tmap_sm_blocks(k.t, k.m, "k", k.cfg, sass[i], 100, &blk, err));
        assert_true(blk[0].issue == 5 && blk[1].issue == want[i] && blk[2].issue == 1);
        free(blk);
    }
    kernel_close(&k);
}

/* A block that is its own loop: run twice, the second run from the first's
 * last issue (18).  First: the load (hoisted) 0-10, add %r3 10-14, add %rd1
 * 11-15, setp 14-17, bra 17-18.  Second: the load at 18 (%rd1 ready at 15)
 * to 28, add 28-32, add 29-33, setp 32-35, bra 35-36: 18 a iteration. */
static void test_loop_chain(void **state)
{
    static const char table[] = "ld.global.u32\t10\t-\tt\nadd.u32\t4\t-\tt\n"
                                "add.s64\t4\t-\tt\nsetp.lt.u32\t3\t-\tt\n"
                                "class:default\t1\t-\tt\n";
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n"
        "  .reg .b32 %r<6>;\n  .reg .b64 %rd<3>;\n  .reg .pred %p<2>;\n"
        "  ld.param.u64 %rd1, [p];\n  mov.u32 %r3, 0;\n"
        "LOOP:\n  ld.global.u32 %r2, [%rd1];\n  add.u32 %r3, %r3, %r2;\n"
        "  add.s64 %rd1, %rd1, 4;\n  setp.lt.u32 %p1, %r3, 100;\n  @%p1 bra LOOP;\n"
        "  ret;\n}\n";
    double *chain = chains_of(table, ptx, 3);
    assert_true(chain[1] == 18);
    free(chain);
}

/* The dataflow chains: a load whose address the block computes waits for
 * it.  add.s64 0-4, the load 4-14, add.u32 14-18 (tmap_lat_chains puts the
 * load first, 0-10, and the add.u32 at 10-14).  test_chain's block 0 as
 * dataflow: both adds of %r1 at 2, the mul at 6, setp at 11, bra 14-15. */
static void test_dataflow_chain(void **state)
{
    static const char table[] = "ld.global.u32\t10\t-\tt\nadd.u32\t4\t-\tt\n"
                                "add.s64\t4\t-\tt\nclass:default\t1\t-\tt\n";
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n"
        "  .reg .b32 %r<4>;\n  .reg .b64 %rd<3>;\n"
        "  ld.param.u64 %rd1, [p];\n  bra NEXT;\n"
        "NEXT:\n  add.s64 %rd2, %rd1, 4;\n  ld.global.u32 %r1, [%rd2];\n"
        "  add.u32 %r2, %r1, 1;\n  ret;\n}\n";
    tmap_lat_table *t = NULL;
    tmap_ptx_module *m = NULL;
    double *in_order = NULL, *dataflow = NULL;
    TMAP_CHECK(tmap_lat_parse(table, strlen(table), "t.tsv", &t, err));
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "k.ptx", &m, err));
    TMAP_CHECK(tmap_lat_chains(t, m, "k", NULL, 0, 0, &in_order, err));
    TMAP_CHECK(tmap_lat_chains_dataflow(t, m, "k", NULL, 0, 0, &dataflow, err));
    assert_true(in_order[1] == 14 && dataflow[1] == 18);
    free(in_order), free(dataflow);
    tmap_ptx_free(m);
    tmap_lat_free(t);
    static const char table2[] = "mov.u32\t2\t-\tt\nadd.u32\t4\t-\tt\n"
                                 "mul.lo.u32\t5\t-\tt\nret\t1\t-\tt\n"
                                 "setp.lt.u32\t3\t-\tt\nst.global.u32\t10\t-\tt\n"
                                 "class:default\t1\t-\tt\n";
    static const char ptx2[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n"
        "  .reg .b32 %r<6>;\n  .reg .b64 %rd<2>;\n  .reg .pred %p<2>;\n"
        "  mov.u32 %r1, 5;\n  add.u32 %r2, %r1, 1;\n  add.u32 %r3, %r1, 2;\n"
        "  mul.lo.u32 %r4, %r2, %r3;\n  setp.lt.u32 %p1, %r4, 9;\n"
        "  @%p1 bra DONE;\n  ld.param.u64 %rd1, [p];\n"
        "  st.global.u32 [%rd1], %r4;\nDONE:\n  ret;\n}\n";
    TMAP_CHECK(tmap_lat_parse(table2, strlen(table2), "t.tsv", &t, err));
    TMAP_CHECK(tmap_ptx_parse(ptx2, strlen(ptx2), "k.ptx", &m, err));
    TMAP_CHECK(tmap_lat_chains_dataflow(t, m, "k", NULL, 0, 0, &dataflow, err));
    assert_true(dataflow[0] == 15 && dataflow[1] == 11 && dataflow[2] == 1);
    free(dataflow);
    tmap_ptx_free(m);
    tmap_lat_free(t);
}

/* a[tid] is thread-affine, b[a[tid]] one level of indirection, b[b[a[tid]]]
 * a gather, b[0] uniform; the store to a[tid] is thread-affine. */
static void test_access_classes(void **state)
{
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 pa, .param .u64 pb)\n{\n"
        "  .reg .b32 %r<8>;\n  .reg .b64 %rd<12>;\n"
        "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n"
        "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd4, %rd1, %rd3;\n"
        "  ld.global.u32 %r2, [%rd4];\n"
        "  mul.wide.u32 %rd5, %r2, 4;\n  add.s64 %rd6, %rd2, %rd5;\n"
        "  ld.global.u32 %r3, [%rd6];\n"
        "  mul.wide.u32 %rd7, %r3, 4;\n  add.s64 %rd8, %rd2, %rd7;\n"
        "  ld.global.v2.u32 {%r4, %r6}, [%rd8];\n"
        "  ld.global.u32 %r5, [%rd2];\n"
        "  st.global.u32 [%rd4], %r4;\n  ret;\n}\n";
    tmap_ptx_module *m = NULL;
    tmap_cfg *cfg = NULL;
    tmap_access *acc = NULL;
    size_t n = 0;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "k.ptx", &m, err));
    TMAP_CHECK(tmap_cfg_build(m, "k", &cfg, err));
    TMAP_CHECK(tmap_access_list(m, cfg, &acc, &n, err));
    assert_int_equal(n, 5);
    const tmap_access_class want[] = {TMAP_ACCESS_AFFINE, TMAP_ACCESS_DATA, TMAP_ACCESS_GATHER,
                                      TMAP_ACCESS_UNIFORM, TMAP_ACCESS_AFFINE};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(acc[i].cls, want[i]);
        assert_int_equal(acc[i].space, TMAP_SPACE_GLOBAL);
        assert_int_equal(acc[i].block, 0);
        assert_int_equal(acc[i].store, i == 4);
        assert_int_equal(acc[i].bytes, i == 2 ? 8 : 4);
    }
    free(acc);
    tmap_cfg_free(cfg);
    tmap_ptx_free(m);
}

/* A warp waits for its slowest lane: a CFG block of issue 10, latency 100,
 * walk 200 (its chain when every lane starts a sector), walk_base 25,
 * walk_q 1/8, run c = 4 times.  One lane: 200 / 8 - 25 = 0 more, 400.
 * Eight lanes: 200 (1 - (7/8)^8) - 25 = 200 x 0.656391 - 25 = 106.278 more
 * an execution, 4 x 206.278 = 825.11.  32 lanes: 200 (1 - (7/8)^32) - 25 =
 * 200 x 0.986063 - 25 = 172.213, 4 x 272.213 = 1088.85. */
static void test_walk(void **state)
{
    tmap_sm_block b = {.issue = 10, .latency = 100, .walk = 200, .walk_base = 25,
                       .walk_q = 0.125};
    hand h;
    uint32_t c[] = {4}, one[] = {4}, eight[] = {32}, all[] = {128};
    hand_init(&h, 1, 32, c, one);
    assert_true(time_of(&h, &b, 1, 1, 0, NULL) == 400);
    hand_init(&h, 8, 32, c, eight);
    assert_true(fabs(time_of(&h, &b, 1, 1, 0, NULL) - 825.11) < 0.01);
    hand_init(&h, 32, 32, c, all);
    assert_true(fabs(time_of(&h, &b, 1, 1, 0, NULL) - 1088.85) < 0.01);
    b.walk_q = 1.5;
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4, .warps_per_block = 1};
    tmap_sm_time_parts t;
    tmap_error e = {0};
    assert_int_equal(tmap_sm_time(&h.w, &b, &p, &t, &e), TMAP_ERR_INVALID);
}

/* The walk costs of tmap_sm_blocks: b[a[tid]] read in a loop (block 1) and
 * in a loop inside it (block 2).  Block 1's load ends the chain: 10 cycles
 * when it hits (ld.global.u32), 100 when it starts a sector (l2_latency), so
 * walk = 90 x (190 - 10) / (100 - 10) = 180 at sm:dram.latency 190;
 * walk_base = 90 x 4 / 32 = 11.25, walk_q = 4 / 32.  Block 2 is two loops
 * deep: its segment is walked again on every outer iteration, no walk. */
static void test_walk_blocks(void **state)
{
    static const char table[] = "ld.global.u32\t10\t-\tt\nsm:dram.latency\t190\t-\tt\n"
                                "class:default\t1\t-\tt\n";
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 pa, .param .u64 pb)\n{\n"
        "  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<3>;\n"
        "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n"
        "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd4, %rd1, %rd3;\n"
        "  ld.global.u32 %r2, [%rd4];\n"
        "  mul.wide.u32 %rd5, %r2, 4;\n  add.s64 %rd6, %rd2, %rd5;\n  mov.u32 %r9, 0;\n"
        "OUTER:\n  ld.global.u32 %r11, [%rd6];\n  mov.u32 %r10, 0;\n"
        "INNER:\n  ld.global.u32 %r3, [%rd6];\n  add.u32 %r10, %r10, 1;\n"
        "  setp.lt.u32 %p1, %r10, 8;\n  @%p1 bra INNER;\n"
        "  add.u32 %r9, %r9, 1;\n  setp.lt.u32 %p2, %r9, 8;\n  @%p2 bra OUTER;\n"
        "  ret;\n}\n";
    sm_kernel k = kernel_open(table, ptx, 5, 1);
    const tmap_sm_block *blk = k.blk;
    assert_true(blk[1].walk == 180 && blk[1].walk_base == 11.25 && blk[1].walk_q == 0.125);
    assert_true(blk[2].walk == 0 && blk[2].walk_base == 0 && blk[2].walk_q == 0);
    assert_true(blk[0].walk == 0 && blk[3].walk == 0 && blk[4].walk == 0);
    for (size_t b = 0; b < 5; b++) /* headers, the inner loop's exit, the ret */
        assert_int_equal(blk[b].visit_parent, 0);
    /* the outer loop (blocks 1 and 3, first block 1) holds the inner one:
     * block 2's walked load is re-walked on every outer iteration */
    assert_true(blk[1].loop_id == 2 && blk[3].loop_id == 2 && blk[2].loop_id == 0);
    assert_true(blk[0].loop_id == 0 && blk[4].loop_id == 0);
    assert_true(blk[2].rewalk_bytes == 4 && blk[2].rewalk_loop == 2);
    assert_true(blk[1].rewalk_bytes == 0 && blk[0].rewalk_bytes == 0);
    kernel_close(&k);
}

/* The XU pipe (benchmarks/results/overlap.txt): with the default table a
 * block of sin.approx.f32, cos.approx.f32 and two fp32 adds issues in
 * 2 x 8.15 = 16.3 cycles, the SFU opcodes' measured interval (a sub-partition
 * takes one every 8 cycles), not in its 6 instructions. */
static void test_sfu_issue(void **state)
{
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .f32 px)\n{\n  .reg .f32 %f<6>;\n"
        "  ld.param.f32 %f1, [px];\n  sin.approx.f32 %f2, %f1;\n  cos.approx.f32 %f3, %f1;\n"
        "  add.f32 %f4, %f2, %f3;\n  add.f32 %f5, %f4, %f1;\n  ret;\n}\n";
    sm_kernel k = kernel_open(NULL, ptx, 1, 1);
    assert_int_equal(k.cfg->blocks[0].ninstr, 6);
    assert_true(fabs(k.blk[0].issue - 16.3) < 1e-9);
    kernel_close(&k);
}

/* Local rows in the L1: one block of 4 warps (one SM, R = 1) running a CFG
 * block of issue 10, latency 100, one local load and 4 bytes of a row
 * filled per execution, c = 1, 2, 3, 4.  Without the term: X = 400 - 40,
 * T = 40 + 360 = 400.  The warps live 100, 200, 300, 400 cycles (their
 * chains' share of the block's 400) with rows of 32 x 4c = 128, 256, 384,
 * 512 bytes: 1280 live in [0, 100), 1152 in [100, 200), 896, then 512.
 * Against 1024 bytes of L1 the miss share is 1 - 1024/1280 = 0.2, then
 * 1 - 1024/1152 = 1/9, then none (the two short warps ended and freed
 * theirs).  Warp 3 misses (100 x 0.2 + 100 / 9) / 400 = 7/90 of its 4
 * loads, each 90 cycles: 28 more on its chain, T = 428.  With 2048 bytes
 * everything fits: 400; no capacity (0): the term is off. */
static void test_local_rows(void **state)
{
    hand h;
    uint32_t c[] = {1, 2, 3, 4};
    hand_init(&h, 128, 128, c, NULL);
    tmap_sm_block b = {.issue = 10, .latency = 100, .local_loads = 1, .local_fill = 4};
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4,
                        .warps_per_block = 4, .l1_local_bytes = 1024, .local_miss_cycles = 90};
    tmap_sm_time_parts t;
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    assert_true(fabs(t.cycles - 428) < 1e-9 && fabs(t.latency - 388) < 1e-9);
    p.l1_local_bytes = 2048;
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    assert_true(t.cycles == 400);
    p.l1_local_bytes = 0;
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    assert_true(t.cycles == 400);
    /* a spill slot (fixed address) counts once: 32 x 32 = 1024 bytes a warp,
     * 4096 live for the first 100 cycles: 3/4 of them miss */
    b.local_fill = 0, b.local_fixed = 32, p.l1_local_bytes = 1024;
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    double w3 = 400 + 90 * 4 * (100 * 0.75 + 100 * (1 - 1024.0 / 3072) +
                                100 * (1 - 1024.0 / 2048)) / 400;
    assert_true(fabs(t.cycles - (40 + w3 - 40)) < 1e-9);
}

/* Walked segments share the L1 with the rows: one warp runs an outer
 * loop's header (CFG block 0, loop_id 1) c = 2 times and a loop inside it
 * (block 1: a walked load of 4 bytes re-walked every outer iteration, one
 * local load, latency 10, issue 1) c = 128 times, a = 2048 over 16 lanes.
 * Each lane walks 128 x 4 / 2 = 256 bytes an outer iteration, at an
 * unrelated offset: 1 + 255 / 128 lines on average, 383 bytes; a/c = 16
 * lanes: 6128 bytes.  Against 4096 a share 2032 / 6128 of its local loads
 * miss: 128 x 90 x 2032 / 6128 = 3819.9 cycles on its chain of 1280.  At
 * 8192 bytes it fits: T = 1280. */
static void test_rewalk_lines(void **state)
{
    uint32_t c[] = {2, 128}, a[] = {32, 2048}, d[] = {4};
    tmap_warp_counts w = {32, 32, 1, 2, c, a, d, NULL, NULL};
    tmap_sm_block b[2] = {{.loop_id = 1},
                          {.issue = 1, .latency = 10, .local_loads = 1, .rewalk_bytes = 4,
                           .rewalk_loop = 1}};
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4,
                        .warps_per_block = 1, .l1_local_bytes = 4096, .local_miss_cycles = 90};
    tmap_sm_time_parts t;
    TMAP_CHECK(tmap_sm_time(&w, b, &p, &t, err));
    assert_true(fabs(t.cycles - (1280 + 128 * 90 * 2032.0 / 6128)) < 1e-9);
    p.l1_local_bytes = 8192;
    TMAP_CHECK(tmap_sm_time(&w, b, &p, &t, err));
    assert_true(t.cycles == 1280);
}

/* The local costs of tmap_sm_blocks: a spill slot (block 0, a fixed
 * address: 4 bytes once), a row filled in a loop (block 1: a store at a
 * moving address, 4 bytes an execution), the outer loop's read of row[0]
 * (block 3: a load) and the row read and written in the loop inside it
 * (block 4: a load, no fill: each outer iteration revisits the row). */
static void test_local_blocks(void **state)
{
    static const char table[] = "class:default\t1\t-\tt\n";
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u32 pn)\n{\n"
        "  .local .align 4 .b8 __local_depot0[512];\n"
        "  .reg .b64 %SPL;\n  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n"
        "  .reg .pred %p<4>;\n"
        "  mov.u64 %SPL, __local_depot0;\n  ld.param.u32 %r1, [pn];\n"
        "  st.local.u32 [%SPL+508], %r1;\n  mov.u32 %r2, 0;\n"
        "FILL:\n  mul.wide.u32 %rd1, %r2, 4;\n  add.s64 %rd2, %SPL, %rd1;\n"
        "  st.local.u32 [%rd2], %r2;\n  add.u32 %r2, %r2, 1;\n"
        "  setp.lt.u32 %p1, %r2, %r1;\n  @%p1 bra FILL;\n"
        "  mov.u32 %r3, 0;\n"
        "OUTER:\n  ld.local.u32 %r5, [%SPL];\n  mov.u32 %r4, 0;\n"
        "INNER:\n  mul.wide.u32 %rd3, %r4, 4;\n  add.s64 %rd4, %SPL, %rd3;\n"
        "  ld.local.u32 %r6, [%rd4];\n  add.u32 %r6, %r6, %r5;\n  st.local.u32 [%rd4], %r6;\n"
        "  add.u32 %r4, %r4, 1;\n  setp.lt.u32 %p2, %r4, %r1;\n  @%p2 bra INNER;\n"
        "  add.u32 %r3, %r3, 1;\n  setp.lt.u32 %p3, %r3, %r1;\n  @%p3 bra OUTER;\n"
        "  ret;\n}\n";
    sm_kernel k = kernel_open(table, ptx, 7, 1);
    const tmap_sm_block *blk = k.blk;
    assert_true(blk[0].local_fixed == 4 && blk[0].local_fill == 0 && blk[0].local_loads == 0);
    assert_true(blk[1].local_fill == 4 && blk[1].local_fixed == 0 && blk[1].local_loads == 0);
    assert_true(blk[3].local_loads == 1 && blk[3].local_fill == 0 && blk[3].local_fixed == 0);
    assert_true(blk[4].local_loads == 1 && blk[4].local_fill == 0 && blk[4].local_fixed == 0);
    for (size_t b = 2; b < 7; b += b == 2 ? 3 : 1)
        assert_true(!blk[b].local_loads && !blk[b].local_fill && !blk[b].local_fixed);
    tmap_access *acc = NULL; /* the spill slot and the depot's base stay; the rows move */
    size_t n = 0;
    TMAP_CHECK(tmap_access_list(k.m, k.cfg, &acc, &n, err));
    assert_int_equal(n, 5);
    const int moves[] = {0, 1, 0, 1, 1};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(acc[i].moves, moves[i]);
    free(acc);
    kernel_close(&k);
}

/* A warp runs a block whenever any lane does (tmap_sm_visits).  One warp of
 * 4 lanes: block 0 (no parent) c 10, a 40: 4 lanes a visit; block 1
 * (parent 0) c 2, a 4: each lane takes it at a share 4 / 40 of its visits,
 * the warp at 10 (1 - 0.9^4) = 3.439 of them; block 2 (parent 1, a loop
 * inside it) c 6, a 12: 3.439 x 12 / 4 = 10.317; block 3 (parent 0) c 5,
 * a 5, one lane: 10 (1 - 0.875^4) = 4.138, below c: 5.  In tmap_sm_time
 * (blocks 0 and 1, issue 1 and 10, latency = issue): 10 + 34.39 = 44.39
 * cycles, against 10 + 20 = 30 without the parent. */
static void test_visits(void **state)
{
    tmap_sm_block blk[4] = {{.issue = 1, .latency = 1},
                            {.issue = 10, .latency = 10, .visit_parent = 1},
                            {.issue = 1, .latency = 1, .visit_parent = 2},
                            {.issue = 1, .latency = 1, .visit_parent = 1}};
    uint32_t c[] = {10, 2, 6, 5}, a[] = {40, 4, 12, 5}, d[] = {4}, stack[4];
    double v[4];
    tmap_sm_visits(blk, 4, c, a, v, stack);
    assert_true(v[0] == 10 && fabs(v[1] - 3.439) < 1e-12 && fabs(v[2] - 10.317) < 1e-12 &&
                v[3] == 5);
    tmap_warp_counts w = {4, 32, 1, 2, c, a, d, NULL, NULL};
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4, .warps_per_block = 1};
    tmap_sm_time_parts t;
    TMAP_CHECK(tmap_sm_time(&w, blk, &p, &t, err));
    assert_true(fabs(t.cycles - 44.39) < 1e-9 && fabs(t.issue - 44.39) < 1e-9);
    blk[1].visit_parent = 0;
    TMAP_CHECK(tmap_sm_time(&w, blk, &p, &t, err));
    assert_true(t.cycles == 30);
    tmap_error e = {0}; /* a parent out of range, a block its own ancestor */
    blk[1].visit_parent = 3;
    assert_int_equal(tmap_sm_time(&w, blk, &p, &t, &e), TMAP_ERR_INVALID);
    blk[0].visit_parent = 2, blk[1].visit_parent = 1;
    assert_int_equal(tmap_sm_time(&w, blk, &p, &t, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "its own visit ancestor"));
}

/* tmap_sm_visit_parents: a loop (block 1) with an if inside (block 2) and
 * the join (block 3): both have the loop's block 1 as parent; the entry,
 * the loop's first block (its dominator is outside the loop) and the ret
 * after the loop have none. */
static void test_visit_parents(void **state)
{
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 pa)\n{\n"
        "  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<3>;\n"
        "  ld.param.u64 %rd1, [pa];\n  mov.u32 %r9, 0;\n  mov.u32 %r3, 0;\n"
        "LOOP:\n  ld.global.u32 %r2, [%rd1];\n  setp.eq.u32 %p1, %r2, 0;\n  @%p1 bra SKIP;\n"
        "  add.u32 %r3, %r3, 1;\n"
        "SKIP:\n  add.u32 %r9, %r9, 1;\n  setp.lt.u32 %p2, %r9, 8;\n  @%p2 bra LOOP;\n"
        "  ret;\n}\n";
    tmap_ptx_module *m = NULL;
    tmap_cfg *cfg = NULL;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "k.ptx", &m, err));
    TMAP_CHECK(tmap_cfg_build(m, "k", &cfg, err));
    assert_int_equal(cfg->nblocks, 5);
    uint32_t parent[5], want[5] = {0, 0, 2, 2, 0};
    TMAP_CHECK(tmap_sm_visit_parents(cfg, parent, err));
    for (size_t b = 0; b < 5; b++)
        assert_int_equal(parent[b], want[b]);
    tmap_cfg_free(cfg);
    tmap_ptx_free(m);
}

/* The module's __constant__ bytes: a sized array (4096 x 1), a scalar (4),
 * a vector array (2 x 4 x 4 = 32), an array sized by its initializer
 * (3 x 8 = 24), and an .extern one (another module's: 0); an unsized array
 * without values cannot be sized, and the error names its line; nor can
 * one whose size overflows. */
static void test_const_bytes(void **state)
{
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".const .align 1 .b8 tab[4096];\n"
        ".visible .const .f32 s = 0f3F800000;\n"
        ".const .align 16 .v4 .u32 q[2];\n"
        ".const .align 8 .u64 u[] = {1, 2, 3};\n"
        ".extern .const .align 1 .b8 ext[];\n"
        ".visible .entry k()\n{\n  ret;\n}\n";
    tmap_ptx_module *m = NULL;
    size_t bytes = 0;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "k.ptx", &m, err));
    TMAP_CHECK(tmap_access_const_bytes(m, &bytes, err));
    assert_int_equal(bytes, 4096 + 4 + 32 + 24);
    tmap_ptx_free(m);
    static const char bad[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".const .b8 tab[];\n.visible .entry k()\n{\n  ret;\n}\n";
    TMAP_CHECK(tmap_ptx_parse(bad, strlen(bad), "k.ptx", &m, err));
    tmap_error e = {0};
    assert_int_equal(tmap_access_const_bytes(m, &bytes, &e), TMAP_ERR_PARSE);
    assert_non_null(strstr(e.message, "k.ptx:4"));
    tmap_ptx_free(m);
    static const char huge[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".const .b32 t[4294967296][4294967296];\n"
                               ".visible .entry k()\n{\n  ret;\n}\n";
    TMAP_CHECK(tmap_ptx_parse(huge, strlen(huge), "k.ptx", &m, err));
    assert_int_equal(tmap_access_const_bytes(m, &bytes, &e), TMAP_ERR_PARSE);
    tmap_ptx_free(m);
}

/* The constant cache's caveat: a table read at an index loaded from the
 * thread's element (tab[key[tid]]) is blind when the module's __constant__
 * data exceed the table's sm:const.cache_bytes; not with a smaller table,
 * not without the entry, not when every lane reads one address, and not
 * when a key per thread prices it (the read is keyed: from the thread's own
 * data, not its id).  *keyed: tmap_sm_model_const_keyed. */
static int const_blind_keyed(const char *decl, const char *index, const char *cache,
                             const double *features, int *keyed)
{
    char ptx[2048], table[256];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n%s\n"
             ".visible .entry k(.param .u64 pk)\n{\n"
             "  .reg .b32 %%r<4>;\n  .reg .b64 %%rd<8>;\n"
             "  ld.param.u64 %%rd1, [pk];\n  mov.u32 %%r1, %%tid.x;\n"
             "  mul.wide.u32 %%rd2, %%r1, 4;\n  add.s64 %%rd3, %%rd1, %%rd2;\n"
             "  ld.global.u32 %%r2, [%%rd3];\n  %s\n"
             "  mov.u64 %%rd5, tab;\n  add.s64 %%rd6, %%rd5, %%rd4;\n"
             "  ld.const.u8 %%r3, [%%rd6];\n  st.global.u32 [%%rd3], %%r3;\n  ret;\n}\n",
             decl, index);
    snprintf(table, sizeof table, "class:default\t1\t-\tt\n%s", cache);
    sm_kernel k = kernel_open(table, ptx, 1, 0);
    tmap_sm_model sm;
    TMAP_CHECK(tmap_sm_model_make(k.t, k.m, "k", k.cfg, NULL, 1, 1, 32, 0, &sm, err));
    if (features)
        TMAP_CHECK(tmap_sm_model_features(&sm, features, 32, 1, err));
    int blind = tmap_sm_model_const_blind(&sm);
    if (keyed)
        *keyed = tmap_sm_model_const_keyed(&sm);
    assert_int_equal(sm.const_loads, strstr(index, ", %r") != NULL);
    tmap_sm_model_free(&sm);
    kernel_close(&k);
    return blind;
}

static int const_blind(const char *decl, const char *index, const char *cache)
{
    return const_blind_keyed(decl, index, cache, NULL, NULL);
}

static void test_const_blind(void **state)
{
    const char *big = ".const .align 1 .b8 tab[4096];", *small = ".const .align 1 .b8 tab[1024];";
    const char *cache = "sm:const.cache_bytes\t2048\t-\tt\n";
    const char *data = "cvt.u64.u32 %rd4, %r2;", *tid = "cvt.u64.u32 %rd4, %r1;",
               *one = "mov.u64 %rd4, 7;";
    assert_int_equal(const_blind(big, data, cache), 1);
    assert_int_equal(const_blind(small, data, cache), 0);
    assert_int_equal(const_blind(big, data, ""), 0);
    assert_int_equal(const_blind(big, tid, cache), 1); /* the thread id: varies too */
    assert_int_equal(const_blind(big, one, cache), 0);
    /* a key prices the data-indexed read where the table has the cache's
     * costs; the thread id's read is not keyed */
    const char *costs = "sm:const.cache_bytes\t2048\t-\tt\nsm:const.idc_cycles\t2\t-\tt\n";
    double key[32] = {0};
    int keyed = -1;
    assert_int_equal(const_blind_keyed(big, data, costs, key, &keyed), 0);
    assert_int_equal(keyed, 1);
    assert_int_equal(const_blind_keyed(big, data, cache, key, &keyed), 1); /* no costs */
    assert_int_equal(const_blind_keyed(big, tid, costs, key, &keyed), 1);
    assert_int_equal(keyed, 0);
    assert_int_equal(const_blind_keyed(big, one, costs, key, &keyed), 0);
    assert_int_equal(keyed, 0); /* no varying read */
    tmap_lat_table *t = NULL;
    TMAP_CHECK(tmap_lat_load(TMAP_SOURCE_DIR "/latency_tables/sm_90.tsv", &t, err));
    tmap_sm_params p = {0};
    double l2;
    tmap_sm_table_params(t, &l2, &p);
    assert_true(p.const_cache_bytes == 2048 && p.idc_cycles == 1.89 && p.idc_fill_cycles == 34.2);
    tmap_lat_free(t);
    assert_int_equal(tmap_sm_model_const_blind(NULL), 0);
}

/* tmap_warp_counts_const by hand: 64 threads, one CFG block, thread blocks
 * of 32.  Warp 0: lanes 0-15 key 10 with 2 executions, lanes 16-31 key 11
 * with 3 (lane 31: 5): a request's distinct addresses summed over the
 * executions, 2 + 5.  Warp 1: key 12, once each: 1.  One SM of two
 * resident blocks: block 0's window holds blocks 0 and 1 (3 of the 3 keys:
 * the whole table), block 1's only itself (1 of 3).  Reversed, each warp
 * keeps its lanes and the windows swap their contents. */
static void test_const_counts(void **state)
{
    (void)state;
    uint32_t counts[64], group[64];
    for (size_t t = 0; t < 64; t++)
        counts[t] = t < 16 ? 2 : t < 32 ? 3 : 1, group[t] = t < 16 ? 0 : t < 32 ? 1 : 2;
    counts[31] = 5;
    tmap_bbv bbv = {64, 1, counts};
    tmap_warp_counts w;
    TMAP_CHECK(tmap_warp_counts_make(&bbv, NULL, 32, &w, err));
    TMAP_CHECK(tmap_warp_counts_const(&w, &bbv, NULL, group, 3, 3000, 1, 2, err));
    assert_true(w.ca[0] == 7 && w.ca[1] == 1);
    assert_true(w.const_ws[0] == 3000 && w.const_ws[1] == 1000);
    uint32_t rev[64];
    for (size_t t = 0; t < 64; t++)
        rev[t] = 63 - (uint32_t)t;
    tmap_warp_counts r;
    TMAP_CHECK(tmap_warp_counts_make(&bbv, rev, 32, &r, err));
    TMAP_CHECK(tmap_warp_counts_const(&r, &bbv, rev, group, 3, 3000, 1, 2, err));
    assert_true(r.ca[0] == 1 && r.ca[1] == 7);
    assert_true(r.const_ws[0] == 3000 && r.const_ws[1] == 2000);
    tmap_error e = {0};
    assert_int_equal(tmap_warp_counts_const(&r, &bbv, rev, group, 3, 3000, 0, 2, &e),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_warp_counts_const(&r, &bbv, rev, group, 2, 3000, 1, 2, &e),
                     TMAP_ERR_INVALID); /* thread 32's group 2 of 2 */
    assert_non_null(strstr(e.message, "thread 32's group 2"));
    assert_int_equal(tmap_warp_counts_const(&r, &bbv, rev, group, 0, 3000, 1, 2, &e),
                     TMAP_ERR_INVALID);
    tmap_warp_counts_free(&w), tmap_warp_counts_free(&r);
}

/* A warp's lanes made distinct by group, in order of first appearance,
 * through perm: 40 threads in blocks of 40, warp 1 holds slots 32-39, which
 * run threads 7..0 (groups 2 2 1 0 1 0 1 0); without groups each lane is
 * its own. */
static void test_warp_lanes(void **state)
{
    (void)state;
    uint32_t counts[40] = {0}, group[40], perm[40];
    for (uint32_t t = 0; t < 40; t++)
        group[t] = t < 6 ? t % 2 : 2, perm[t] = 39 - t;
    tmap_bbv bbv = {40, 1, counts};
    tmap_warp_counts w;
    TMAP_CHECK(tmap_warp_counts_make(&bbv, perm, 40, &w, err));
    uint32_t thread[32], lane_of[32], want_t[8] = {7, 6, 5, 4, 3, 2, 1, 0},
             want_l[8] = {0, 0, 1, 2, 1, 2, 1, 2};
    size_t nd = 99;
    assert_int_equal(tmap_warp_counts_lanes(&w, group, perm, 1, thread, lane_of, &nd), 8);
    assert_int_equal(nd, 3);
    for (int i = 0; i < 8; i++)
        assert_true(thread[i] == want_t[i] && lane_of[i] == want_l[i]);
    assert_int_equal(tmap_warp_counts_lanes(&w, NULL, NULL, 0, thread, lane_of, &nd), 32);
    assert_true(nd == 32 && thread[31] == 31 && lane_of[31] == 31);
    assert_int_equal(tmap_warp_counts_lanes(&w, group, NULL, 2, thread, lane_of, &nd), 0);
    assert_int_equal(nd, 0);
    tmap_warp_counts_free(&w);
}

/* The SM model's groups from feature rows: equal rows one group, sorted
 * once; the model refuses a BBV of another size; no features, an error. */
static void test_model_features(void **state)
{
    (void)state;
    double f[5 * 2] = {1, 2, 3, 4, 1, 2, 0, 0, 3, 4};
    tmap_sm_model sm = {0};
    TMAP_CHECK(tmap_sm_model_features(&sm, f, 5, 2, err));
    assert_true(sm.group_n == 5 && sm.ngroups == 3);
    assert_true(sm.group[0] == sm.group[2] && sm.group[1] == sm.group[4]);
    assert_true(sm.group[0] != sm.group[1] && sm.group[3] != sm.group[0] &&
                sm.group[3] != sm.group[1]);
    TMAP_CHECK(tmap_sm_model_features(&sm, f, 5, 1, err)); /* replaces: 1, 3, 1, 0, 3 */
    assert_true(sm.group_n == 5 && sm.ngroups == 4);
    tmap_error e = {0};
    assert_int_equal(tmap_sm_model_features(&sm, f, 5, 0, &e), TMAP_ERR_INVALID);
    assert_int_equal(sm.group_n, 5); /* kept */
    uint32_t counts[4] = {0};
    tmap_bbv bbv = {4, 0, counts};
    tmap_sm_time_parts parts;
    assert_int_equal(tmap_sm_model_time(&sm, &bbv, NULL, &parts, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "groups of 5 threads"));
    tmap_sm_model_free(&sm);
    assert_null(sm.group);
}

/* The constant cache's term by hand: one warp, one CFG block of one issue
 * cycle and one keyed constant read, run once (c = 1) with 4 distinct
 * addresses (ca = 4): 3 further addresses wait const_replay (5) each on
 * the chain; the cache serves 1 + 3 addresses at idc_cycles (2) + 32 m^2,
 * m = 1 - 2048 / 4096 = 0.5: 4 x 10 = 40 cycles, the SM's time.  Within
 * the cache (2048 bytes of rows) 4 x 2 = 8, and the issue with the stalls
 * beyond it (1 + 15 - 1) binds. */
static void test_const_term(void **state)
{
    (void)state;
    hand h;
    uint32_t c[] = {1};
    hand_init(&h, 32, 32, c, NULL);
    double ca[] = {4}, ws[] = {4096};
    h.w.ca = ca, h.w.const_ws = ws;
    tmap_sm_block b = {.issue = 1, .const_n = 1, .const_keyed_n = 1};
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4, .warps_per_block = 1,
                        .const_replay = 5, .const_cache_bytes = 2048, .idc_cycles = 2,
                        .idc_fill_cycles = 32};
    tmap_sm_time_parts t;
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    assert_true(t.constant == 40 && t.cycles == 40 && t.issue == 1 && t.latency == 14);
    ws[0] = 2048;
    TMAP_CHECK(tmap_sm_time(&h.w, &b, &p, &t, err));
    assert_true(t.constant == 8 && t.cycles == 15);
    h.w.const_ws = NULL; /* ca without its windows */
    tmap_error e = {0};
    assert_int_equal(tmap_sm_time(&h.w, &b, &p, &t, &e), TMAP_ERR_INVALID);
    b.const_keyed_n = 2; /* more keyed reads than reads */
    h.w.const_ws = ws;
    assert_int_equal(tmap_sm_time(&h.w, &b, &p, &t, &e), TMAP_ERR_INVALID);
}

static void test_bad_input(void **state)
{
    hand h;
    uint32_t c[] = {1};
    hand_init(&h, 32, 32, c, NULL);
    tmap_sm_block neg = {.issue = -1}, ok = {.issue = 1};
    tmap_sm_params p = {.nsms = 1, .blocks_per_sm = 1, .subpartitions = 4,
                        .warps_per_block = 1};
    tmap_sm_params zero = p, wide = p, shape = p;
    zero.nsms = 0, wide.subpartitions = 99, shape.warps_per_block = 2;
    tmap_sm_time_parts t;
    tmap_error e = {0};
    assert_int_equal(tmap_sm_time(&h.w, &neg, &p, &t, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "block 0"));
    assert_int_equal(tmap_sm_time(&h.w, &ok, &zero, &t, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_sm_time(&h.w, &ok, &wide, &t, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_sm_time(&h.w, &ok, &shape, &t, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_sm_time(&h.w, &ok, NULL, &t, &e), TMAP_ERR_INVALID);
    tmap_sm_block far = {.issue = 1, .loop_id = 2}; /* one block: loop ids are 0 or 1 */
    assert_int_equal(tmap_sm_time(&h.w, &far, &p, &t, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "loop ids 2, 0"));
    far.loop_id = 1, far.rewalk_loop = 1;
    TMAP_CHECK(tmap_sm_time(&h.w, &far, &p, &t, err));
    hand_init(&h, 0, 32, c, NULL);
    TMAP_CHECK(tmap_sm_time(&h.w, &ok, &p, &t, err));
    assert_true(t.cycles == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_block),     cmocka_unit_test(test_shared_subpartition),
        cmocka_unit_test(test_residents),     cmocka_unit_test(test_first_wave),
        cmocka_unit_test(test_sectors),       cmocka_unit_test(test_gather_rate),
        cmocka_unit_test(test_own_rate),
        cmocka_unit_test(test_constant_replays), cmocka_unit_test(test_warp_counts),
        cmocka_unit_test(test_chain),         cmocka_unit_test(test_loop_chain),
        cmocka_unit_test(test_block_issue),
        cmocka_unit_test(test_dataflow_chain),
        cmocka_unit_test(test_access_classes), cmocka_unit_test(test_walk),
        cmocka_unit_test(test_walk_blocks),   cmocka_unit_test(test_visits),
        cmocka_unit_test(test_sfu_issue),
        cmocka_unit_test(test_visit_parents), cmocka_unit_test(test_local_rows),
        cmocka_unit_test(test_local_blocks),  cmocka_unit_test(test_rewalk_lines),
        cmocka_unit_test(test_const_bytes),   cmocka_unit_test(test_const_blind),
        cmocka_unit_test(test_const_counts),
        cmocka_unit_test(test_warp_lanes),
        cmocka_unit_test(test_model_features),
        cmocka_unit_test(test_const_term),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

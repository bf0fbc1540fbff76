/*
 * test_memchoose.c -- choosing a data layout: the model's proposal
 * (tmap_memre_propose: exact sector counts of each layout on zhang2011's
 * Fig. 4, the order by predicted total, the build spread over launches, the
 * L2, layouts that do not apply, nothing paying) and the measured choice
 * over the first launches (tmap_memchooser, with stand-in times); sharing
 * as a kind of both (exact staged sectors, the lists composed through the
 * locality order, chosen when its launches are fastest); scoring layouts
 * built elsewhere (tmap_memre_score, tmap_memre_rank); the L2's term from
 * the thread blocks' distinct sectors (reuse across warps); partial
 * duplication as a kind (its fraction given, kept when measured to pay).
 */
#include <math.h>

#include "tests/testutil.h"
#include "threadmap/pipeline.h"

/* Thread blocks of one warp: with k = 1 a block's sectors are its
 * request's, so the figure's counts price the L2 as they do the L1. */
static const tmap_memref fig4 = {.nthreads = 8, .per_thread = 1, .elem_bytes = 4, .nelems = 8,
                                 .warp = 4, .sector_bytes = 16, .block = 4};
static const uint32_t fig4_p[8] = {0, 5, 2, 3, 2, 3, 7, 6};

/* Every sector passed to the L2 costs 1 ns, the L1's and builds (almost)
 * nothing. */
static tmap_memre_costs unit_costs(double launches)
{
    tmap_memre_costs c = {.l2_sector_ns = 1, .dram_sector_ns = 1, .l1_sector_ns = 1e-30,
                          .launches = launches};
    for (int k = 0; k < TMAP_MEMRE_KINDS; k++)
        c.build_ms[k] = 1e-12;
    return c;
}

static const tmap_memre_choice *find(const tmap_memre_choice *v, size_t n, tmap_memre_kind k)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == k)
            return &v[i];
    return NULL;
}

/* Fig. 4 over 1000 launches: the original 4 sectors; the hybrid,
 * duplication and padding 2; swapping and reordering 3; by total, the
 * layouts that move no data first among equals. */
static void propose_fig4(void **state)
{
    tmap_memre_costs c = unit_costs(1000);
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t n;
    TMAP_CHECK(tmap_memre_propose(&fig4, fig4_p, &c, v, &n, err));
    assert_int_equal(n, 6); /* no locality order given */
    assert_int_equal(v[0].kind, TMAP_MEMRE_ORIGINAL);
    assert_int_equal(v[0].counts.sectors, 4);
    assert_true(fabs(v[0].total_ms - 4e-3) < 1e-12);
    static const struct { tmap_memre_kind k; uint64_t s; } want[] = {
        {TMAP_MEMRE_DUPLICATE, 2}, {TMAP_MEMRE_PAD, 2}, {TMAP_MEMRE_HYBRID, 2},
        {TMAP_MEMRE_SWAP, 3}, {TMAP_MEMRE_REORDER, 3}};
    for (size_t i = 0; i < 5; i++) {
        const tmap_memre_choice *x = find(v, n, want[i].k);
        assert_non_null(x);
        assert_int_equal(x->counts.sectors, want[i].s);
        assert_true(x->fits_l2);
    }
    for (size_t i = 2; i < n; i++)
        assert_true(v[i - 1].total_ms <= v[i].total_ms);
    assert_true(v[4].kind == TMAP_MEMRE_SWAP); /* 3 sectors, nothing gathered */
    assert_true(v[4].total_ms < v[5].total_ms);
    /* reordering moves data: its gather is counted once, not per launch */
    const tmap_memre_choice *re = find(v, n, TMAP_MEMRE_REORDER);
    assert_true(re->once_ms > 0 && re->launch_ms == 3e-6);
    tmap_memre_choices_free(v, n);
}

/* How many layouts fig4 proposes (the original included) when each build
 * takes 1 ms; with swapping among them or not. */
static size_t proposed(double launches, int data_changes, int *with_swap)
{
    tmap_memre_costs c = unit_costs(launches);
    c.data_changes = data_changes;
    for (int k = 0; k < TMAP_MEMRE_KINDS; k++)
        c.build_ms[k] = 1;
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t n;
    TMAP_CHECK(tmap_memre_propose(&fig4, fig4_p, &c, v, &n, err));
    assert_int_equal(v[0].kind, TMAP_MEMRE_ORIGINAL);
    *with_swap = find(v, n, TMAP_MEMRE_SWAP) != NULL;
    tmap_memre_choices_free(v, n);
    return n;
}

/* A build the launches cannot repay: the original alone.  Over 1e6
 * launches a 1 ms build pays for 2 sectors saved (2 ms against 1), not for
 * 1 (swapping, reordering); over 1e7 every layout pays. */
static void propose_nothing_pays(void **state)
{
    int swap;
    assert_int_equal(proposed(1, 1, &swap), 1);
    assert_int_equal(proposed(1e6, 0, &swap), 4);
    assert_false(swap);
    assert_int_equal(proposed(1e7, 0, &swap), 6);
    assert_true(swap);
}

/* Builds given as longer than the original's whole total cannot pay and
 * are not built: on 2^20 threads x 4 random accesses, building them (swap
 * and hybrid alone take seconds here) is skipped, the proposal counts the
 * original's sectors only. */
static void propose_skips_builds_that_cannot_pay(void **state)
{
    size_t n = 1u << 20, k = 4;
    uint32_t *p = malloc(n * k * sizeof *p);
    assert_non_null(p);
    uint64_t x = 7;
    for (size_t i = 0; i < n * k; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (uint32_t)((x >> 33) % n);
    }
    tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 8, .nelems = n};
    tmap_memre_costs c = {.launches = 100, .threshold = 0.03};
    for (int i = 0; i < TMAP_MEMRE_KINDS; i++)
        c.build_ms[i] = 1e9;
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t nv;
    /* Against one sector count of the reference, so that the bound holds on
     * a loaded machine: the original's scoring is about one count; a swap or
     * hybrid build, about eight. */
    tmap_sector_counts sc;
    double t0 = tmap_clock_seconds();
    TMAP_CHECK(tmap_sectors_count(&r, p, NULL, &sc, err));
    double count = tmap_clock_seconds() - t0;
    t0 = tmap_clock_seconds();
    TMAP_CHECK(tmap_memre_propose(&r, p, &c, v, &nv, err));
    double took = tmap_clock_seconds() - t0;
    assert_int_equal(nv, 1);
    assert_int_equal(v[0].kind, TMAP_MEMRE_ORIGINAL);
    assert_true(took < 3 * count + 0.05);
    tmap_memre_choices_free(v, nv);
    free(p);
}

/* The L2: the same sectors priced as hits while the footprint fits. */
static void propose_l2(void **state)
{
    tmap_memre_costs c = unit_costs(1);
    c.dram_sector_ns = 10;
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t n;
    TMAP_CHECK(tmap_memre_propose(&fig4, fig4_p, &c, v, &n, err));
    assert_true(v[0].fits_l2 && fabs(v[0].launch_ms - 4e-6) < 1e-15);
    tmap_memre_choices_free(v, n);
    c.l2_bytes = 16; /* one sector: nothing fits */
    TMAP_CHECK(tmap_memre_propose(&fig4, fig4_p, &c, v, &n, err));
    assert_true(!v[0].fits_l2 && fabs(v[0].launch_ms - 4e-5) < 1e-15);
    tmap_memre_choices_free(v, n);
}

/* A store excludes the layouts with copies; k = 2 excludes padding; a
 * locality order adds its candidate. */
static void propose_applicable(void **state)
{
    tmap_memre_costs c = unit_costs(1000);
    c.threshold = 0;
    tmap_memref w = fig4;
    w.write = 1;
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t n;
    TMAP_CHECK(tmap_memre_propose(&w, fig4_p, &c, v, &n, err));
    assert_null(find(v, n, TMAP_MEMRE_DUPLICATE));
    assert_null(find(v, n, TMAP_MEMRE_PAD));
    assert_non_null(find(v, n, TMAP_MEMRE_HYBRID));
    tmap_memre_choices_free(v, n);
    static const uint32_t p2[16] = {0, 8, 4, 12, 1, 9, 5, 13, 6, 14, 2, 10, 7, 15, 3, 11};
    static const uint32_t order[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
    tmap_memref k2 = fig4;
    k2.per_thread = 2, k2.nelems = 16;
    c.order = order;
    TMAP_CHECK(tmap_memre_propose(&k2, p2, &c, v, &n, err));
    assert_null(find(v, n, TMAP_MEMRE_PAD));
    assert_int_equal(v[0].counts.sectors, 8);
    assert_int_equal(find(v, n, TMAP_MEMRE_SWAP)->counts.sectors, 4);
    assert_non_null(find(v, n, TMAP_MEMRE_DUPLICATE));
    tmap_memre_choices_free(v, n);
    tmap_error e = {0};
    c.threshold = 1;
    assert_int_equal(tmap_memre_propose(&fig4, fig4_p, &c, v, &n, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "threshold"));
}

/* Runs a trial with stand-in launch times per candidate; returns the kept. */
static int run_trial(const tmap_memre_choice *v, size_t n, const float *ms, double launches,
                     double threshold)
{
    tmap_memchooser *m;
    TMAP_CHECK(tmap_memchooser_create(v, n, 3, threshold, launches, &m, err));
    int order[32], timed, i = 0;
    while (tmap_memchooser_chosen(m) < 0) {
        int cand = tmap_memchooser_next(m, &timed);
        assert_true(timed && i < 32);
        order[i++] = cand;
        tmap_memchooser_record(m, cand, ms[cand]);
    }
    assert_int_equal(i, 3 * (int)n);
    for (int j = 0; j < i; j++) /* in turns */
        assert_int_equal(order[j], j % (int)n);
    int kept = tmap_memchooser_chosen(m);
    assert_int_equal(tmap_memchooser_next(m, &timed), kept);
    assert_false(timed);
    assert_non_null(strstr(tmap_memchooser_why(m), "kept"));
    tmap_memchooser_free(m);
    return kept;
}

/* The fastest launch loses when its build, spread over the launches, costs
 * more than it saves; within the threshold the original stays. */
static void chooser_amortizes(void **state)
{
    tmap_memre_choice v[3] = {{.kind = TMAP_MEMRE_ORIGINAL},
                              {.kind = TMAP_MEMRE_DUPLICATE, .once_ms = 100},
                              {.kind = TMAP_MEMRE_SWAP, .once_ms = 1}};
    const float ms[3] = {1.0f, 0.5f, 0.8f};
    assert_int_equal(run_trial(v, 3, ms, 100, 0.03), 2);   /* 0.5 + 1 > 0.8 + 0.01 */
    assert_int_equal(run_trial(v, 3, ms, 1000, 0.03), 1);  /* 0.5 + 0.1 */
    const float close[3] = {1.0f, 2.0f, 0.98f};
    assert_int_equal(run_trial(v, 3, close, 1e6, 0.03), 0); /* 2% is within the threshold */
    assert_int_equal(run_trial(v, 1, ms, 1, 0.03), 0);      /* nothing proposed */
    tmap_memchooser *m;
    tmap_error e = {0};
    assert_int_equal(tmap_memchooser_create(v + 1, 2, 3, 0.03, 1, &m, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "the original first"));
}

/* 8 threads x 2 accesses of 16 elements, 4 to a 16-byte sector: the
 * original reads 8 sectors; one block of 8 stages all 16 elements in 4
 * requests of one sector each. */
static const uint32_t k2_p[16] = {0, 8, 4, 12, 1, 9, 5, 13, 6, 14, 2, 10, 7, 15, 3, 11};

static tmap_memref k2_ref(void)
{
    tmap_memref k2 = fig4;
    k2.per_thread = 2, k2.nelems = 16;
    return k2;
}

static void propose_share(void **state)
{
    tmap_memref k2 = k2_ref();
    tmap_memre_costs c = unit_costs(1000);
    c.share_block = 8, c.smem_bytes = 64;
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t n;
    TMAP_CHECK(tmap_memre_propose(&k2, k2_p, &c, v, &n, err));
    assert_int_equal(v[0].counts.sectors, 8);
    const tmap_memre_choice *sh = find(v, n, TMAP_MEMRE_SHARE);
    assert_non_null(sh);
    assert_int_equal(sh->counts.sectors, 4);
    assert_int_equal(sh->counts.requests, 4);
    assert_int_equal(sh->layout.nout, 16);
    assert_int_equal(sh->start[0], 0), assert_int_equal(sh->start[1], 16);
    for (size_t i = 0; i < 16; i++) /* A'[Q[i]] is the element the original read */
        assert_int_equal(sh->layout.from[sh->layout.index[i]], k2_p[i]);
    tmap_memre_choices_free(v, n);
    /* through a locality order: the staged list is that layout's A' in
     * order, so from, composed, is the order itself; its gather is the
     * locality layout's */
    static const uint32_t order[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
    c.order = order;
    TMAP_CHECK(tmap_memre_propose(&k2, k2_p, &c, v, &n, err));
    sh = find(v, n, TMAP_MEMRE_SHARE);
    assert_non_null(sh);
    assert_memory_equal(sh->layout.from, order, sizeof order);
    assert_int_equal(sh->counts.sectors, 4);
    /* the gather once: 4 read sectors (the order's runs of 4) and 4 written */
    assert_true(fabs(sh->once_ms - (8e-6 + 1e-12)) < 1e-15);
    tmap_memre_choices_free(v, n);
    /* a working set beyond the shared memory: no sharing */
    c.smem_bytes = 60, c.order = NULL;
    TMAP_CHECK(tmap_memre_propose(&k2, k2_p, &c, v, &n, err));
    assert_null(find(v, n, TMAP_MEMRE_SHARE));
    tmap_memre_choices_free(v, n);
    tmap_memre m;
    tmap_error e = {0};
    assert_int_equal(tmap_memre_build(TMAP_MEMRE_SHARE, &k2, k2_p, &c, &m, &e),
                     TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "shared memory"));
    assert_string_equal(tmap_memre_kind_name(TMAP_MEMRE_SHARE), "share");
}

/* Sharing on trial: kept when its launches, its once cost spread, are
 * the fastest; not when that cost outweighs what it saves. */
static void chooser_shares(void **state)
{
    tmap_memre_choice v[3] = {{.kind = TMAP_MEMRE_ORIGINAL},
                              {.kind = TMAP_MEMRE_LOCALITY, .once_ms = 10},
                              {.kind = TMAP_MEMRE_SHARE, .once_ms = 20}};
    const float ms[3] = {1.2f, 0.75f, 0.63f};
    tmap_memchooser *m;
    assert_int_equal(run_trial(v, 3, ms, 1000, 0.03), 2); /* 0.63 + 0.02 < 0.75 + 0.01 */
    assert_int_equal(run_trial(v, 3, ms, 20, 0.03), 0);   /* 0.63 + 1 > 1.2 */
    TMAP_CHECK(tmap_memchooser_create(v, 3, 1, 0.03, 1000, &m, err));
    for (int i = 0; i < 3; i++)
        tmap_memchooser_record(m, tmap_memchooser_next(m, &(int){0}), ms[i]);
    assert_int_equal(tmap_memchooser_chosen(m), 2);
    assert_non_null(strstr(tmap_memchooser_why(m), "share kept"));
    tmap_memchooser_free(m);
}

/* Layouts built elsewhere: scored from their counts, ranked. */
static void score_and_rank(void **state)
{
    tmap_memre_costs c = unit_costs(10);
    c.data_changes = 1, c.threshold = 0.1;
    tmap_memre_choice v[3] = {{.kind = TMAP_MEMRE_ORIGINAL, .counts = {.sectors = 100}},
                              {.kind = TMAP_MEMRE_DUPLICATE, .counts = {.sectors = 40},
                               .build_ms = 1e-4},
                              {.kind = TMAP_MEMRE_SWAP, .counts = {.sectors = 95}}};
    uint64_t gather[3] = {0, 30, 0};
    for (int i = 0; i < 3; i++)
        tmap_memre_score(&fig4, &c, gather[i], &v[i]);
    assert_true(fabs(v[0].total_ms - 1e-3) < 1e-15);
    assert_true(fabs(v[1].launch_ms - 70e-6) < 1e-15); /* the gather before each launch */
    assert_true(fabs(v[1].total_ms - 8e-4) < 1e-15);
    assert_int_equal(tmap_memre_rank(v, 3, &c), 2); /* swapping saves 5%: below the threshold */
    assert_int_equal(v[1].kind, TMAP_MEMRE_DUPLICATE);
}

/* The L1's capacity: 512 threads of one access in blocks of 256 (two
 * blocks), 1000 request sectors, 400 distinct per block summed: a block's
 * 200 sectors x 32 bytes x 8 resident blocks (2048 threads an SM) = 51200
 * bytes.  An L1 of 25600 keeps half the reuse: the L2 sees 400 + 0.5 x 600
 * = 700 sectors, 1e-6 x (1000 x 0.5 + 700 x 1) ms; the H100's 256 KiB
 * keeps it all (400); one block resident (sm_threads 256) fits too; one
 * block of 512 (12800 bytes x 4 resident) is again half. */
static void score_l1_capacity(void **state)
{
    tmap_memref r = {.nthreads = 512, .per_thread = 1, .elem_bytes = 4, .nelems = 1 << 20};
    tmap_memre_costs c = {.l2_sector_ns = 1, .dram_sector_ns = 1, .l1_sector_ns = 0.5,
                          .launches = 1, .l1_bytes = 25600};
    tmap_memre_choice v = {.kind = TMAP_MEMRE_ORIGINAL,
                           .counts = {.sectors = 1000, .footprint = 1, .block_sectors = 400}};
    assert_true(fabs(tmap_memre_l1_keeps(&r, &c, &v.counts) - 0.5) < 1e-15);
    tmap_memre_score(&r, &c, 0, &v);
    assert_true(fabs(v.launch_ms - 1200e-6) < 1e-15);
    c.l1_bytes = 0;
    assert_true(tmap_memre_l1_keeps(&r, &c, &v.counts) == 1);
    tmap_memre_score(&r, &c, 0, &v);
    assert_true(fabs(v.launch_ms - 900e-6) < 1e-15);
    c.l1_bytes = 25600, c.sm_threads = 256;
    assert_true(tmap_memre_l1_keeps(&r, &c, &v.counts) == 1);
    c.sm_threads = 0, r.block = 512;
    assert_true(fabs(tmap_memre_l1_keeps(&r, &c, &v.counts) - 0.5) < 1e-15);
    /* an L1 of one byte keeps 1 / 51200 of the reuse: almost no reuse, as
     * without block_sectors (1000 sectors to the L2) */
    c.l1_bytes = 1;
    tmap_memre_score(&r, &c, 0, &v);
    assert_true(fabs(v.launch_ms - (500 + 400 + 600 * (1 - 1.0 / 51200)) * 1e-6) < 1e-15);
}

/* The L2's term is the blocks' distinct sectors, the L1's the requests':
 * 1e-6 x (100 x 0.5 + 20 x 1) ms; without block_sectors, no reuse is
 * assumed (100).  Reuse across warps is what makes a layout pay here: a
 * locality order that keeps the requests' sectors (128) but halves the
 * blocks' (128 to 64) is proposed; unseen (block_sectors 0), it is not. */
static void score_block_reuse(void **state)
{
    tmap_memre_costs c = {.l2_sector_ns = 1, .dram_sector_ns = 1, .l1_sector_ns = 0.5,
                          .launches = 1};
    tmap_memre_choice v = {.kind = TMAP_MEMRE_ORIGINAL,
                           .counts = {.sectors = 100, .footprint = 1, .block_sectors = 20}};
    tmap_memre_score(&fig4, &c, 0, &v);
    assert_true(fabs(v.launch_ms - 70e-6) < 1e-15);
    v.counts.block_sectors = 0;
    tmap_memre_score(&fig4, &c, 0, &v);
    assert_true(fabs(v.launch_ms - 150e-6) < 1e-15);
    c.threshold = 0.1;
    tmap_memre_choice w[2] = {
        {.kind = TMAP_MEMRE_ORIGINAL, .counts = {.sectors = 128, .block_sectors = 128}},
        {.kind = TMAP_MEMRE_LOCALITY, .counts = {.sectors = 128, .block_sectors = 64}}};
    for (int i = 0; i < 2; i++)
        tmap_memre_score(&fig4, &c, 0, &w[i]);
    assert_true(fabs(w[1].total_ms - 128e-6) < 1e-15);
    assert_int_equal(tmap_memre_rank(w, 2, &c), 2);
    w[1].counts.block_sectors = 0;
    tmap_memre_score(&fig4, &c, 0, &w[1]);
    assert_int_equal(tmap_memre_rank(w, 2, &c), 1);
    /* the proposal counts them: fig4 in one block of 8 reads 2 sectors */
    tmap_memref one = fig4;
    one.block = 8;
    tmap_memre_costs u = c;
    u.threshold = 0;
    tmap_memre_choice p[TMAP_MEMRE_KINDS];
    size_t n;
    TMAP_CHECK(tmap_memre_propose(&one, fig4_p, &u, p, &n, err));
    assert_int_equal(p[0].counts.sectors, 4);
    assert_int_equal(p[0].counts.block_sectors, 2);
    assert_true(fabs(p[0].launch_ms - 4e-6) < 1e-15); /* 4 x 0.5 + 2 x 1 */
    tmap_memre_choices_free(p, n);
}

/* Partial duplication as a kind (partial_fraction): requests saving 3, 0
 * and 2 sectors (test_memre.c's case), half of them copied: 8 sectors to
 * 3; its gather is the copies only (reads 4 + 3 sectors, writes 2), A
 * staying in place.  Gathered before each of 10 launches it costs more
 * than it saves (12 against 8 a launch) and the model leaves it out,
 * unless `keep` names it (measured to pay: tmap_memfrac settled on it);
 * gathered once it is proposed. */
static void propose_partial(void **state)
{
    static const uint32_t p[12] = {0, 4, 8, 12, 1, 2, 3, 0, 1, 5, 9, 9};
    tmap_memref r = {.nthreads = 12, .per_thread = 1, .elem_bytes = 4, .nelems = 14,
                     .warp = 4, .sector_bytes = 16, .block = 4};
    tmap_memre_costs c = unit_costs(10);
    c.data_changes = 1, c.threshold = 0;
    tmap_memre_choice v[TMAP_MEMRE_KINDS];
    size_t n;
    TMAP_CHECK(tmap_memre_propose(&r, p, &c, v, &n, err));
    assert_null(find(v, n, TMAP_MEMRE_PARTIAL)); /* no fraction given */
    tmap_memre_choices_free(v, n);
    c.partial_fraction = 0.5;
    c.keep = 1u << TMAP_MEMRE_PARTIAL;
    TMAP_CHECK(tmap_memre_propose(&r, p, &c, v, &n, err));
    const tmap_memre_choice *x = find(v, n, TMAP_MEMRE_PARTIAL);
    assert_non_null(x);
    assert_int_equal(v[0].counts.sectors, 8);
    assert_int_equal(x->counts.sectors, 3);
    assert_int_equal(x->layout.nout, 24);
    assert_true(fabs(x->launch_ms - 12e-6) < 1e-12); /* 3 + the gather's 9 */
    assert_true(x->total_ms > v[0].total_ms);
    assert_true(x == &v[n - 1]); /* kept, ranked by its total: last */
    tmap_memre_choices_free(v, n);
    c.keep = 0;
    TMAP_CHECK(tmap_memre_propose(&r, p, &c, v, &n, err));
    assert_null(find(v, n, TMAP_MEMRE_PARTIAL));
    tmap_memre_choices_free(v, n);
    c.data_changes = 0;
    TMAP_CHECK(tmap_memre_propose(&r, p, &c, v, &n, err));
    x = find(v, n, TMAP_MEMRE_PARTIAL);
    assert_non_null(x);
    assert_true(fabs(x->once_ms - 9e-6) < 1e-11 && fabs(x->launch_ms - 3e-6) < 1e-12);
    tmap_memre_choices_free(v, n);
    tmap_memre m;
    tmap_error e = {0};
    c.partial_fraction = 0;
    assert_int_equal(tmap_memre_build(TMAP_MEMRE_PARTIAL, &r, p, &c, &m, &e),
                     TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "partial_fraction"));
    assert_string_equal(tmap_memre_kind_name(TMAP_MEMRE_PARTIAL), "partial");
}

/* Partial duplication on trial, with its build spread over the launches:
 * kept when fastest (md 1M's measured r = 0.5: 0.877 ms against 1.161). */
static void chooser_partial(void **state)
{
    tmap_memre_choice v[3] = {{.kind = TMAP_MEMRE_ORIGINAL},
                              {.kind = TMAP_MEMRE_LOCALITY, .once_ms = 7},
                              {.kind = TMAP_MEMRE_PARTIAL, .once_ms = 2}};
    const float ms[3] = {1.161f, 0.738f, 0.877f};
    assert_int_equal(run_trial(v, 3, ms, 20, 0.03), 2);   /* 0.877 + 0.1 < 0.738 + 0.35 */
    assert_int_equal(run_trial(v, 3, ms, 1000, 0.03), 1); /* 0.738 + 0.007 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(propose_fig4),
        cmocka_unit_test(propose_nothing_pays),
        cmocka_unit_test(propose_skips_builds_that_cannot_pay),
        cmocka_unit_test(propose_l2),
        cmocka_unit_test(propose_applicable),
        cmocka_unit_test(chooser_amortizes),
        cmocka_unit_test(propose_share),
        cmocka_unit_test(chooser_shares),
        cmocka_unit_test(score_and_rank),
        cmocka_unit_test(score_block_reuse),
        cmocka_unit_test(score_l1_capacity),
        cmocka_unit_test(propose_partial),
        cmocka_unit_test(chooser_partial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

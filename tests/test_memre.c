/*
 * test_memre.c -- the memory transformations on the CPU (tmap_memre_*):
 * the papers' worked examples reproduced exactly (zhang2011 Fig. 4 a, b, e
 * and its two counter-examples; wu2013 Fig. 4 b, c), every transformation
 * giving the same results as the original on a CPU reference computation,
 * the sector counts they reach, scopes and bad arguments; job swapping as
 * a sort (the GPU's build) against the greedy on residues; the locality
 * orders (reverse Cuthill-McKee, Morton) exactly on small cases.
 */
#include <math.h>

#include "tests/testutil.h"
#include "threadmap/regroup.h"

#define E TMAP_MEMRE_EMPTY

/* The reference kernel: out[t] = sum_j (j + 1) * A[P[t*k + j]], run as
 * the original and as the transformed launch (slot s runs thread perm[s],
 * reading A'[Q[...]]); the results must be bitwise equal. */
static void same_results(const tmap_memref *r, const uint32_t *p, const tmap_memre *m)
{
    size_t n = r->nthreads, k = r->per_thread;
    double *a = malloc(r->nelems * sizeof *a), *a2 = malloc(m->nout * sizeof *a2);
    double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    for (size_t e = 0; e < r->nelems; e++)
        a[e] = sin((double)e + 0.25) * 1000.0;
    tmap_memre_gather(m, a, sizeof *a, a2);
    if (m->perm)
        TMAP_CHECK(tmap_perm_check(m->perm, n, "perm", err));
    for (size_t t = 0; t < n; t++) {
        want[t] = 0;
        for (size_t j = 0; j < k; j++)
            want[t] += (double)(j + 1) * a[p[t * k + j]];
    }
    for (size_t s = 0; s < n; s++) {
        size_t t = m->perm ? m->perm[s] : s;
        got[t] = 0;
        for (size_t j = 0; j < k; j++) {
            uint32_t q = m->index[t * k + j];
            assert_true(q < m->nout);
            if (m->from)
                assert_true(m->from[q] != E);
            got[t] += (double)(j + 1) * a2[q];
        }
    }
    for (size_t t = 0; t < n; t++)
        if (memcmp(&want[t], &got[t], sizeof want[t]))
            fail_msg("thread %zu: %.17g, the original %.17g", t, got[t], want[t]);
    free(a), free(a2), free(want), free(got);
}

static uint64_t sectors(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                        size_t nelems)
{
    tmap_memref q = *r;
    q.nelems = nelems;
    tmap_sector_counts s;
    TMAP_CHECK(tmap_sectors_count(&q, index, perm, &s, err));
    return s.sectors;
}

static uint64_t sectors_after(const tmap_memref *r, const tmap_memre *m)
{
    return sectors(r, m->index, m->perm, m->nout);
}

static void expect_u32(const uint32_t *got, const uint32_t *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s[%zu] = %u, want %u", what, i, got[i], want[i]);
}

/* zhang2011 Fig. 4: warps of 4 threads, segments of 4 elements. */
static const tmap_memref fig4 = {.nthreads = 8, .per_thread = 1, .elem_bytes = 4, .nelems = 8,
                                 .warp = 4, .sector_bytes = 16};
static const uint32_t fig4_p[8] = {0, 5, 2, 3, 2, 3, 7, 6};

/* (a) data reordering: A[5] moves into the first segment, Q =
 * {0,1,2,3,2,3,6,7}: 4 transactions to 3. */
static void zhang_fig4a_reordering(void **state)
{
    static const uint32_t q[8] = {0, 1, 2, 3, 2, 3, 6, 7};
    tmap_memre m;
    TMAP_CHECK(tmap_memre_reorder(&fig4, fig4_p, &m, err));
    expect_u32(m.index, q, 8, "Q");
    assert_null(m.perm);
    assert_int_equal(sectors(&fig4, fig4_p, NULL, 8), 4);
    assert_int_equal(sectors_after(&fig4, &m), 3);
    same_results(&fig4, fig4_p, &m);
    tmap_memre_free(&m);
}

/* (b) job swapping: threads 1 and 4 exchange jobs, Q = {0,4,2,3,1,5,6,7}:
 * 3 transactions; the data stays. */
static void zhang_fig4b_swapping(void **state)
{
    static const uint32_t r[8] = {0, 4, 2, 3, 1, 5, 6, 7};
    tmap_memre m;
    TMAP_CHECK(tmap_memre_swap(&fig4, fig4_p, 0, &m, err));
    expect_u32(m.perm, r, 8, "the thread order");
    expect_u32(m.index, fig4_p, 8, "Q");
    assert_null(m.from);
    assert_int_equal(sectors_after(&fig4, &m), 3);
    same_results(&fig4, fig4_p, &m);
    tmap_memre_free(&m);
}

/* (e) the hybrid: reordering gives Q = {4,5,2,3,2,3,7,6}, swapping then
 * R = {4,5,2,3,0,1,6,7}: 2 transactions, the minimum. */
static void zhang_fig4e_hybrid(void **state)
{
    static const uint32_t q[8] = {4, 5, 2, 3, 2, 3, 7, 6}, r[8] = {4, 5, 2, 3, 0, 1, 6, 7};
    tmap_memre m;
    TMAP_CHECK(tmap_memre_hybrid(&fig4, fig4_p, 0, &m, err));
    expect_u32(m.index, q, 8, "Q");
    expect_u32(m.perm, r, 8, "R");
    assert_int_equal(sectors_after(&fig4, &m), 2);
    same_results(&fig4, fig4_p, &m);
    tmap_memre_free(&m);
}

/* zhang2011 sec. 3.2.4: Q = {0,4,...,28} (one segment per thread):
 * reordering reaches 2 transactions, swapping cannot leave 8;
 * Q = {0,1,2,5,2,5,6,7}: swapping reaches 2, reordering 3. */
static void zhang_counter_examples(void **state)
{
    tmap_memref r = fig4;
    r.nelems = 32;
    uint32_t p[8];
    for (uint32_t t = 0; t < 8; t++)
        p[t] = 4 * t;
    tmap_memre m;
    TMAP_CHECK(tmap_memre_reorder(&r, p, &m, err));
    assert_int_equal(sectors(&r, p, NULL, 32), 8);
    assert_int_equal(sectors_after(&r, &m), 2);
    same_results(&r, p, &m);
    tmap_memre_free(&m);
    TMAP_CHECK(tmap_memre_swap(&r, p, 0, &m, err));
    assert_int_equal(sectors_after(&r, &m), 8);
    tmap_memre_free(&m);
    static const uint32_t p2[8] = {0, 1, 2, 5, 2, 5, 6, 7};
    TMAP_CHECK(tmap_memre_swap(&fig4, p2, 0, &m, err));
    assert_int_equal(sectors(&fig4, p2, NULL, 8), 4);
    assert_int_equal(sectors_after(&fig4, &m), 2);
    same_results(&fig4, p2, &m);
    tmap_memre_free(&m);
    TMAP_CHECK(tmap_memre_reorder(&fig4, p2, &m, err));
    assert_int_equal(sectors_after(&fig4, &m), 3);
    tmap_memre_free(&m);
}

/* wu2013 Fig. 4: 22 threads, warps of 4, segments of 4; the original
 * layout a c e g b d f h; accesses a x6, b x4, c, d, e x3, f, g, h once. */
enum { A_ = 0, C_ = 1, E_ = 2, G_ = 3, B_ = 4, D_ = 5, F_ = 6, H_ = 7 };
static const uint32_t wu_p[22] = {A_, A_, B_, B_, C_, C_, D_, D_, E_, E_, A_,
                                  A_, B_, B_, C_, D_, E_, F_, G_, H_, A_, A_};
static const tmap_memref wu = {.nthreads = 22, .per_thread = 1, .elem_bytes = 4, .nelems = 8,
                               .warp = 4, .sector_bytes = 16};

/* (b) duplication: A' is the access sequence, every element read once. */
static void wu_fig4b_duplication(void **state)
{
    tmap_memre m;
    TMAP_CHECK(tmap_memre_duplicate(&wu, wu_p, &m, err));
    assert_int_equal(m.nout, 22);
    expect_u32(m.from, wu_p, 22, "A'");
    for (uint32_t t = 0; t < 22; t++)
        assert_int_equal(m.index[t], t);
    assert_int_equal(sectors_after(&wu, &m), 6);
    same_results(&wu, wu_p, &m);
    tmap_memre_free(&m);
}

/* (c) padding: a b c x | c d e f | g h, access counts 6 4 2 0 1 3 3 1 1 1,
 * one segment per warp. */
static void wu_fig4c_padding(void **state)
{
    static const uint32_t layout[10] = {A_, B_, C_, E, C_, D_, E_, F_, G_, H_};
    static const uint32_t counts[10] = {6, 4, 2, 0, 1, 3, 3, 1, 1, 1};
    static const uint32_t order[22] = {0, 1, 10, 11, 20, 21, 2, 3, 12, 13, 4,
                                       5, 14, 6, 7, 15, 8, 9, 16, 17, 18, 19};
    tmap_memre m;
    TMAP_CHECK(tmap_memre_pad(&wu, wu_p, &m, err));
    assert_int_equal(m.nout, 10);
    expect_u32(m.from, layout, 10, "A'");
    expect_u32(m.perm, order, 22, "the thread order");
    uint32_t got[10] = {0};
    for (size_t t = 0; t < 22; t++)
        got[m.index[t]]++;
    expect_u32(got, counts, 10, "access counts");
    assert_int_equal(sectors(&wu, wu_p, NULL, 8), 10);
    assert_int_equal(sectors_after(&wu, &m), 6);
    same_results(&wu, wu_p, &m);
    tmap_memre_free(&m);
}

/* Duplication with k = 2 and a partial warp: each request reads
 * consecutive slots (warp 0: w*64 + j*32 + l; warp 1 of 8 lanes: 64 +
 * j*8 + l), so every request costs its minimum. */
static void duplication_interleaves_requests(void **state)
{
    tmap_memref r = {.nthreads = 40, .per_thread = 2, .elem_bytes = 4, .nelems = 1000};
    uint32_t p[80];
    for (uint32_t i = 0; i < 80; i++)
        p[i] = (i * 397) % 1000;
    tmap_memre m;
    TMAP_CHECK(tmap_memre_duplicate(&r, p, &m, err));
    assert_int_equal(m.index[0], 0);
    assert_int_equal(m.index[1], 32);   /* thread 0, request 1 */
    assert_int_equal(m.index[2 * 5 + 1], 37);
    assert_int_equal(m.index[2 * 33], 65);     /* thread 33: warp 1, lane 1 */
    assert_int_equal(m.index[2 * 33 + 1], 73); /* 64 + 8 + 1 */
    assert_int_equal(sectors_after(&r, &m), 4 + 4 + 1 + 1);
    same_results(&r, p, &m);
    tmap_memre_free(&m);
}

/* Random references: every transformation computes the original's
 * results; duplication reaches the packed minimum (but for a partial
 * warp), and so does padding. */
/* The next value of a seeded LCG, below mod. */
static uint32_t lcg(uint64_t *x, size_t mod)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((*x >> 33) % mod);
}

/* m values below mod from the LCG seeded with seed; narrow > 0: the
 * second half of every 64 below narrow instead (warps that gain little). */
static uint32_t *lcg_array(size_t m, uint64_t seed, size_t mod, size_t narrow)
{
    uint32_t *p = malloc(m * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < m; i++)
        p[i] = lcg(&seed, narrow && i % 64 >= 32 ? narrow : mod);
    return p;
}

static void random_references_keep_results(void **state)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        size_t n = 200 + seed * 53, ne = 64 + seed * 97, k = seed % 3 ? 1 : 3;
        uint32_t *p = malloc(n * k * sizeof *p);
        uint64_t x = seed;
        for (size_t i = 0; i < n * k; i++)
            p[i] = lcg(&x, seed % 2 ? ne : ne / 8 + 1);
        tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 4u << (seed % 2),
                         .nelems = ne};
        tmap_memre m;
        TMAP_CHECK(tmap_memre_duplicate(&r, p, &m, err));
        same_results(&r, p, &m);
        tmap_sector_counts s;
        tmap_memref d = r;
        d.nelems = m.nout;
        TMAP_CHECK(tmap_sectors_count(&d, m.index, NULL, &s, err));
        /* whole warps' requests start on a sector; a partial warp's may straddle one */
        assert_true(s.sectors >= s.min_sectors && s.sectors <= s.min_sectors + (n % 32 ? k : 0));
        tmap_memre_free(&m);
        TMAP_CHECK(tmap_memre_reorder(&r, p, &m, err));
        same_results(&r, p, &m);
        tmap_memre_free(&m);
        uint32_t *order = test_random_perm(ne, seed);
        TMAP_CHECK(tmap_memre_relabel(&r, p, order, 0, &m, err));
        same_results(&r, p, &m);
        tmap_memre_free(&m), free(order);
        if (k == 1) {
            TMAP_CHECK(tmap_memre_pad(&r, p, &m, err));
            same_results(&r, p, &m);
            d.nelems = m.nout;
            TMAP_CHECK(tmap_sectors_count(&d, m.index, m.perm, &s, err));
            assert_int_equal(s.sectors, s.min_sectors); /* each working set aligned */
            tmap_memre_free(&m);
        }
        {
            uint64_t before = sectors(&r, p, NULL, ne);
            TMAP_CHECK(tmap_memre_swap(&r, p, 128, &m, err));
            same_results(&r, p, &m);
            for (size_t sl = 0; sl < n; sl++) /* jobs stay in their thread block */
                assert_int_equal(m.perm[sl] / 128, sl / 128);
            if (k == 1)
                assert_true(sectors_after(&r, &m) <= before);
            tmap_memre_free(&m);
            TMAP_CHECK(tmap_memre_swap_sorted(&r, p, 128, &m, err));
            same_results(&r, p, &m);
            for (size_t sl = 0; sl < n; sl++)
                assert_int_equal(m.perm[sl] / 128, sl / 128);
            tmap_memre_free(&m);
            TMAP_CHECK(tmap_memre_hybrid(&r, p, 0, &m, err));
            same_results(&r, p, &m);
            tmap_memre_free(&m);
        }
        free(p);
    }
}

/* Swapping as a sort against the greedy, warps of 32, segments of 8:
 * categories A, B, C, D (segments 0-3) of 20, 20, 12 and 12 jobs, none a
 * whole warp, in two warps of 4 categories each (8 sectors).  The sort
 * puts the residues in category order, A20 B12 | B8 C12 D12: 5 sectors;
 * the greedy packs the largest with the smallest, A20 C12 | B20 D12: 4.
 * On Fig. 4 both reach 3 (segment 0's whole warp first, then the rest). */
static void swap_sorted_residues(void **state)
{
    tmap_memref r = {.nthreads = 64, .per_thread = 1, .elem_bytes = 4, .nelems = 32};
    uint32_t p[64], want[64], cat[64];
    for (uint32_t t = 0; t < 64; t++) {
        cat[t] = t < 48 ? t % 4 : t < 56 ? 0 : 1;
        p[t] = cat[t] * 8 + t % 8;
    }
    size_t w = 0;
    for (uint32_t c = 0; c < 4; c++) /* each category's jobs ascending */
        for (uint32_t t = 0; t < 64; t++)
            if (cat[t] == c)
                want[w++] = t;
    tmap_memre m;
    assert_int_equal(sectors(&r, p, NULL, 32), 8);
    TMAP_CHECK(tmap_memre_swap_sorted(&r, p, 0, &m, err));
    expect_u32(m.perm, want, 64, "sorted perm");
    expect_u32(m.index, p, 64, "Q");
    assert_null(m.from);
    assert_int_equal(sectors_after(&r, &m), 5);
    tmap_memre_free(&m);
    TMAP_CHECK(tmap_memre_swap(&r, p, 0, &m, err));
    assert_int_equal(sectors_after(&r, &m), 4);
    tmap_memre_free(&m);
    TMAP_CHECK(tmap_memre_swap_sorted(&r, p, 32, &m, err)); /* within blocks: 4 + 4 */
    for (size_t s = 1; s < 64; s++)
        assert_true(m.perm[s] / 32 == s / 32 &&
                    (s % 32 == 0 || cat[m.perm[s - 1]] <= cat[m.perm[s]]));
    assert_int_equal(sectors_after(&r, &m), 8);
    tmap_memre_free(&m);
    static const uint32_t fig4_sorted[8] = {0, 2, 3, 4, 5, 1, 6, 7};
    TMAP_CHECK(tmap_memre_swap_sorted(&fig4, fig4_p, 0, &m, err));
    expect_u32(m.perm, fig4_sorted, 8, "Fig. 4 sorted perm");
    assert_int_equal(sectors_after(&fig4, &m), 3);
    tmap_memre_free(&m);
}

/* Job swapping with k = 2 accesses per thread: a job's category is the
 * tuple of the segments it reads.  Threads alternate between (seg 0, seg
 * 2) and (seg 1, seg 3): 8 transactions; swapping gives each warp one
 * category, R = {0,5,2,7,4,1,6,3}: 4, the minimum. */
static void swap_two_accesses(void **state)
{
    static const uint32_t p[16] = {0, 8, 4, 12, 1, 9, 5, 13, 6, 14, 2, 10, 7, 15, 3, 11};
    static const uint32_t r[8] = {0, 5, 2, 7, 4, 1, 6, 3};
    tmap_memref ref = fig4;
    ref.per_thread = 2, ref.nelems = 16;
    tmap_memre m;
    assert_int_equal(sectors(&ref, p, NULL, 16), 8);
    TMAP_CHECK(tmap_memre_swap(&ref, p, 0, &m, err));
    expect_u32(m.perm, r, 8, "R");
    assert_int_equal(sectors_after(&ref, &m), 4);
    same_results(&ref, p, &m);
    tmap_memre_free(&m);
    TMAP_CHECK(tmap_memre_hybrid(&ref, p, 0, &m, err));
    assert_int_equal(sectors_after(&ref, &m), 4);
    same_results(&ref, p, &m);
    tmap_memre_free(&m);
}

/* Two references with one pattern (zhang2011: A[P[t]] and B[P[t]]), as
 * k = 2 over A ++ B: swapping them together costs exactly twice what
 * swapping A[P[t]] alone does, with the same thread order. */
static void swap_one_pattern_twice(void **state)
{
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t n = 300 + 41 * seed, ne = 512;
        uint32_t *p = malloc(n * sizeof *p), *p2 = malloc(2 * n * sizeof *p2);
        uint64_t x = seed;
        for (size_t t = 0; t < n; t++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            p[t] = (uint32_t)((x >> 33) % (ne / 4)), p2[2 * t] = p[t];
            p2[2 * t + 1] = (uint32_t)(p[t] + ne); /* B follows A, sector-aligned */
        }
        tmap_memref r1 = {.nthreads = n, .per_thread = 1, .elem_bytes = 4, .nelems = ne};
        tmap_memref r2 = r1;
        r2.per_thread = 2, r2.nelems = 2 * ne;
        tmap_memre m1, m2;
        TMAP_CHECK(tmap_memre_swap(&r1, p, 0, &m1, err));
        TMAP_CHECK(tmap_memre_swap(&r2, p2, 0, &m2, err));
        expect_u32(m2.perm, m1.perm, n, "the thread order");
        assert_int_equal(sectors_after(&r2, &m2), 2 * sectors_after(&r1, &m1));
        assert_true(sectors_after(&r1, &m1) < sectors(&r1, p, NULL, ne));
        same_results(&r2, p2, &m2);
        tmap_memre_free(&m1), tmap_memre_free(&m2), free(p), free(p2);
    }
}

static void bad_arguments(void **state)
{
    tmap_memref r = fig4;
    tmap_memre m;
    tmap_error e = {0};
    assert_int_equal(tmap_memre_reorder(&r, NULL, &m, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "needs its index array"));
    r.write = 1;
    assert_int_equal(tmap_memre_duplicate(&r, fig4_p, &m, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "writes"));
    assert_int_equal(tmap_memre_pad(&r, fig4_p, &m, &e), TMAP_ERR_INVALID);
    TMAP_CHECK(tmap_memre_reorder(&r, fig4_p, &m, err)); /* one copy: writes are fine */
    tmap_memre_free(&m);
    r.write = 0, r.nthreads = 4, r.per_thread = 2;
    assert_int_equal(tmap_memre_pad(&r, fig4_p, &m, &e), TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "per_thread 1"));
    assert_int_equal(tmap_memre_swap(&fig4, fig4_p, 6, &m, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "block_size 6"));
    uint32_t bad[8] = {0, 1, 2, 3, 4, 5, 6, 8};
    assert_int_equal(tmap_memre_hybrid(&fig4, bad, 0, &m, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "index[7] = 8"));
    uint32_t order[8] = {0, 1, 2, 3, 4, 5, 6, 6};
    assert_int_equal(tmap_memre_relabel(&fig4, fig4_p, order, 0, &m, &e), TMAP_ERR_INVALID);
    assert_null(m.index);
}

/* RCM of a path relabeled 3-0-4-1-2: from vertex 2 (least degree, lowest
 * label; its far end 3 is no farther), 2 1 4 0 3 reversed. */
static void rcm_path(void **state)
{
    static const uint32_t rowptr[6] = {0, 2, 4, 5, 6, 8}, col[8] = {3, 4, 4, 2, 1, 0, 0, 1};
    static const uint32_t want[5] = {3, 0, 4, 1, 2};
    uint32_t order[5];
    TMAP_CHECK(tmap_memre_rcm(rowptr, col, 5, order, err));
    expect_u32(order, want, 5, "order");
}

/* Two components (a triangle 0-2-4 with a self loop, an edge 1-3) and an
 * isolated vertex 5: each component from its least-degree vertex. */
static void rcm_components(void **state)
{
    static const uint32_t rowptr[7] = {0, 3, 4, 6, 7, 9, 9};
    static const uint32_t col[9] = {0, 2, 4, 3, 0, 4, 1, 0, 2};
    /* degrees: 0:2 1:1 2:2 3:1 4:2 5:0; components from 5, then 1 (1 3),
     * then 0 (0 2 4): 5 1 3 0 2 4, reversed */
    static const uint32_t want[6] = {4, 2, 0, 3, 1, 5};
    uint32_t order[6];
    TMAP_CHECK(tmap_memre_rcm(rowptr, col, 6, order, err));
    expect_u32(order, want, 6, "order");
    uint32_t bad[9] = {0, 2, 4, 3, 0, 4, 1, 0, 6};
    tmap_error e = {0};
    assert_int_equal(tmap_memre_rcm(rowptr, bad, 6, order, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "col[8] = 6"));
}

/* The 3 x 3 grid, labels row by row (0 1 2 / 3 4 5 / 6 7 8), worked by
 * hand: the least degree is corner 0; its far corner 8 is no farther, so
 * the numbering starts at 0.  Levels: {0}; {1, 3} (both degree 3, by
 * label); {2, 4} (parent 1, degree 2 before 4) then {6} (parent 3);
 * {5} (least parent 2) then {7} (least parent 4); {8}.  Cuthill-McKee
 * 0 1 3 2 4 6 5 7 8, reversed.  The level-synchronous definition the GPU
 * uses (each level by least parent label, degree, label) gives the same. */
static void rcm_small_grid(void **state)
{
    static const uint32_t rowptr[10] = {0, 2, 5, 7, 10, 14, 17, 19, 22, 24};
    static const uint32_t col[24] = {1, 3, 0, 2, 4, 1, 5, 0, 4, 6, 1, 3, 5, 7,
                                     2, 4, 8, 3, 7, 4, 6, 8, 5, 7};
    static const uint32_t want[9] = {8, 7, 5, 6, 4, 2, 3, 1, 0};
    uint32_t order[9];
    TMAP_CHECK(tmap_memre_rcm(rowptr, col, 9, order, err));
    expect_u32(order, want, 9, "order");
}

/* The level-by-level order (the GPU's definition, tmap_memre_rcm_levels)
 * equals the serial queue's on the hand-made graphs above and on random
 * ones: relabeled grids, a ring with chords (duplicate edges, self loops),
 * isolated vertices and small components, a hub. */
static void rcm_levels_equal_serial(void **state)
{
    static const uint32_t grid_rp[10] = {0, 2, 5, 7, 10, 14, 17, 19, 22, 24};
    static const uint32_t grid_col[24] = {1, 3, 0, 2, 4, 1, 5, 0, 4, 6, 1, 3, 5, 7,
                                          2, 4, 8, 3, 7, 4, 6, 8, 5, 7};
    static const uint32_t want[9] = {8, 7, 5, 6, 4, 2, 3, 1, 0};
    uint32_t small[9];
    TMAP_CHECK(tmap_memre_rcm_levels(grid_rp, grid_col, 9, small, err));
    expect_u32(small, want, 9, "the 3 x 3 grid, level by level");
    uint64_t x = 17;
    for (int trial = 0; trial < 6; trial++) {
        uint32_t n = trial < 2 ? 900 : 5000, m = trial < 2 ? 0 : n * (uint32_t)trial / 2;
        uint32_t *lab = test_random_perm(n, (uint64_t)trial + 1);
        uint32_t (*e)[2] = malloc(((size_t)2 * n + m + n / 4) * sizeof *e);
        size_t ne = 0;
        if (trial < 2) /* a 30 x 30 grid (trial 1: with a 30-edge hub at vertex 0) */
            for (uint32_t p = 0; p < n; p++) {
                if (p % 30 < 29) e[ne][0] = lab[p], e[ne++][1] = lab[p + 1];
                if (p / 30 < 29) e[ne][0] = lab[p], e[ne++][1] = lab[p + 30];
                if (trial == 1 && p % 30 == 0) e[ne][0] = lab[0], e[ne++][1] = lab[p];
            }
        else { /* random edges among 3/4 of the vertices (the rest isolated), some repeated */
            for (uint32_t i = 0; i < m; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t a = (uint32_t)(x >> 33) % (n * 3 / 4);
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t b = (uint32_t)(x >> 33) % (n * 3 / 4);
                e[ne][0] = lab[a], e[ne++][1] = lab[b];
                if (i % 7 == 0)
                    e[ne][0] = lab[a], e[ne++][1] = lab[b];
            }
        }
        uint32_t *rowptr = calloc(n + 1, 4), *col = malloc(2 * ne * 4 + 4), *fill = calloc(n, 4);
        for (size_t i = 0; i < ne; i++)
            rowptr[e[i][0] + 1]++, rowptr[e[i][1] + 1]++;
        for (uint32_t v = 0; v < n; v++)
            rowptr[v + 1] += rowptr[v];
        for (size_t i = 0; i < ne; i++)
            col[rowptr[e[i][0]] + fill[e[i][0]]++] = e[i][1],
            col[rowptr[e[i][1]] + fill[e[i][1]]++] = e[i][0];
        uint32_t *a = malloc(n * 4), *b = malloc(n * 4);
        TMAP_CHECK(tmap_memre_rcm(rowptr, col, n, a, err));
        TMAP_CHECK(tmap_memre_rcm_levels(rowptr, col, n, b, err));
        expect_u32(b, a, n, "level by level against the queue");
        free(lab), free(e), free(rowptr), free(col), free(fill), free(a), free(b);
    }
}

/* A 2-D 12 x 12 grid graph under a random relabeling: RCM brings its
 * bandwidth (max |new(u) - new(v)| over edges) back to at most 2 x 12. */
static void rcm_grid_bandwidth(void **state)
{
    enum { S = 12, N = S * S };
    uint32_t *lab = test_random_perm(N, 7), rowptr[N + 1], col[4 * N], order[N], where[N];
    size_t ne = 0;
    uint32_t old_of[N];
    for (uint32_t v = 0; v < N; v++)
        old_of[lab[v]] = v; /* vertex lab[v] is grid point v */
    for (uint32_t u = 0; u < N; u++) {
        rowptr[u] = (uint32_t)ne;
        uint32_t g = old_of[u], x = g % S, y = g / S;
        if (x > 0) col[ne++] = lab[g - 1];
        if (x < S - 1) col[ne++] = lab[g + 1];
        if (y > 0) col[ne++] = lab[g - S];
        if (y < S - 1) col[ne++] = lab[g + S];
    }
    rowptr[N] = (uint32_t)ne;
    TMAP_CHECK(tmap_memre_rcm(rowptr, col, N, order, err));
    uint8_t seen[N] = {0};
    for (uint32_t x = 0; x < N; x++) { /* a permutation */
        assert_true(order[x] < N && !seen[order[x]]);
        seen[order[x]] = 1, where[order[x]] = x;
    }
    uint32_t before = 0, after = 0;
    for (uint32_t u = 0; u < N; u++)
        for (uint32_t e = rowptr[u]; e < rowptr[u + 1]; e++) {
            uint32_t v = col[e];
            before = abs((int)u - (int)v) > (int)before ? (uint32_t)abs((int)u - (int)v) : before;
            int d = abs((int)where[u] - (int)where[v]);
            after = d > (int)after ? (uint32_t)d : after;
        }
    assert_true(before > 2 * S);
    assert_true(after <= 2 * S);
    free(lab);
}

/* Morton: the corners of a cube in code order (x the lowest bit); a
 * shuffled 4 x 4 x 4 grid in exactly the Z order of its integer points. */
static void morton(void **state)
{
    static const float corners[8][4] = {{1, 1, 1, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0},
                                        {0, 0, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {1, 0, 1, 0}};
    static const uint32_t want[8] = {1, 2, 3, 5, 4, 7, 6, 0};
    uint32_t order[64];
    TMAP_CHECK(tmap_memre_morton(&corners[0][0], 4, 8, order, err));
    expect_u32(order, want, 8, "order");
    uint32_t *shuffle = test_random_perm(64, 3);
    float pts[64 * 3];
    for (uint32_t i = 0; i < 64; i++) {
        uint32_t g = shuffle[i];
        pts[3 * i] = (float)(g % 4) * 2.5f, pts[3 * i + 1] = (float)(g / 4 % 4) - 7.0f;
        pts[3 * i + 2] = (float)(g / 16) * 0.5f;
    }
    TMAP_CHECK(tmap_memre_morton(pts, 3, 64, order, err));
    for (uint32_t z = 0; z < 64; z++) { /* z = the Morton code of integer point (x, y, w) */
        uint32_t x = (z & 1) | (z >> 2 & 2), y = (z >> 1 & 1) | (z >> 3 & 2),
                 w = (z >> 2 & 1) | (z >> 4 & 2);
        assert_int_equal(shuffle[order[z]], x + 4 * y + 16 * w);
    }
    pts[5] = NAN;
    tmap_error e = {0};
    assert_int_equal(tmap_memre_morton(pts, 3, 64, order, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "point 1, coordinate 2"));
    free(shuffle);
}

/* A locality order applied to threads and data together: SpMV-like
 * x[col[t*4 + j]] on the relabeled grid, rows following their elements;
 * the results stay, and the sectors fall. */
static void relabel_threads_and_data(void **state)
{
    enum { S = 32, N = S * S };
    uint32_t *lab = test_random_perm(N, 11), old_of[N], rowptr[N + 1], col[4 * N], order[N];
    for (uint32_t v = 0; v < N; v++)
        old_of[lab[v]] = v;
    for (uint32_t u = 0; u < N; u++) { /* 4 neighbours, the point itself at the border */
        uint32_t g = old_of[u], x = g % S, y = g / S;
        rowptr[u] = 4 * u;
        col[4 * u] = x > 0 ? lab[g - 1] : u, col[4 * u + 1] = x < S - 1 ? lab[g + 1] : u;
        col[4 * u + 2] = y > 0 ? lab[g - S] : u, col[4 * u + 3] = y < S - 1 ? lab[g + S] : u;
    }
    rowptr[N] = 4 * N;
    TMAP_CHECK(tmap_memre_rcm(rowptr, col, N, order, err));
    tmap_memref r = {.nthreads = N, .per_thread = 4, .elem_bytes = 8, .nelems = N};
    tmap_memre m;
    TMAP_CHECK(tmap_memre_relabel(&r, col, order, 1, &m, err));
    same_results(&r, col, &m);
    uint64_t before = sectors(&r, col, NULL, N), after = sectors_after(&r, &m);
    assert_true(after * 2 < before);
    tmap_memre_free(&m);
    r.nthreads = N - 1;
    tmap_error e = {0};
    assert_int_equal(tmap_memre_relabel(&r, col, order, 1, &m, &e), TMAP_ERR_INVALID);
    free(lab);
}

/* Partial duplication, warps of 4, segments of 4: request 0 ({0,4,8,12}, 4
 * sectors) saves 3, request 1 ({1,2,3,0}) none, request 2 ({1,5,9,9}) 2.
 * Half of the requests: 0 and 2, copied after A in request order. */
static void partial_duplication_ranks_requests(void **state)
{
    static const uint32_t p[12] = {0, 4, 8, 12, 1, 2, 3, 0, 1, 5, 9, 9};
    tmap_memref r = {.nthreads = 12, .per_thread = 1, .elem_bytes = 4, .nelems = 14,
                     .warp = 4, .sector_bytes = 16};
    static const uint32_t q_half[12] = {16, 17, 18, 19, 1, 2, 3, 0, 20, 21, 22, 23};
    static const uint32_t q_third[12] = {16, 17, 18, 19, 1, 2, 3, 0, 1, 5, 9, 9};
    tmap_memre m;
    TMAP_CHECK(tmap_memre_partial(&r, p, 0.5, &m, err));
    assert_int_equal(m.nout, 24);
    expect_u32(m.index, q_half, 12, "Q");
    for (uint32_t x = 0; x < 16; x++)
        assert_int_equal(m.from[x], x < 14 ? x : E);
    expect_u32(m.from + 16, p, 4, "copies of request 0");
    expect_u32(m.from + 20, p + 8, 4, "copies of request 2");
    assert_int_equal(sectors(&r, p, NULL, 14), 4 + 1 + 3);
    assert_int_equal(sectors_after(&r, &m), 1 + 1 + 1);
    same_results(&r, p, &m);
    tmap_memre_free(&m);
    TMAP_CHECK(tmap_memre_partial(&r, p, 1.0 / 3, &m, err)); /* one request */
    expect_u32(m.index, q_third, 12, "Q");
    assert_int_equal(m.nout, 20);
    assert_int_equal(sectors_after(&r, &m), 1 + 1 + 3);
    tmap_memre_free(&m);
    TMAP_CHECK(tmap_memre_partial(&r, p, 0, &m, err));
    expect_u32(m.index, p, 12, "Q");
    assert_int_equal(m.nout, 16);
    tmap_memre_free(&m);
    tmap_error e = {0};
    assert_int_equal(tmap_memre_partial(&r, p, 1.5, &m, &e), TMAP_ERR_INVALID);
    r.write = 1;
    assert_int_equal(tmap_memre_partial(&r, p, 0.5, &m, &e), TMAP_ERR_INVALID);
}

/* On random references the sectors fall as the fraction grows, from the
 * original's to duplication's, and every fraction keeps the results. */
static void partial_duplication_fractions(void **state)
{
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t n = 300 + seed * 41, ne = 500 + seed * 77, k = seed % 2 ? 1 : 3;
        uint32_t *p = lcg_array(n * k, seed, ne, 40);
        tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 8, .nelems = ne};
        uint64_t last = sectors(&r, p, NULL, ne);
        for (int f = 0; f <= 10; f++) {
            tmap_memre m;
            TMAP_CHECK(tmap_memre_partial(&r, p, f / 10.0, &m, err));
            same_results(&r, p, &m);
            uint64_t now = sectors_after(&r, &m);
            assert_true(now <= last);
            last = now;
            tmap_memre_free(&m);
        }
        tmap_memre m;
        TMAP_CHECK(tmap_memre_duplicate(&r, p, &m, err));
        assert_true(last <= sectors_after(&r, &m)); /* only requests that gain are copied */
        tmap_memre_free(&m), free(p);
    }
}

/* Sharing, warps and blocks of 4 threads, k = 2, segments of 4: block 0
 * reads {1,3,5,7}, block 1 {0,2,4,6}; each stages its list in 2 sectors. */
static void sharing_block_lists(void **state)
{
    static const uint32_t p[16] = {5, 3, 3, 1, 5, 5, 7, 3, 2, 2, 0, 6, 6, 0, 2, 4};
    static const uint32_t from[8] = {1, 3, 5, 7, 0, 2, 4, 6}, start[3] = {0, 4, 8};
    static const uint32_t q[16] = {2, 1, 1, 0, 2, 2, 3, 1, 5, 5, 4, 7, 7, 4, 5, 6};
    static const uint32_t perm[8] = {4, 5, 6, 7, 0, 1, 2, 3};
    static const uint32_t from_perm[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    tmap_memref r = {.nthreads = 8, .per_thread = 2, .elem_bytes = 4, .nelems = 8, .warp = 4,
                     .sector_bytes = 16};
    tmap_memre m;
    uint32_t *st;
    TMAP_CHECK(tmap_memre_share(&r, p, NULL, 4, 16, &m, &st, err));
    assert_int_equal(m.nout, 8);
    expect_u32(m.from, from, 8, "from");
    expect_u32(st, start, 3, "start");
    expect_u32(m.index, q, 16, "Q");
    same_results(&r, p, &m);
    tmap_sector_counts c;
    TMAP_CHECK(tmap_memre_share_sectors(&r, &m, st, 4, &c, err));
    assert_int_equal(c.requests, 2);
    assert_int_equal(c.sectors, 4);
    tmap_memre_free(&m), free(st);
    TMAP_CHECK(tmap_memre_share(&r, p, perm, 4, 16, &m, &st, err));
    expect_u32(m.from, from_perm, 8, "from (blocks exchanged)");
    expect_u32(m.perm, perm, 8, "perm");
    same_results(&r, p, &m);
    tmap_memre_free(&m), free(st);
    tmap_error e = {0};
    assert_int_equal(tmap_memre_share(&r, p, NULL, 4, 15, &m, &st, &e), TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "block 0"));
    assert_null(st);
    assert_int_equal(tmap_memre_share(&r, p, NULL, 6, 16, &m, &st, &e), TMAP_ERR_INVALID);
}

/* Random references: sharing keeps the results; no block stages an
 * element twice, and every block's list is its working set. */
static void sharing_random(void **state)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        size_t n = 1000 + seed * 37, ne = 300 + seed * 50, k = seed % 2 ? 1 : 4, bs = 128;
        uint32_t *p = lcg_array(n * k, seed, ne, 0), *order = test_random_perm(n, seed), *st;
        tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 4, .nelems = ne};
        tmap_memre m;
        TMAP_CHECK(tmap_memre_share(&r, p, seed % 2 ? order : NULL, bs, 1 << 16, &m, &st, err));
        same_results(&r, p, &m);
        for (size_t b = 0; b * bs < n; b++)
            for (uint32_t y = st[b] + 1; y < st[b + 1]; y++)
                assert_true(m.from[y - 1] < m.from[y]);
        tmap_memre_free(&m), free(st), free(p), free(order);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zhang_fig4a_reordering),
        cmocka_unit_test(zhang_fig4b_swapping),
        cmocka_unit_test(zhang_fig4e_hybrid),
        cmocka_unit_test(swap_two_accesses),
        cmocka_unit_test(swap_one_pattern_twice),
        cmocka_unit_test(swap_sorted_residues),
        cmocka_unit_test(zhang_counter_examples),
        cmocka_unit_test(wu_fig4b_duplication),
        cmocka_unit_test(wu_fig4c_padding),
        cmocka_unit_test(duplication_interleaves_requests),
        cmocka_unit_test(random_references_keep_results),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(rcm_path),
        cmocka_unit_test(rcm_components),
        cmocka_unit_test(rcm_small_grid),
        cmocka_unit_test(rcm_levels_equal_serial),
        cmocka_unit_test(rcm_grid_bandwidth),
        cmocka_unit_test(morton),
        cmocka_unit_test(relabel_threads_and_data),
        cmocka_unit_test(partial_duplication_ranks_requests),
        cmocka_unit_test(partial_duplication_fractions),
        cmocka_unit_test(sharing_block_lists),
        cmocka_unit_test(sharing_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_sectors.c -- the transaction model on the CPU (tmap_sectors_count):
 * exact sector counts of hand-made index arrays (affine, strided, gathered,
 * broadcast, partial warps, several requests per thread, a thread order,
 * elements of 4, 8 and 64 bytes, zhang2011's Fig. 1a), the thread
 * blocks' distinct sectors (reuse across warps, a thread order that moves
 * it, several requests, 64-byte elements, a partial block), the footprint
 * and the L2 test, properties of random ones, and bad arguments.
 */
#include "tests/testutil.h"
#include "threadmap/model.h"

static tmap_sector_counts counted(const tmap_memref *r, const uint32_t *index,
                                  const uint32_t *perm)
{
    tmap_sector_counts s;
    TMAP_CHECK(tmap_sectors_count(r, index, perm, &s, err));
    return s;
}

static void expect(tmap_sector_counts s, uint64_t requests, uint64_t sectors, uint64_t min,
                   uint64_t footprint)
{
    if (s.requests != requests || s.sectors != sectors || s.min_sectors != min ||
        s.footprint != footprint)
        fail_msg("got %llu requests, %llu sectors, %llu min, %llu footprint; want %llu %llu "
                 "%llu %llu", (unsigned long long)s.requests, (unsigned long long)s.sectors,
                 (unsigned long long)s.min_sectors, (unsigned long long)s.footprint,
                 (unsigned long long)requests, (unsigned long long)sectors,
                 (unsigned long long)min, (unsigned long long)footprint);
}

static uint32_t *affine(size_t n, uint32_t a, uint32_t b)
{
    uint32_t *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = a * (uint32_t)i + b;
    return p;
}

/* 64 threads reading A[t]: 32 lanes x 4 bytes = 4 sectors a warp. */
static void affine_is_coalesced(void **state)
{
    tmap_memref r = {.nthreads = 64, .per_thread = 1, .elem_bytes = 4, .nelems = 64};
    uint32_t *p = affine(64, 1, 0);
    expect(counted(&r, p, NULL), 2, 8, 8, 8);
    expect(counted(&r, NULL, NULL), 2, 8, 8, 8); /* no index: the same */
    uint32_t *q = affine(64, 1, 3); /* shifted by 12 bytes: each warp spans one more sector */
    r.nelems = 67;
    expect(counted(&r, q, NULL), 2, 10, 8, 9);
    free(p), free(q);
}

/* Stride 8 elements of 4 bytes: one sector per lane; stride 2 of 8 bytes:
 * two lanes per sector. */
static void strided(void **state)
{
    tmap_memref r = {.nthreads = 64, .per_thread = 1, .elem_bytes = 4, .nelems = 512};
    uint32_t *p = affine(64, 8, 0);
    expect(counted(&r, p, NULL), 2, 64, 8, 64);
    free(p);
    r.elem_bytes = 8, r.nelems = 128;
    p = affine(64, 2, 0);
    expect(counted(&r, p, NULL), 2, 32, 16, 32);
    free(p);
}

/* Every lane the same element: one sector; a hand gather of 32 lanes over
 * 3 sectors (elements 0-7, 8-15, 64-71). */
static void gathered(void **state)
{
    tmap_memref r = {.nthreads = 32, .per_thread = 1, .elem_bytes = 4, .nelems = 128};
    uint32_t p[32] = {0};
    expect(counted(&r, p, NULL), 1, 1, 1, 1);
    for (int i = 0; i < 32; i++)
        p[i] = (uint32_t)(i % 3 == 0 ? i % 8 : i % 3 == 1 ? 8 + i % 8 : 64 + i % 8);
    /* distinct elements: 0-7 (i%3==0 covers i%8 = 0..7), 8..15, 64..71: 24 of 4 bytes */
    expect(counted(&r, p, NULL), 1, 3, 3, 3);
}

/* zhang2011 Fig. 1a: P = {0,5,1,7,4,3,6,2}, warps of 4, segments of 4
 * elements: 4 transactions, twice the minimum. */
static void zhang_figure_1a(void **state)
{
    const uint32_t p[8] = {0, 5, 1, 7, 4, 3, 6, 2};
    tmap_memref r = {.nthreads = 8, .per_thread = 1, .elem_bytes = 4, .nelems = 8, .warp = 4,
                     .sector_bytes = 16};
    expect(counted(&r, p, NULL), 2, 4, 2, 2);
}

/* 40 threads: the second warp has 8 lanes, 32 bytes, one sector. */
static void partial_warp(void **state)
{
    tmap_memref r = {.nthreads = 40, .per_thread = 1, .elem_bytes = 4, .nelems = 40};
    expect(counted(&r, NULL, NULL), 2, 5, 5, 5);
    r.nthreads = 33; /* one lane alone */
    expect(counted(&r, NULL, NULL), 2, 5, 5, 5);
}

/* 8-byte elements: 32 lanes = 256 bytes = 8 sectors; 64-byte elements
 * cover two sectors each. */
static void element_sizes(void **state)
{
    tmap_memref r = {.nthreads = 32, .per_thread = 1, .elem_bytes = 8, .nelems = 32};
    expect(counted(&r, NULL, NULL), 1, 8, 8, 8);
    r.elem_bytes = 64;
    expect(counted(&r, NULL, NULL), 1, 64, 64, 64);
    uint32_t p[32];
    for (int i = 0; i < 32; i++)
        p[i] = (uint32_t)(i % 4); /* 4 distinct 64-byte elements */
    expect(counted(&r, p, NULL), 1, 8, 8, 8);
    r.elem_bytes = 1, r.nelems = 4096; /* bytes 0, 128, 256...: one sector each */
    uint32_t *q = affine(32, 128, 0);
    expect(counted(&r, q, NULL), 1, 32, 1, 32);
    free(q);
}

/* k = 2: request 0 reads A[t] (4 sectors), request 1 reads A[0] (1). */
static void several_requests(void **state)
{
    tmap_memref r = {.nthreads = 32, .per_thread = 2, .elem_bytes = 4, .nelems = 32};
    uint32_t p[64];
    for (int t = 0; t < 32; t++)
        p[2 * t] = (uint32_t)t, p[2 * t + 1] = 0;
    expect(counted(&r, p, NULL), 2, 5, 5, 4);
    /* without an index: request j reads A[t*2 + j], stride 8 bytes: 8 sectors each */
    r.nelems = 64;
    expect(counted(&r, NULL, NULL), 2, 16, 8, 8);
}

/* A thread order that gives each warp four threads of every 8: twice the
 * sectors of the identity; a permutation inside warps changes nothing. */
static void thread_order(void **state)
{
    tmap_memref r = {.nthreads = 64, .per_thread = 1, .elem_bytes = 4, .nelems = 64};
    uint32_t perm[64], inside[64];
    for (uint32_t s = 0; s < 64; s++)
        perm[s] = (s % 8) * 8 + s / 8, inside[s] = (s / 32) * 32 + (31 - s % 32);
    expect(counted(&r, NULL, perm), 2, 16, 8, 8);
    expect(counted(&r, NULL, inside), 2, 8, 8, 8);
}

/* block_sectors of r with thread blocks of `block` slots. */
static uint64_t per_block(tmap_memref r, unsigned block, const uint32_t *index,
                          const uint32_t *perm)
{
    r.block = block;
    return counted(&r, index, perm).block_sectors;
}

/* Two warps of one block read the same 32 sectors (element 8 lane, one
 * sector a lane): 64 sectors by request, 32 by block; blocks of one warp
 * see no reuse (64); the default block (256) is the whole launch. */
static void block_reuse(void **state)
{
    tmap_memref r = {.nthreads = 64, .per_thread = 1, .elem_bytes = 4, .nelems = 256};
    uint32_t p[64];
    for (uint32_t t = 0; t < 64; t++)
        p[t] = 8 * (t % 32);
    tmap_sector_counts s = counted(&r, p, NULL);
    expect(s, 2, 64, 8, 32);
    assert_int_equal(s.block_sectors, 32);
    assert_int_equal(per_block(r, 64, p, NULL), 32);
    assert_int_equal(per_block(r, 32, p, NULL), 64);
    r.nthreads = 96; /* a partial last block: warps 0-1, then warp 2 alone */
    uint32_t q[96];
    for (uint32_t t = 0; t < 96; t++)
        q[t] = 8 * (t % 32);
    assert_int_equal(per_block(r, 64, q, NULL), 64);
    assert_int_equal(counted(&r, q, NULL).sectors, 96);
}

/* Warps 0 and 2 read sectors 0-31, warps 1 and 3 sectors 32-63.  Blocks of
 * two warps: in thread order no block reuses a sector (128, as by request);
 * slots 32-63 running threads 64-95 (warps 1 and 2 exchanged) put the warps
 * that share their sectors in one block: 64.  By request: 128 both ways. */
static void block_thread_order(void **state)
{
    tmap_memref r = {.nthreads = 128, .per_thread = 1, .elem_bytes = 4, .nelems = 512};
    uint32_t p[128], perm[128];
    for (uint32_t t = 0; t < 128; t++)
        p[t] = 8 * (t % 64), perm[t] = t / 32 == 1 ? t + 32 : t / 32 == 2 ? t - 32 : t;
    assert_int_equal(per_block(r, 64, p, NULL), 128);
    assert_int_equal(per_block(r, 64, p, perm), 64);
    assert_int_equal(counted(&r, p, perm).sectors, 128);
    assert_int_equal(per_block(r, 128, p, NULL), 64); /* one block: the footprint */
}

/* A block's requests together: k = 2, request 0 reads A[t] (sectors 0-3),
 * request 1 A[t + 4] (sectors 0-4): 9 by request, 5 by block.  Elements
 * of 64 bytes (two sectors each), thread t reading element t % 4: 8
 * sectors a request, 16 for two warps, 8 for their block. */
static void block_requests_and_sizes(void **state)
{
    tmap_memref r = {.nthreads = 32, .per_thread = 2, .elem_bytes = 4, .nelems = 36};
    uint32_t p[64];
    for (uint32_t t = 0; t < 32; t++)
        p[2 * t] = t, p[2 * t + 1] = t + 4;
    tmap_sector_counts s = counted(&r, p, NULL);
    expect(s, 2, 9, 8, 5);
    assert_int_equal(s.block_sectors, 5);
    tmap_memref big = {.nthreads = 64, .per_thread = 1, .elem_bytes = 64, .nelems = 4};
    uint32_t q[64];
    for (uint32_t t = 0; t < 64; t++)
        q[t] = t % 4;
    s = counted(&big, q, NULL);
    expect(s, 2, 16, 16, 8);
    assert_int_equal(s.block_sectors, 8);
    assert_int_equal(per_block(big, 32, q, NULL), 16);
}

/* Random gathers: min <= sectors <= lanes per request; any order within
 * warps gives the same counts; the footprint is the distinct sectors. */
static void random_properties(void **state)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        size_t n = 100 + seed * 37, k = 1 + seed % 3, ne = 50 + seed * 91;
        uint32_t *p = malloc(n * k * sizeof *p);
        uint64_t x = seed;
        for (size_t i = 0; i < n * k; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            p[i] = (uint32_t)((x >> 33) % ne);
        }
        tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 4 << (seed % 3),
                         .nelems = ne};
        tmap_sector_counts s = counted(&r, p, NULL);
        assert_int_equal(s.requests, (n + 31) / 32 * k);
        assert_true(s.min_sectors <= s.sectors && s.sectors <= n * k);
        uint32_t *perm = malloc(n * sizeof *perm);
        for (uint32_t i = 0; i < n; i++) /* reverse each warp */
            perm[i] = (uint32_t)(i / 32 * 32 + (i / 32 * 32 + 32 <= n ? 31 - i % 32 : n - 1 - i));
        tmap_sector_counts t = counted(&r, p, perm);
        expect(t, s.requests, s.sectors, s.min_sectors, s.footprint);
        /* blocks: the footprint <= their sum <= the requests'; order within
         * warps changes nothing; one block of the whole launch is the
         * footprint; blocks of one warp see no more than the requests' */
        assert_int_equal(t.block_sectors, s.block_sectors);
        assert_true(s.footprint <= s.block_sectors && s.block_sectors <= s.sectors);
        assert_int_equal(per_block(r, (unsigned)((n + 31) / 32 * 32), p, NULL), s.footprint);
        assert_true(per_block(r, 32, p, NULL) <= s.sectors);
        assert_true(per_block(r, 32, p, NULL) >= s.block_sectors);
        size_t per = (size_t)32 / r.elem_bytes, distinct = 0;
        for (size_t sec = 0; sec * per < ne; sec++) {
            int hit = 0;
            for (size_t i = 0; i < n * k && !hit; i++)
                hit = p[i] / per == sec;
            distinct += hit;
        }
        assert_int_equal(s.footprint, distinct);
        free(p), free(perm);
    }
}

/* The footprint in bytes against an L2 size. */
static void l2_fit(void **state)
{
    tmap_memref r = {.nthreads = 64, .per_thread = 1, .elem_bytes = 4, .nelems = 64};
    tmap_sector_counts s = counted(&r, NULL, NULL);
    assert_true(tmap_sectors_fit_l2(&s, &r, 256));
    assert_false(tmap_sectors_fit_l2(&s, &r, 255));
    assert_true(tmap_sectors_per_request(&s) == 4.0);
}

static void bad_arguments(void **state)
{
    tmap_memref r = {.nthreads = 4, .per_thread = 1, .elem_bytes = 4, .nelems = 4};
    tmap_sector_counts s;
    tmap_error e = {0};
    uint32_t p[4] = {0, 1, 2, 4}, perm[4] = {0, 1, 1, 3};
    assert_int_equal(tmap_sectors_count(&r, p, NULL, &s, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "index[3] = 4 is not below the 4 elements"));
    assert_int_equal(tmap_sectors_count(&r, NULL, perm, &s, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "perm"));
    r.elem_bytes = 12;
    assert_int_equal(tmap_sectors_count(&r, NULL, NULL, &s, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "powers of two"));
    r.elem_bytes = 4, r.nelems = 3;
    assert_int_equal(tmap_sectors_count(&r, NULL, NULL, &s, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "without an index array"));
    r.nelems = 4, r.block = 48; /* not whole warps */
    assert_int_equal(tmap_sectors_count(&r, NULL, NULL, &s, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "whole warps"));
    r.block = 0, r.nthreads = 0;
    assert_int_equal(tmap_sectors_count(&r, NULL, NULL, &s, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_sectors_count(NULL, NULL, NULL, &s, &e), TMAP_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(affine_is_coalesced), cmocka_unit_test(strided),
        cmocka_unit_test(gathered),           cmocka_unit_test(zhang_figure_1a),
        cmocka_unit_test(partial_warp),       cmocka_unit_test(element_sizes),
        cmocka_unit_test(several_requests),   cmocka_unit_test(thread_order),
        cmocka_unit_test(block_reuse),        cmocka_unit_test(block_thread_order),
        cmocka_unit_test(block_requests_and_sizes),
        cmocka_unit_test(random_properties),  cmocka_unit_test(l2_fit),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_gpu_memre.c -- the memory layouts built on the GPU equal the CPU's
 * bit for bit: duplication and data reordering (tmap_gpu_memre_duplicate,
 * tmap_gpu_memre_reorder against tmap_memre_duplicate, tmap_memre_reorder)
 * on random references with partial warps, unread elements and more
 * accesses than elements, k = 1 and 3; partial duplication at several
 * fractions and sharing with and without a clustering perm
 * (tmap_gpu_memre_partial, tmap_gpu_memre_share); job swapping as a sort
 * over the grid and within blocks, on the random references and on
 * clustered ones with whole warps (tmap_gpu_memre_swap against
 * tmap_memre_swap_sorted; step by step, tmap_gpu_memre_swap_steps, the same
 * order and the categories counted); and the gather that
 * builds A' (elements of 4, 8, 16 and 12 bytes, padding slots zero).
 */
#include "tests/testutil.h"
#include "threadmap/regroup.h"

/* Partial duplication at fractions 0, 0.3 and 1, sharing in blocks of 256
 * in thread order and under a random clustering: the GPU's arrays are the
 * CPU's. */
static void partial_and_share_equal_cpu(tmap_cuda *c, const tmap_memref *r, const uint32_t *p,
                                        uint64_t dp)
{
    size_t n = r->nthreads, m = n * r->per_thread, head = (r->nelems + 3) / 4 * 4;
    uint64_t df = test_device_alloc(c, (head + m) * 4), dq = test_device_alloc(c, m * 4);
    static const double fractions[] = {0, 0.3, 1};
    for (int f = 0; f < 3; f++) {
        tmap_memre cpu;
        size_t nout = 0;
        TMAP_CHECK(tmap_memre_partial(r, p, fractions[f], &cpu, err));
        TMAP_CHECK(tmap_gpu_memre_partial(dp, n, r->per_thread, r->nelems, r->elem_bytes,
                                          fractions[f], df, dq, &nout, err));
        assert_int_equal(nout, cpu.nout);
        test_expect_device_u32(c, df, cpu.from, cpu.nout, "partial duplication's from");
        test_expect_device_u32(c, dq, cpu.index, m, "partial duplication's Q");
        tmap_memre_free(&cpu);
    }
    size_t nb = (n + 255) / 256;
    uint32_t *perm = test_random_perm(n, n), *start;
    uint64_t dperm = test_device_copy(c, perm, n * 4);
    uint64_t dstart = test_device_alloc(c, (nb + 1) * 4);
    for (int clustered = 0; clustered < 2; clustered++) {
        tmap_memre cpu;
        size_t nout = 0;
        TMAP_CHECK(tmap_memre_share(r, p, clustered ? perm : NULL, 256, SIZE_MAX, &cpu, &start,
                                    err));
        TMAP_CHECK(tmap_gpu_memre_share(dp, clustered ? dperm : 0, n, r->per_thread, 256, df,
                                        dq, dstart, &nout, err));
        assert_int_equal(nout, cpu.nout);
        test_expect_device_u32(c, df, cpu.from, cpu.nout, "sharing's from");
        test_expect_device_u32(c, dq, cpu.index, m, "sharing's Q");
        test_expect_device_u32(c, dstart, start, nb + 1, "sharing's start");
        tmap_memre_free(&cpu), free(start);
    }
    tmap_cuda_free(c, df), tmap_cuda_free(c, dq), tmap_cuda_free(c, dperm);
    tmap_cuda_free(c, dstart), free(perm);
}

/* Jobs' categories, compared: (block, the segments of each access). */
static size_t cat_k, cat_seg, cat_bs;
static const uint32_t *cat_index;

static int by_category(const void *a, const void *b)
{
    uint32_t s = *(const uint32_t *)a, t = *(const uint32_t *)b;
    if (s / cat_bs != t / cat_bs)
        return s / cat_bs < t / cat_bs ? -1 : 1;
    for (size_t j = 0; j < cat_k; j++) {
        uint32_t x = cat_index[s * cat_k + j] / cat_seg, y = cat_index[t * cat_k + j] / cat_seg;
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

/* The distinct categories of the n jobs in blocks of bs (0: the grid). */
static size_t categories_of(const tmap_memref *r, const uint32_t *index, size_t bs)
{
    size_t n = r->nthreads, count = 0;
    uint32_t *job = malloc(n * 4);
    cat_k = r->per_thread, cat_seg = r->elem_bytes < 32 ? 32 / r->elem_bytes : 1;
    cat_bs = bs ? bs : n, cat_index = index;
    for (size_t t = 0; t < n; t++)
        job[t] = (uint32_t)t;
    qsort(job, n, 4, by_category);
    for (size_t t = 0; t < n; t++)
        count += t == 0 || by_category(&job[t - 1], &job[t]) != 0;
    free(job);
    return count;
}

/* Swapping as a sort, over the grid and in blocks of 256, on p and on a
 * clustered index (37 consecutive threads of a scattered order share an
 * element: whole warps and residues): the GPU's thread order is the CPU's.
 * The step-by-step build (tmap_gpu_memre_swap_steps) gives the same order
 * and counts the categories exactly; its key words and passes as the
 * fields' bits say (the same for both indexes). */
static void swap_equal_cpu(tmap_cuda *c, const tmap_memref *r, const uint32_t *p, uint64_t dp)
{
    size_t n = r->nthreads, m = n * r->per_thread;
    uint32_t *clustered = malloc(m * 4);
    for (size_t i = 0; i < m; i++)
        clustered[i] = (uint32_t)((i / r->per_thread * 2654435761u % n) / 37 % r->nelems);
    uint64_t dc = test_device_copy(c, clustered, m * 4), dperm = test_device_alloc(c, n * 4);
    for (int which = 0; which < 2; which++)
        for (size_t bs = 0; bs <= 256; bs += 256) {
            tmap_memre cpu;
            tmap_gpu_swap_steps st;
            TMAP_CHECK(tmap_memre_swap_sorted(r, which ? clustered : p, bs, &cpu, err));
            TMAP_CHECK(tmap_gpu_memre_swap(which ? dc : dp, n, r->per_thread, r->nelems,
                                           r->elem_bytes, bs, dperm, err));
            test_expect_device_u32(c, dperm, cpu.perm, n, "swapping's perm");
            TMAP_CHECK(tmap_cuda_zero(c, dperm, n * 4, err));
            TMAP_CHECK(tmap_gpu_memre_swap_steps(which ? dc : dp, n, r->per_thread, r->nelems,
                                                 r->elem_bytes, bs, dperm, &st, err));
            test_expect_device_u32(c, dperm, cpu.perm, n, "swapping's perm, step by step");
            assert_int_equal(st.runs, categories_of(r, which ? clustered : p, bs));
            /* 8-byte elements: 4 a segment; fields of the segments' bits, the block's first */
            int sb = 0, bb = 0, bits = 0, words = 1, passes = 0;
            while ((r->nelems - 1) / 4 >> sb)
                sb++;
            while (bs && bs < n && (n - 1) / bs >> bb)
                bb++;
            for (size_t f = 0; f < r->per_thread + (bb > 0); f++) {
                int w = f == r->per_thread ? bb : sb;
                if (bits + w > 32)
                    passes += (bits + 7) / 8, bits = 0, words++;
                bits += w;
            }
            passes += (bits + 7) / 8;
            assert_int_equal(st.words, words);
            assert_int_equal(st.passes, passes);
            for (int i = 0; i < TMAP_SWAP_STEPS; i++)
                assert_true(st.ms[i] >= 0);
            assert_true(st.bytes[TMAP_SWAP_SORT] >= 16.0 * (double)n * passes);
            tmap_memre_free(&cpu);
        }
    tmap_cuda_free(c, dc), tmap_cuda_free(c, dperm), free(clustered);
}

static void layouts_equal_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    static const size_t sizes[] = {1000, 100003, 1u << 20};
    for (size_t si = 0; si < 3; si++)
        for (size_t k = 1; k <= 3; k += 2)
            for (int dense = 0; dense < 2; dense++) {
                /* dense: fewer elements than accesses (late elements); else many unread */
                size_t n = sizes[si], m = n * k, ne = dense ? m / 3 + 1 : 2 * m + 5;
                uint32_t *p = malloc(m * sizeof *p);
                uint64_t x = m + (size_t)dense;
                for (size_t i = 0; i < m; i++) {
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
                    p[i] = (uint32_t)(i % 4 ? (x >> 33) % ne : i % ne);
                }
                tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 8, .nelems = ne};
                uint64_t dp = test_device_copy(c, p, m * sizeof *p);
                uint64_t dq = test_device_alloc(c, m * 4);
                uint64_t df = test_device_alloc(c, (m > ne ? m : ne) * 4);
                tmap_memre cpu;
                TMAP_CHECK(tmap_memre_duplicate(&r, p, &cpu, err));
                TMAP_CHECK(tmap_gpu_memre_duplicate(dp, n, k, df, dq, NULL, err));
                test_expect_device_u32(c, df, cpu.from, cpu.nout, "duplication's from");
                test_expect_device_u32(c, dq, cpu.index, m, "duplication's Q");
                tmap_memre_free(&cpu);
                TMAP_CHECK(tmap_memre_reorder(&r, p, &cpu, err));
                TMAP_CHECK(tmap_gpu_memre_reorder(dp, n, k, ne, df, dq, err));
                test_expect_device_u32(c, df, cpu.from, ne, "reordering's from");
                test_expect_device_u32(c, dq, cpu.index, m, "reordering's Q");
                tmap_memre_free(&cpu);
                partial_and_share_equal_cpu(c, &r, p, dp);
                swap_equal_cpu(c, &r, p, dp);
                tmap_cuda_free(c, dp), tmap_cuda_free(c, dq), tmap_cuda_free(c, df);
                free(p);
            }
    tmap_cuda_close(c);
}

static void gather_builds_the_array(void **state)
{
    tmap_cuda *c = test_gpu_open();
    enum { NE = 5000, NOUT = 7001 };
    static const size_t sizes[] = {4, 8, 16, 12};
    uint32_t from[NOUT];
    for (uint32_t x = 0; x < NOUT; x++)
        from[x] = x % 7 == 3 ? TMAP_MEMRE_EMPTY : (x * 2654435761u) % NE;
    tmap_memre m = {from, NOUT, NULL, NULL};
    uint64_t df = test_device_copy(c, from, sizeof from);
    for (size_t si = 0; si < 4; si++) {
        size_t eb = sizes[si];
        unsigned char *a = malloc(NE * eb), *want = malloc(NOUT * eb);
        for (size_t b = 0; b < NE * eb; b++)
            a[b] = (unsigned char)(b * 131 + 7);
        tmap_memre_gather(&m, a, eb, want);
        uint64_t da = test_device_copy(c, a, NE * eb), dd = test_device_alloc(c, NOUT * eb);
        TMAP_CHECK(tmap_gpu_memre_gather(df, NOUT, da, eb, dd, NULL, err));
        char what[64]; /* eb is a multiple of 4: compared as 32-bit words */
        snprintf(what, sizeof what, "the gather of %zu-byte elements, word", eb);
        test_expect_device_u32(c, dd, (const uint32_t *)want, NOUT * eb / 4, what);
        tmap_cuda_free(c, da), tmap_cuda_free(c, dd);
        free(a), free(want);
    }
    tmap_cuda_free(c, df);
    tmap_error e = {0};
    assert_int_equal(tmap_gpu_memre_reorder(0, 0, 1, 1, 0, 0, &e), TMAP_ERR_INVALID);
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layouts_equal_cpu),
        cmocka_unit_test(gather_builds_the_array),
    };
    return test_gpu_main(tests, NULL, NULL);
}

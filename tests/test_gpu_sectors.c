/*
 * test_gpu_sectors.c -- the transaction model on the GPU
 * (tmap_sectors_count_gpu) equals the CPU's (tmap_sectors_count) exactly:
 * random gathers, strided and regular references, with and without a
 * thread order, 1 and 3 requests per thread, elements of 4, 8 and 64
 * bytes, partial warps, up to 2^21 threads, thread blocks of 96, 256 and
 * 1024 (their distinct sectors), and blocks counted in several chunks of
 * 2^25 accesses; and a bad index is an error.
 */
#include "tests/testutil.h"
#include "threadmap/model.h"

static void same(tmap_cuda *c, const tmap_memref *r, const uint32_t *index, const uint32_t *perm)
{
    tmap_sector_counts cpu, gpu;
    uint64_t l2 = 0;
    uint64_t di = test_device_copy(c, index, r->nthreads * r->per_thread * sizeof *index);
    uint64_t dp = test_device_copy(c, perm, r->nthreads * sizeof *perm);
    TMAP_CHECK(tmap_sectors_count(r, index, perm, &cpu, err));
    TMAP_CHECK(tmap_sectors_count_gpu(c, r, di, dp, &gpu, &l2, err));
    if (memcmp(&cpu, &gpu, sizeof cpu))
        fail_msg("%zu threads, k %zu, %zu-byte elements, blocks of %u, index %d, perm %d: CPU "
                 "%llu %llu %llu %llu %llu, GPU %llu %llu %llu %llu %llu", r->nthreads,
                 r->per_thread, r->elem_bytes, r->block, index != NULL, perm != NULL,
                 (unsigned long long)cpu.requests, (unsigned long long)cpu.sectors,
                 (unsigned long long)cpu.min_sectors, (unsigned long long)cpu.footprint,
                 (unsigned long long)cpu.block_sectors, (unsigned long long)gpu.requests,
                 (unsigned long long)gpu.sectors, (unsigned long long)gpu.min_sectors,
                 (unsigned long long)gpu.footprint, (unsigned long long)gpu.block_sectors);
    assert_true(l2 >= (1u << 20)); /* every supported GPU has at least 1 MiB */
    tmap_cuda_free(c, di);
    tmap_cuda_free(c, dp);
}

static void gpu_equals_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    static const size_t sizes[] = {1000, 100003, 1u << 21};
    for (size_t si = 0; si < 3; si++)
        for (size_t k = 1; k <= 3; k += 2)
            for (size_t eb = 4; eb <= 64; eb *= eb == 8 ? 8 : 2) {
                size_t n = sizes[si], ne = n * k / 2 + 7;
                uint32_t *p = malloc(n * k * sizeof *p), *perm = test_random_perm(n, n + k);
                uint64_t x = n * 31 + k;
                for (size_t i = 0; i < n * k; i++) {
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
                    /* half random, half a stride-3 walk */
                    p[i] = (uint32_t)(i % 2 ? (x >> 33) % ne : (i * 3) % ne);
                }
                tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = eb, .nelems = ne,
                                 .block = si == 1 ? 96 : si == 2 ? 1024 : 0};
                same(c, &r, p, NULL);
                same(c, &r, p, perm);
                r.nelems = n * k;
                same(c, &r, NULL, perm);
                free(p), free(perm);
            }
    tmap_cuda_close(c);
}

/* The blocks' keys sorted in more than one chunk (2^25 accesses each):
 * 2^23 threads x 5, clustered so that blocks reuse sectors. */
static void blocks_in_chunks(void **state)
{
    tmap_cuda *c = test_gpu_open();
    size_t n = 1u << 23, k = 5, ne = n;
    uint32_t *p = malloc(n * k * sizeof *p), *perm = test_random_perm(n, 5);
    uint64_t x = 99;
    for (size_t i = 0; i < n * k; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (uint32_t)((i / k + (x >> 33) % 512) % ne); /* near the thread's own */
    }
    tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 16, .nelems = ne};
    same(c, &r, p, NULL);
    same(c, &r, p, perm);
    free(p), free(perm);
    tmap_cuda_close(c);
}

static void bad_index_is_an_error(void **state)
{
    tmap_cuda *c = test_gpu_open();
    uint32_t p[64];
    for (int i = 0; i < 64; i++)
        p[i] = (uint32_t)i;
    p[40] = 64;
    uint64_t d = test_device_copy(c, p, sizeof p);
    tmap_memref r = {.nthreads = 64, .per_thread = 1, .elem_bytes = 4, .nelems = 64};
    tmap_sector_counts s;
    tmap_error e = {0};
    assert_int_equal(tmap_sectors_count_gpu(c, &r, d, 0, &s, NULL, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "access 40"));
    r.warp = 16;
    assert_int_equal(tmap_sectors_count_gpu(c, &r, d, 0, &s, NULL, &e), TMAP_ERR_UNSUPPORTED);
    tmap_cuda_free(c, d);
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_equals_cpu),
        cmocka_unit_test(blocks_in_chunks),
        cmocka_unit_test(bad_index_is_an_error),
    };
    return test_gpu_main(tests, NULL, NULL);
}

/*
 * test_gpu_memorder.c -- the ordered layouts built on the GPU equal the
 * CPU's bit for bit: relabeling by a random order and by RCM's
 * (tmap_gpu_memre_relabel against tmap_memre_relabel, k = 1 and 3), Morton
 * order (tmap_gpu_memre_morton against tmap_memre_morton: negative, equal
 * and flat coordinates, a stride of 4) and padding (tmap_gpu_memre_pad
 * against tmap_memre_pad: skewed and uniform references, elements of 4,
 * 8, 16 and 64 bytes, partial warps, elements read by several warps).
 */
#include <math.h>

#include "tests/testutil.h"
#include "threadmap/regroup.h"

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* GPU relabel by `order` equals the CPU's: q, and from = order. */
static void relabel_same(tmap_cuda *c, const tmap_memref *r, const uint32_t *p,
                         const uint32_t *order)
{
    size_t m = r->nthreads * r->per_thread;
    tmap_memre cpu;
    TMAP_CHECK(tmap_memre_relabel(r, p, order, 0, &cpu, err));
    assert_memory_equal(cpu.from, order, r->nelems * sizeof *order);
    uint64_t dp = test_device_copy(c, p, m * 4), dord = test_device_copy(c, order, r->nelems * 4);
    uint64_t dq = test_device_alloc(c, m * 4);
    TMAP_CHECK(tmap_gpu_memre_relabel(dp, r->nthreads, r->per_thread, dord, r->nelems, dq, NULL,
                                      err));
    test_expect_device_u32(c, dq, cpu.index, m, "relabeling's Q");
    tmap_memre_free(&cpu);
    tmap_cuda_free(c, dp), tmap_cuda_free(c, dord), tmap_cuda_free(c, dq);
}

static void relabel_equals_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    uint64_t x = 7;
    for (size_t k = 1; k <= 3; k += 2) {
        size_t n = 100003, ne = 70001, m = n * k;
        uint32_t *p = malloc(m * 4), *order = test_random_perm(ne, k);
        for (size_t i = 0; i < m; i++)
            p[i] = (uint32_t)(next(&x) % ne);
        tmap_memref r = {.nthreads = n, .per_thread = k, .elem_bytes = 8, .nelems = ne};
        relabel_same(c, &r, p, order);
        free(p), free(order);
    }
    /* RCM's order of a random symmetric graph (a ring plus chords), applied on the GPU */
    enum { NV = 50000, CH = 3 };
    uint32_t *rowptr = malloc((NV + 1) * 4), *col = malloc(NV * (2 + 2 * CH) * 4);
    uint32_t *order = malloc(NV * 4), *deg = calloc(NV, 4), *p = malloc(NV * 7 * 4);
    uint32_t (*chord)[2] = malloc(NV * CH * sizeof *chord);
    for (size_t i = 0; i < NV * CH; i++) {
        chord[i][0] = (uint32_t)(next(&x) % NV), chord[i][1] = (uint32_t)(next(&x) % NV);
        deg[chord[i][0]]++, deg[chord[i][1]]++;
    }
    rowptr[0] = 0;
    for (size_t v = 0; v < NV; v++)
        rowptr[v + 1] = rowptr[v] + 2 + deg[v], deg[v] = rowptr[v];
    for (uint32_t v = 0; v < NV; v++)
        col[deg[v]++] = (v + 1) % NV, col[deg[v]++] = (v + NV - 1) % NV;
    for (size_t i = 0; i < NV * CH; i++)
        col[deg[chord[i][0]]++] = chord[i][1], col[deg[chord[i][1]]++] = chord[i][0];
    TMAP_CHECK(tmap_memre_rcm(rowptr, col, NV, order, err));
    size_t nnz = rowptr[NV], k = 7;
    for (size_t i = 0; i < NV * k; i++) /* each row reads 7 of its neighbours, cycling */
        p[i] = col[rowptr[i / k] + (i % k) % (rowptr[i / k + 1] - rowptr[i / k])];
    assert_true(nnz == NV * (2 + 2 * CH));
    tmap_memref r = {.nthreads = NV, .per_thread = k, .elem_bytes = 8, .nelems = NV};
    relabel_same(c, &r, p, order);
    free(rowptr), free(col), free(order), free(deg), free(p), free(chord);
    tmap_cuda_close(c);
}

static void morton_equals_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    static const size_t sizes[] = {1, 37, 100003, 1u << 20};
    uint64_t x = 11;
    for (size_t si = 0; si < 4; si++) {
        size_t n = sizes[si], stride = 4;
        float *xyz = malloc(n * stride * sizeof *xyz);
        uint32_t *want = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            xyz[i * stride + 0] = (float)((double)next(&x) / (1u << 31) * 200.0 - 100.0);
            xyz[i * stride + 1] = (float)(next(&x) % 64) - 31.5f; /* many equal codes */
            xyz[i * stride + 2] = 2.5f;                           /* flat: span 0 */
            xyz[i * stride + 3] = NAN;                            /* not a coordinate */
        }
        if (n > 1)
            xyz[stride + 0] = -0.0f, xyz[0] = 0.0f;
        TMAP_CHECK(tmap_memre_morton(xyz, stride, n, want, err));
        uint64_t dx = test_device_copy(c, xyz, n * stride * sizeof *xyz);
        uint64_t dord = test_device_alloc(c, n * 4);
        TMAP_CHECK(tmap_gpu_memre_morton(dx, stride, n, dord, NULL, err));
        test_expect_device_u32(c, dord, want, n, "Morton order");
        tmap_cuda_free(c, dx), tmap_cuda_free(c, dord);
        free(xyz), free(want);
    }
    tmap_error e = {0};
    assert_int_equal(tmap_gpu_memre_morton(0, 2, 5, 0, NULL, &e), TMAP_ERR_INVALID);
    tmap_cuda_close(c);
}

/* GPU padding equals the CPU's: perm, q, nout and from[0..nout); the
 * rest of from is padding. */
static void pad_same(tmap_cuda *c, const tmap_memref *r, const uint32_t *p)
{
    size_t n = r->nthreads, seg = r->elem_bytes < 32 ? 32 / r->elem_bytes : 1;
    size_t slots = (n + 31) / 32 * (32 + seg);
    tmap_memre cpu;
    TMAP_CHECK(tmap_memre_pad(r, p, &cpu, err));
    uint64_t dp = test_device_copy(c, p, n * 4), dq = test_device_alloc(c, n * 4);
    uint64_t dperm = test_device_alloc(c, n * 4), df = test_device_alloc(c, slots * 4);
    uint64_t dn = test_device_alloc(c, 4);
    TMAP_CHECK(tmap_gpu_memre_pad(dp, n, r->nelems, r->elem_bytes, 0, df, dq, dperm, dn, NULL,
                                  err));
    uint32_t nout = 0;
    TMAP_CHECK(tmap_cuda_download(c, &nout, dn, 4, err));
    assert_int_equal(nout, cpu.nout);
    test_expect_device_u32(c, dperm, cpu.perm, n, "padding's thread order");
    test_expect_device_u32(c, dq, cpu.index, n, "padding's Q");
    uint32_t *want = malloc(slots * 4);
    memcpy(want, cpu.from, nout * 4);
    memset(want + nout, 0xff, (slots - nout) * 4);
    test_expect_device_u32(c, df, want, slots, "padding's from");
    free(want);
    tmap_memre_free(&cpu);
    tmap_cuda_free(c, dp), tmap_cuda_free(c, dq), tmap_cuda_free(c, dperm);
    tmap_cuda_free(c, df), tmap_cuda_free(c, dn);
}

static void pad_equals_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    static const size_t sizes[] = {1, 45, 100003, 1u << 20};
    static const size_t elem[] = {4, 8, 16, 64};
    uint64_t x = 5;
    for (size_t si = 0; si < 4; si++)
        for (size_t ei = 0; ei < 4; ei++)
            for (int skew = 0; skew < 2; skew++) {
                size_t n = sizes[si], ne = skew ? n / 3 + 1 : 2 * n + 3;
                uint32_t *p = malloc(n * 4);
                for (size_t t = 0; t < n; t++) { /* skew: a few hot elements, many single */
                    uint64_t v = next(&x);
                    p[t] = (uint32_t)(skew && v % 4 ? v % (ne < 40 ? ne : 40) : v % ne);
                }
                tmap_memref r = {.nthreads = n, .per_thread = 1, .elem_bytes = elem[ei],
                                 .nelems = ne};
                pad_same(c, &r, p);
                free(p);
            }
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(relabel_equals_cpu),
        cmocka_unit_test(morton_equals_cpu),
        cmocka_unit_test(pad_equals_cpu),
    };
    return test_gpu_main(tests, NULL, NULL);
}

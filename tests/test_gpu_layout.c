/*
 * test_gpu_layout.c -- the pooled, fused layout transform (tmap_layout) on
 * the GPU: rows of 1 to 48 bytes (each mover unit: bytes, words, 8- and
 * 16-byte vectors), a caller's array that is less aligned than its row,
 * arrays that are only inputs, only outputs, both or neither, and one
 * layout applied several times with different permutations on a stream of
 * the caller's.  The kernel records which slot ran each thread's data, so
 * the test sees both that the data moved and that the results came back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap.h"
#include "tests/testutil.h"

/* in: `row` bytes per thread; out = in + 1 byte by byte; id: the thread's
 * original number (iota, moved with the data); slot[id] = the slot that ran
 * it (not a per-thread array: written through the moved id). */
static const char kernel_src[] =
    "extern \"C\" __global__ void k(const unsigned char *in, unsigned char *out,\n"
    "    const unsigned *id, unsigned *slot, unsigned row, unsigned n) {\n"
    "  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (t >= n) return;\n"
    "  for (unsigned j = 0; j < row; j++) out[t * row + j] = in[t * row + j] + 1;\n"
    "  slot[id[t]] = t;\n"
    "}\n";

typedef struct fixture {
    tmap_cuda *c;
    tmap_kernel *k;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tmap_kernel_free(f->k);
    tmap_cuda_close(f->c);
    free(f);
    return 0;
}

static void load(fixture *f)
{
    f->c = test_gpu_open();
    tmap_compiled out;
    TMAP_CHECK(tmap_compile(kernel_src, "layout_test.cu", NULL, &out, err));
    TMAP_CHECK(tmap_kernel_load(f->c, out.ptx, "k", &f->k, err));
    tmap_compiled_free(&out);
}

/* One launch of n threads (a multiple of the block size: a permutation
 * covers every launched thread) with rows of `row` bytes, `in` offset by
 * `skew` bytes from its allocation, applied `times` times with fresh
 * permutations. */
static void run_case(fixture *f, uint32_t n, uint32_t row, uint32_t skew, int times)
{
    assert_int_equal(n % 128, 0);
    size_t bytes = (size_t)n * row;
    unsigned char *in = malloc(bytes), *out = malloc(bytes);
    uint32_t *id = malloc(n * sizeof *id), *slot = malloc(n * sizeof *slot);
    for (size_t i = 0; i < bytes; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    for (uint32_t t = 0; t < n; t++)
        id[t] = t;
    uint64_t d_in, d_out, d_id, d_slot, d_perm;
    TMAP_CHECK(tmap_cuda_alloc(f->c, bytes + skew, &d_in, err));
    TMAP_CHECK(tmap_cuda_alloc(f->c, bytes, &d_out, err));
    TMAP_CHECK(tmap_cuda_alloc(f->c, n * sizeof *id, &d_id, err));
    TMAP_CHECK(tmap_cuda_alloc(f->c, n * sizeof *slot, &d_slot, err));
    TMAP_CHECK(tmap_cuda_alloc(f->c, n * sizeof(uint32_t), &d_perm, err));
    d_in += skew;
    TMAP_CHECK(tmap_cuda_upload(f->c, d_in, in, bytes, err));
    TMAP_CHECK(tmap_cuda_upload(f->c, d_id, id, n * sizeof *id, err));
    unsigned nn = n;
    void *args[] = {&d_in, &d_out, &d_id, &d_slot, &row, &nn};
    tmap_launch l = {{(n + 127) / 128, 1, 1}, {128, 1, 1}, 0, args, 6};
    tmap_thread_array arrays[] = {
        {0, row, 1, 1, 0}, {1, row, 1, 0, 1}, {2, sizeof(uint32_t), 1, 1, 0}};
    tmap_layout *y;
    TMAP_CHECK(tmap_layout_create(f->c, &l, arrays, 3, &y, err));
    for (int r = 0; r < times; r++) {
        uint32_t *perm = test_random_perm(n, 11 + (uint64_t)r);
        TMAP_CHECK(tmap_cuda_zero(f->c, d_out, bytes, err));
        TMAP_CHECK(tmap_cuda_upload(f->c, d_perm, perm, n * sizeof *perm, err));
        float ms[3];
        TMAP_CHECK(tmap_layout_apply(y, f->k, &l, d_perm, NULL, r % 2 ? ms : NULL, err));
        TMAP_CHECK(tmap_cuda_download(f->c, out, d_out, bytes, err));
        TMAP_CHECK(tmap_cuda_download(f->c, slot, d_slot, n * sizeof *slot, err));
        for (size_t i = 0; i < bytes; i++)
            if (out[i] != (unsigned char)(in[i] + 1))
                fail_msg("row %u skew %u apply %d: out[%zu] = %u, want %u", row, skew, r, i,
                         out[i], (unsigned char)(in[i] + 1));
        for (uint32_t i = 0; i < n; i++)
            if (slot[perm[i]] != i)
                fail_msg("row %u apply %d: thread %u ran in slot %u, D put it in %u", row, r,
                         perm[i], slot[perm[i]], i);
        free(perm);
    }
    tmap_layout_free(y);
    tmap_cuda_free(f->c, d_in - skew);
    tmap_cuda_free(f->c, d_out);
    tmap_cuda_free(f->c, d_id);
    tmap_cuda_free(f->c, d_slot);
    tmap_cuda_free(f->c, d_perm);
    free(in), free(out), free(id), free(slot);
}

static void test_rows_and_alignment(void **state)
{
    fixture *f = *state;
    load(f);
    static const uint32_t rows[] = {1, 2, 3, 4, 8, 12, 16, 32, 48};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_case(f, 1024 + (uint32_t)i * 384, rows[i], 0, 2);
    run_case(f, 768, 16, 4, 1);  /* 16-byte rows at a 4-byte aligned address */
    run_case(f, 896, 8, 1, 1);   /* and at an odd one */
}

static void test_reuse_many(void **state)
{
    fixture *f = *state;
    load(f);
    run_case(f, 1 << 20, 4, 0, 5);  /* larger than one pass of the movers' grid */
}

/* Passed-through arrays (neither input nor output) keep the caller's pointer. */
static void test_neither_and_bad(void **state)
{
    fixture *f = *state;
    load(f);
    uint64_t d;
    unsigned n = 64, row = 4;
    TMAP_CHECK(tmap_cuda_alloc(f->c, 4096, &d, err));
    void *args[] = {&d, &d, &d, &d, &row, &n};
    tmap_launch l = {{1, 1, 1}, {64, 1, 1}, 0, args, 6};
    tmap_thread_array twice[] = {{0, 4, 1, 1, 0}, {0, 4, 1, 0, 1}};
    tmap_layout *y = NULL;
    tmap_error e = {0};
    assert_int_equal(tmap_layout_create(f->c, &l, twice, 2, &y, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "named twice"));
    tmap_thread_array far[] = {{9, 4, 1, 1, 0}};
    assert_int_equal(tmap_layout_create(f->c, &l, far, 1, &y, &e), TMAP_ERR_INVALID);
    assert_null(y);
    tmap_layout_free(NULL);
    tmap_cuda_free(f->c, d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rows_and_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reuse_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_neither_and_bad, setup, teardown),
    };
    return test_gpu_main(tests, NULL, NULL);
}

/*
 * test_npy.c -- .npy roundtrips for every dtype, typed loads with range
 * checks, BBV files with sidecars, and malformed files (corrupt headers,
 * truncated data, fortran order, bad shapes): errors, never crashes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/base.h"
#include "threadmap/model.h"

#define DIR TMAP_BINARY_DIR "/"

static void roundtrip(tmap_npy_dtype dt, const void *data, size_t elem, int ndim,
                      size_t r, size_t c)
{
    size_t dim[2] = {r, c};
    tmap_error err = {0};
    const char *path = DIR "npy_rt.npy";
    assert_int_equal(tmap_npy_save(path, dt, data, ndim, dim, &err), TMAP_OK);
    tmap_npy_array a;
    assert_int_equal(tmap_npy_read(path, &a, &err), TMAP_OK);
    assert_int_equal(a.dtype, dt);
    assert_int_equal(a.ndim, ndim);
    assert_int_equal(a.dim[0], r);
    assert_int_equal(a.dim[1], ndim == 2 ? c : 1);
    assert_memory_equal(a.data, data, r * (ndim == 2 ? c : 1) * elem);
    tmap_npy_array_free(&a);
    /* numpy's invariant: the data starts on a 64-byte boundary. */
    char *bytes;
    size_t len;
    assert_int_equal(tmap_file_read(path, &bytes, &len, &err), TMAP_OK);
    size_t hlen = (unsigned char)bytes[8] | (size_t)(unsigned char)bytes[9] << 8;
    assert_int_equal((10 + hlen) % 64, 0);
    assert_int_equal(bytes[10 + hlen - 1], '\n');
    free(bytes);
}

static void test_roundtrip_each_dtype(void **state)
{
    (void)state;
    uint8_t u1[6] = {0, 1, 2, 3, 254, 255};
    uint32_t u4[6] = {0, 1, 7, 4000000000u, 5, 6};
    int32_t i4[6] = {-1, 0, 1, INT32_MIN, INT32_MAX, 3};
    int64_t i8[6] = {-1, 0, INT64_MAX, INT64_MIN, 42, 7};
    float f4[6] = {0.5f, -1.25f, 3e30f, 0, 1, 2};
    double f8[6] = {0.1, -2.5, 1e300, 0, 1, 2};
    roundtrip(TMAP_NPY_U1, u1, 1, 2, 2, 3);
    roundtrip(TMAP_NPY_U4, u4, 4, 2, 3, 2);
    roundtrip(TMAP_NPY_I4, i4, 4, 1, 6, 1);
    roundtrip(TMAP_NPY_I8, i8, 8, 2, 6, 1);
    roundtrip(TMAP_NPY_F4, f4, 4, 1, 6, 1);
    roundtrip(TMAP_NPY_F8, f8, 8, 2, 1, 6);
    roundtrip(TMAP_NPY_F8, f8, 8, 2, 0, 6); /* empty */
}

static void test_typed_loads(void **state)
{
    (void)state;
    tmap_error err = {0};
    size_t dim[2] = {4, 0}, got[2];
    int64_t perm[4] = {3, 1, 0, 2};
    assert_int_equal(tmap_npy_save_i64(DIR "perm.npy", perm, 1, dim, &err), TMAP_OK);
    uint32_t *u;
    assert_int_equal(tmap_npy_load_u32(DIR "perm.npy", TMAP_NPY_1D, &u, got, &err), TMAP_OK);
    assert_int_equal(got[0], 4);
    assert_int_equal(u[0], 3);
    assert_int_equal(u[3], 2);
    free(u);
    /* A 1-D array is not a 2-D one, unless the caller accepts either. */
    assert_int_equal(tmap_npy_load_u32(DIR "perm.npy", TMAP_NPY_2D, &u, got, &err),
                     TMAP_ERR_FORMAT);
    assert_non_null(strstr(err.message, "expected a 2-D array, got 1-D"));
    double *d;
    assert_int_equal(tmap_npy_load_f64(DIR "perm.npy", TMAP_NPY_ANY, &d, got, &err), TMAP_OK);
    assert_true(d[0] == 3.0 && got[1] == 1);
    free(d);
    /* Range checks. */
    int32_t neg[2] = {5, -1};
    dim[0] = 2;
    assert_int_equal(tmap_npy_save_i32(DIR "neg.npy", neg, 1, dim, &err), TMAP_OK);
    assert_int_equal(tmap_npy_load_u32(DIR "neg.npy", TMAP_NPY_1D, &u, got, &err),
                     TMAP_ERR_FORMAT);
    assert_non_null(strstr(err.message, "neg.npy: element [1, 0] = -1 is not an integer in"));
    int64_t big[2] = {1, 5000000000};
    assert_int_equal(tmap_npy_save_i64(DIR "big.npy", big, 1, dim, &err), TMAP_OK);
    assert_int_equal(tmap_npy_load_u32(DIR "big.npy", TMAP_NPY_1D, &u, got, &err),
                     TMAP_ERR_FORMAT);
    double frac[2] = {1, 2.5};
    assert_int_equal(tmap_npy_save_f64(DIR "frac.npy", frac, 1, dim, &err), TMAP_OK);
    assert_int_equal(tmap_npy_load_u32(DIR "frac.npy", TMAP_NPY_1D, &u, got, &err),
                     TMAP_ERR_FORMAT);
    int64_t *i;
    assert_int_equal(tmap_npy_load_i64(DIR "frac.npy", TMAP_NPY_1D, &i, got, &err),
                     TMAP_ERR_FORMAT);
    uint32_t ok[2] = {1, 2};
    assert_int_equal(tmap_npy_save_u32(DIR "ok.npy", ok, 1, dim, &err), TMAP_OK);
    assert_int_equal(tmap_npy_load_i64(DIR "ok.npy", TMAP_NPY_1D, &i, got, &err), TMAP_OK);
    assert_true(i[1] == 2);
    free(i);
}

/* Builds a .npy image with a given header dict and data size. */
static size_t image(unsigned char *buf, int major, const char *dict, size_t ndata)
{
    size_t n = strlen(dict), off = major == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(n & 0xff);
    buf[9] = (unsigned char)(n >> 8);
    if (major != 1)
        buf[10] = buf[11] = 0;
    memcpy(buf + off, dict, n);
    memset(buf + off + n, 0, ndata);
    return off + n + ndata;
}

static void bad(const unsigned char *buf, size_t len, const char *needle)
{
    tmap_npy_array a;
    tmap_error err = {0};
    assert_int_equal(tmap_npy_parse(buf, len, "x.npy", &a, &err), TMAP_ERR_FORMAT);
    assert_null(a.data);
    if (!strstr(err.message, needle) || strncmp(err.message, "x.npy: ", 7))
        fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_malformed(void **state)
{
    (void)state;
    unsigned char buf[512];
    size_t n;
    tmap_npy_array a;
    tmap_error err = {0};
    /* Format 2.0 and 3.0 headers parse; a good baseline. */
    n = image(buf, 2, "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3), }\n", 24);
    assert_int_equal(tmap_npy_parse(buf, n, "x.npy", &a, &err), TMAP_OK);
    tmap_npy_array_free(&a);
    n = image(buf, 3, "{\"shape\": (6,), \"descr\": \"<f8\", \"fortran_order\": False}", 48);
    assert_int_equal(tmap_npy_parse(buf, n, "x.npy", &a, &err), TMAP_OK);
    assert_int_equal(a.ndim, 1);
    tmap_npy_array_free(&a);

    bad((const unsigned char *)"hello world", 11, "bad magic");
    bad(buf, 5, "bad magic");
    n = image(buf, 4, "{}", 0);
    bad(buf, n, "format version 4.0");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': True, 'shape': (2, 3), }", 24);
    bad(buf, n, "fortran-order");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3), }", 23);
    bad(buf, n, "truncated data");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3), }", 28);
    bad(buf, n, "trailing data");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3, 4), }", 96);
    bad(buf, n, "3 dimensions");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (), }", 4);
    bad(buf, n, "0 dimensions");
    n = image(buf, 1, "{'descr': '>u4', 'fortran_order': False, 'shape': (1,), }", 4);
    bad(buf, n, "big-endian");
    n = image(buf, 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", 16);
    bad(buf, n, "'<c16' is not supported");
    n = image(buf, 1, "{'descr': '<u4', 'shape': (1,), }", 4);
    bad(buf, n, "lacks 'fortran_order'");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4);
    bad(buf, n, "unexpected or repeated key 'x'");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,-2), }", 4);
    bad(buf, n, "non-integer");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 4);
    bad(buf, n, "dimension too large");
    n = image(buf, 1, "{'descr': '<u8', 'fortran_order': Maybe, 'shape': (1,), }", 8);
    bad(buf, n, "not supported");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': Maybe, 'shape': (1,), }", 4);
    bad(buf, n, "not True/False");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,)", 4);
    bad(buf, n, "expected ',' or '}'");
    /* Header length pointing past the end of the file. */
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", 0);
    buf[9] = 0x7f;
    bad(buf, n, "truncated .npy header");
    /* A header that overflows size_t when multiplied out. */
    n = image(buf, 1,
              "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0);
    bad(buf, n, "does not fit a file of");
    /* An empty array whose dimension exceeds the file (issue 14 item 11):
     * refused before anything is sized by it. */
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (4294967295, 0), }", 0);
    bad(buf, n, "shape (4294967295, 0) does not fit a file of 78 bytes");
    n = image(buf, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (5, 0), }", 0);
    assert_int_equal(tmap_npy_parse(buf, n, "x.npy", &a, &err), TMAP_OK);
    assert_int_equal(a.dim[0], 5);
    tmap_npy_array_free(&a);
    /* Every truncation of a valid file is an error, never a crash. */
    n = image(buf, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", 32);
    for (size_t cut = 0; cut < n; cut++) {
        assert_int_not_equal(tmap_npy_parse(buf, cut, "x.npy", &a, &err), TMAP_OK);
        assert_null(a.data);
    }
    /* Missing file. */
    assert_int_equal(tmap_npy_read(DIR "no-such-file.npy", &a, &err), TMAP_ERR_IO);
}

/* Endless inputs stop at the bound; the default bound is TMAP_FILE_MAX or
 * the environment's (issue 14 item 11: /dev/zero looped forever). */
static void test_endless_input(void **state)
{
    (void)state;
    char *data = NULL;
    size_t len;
    tmap_error err = {0};
    assert_int_equal(tmap_file_read_max("/dev/zero", 1 << 20, &data, &len, &err), TMAP_ERR_IO);
    assert_null(data);
    assert_string_equal(err.message, "/dev/zero: larger than the 1 MiB an input may have "
                                     "(THREADMAP_MAX_INPUT_MB raises it)");
    assert_int_equal(tmap_file_max(), TMAP_FILE_MAX);
    setenv("THREADMAP_MAX_INPUT_MB", "2", 1);
    assert_int_equal(tmap_file_max(), 2 << 20);
    tmap_npy_array a;
    assert_int_equal(tmap_npy_read("/dev/zero", &a, &err), TMAP_ERR_IO);
    assert_non_null(strstr(err.message, "larger than the 2 MiB"));
    unsetenv("THREADMAP_MAX_INPUT_MB");
}

/* A dtype outside the enum is an error, not a division by zero (item 16). */
static void test_save_bad_dtype(void **state)
{
    (void)state;
    size_t dim[2] = {2, 2};
    uint32_t v[4] = {0};
    tmap_error err = {0};
    assert_int_equal(tmap_npy_save(DIR "bad_dtype.npy", (tmap_npy_dtype)99, v, 2, dim, &err),
                     TMAP_ERR_INVALID);
    assert_string_equal(err.message, DIR "bad_dtype.npy: unknown dtype 99");
}

static void test_bbv_file(void **state)
{
    (void)state;
    tmap_bbv bbv;
    tmap_error err = {0};
    assert_int_equal(tmap_bbv_create(&bbv, 3, 2, &err), TMAP_OK);
    for (size_t i = 0; i < 6; i++)
        bbv.counts[i] = (uint32_t)(i * 10);
    const char *names[] = {"k/$L__BB0_0", "k/$L__BB0_1"};
    assert_int_equal(tmap_bbv_save(DIR "b.npy", &bbv, names, &err), TMAP_OK);
    tmap_bbv back;
    char **nm;
    assert_int_equal(tmap_bbv_load(DIR "b.npy", &back, &nm, &err), TMAP_OK);
    assert_int_equal(back.nthreads, 3);
    assert_int_equal(back.nblocks, 2);
    assert_memory_equal(back.counts, bbv.counts, 6 * sizeof(uint32_t));
    assert_string_equal(nm[1], "k/$L__BB0_1");
    tmap_names_free(nm, 2);
    tmap_bbv_free(&back);
    /* A sidecar that disagrees with the matrix is refused. */
    const char *lie = "{\"format\": \"threadmap-bbv\", \"version\": 1, \"nthreads\": 3, "
                      "\"nblocks\": 5, \"blocks\": null}";
    assert_int_equal(tmap_file_write(DIR "b.npy.json", lie, strlen(lie), &err), TMAP_OK);
    assert_int_equal(tmap_bbv_load(DIR "b.npy", &back, &nm, &err), TMAP_ERR_FORMAT);
    assert_non_null(strstr(err.message, "b.npy.json: field 'nblocks' does not match"));
    assert_int_equal(tmap_file_write(DIR "b.npy.json", "{oops", 5, &err), TMAP_OK);
    assert_int_equal(tmap_bbv_load(DIR "b.npy", &back, &nm, &err), TMAP_ERR_FORMAT);
    assert_non_null(strstr(err.message, "b.npy.json:1:"));
    /* Without a sidecar the names are unknown. */
    remove(DIR "b.npy.json");
    assert_int_equal(tmap_bbv_load(DIR "b.npy", &back, &nm, &err), TMAP_OK);
    assert_null(nm);
    tmap_bbv_free(&back);
    tmap_bbv_free(&bbv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_each_dtype),
        cmocka_unit_test(test_typed_loads),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_bbv_file),
        cmocka_unit_test(test_endless_input),
        cmocka_unit_test(test_save_bad_dtype),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

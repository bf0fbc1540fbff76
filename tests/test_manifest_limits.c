/*
 * test_manifest_limits.c -- manifest numbers at and past their limits:
 * launch geometry against the driver's limits (64-bit products), array
 * counts and per_thread * threads without wrapping, shared_bytes, scalar
 * and init values against their declared types (exact where they fit, an
 * error naming the field where not), and the nesting depth of feature
 * expressions.
 */
#include "tests/testutil.h"
#include "tests/testmanifest.h"

#include <float.h>
#include <math.h>

/* A manifest of kernel k with the given geometry, args and arrays
 * (JSON fragments; arrays may be empty). */
static char *manifest(const char *geometry, const char *args, const char *arrays)
{
    static char buf[1 << 16];
    snprintf(buf, sizeof buf, "{\"source\": \"a.cu\", \"kernel\": \"k\", %s, \"args\": [%s],"
             " \"arrays\": [%s]}", geometry, args, arrays);
    return buf;
}

static void geometry_limits(void **state)
{
    static const struct { const char *geometry, *needle; } bad[] = {
        {"\"grid\": [1073741824, 1073741824, 16], \"block\": 32", "y is 1073741824, at most 65535"},
        {"\"grid\": [1, 1, 65536], \"block\": 32", "z is 65536, at most 65535"},
        {"\"grid\": [2147483648], \"block\": 32", "x is 2147483648, at most 2147483647"},
        {"\"grid\": [2147483647, 65535, 65535], \"block\": 1024", "more than 2^32 threads"},
        {"\"grid\": [70000, 65535], \"block\": 1024", "'grid'"},
        {"\"threads\": 8589934592, \"block\": 32", "'threads'"},
        {"\"threads\": 4294967296, \"block\": 1", "4294967296 blocks of 1 threads: a 1-D grid"},
        {"\"grid\": 1, \"block\": [32, 32, 2]", "2048 threads per block"},
        {"\"grid\": 1, \"block\": [1, 1, 65]", "z is 65, at most 64"},
        {"\"grid\": 1, \"block\": 32, \"shared_bytes\": 1099511627776", "'shared_bytes'"},
        {"\"grid\": 1, \"block\": 32, \"shared_bytes\": 232449", "'shared_bytes'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        test_load_fails(manifest(bad[i].geometry, "", ""), bad[i].needle);
    tmap_manifest *m;
    tmap_error e = {0};
    assert_int_equal(test_load_text(manifest("\"grid\": [4194304], \"block\": 1024, \"shared_bytes\": 232448",
                                             "", ""), &m, &e), TMAP_OK);
    assert_int_equal(m->threads, 1ull << 32);
    assert_int_equal(m->shared_bytes, 232448);
    tmap_manifest_free(m);
}

static void array_count_limits(void **state)
{
    test_load_fails(manifest("\"threads\": 1024, \"block\": 32", "",
                             "{\"name\": \"a\", \"type\": \"f32\", \"count\": 16, \"per_thread\": 18014398509481984}"),
                    "count is smaller than per_thread * threads");
    test_load_fails(manifest("\"threads\": 1024, \"block\": 32", "",
                             "{\"name\": \"a\", \"type\": \"f64\", \"count\": 1125899906842624}"),
                    "'arrays.a'");
}

/* Each scalar that does not fit its type fails naming the argument. */
static void scalars_that_do_not_fit(void **state)
{
    static const char *const bad[] = {
        "{\"i32\": 1e300}", "{\"i32\": 2147483648}", "{\"u32\": -1}", "{\"i8\": 128}",
        "{\"i8\": -129}", "{\"u8\": 256}", "{\"f32\": 1e39}", "{\"u64\": 1.8446744073709552e19}",
        "{\"i64\": 9.3e18}", "{\"u64\": -1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        test_load_fails(manifest("\"threads\": 32, \"block\": 32", bad[i], ""), "'args[0]'");
    test_load_fails(manifest("\"threads\": 32, \"block\": 32", "{\"i32\": 1e300}", ""),
                    "does not fit type i32");
    test_load_fails(manifest("\"grid\": 4194304, \"block\": 1024", "{\"i32\": \"threads\"}", ""),
                    "4294967296 does not fit type i32");
}

/* Values at the edges of their types are passed exactly. */
static void scalars_at_the_edges(void **state)
{
    tmap_manifest *m;
    tmap_error e = {0};
    assert_int_equal(test_load_text(manifest("\"grid\": 4194303, \"block\": 1024",
                                             "{\"i64\": 9223372036854775807}, {\"i64\": -9223372036854775808},"
                                             "{\"u64\": 1e19}, {\"i8\": -128}, {\"u8\": 255}, {\"f32\": 0.1},"
                                             "{\"u32\": \"threads\"}, {\"i32\": -2147483648}, {\"u64\": \"threads\"}",
                                             ""), &m, &e), TMAP_OK);
    assert_true(m->args[0].storage.i == INT64_MAX);
    assert_true(m->args[1].storage.i == INT64_MIN);
    assert_true(m->args[2].storage.u == 10000000000000000000ull);
    assert_int_equal(m->args[3].storage.i32, -128);
    assert_int_equal(*(const uint8_t *)&m->args[4].storage, 255);
    assert_true(m->args[5].storage.f == 0.1f);
    assert_true(m->args[6].storage.u32 == 4294966272u);
    assert_int_equal(m->args[7].storage.i32, INT32_MIN);
    assert_true(m->args[8].storage.u == 4294966272u);
    tmap_manifest_free(m);
}

/* Init values (fill, uniform and powerlaw bounds, iota's last element)
 * that do not fit the array's type fail naming the array. */
static void inits_that_do_not_fit(void **state)
{
    static const struct { const char *array, *needle; } bad[] = {
        {"\"type\": \"i8\", \"count\": 4, \"init\": {\"fill\": 300}", "the fill value (300) does not fit type i8"},
        {"\"type\": \"i32\", \"count\": 4, \"init\": {\"fill\": 1.5}", "does not fit type i32"},
        {"\"type\": \"f32\", \"count\": 4, \"init\": {\"fill\": 1e300}", "does not fit type f32"},
        {"\"type\": \"u32\", \"count\": 4, \"init\": {\"fill\": -1}", "does not fit type u32"},
        {"\"type\": \"i32\", \"count\": 4, \"init\": {\"uniform\": [0, 1e10]}", "hi (10000000000)"},
        {"\"type\": \"u8\", \"count\": 4, \"init\": {\"uniform\": [-1, 5]}", "lo (-1)"},
        {"\"type\": \"i32\", \"count\": 4, \"init\": {\"uniform\": [0.5, 3]}", "lo (0.5)"},
        {"\"type\": \"f32\", \"count\": 4, \"init\": {\"powerlaw\": [1, 1e300, 2]}", "hi (1e+300)"},
        {"\"type\": \"i8\", \"count\": 300, \"init\": \"iota\"", "iota's last element (299)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char array[512];
        snprintf(array, sizeof array, "{\"name\": \"a\", %s}", bad[i].array);
        test_load_fails(manifest("\"threads\": 32, \"block\": 32", "", array), "'arrays.a'");
        test_load_fails(manifest("\"threads\": 32, \"block\": 32", "", array), bad[i].needle);
    }
}

/* The widest ranges generate in range (and, under UBSan's
 * float-cast-overflow, without an undefined conversion). */
static void inits_at_the_edges(void **state)
{
    tmap_manifest *m;
    tmap_error e = {0};
    assert_int_equal(test_load_text(manifest("\"threads\": 256, \"block\": 32", "",
        "{\"name\": \"a\", \"type\": \"u64\", \"count\": \"threads\", \"init\": {\"uniform\": [0, 1.8446744073709549568e19]}},"
        "{\"name\": \"b\", \"type\": \"f32\", \"count\": \"threads\", \"init\": {\"uniform\": [-3.4028234663852886e38, 3.4028234663852886e38]}},"
        "{\"name\": \"c\", \"type\": \"i8\", \"count\": 128, \"init\": \"iota\"},"
        "{\"name\": \"d\", \"type\": \"i8\", \"count\": \"threads\", \"init\": {\"uniform\": [-128, 127]}},"
        "{\"name\": \"f\", \"type\": \"u8\", \"count\": \"threads\", \"init\": {\"powerlaw\": [1, 255, 1.1]}}"),
        &m, &e), TMAP_OK);
    TMAP_CHECK(tmap_manifest_generate(m, 3, err));
    assert_int_equal(((const int8_t *)m->arrays[2].host)[127], 127);
    int lo = 0, hi = 0;
    for (size_t i = 0; i < 256; i++) {
        int8_t d = ((const int8_t *)m->arrays[3].host)[i];
        lo |= d == -128 || d < -100, hi |= d > 100;
        assert_true(fabsf(((const float *)m->arrays[1].host)[i]) <= FLT_MAX);
    }
    assert_true(lo && hi);
    tmap_manifest_free(m);
}

/* "((((...a...))))" nested `depth` deep, or "- - -...a" with `minus`. */
static char *nested(size_t depth, int minus)
{
    char *s = malloc(2 * depth + 2);
    size_t n = 0;
    for (size_t i = 0; i < depth; i++)
        s[n++] = minus ? '-' : '(';
    s[n++] = 'a';
    for (size_t i = 0; !minus && i < depth; i++)
        s[n++] = ')';
    s[n] = '\0';
    return s;
}

static tmap_status load_feature(const char *expr, tmap_manifest **m, tmap_error *e)
{
    size_t size = strlen(expr) + 512;
    char *json = malloc(size);
    snprintf(json, size, "{\"source\": \"a.cu\", \"kernel\": \"k\", \"threads\": 32, \"block\": 32,"
             " \"args\": [], \"arrays\": [{\"name\": \"a\", \"type\": \"i32\", \"count\": 32, \"init\": \"iota\"}],"
             " \"features\": [{\"name\": \"deep\", \"expr\": \"%s\"}]}", expr);
    tmap_status st = test_load_text(json, m, e);
    free(json);
    return st;
}

/* 256 levels parse and evaluate; 257 and 1,000,000 fail with one message
 * (the recursive parser would overflow its stack). */
static void expression_depth_is_bounded(void **state)
{
    for (int minus = 0; minus < 2; minus++) {
        static const size_t depths[] = {257, 1000000};
        for (size_t i = 0; i < 2; i++) {
            char *s = nested(depths[i], minus);
            tmap_manifest *m = NULL;
            tmap_error e = {0};
            assert_int_equal(load_feature(s, &m, &e), TMAP_ERR_INVALID);
            if (!strstr(e.message, "nested more than 256 deep"))
                fail_msg("%s", e.message);
            assert_non_null(strstr(e.message, "'features[0]'"));
            free(s);
        }
        char *s = nested(256, minus);
        tmap_manifest *m;
        tmap_error e = {0};
        assert_int_equal(load_feature(s, &m, &e), TMAP_OK);
        TMAP_CHECK(tmap_manifest_generate(m, 1, err));
        double *f;
        size_t n, p;
        TMAP_CHECK(tmap_manifest_features(m, &f, &n, &p, NULL, err));
        assert_true(f[5] == 5); /* an even number of minuses */
        free(f);
        tmap_manifest_free(m);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(geometry_limits),       cmocka_unit_test(array_count_limits),
        cmocka_unit_test(scalars_that_do_not_fit), cmocka_unit_test(scalars_at_the_edges),
        cmocka_unit_test(inits_that_do_not_fit), cmocka_unit_test(inits_at_the_edges),
        cmocka_unit_test(expression_depth_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

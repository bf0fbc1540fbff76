/*
 * test_manifest.c -- kernel manifests: parsing, array generation, feature
 * expressions, compiling the kernel, and one clear error per kind of bad
 * field.
 */
#include "tests/testutil.h"
#include "tests/testmanifest.h"
#include "threadmap/model.h"

static const char *good =
    "{\"source\": \"" TMAP_SOURCE_DIR "/tests/kernels/spmv_csr.cu\", \"kernel\": \"spmv_csr\","
    " \"threads\": 1000, \"block\": [128],"
    " \"arrays\": ["
    "  {\"name\": \"len\", \"type\": \"i32\", \"count\": \"threads\", \"init\": {\"uniform\": [0, 9]}},"
    "  {\"name\": \"rowptr\", \"type\": \"i32\", \"count\": 1025, \"init\": \"iota\"},"
    "  {\"name\": \"x\", \"type\": \"f32\", \"count\": 1024, \"init\": {\"fill\": 1.5}, \"role\": \"input\","
    "   \"per_thread\": 1},"
    "  {\"name\": \"y\", \"type\": \"f32\", \"count\": 1024, \"role\": \"output\", \"per_thread\": 1}"
    " ],"
    " \"args\": [\"rowptr\", \"len\", \"x\", \"x\", \"y\", {\"i32\": \"threads\"}],"
    " \"features\": [\"len\", {\"name\": \"span\", \"expr\": \"rowptr[t+1] - rowptr[t] + 2*len\"}]}";

static void parses_and_generates(void **state)
{
    tmap_manifest *m;
    tmap_error e = {0};
    assert_int_equal(test_load_text(good, &m, &e), TMAP_OK);
    assert_int_equal(m->grid[0], 8); /* ceil(1000 / 128) */
    assert_int_equal(m->threads, 1024);
    assert_int_equal(m->nargs, 6);
    assert_int_equal(m->args[5].value, 1024);
    TMAP_CHECK(tmap_manifest_generate(m, 7, err));
    const int32_t *len = m->arrays[0].host;
    int lo = 99, hi = -1;
    for (size_t i = 0; i < 1024; i++) {
        lo = len[i] < lo ? len[i] : lo;
        hi = len[i] > hi ? len[i] : hi;
    }
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 9);
    assert_true(((const float *)m->arrays[2].host)[1023] == 1.5f);
    double *f;
    size_t n, p;
    const char *const *names;
    TMAP_CHECK(tmap_manifest_features(m, &f, &n, &p, &names, err));
    assert_int_equal(n, 1024);
    assert_int_equal(p, 2);
    assert_string_equal(names[1], "span");
    for (size_t t = 0; t < n; t++) {
        assert_true(f[t * 2] == len[t]);
        assert_true(f[t * 2 + 1] == 1 + 2.0 * len[t]);
    }
    free(f);
    tmap_array_view v;
    TMAP_CHECK(tmap_manifest_array(m, 3, &v));
    assert_string_equal(v.name, "y");
    assert_true(v.is_output && !v.is_input && v.per_thread == 1 && v.elem_size == 4);
    tmap_manifest_free(m);
}

static void generation_is_seeded(void **state)
{
    tmap_manifest *a, *b;
    tmap_error e = {0};
    assert_int_equal(test_load_text(good, &a, &e), TMAP_OK);
    assert_int_equal(test_load_text(good, &b, &e), TMAP_OK);
    TMAP_CHECK(tmap_manifest_generate(a, 1, err));
    TMAP_CHECK(tmap_manifest_generate(b, 1, err));
    assert_memory_equal(a->arrays[0].host, b->arrays[0].host, 1024 * 4);
    TMAP_CHECK(tmap_manifest_generate(b, 2, err));
    assert_memory_not_equal(a->arrays[0].host, b->arrays[0].host, 1024 * 4);
    tmap_manifest_free(a);
    tmap_manifest_free(b);
}

static void compiles_its_kernel(void **state)
{
    tmap_manifest *m;
    tmap_error e = {0};
    assert_int_equal(test_load_text(good, &m, &e), TMAP_OK);
    char *ptx, *entry;
    TMAP_CHECK(tmap_manifest_ptx(m, NULL, &ptx, &entry, err));
    assert_string_equal(entry, "spmv_csr");
    assert_non_null(strstr(ptx, ".entry spmv_csr"));
    free(ptx);
    free(entry);
    tmap_manifest_free(m);
}

/* Each bad manifest fails with a message naming the field. */
static void bad_fields_are_named(void **state)
{
    static const struct { const char *json, *needle; } cases[] = {
        {"{", "manifest_"},
        {"[1]", "JSON object"},
        {"{\"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": []}", "'source'"},
        {"{\"source\": \"a.cu\", \"block\": 32, \"threads\": 32, \"args\": []}", "'kernel'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"threads\": 32, \"args\": []}", "'block'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 2000, \"threads\": 32, \"args\": []}",
         "'block'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"args\": []}", "'grid'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": -1, \"args\": []}",
         "'threads'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [\"q\"]}",
         "'args[0]'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, "
         "\"args\": [{\"i33\": 1}]}", "'args[0]'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, "
         "\"args\": [{\"i32\": 1.5}]}", "integer"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [],"
         " \"arrays\": [{\"name\": \"a\", \"type\": \"f16\", \"count\": 4}]}", "'arrays.a'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [],"
         " \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 0}]}", "'arrays.a'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [],"
         " \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 4, \"init\": {\"uniform\": [3, 1]}}]}",
         "'arrays.a'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [],"
         " \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 4, \"per_thread\": 1}]}",
         "per_thread"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [],"
         " \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 40, \"role\": \"both\"}]}",
         "role"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [],"
         " \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 40}],"
         " \"features\": [\"b\"]}", "'features[0]'"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": [],"
         " \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 40}],"
         " \"features\": [{\"name\": \"f\", \"expr\": \"a[t+] * 2\"}]}", "column"},
        {"{\"source\": \"a.cu\", \"kernel\": \"k\", \"kernel\": \"j\", \"block\": 32, \"threads\": 32,"
         " \"args\": []}", "duplicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tmap_manifest *m = NULL;
        tmap_error e = {0};
        tmap_status st = test_load_text(cases[i].json, &m, &e);
        if (st == TMAP_OK)
            fail_msg("case %zu was accepted", i);
        assert_null(m);
        if (!strstr(e.message, cases[i].needle))
            fail_msg("case %zu: '%s' does not mention %s", i, e.message, cases[i].needle);
    }
}

static void missing_file_is_io_error(void **state)
{
    tmap_manifest *m = NULL;
    tmap_error e = {0};
    assert_int_equal(tmap_manifest_load("/nonexistent/m.json", &m, &e), TMAP_ERR_IO);
    assert_non_null(strstr(e.message, "/nonexistent/m.json"));
}

static void feature_index_out_of_range(void **state)
{
    const char *j = "{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32,"
                    " \"args\": [], \"arrays\": [{\"name\": \"a\", \"type\": \"i32\", \"count\": 32}],"
                    " \"features\": [{\"name\": \"next\", \"expr\": \"a[t+1]\"}]}";
    tmap_manifest *m;
    tmap_error e = {0};
    assert_int_equal(test_load_text(j, &m, &e), TMAP_OK);
    TMAP_CHECK(tmap_manifest_generate(m, 1, err));
    double *f = NULL;
    size_t n, p;
    assert_int_equal(tmap_manifest_features(m, &f, &n, &p, NULL, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "thread 31"));
    assert_non_null(strstr(e.message, "features.next"));
    tmap_manifest_free(m);
}

/* Arrays with the same init draw unrelated values: no array is a shifted
 * copy of another (as it would be with streams spaced by the generator's own
 * step), and the same array under seeds s and s + 1 differs too. */
static void array_streams_are_unrelated(void **state)
{
    const char *j =
        "{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 1024, \"args\": [],"
        " \"arrays\": [{\"name\": \"a\", \"type\": \"u32\", \"count\": \"threads\", \"init\": {\"uniform\": [0, 4000000000]}},"
        "  {\"name\": \"b\", \"type\": \"u32\", \"count\": \"threads\", \"init\": {\"uniform\": [0, 4000000000]}},"
        "  {\"name\": \"c\", \"type\": \"u32\", \"count\": \"threads\", \"init\": {\"uniform\": [0, 4000000000]}}]}";
    tmap_manifest *m, *m2;
    tmap_error e = {0};
    assert_int_equal(test_load_text(j, &m, &e), TMAP_OK);
    assert_int_equal(test_load_text(j, &m2, &e), TMAP_OK);
    TMAP_CHECK(tmap_manifest_generate(m, 1, err));
    TMAP_CHECK(tmap_manifest_generate(m2, 2, err));
    const tmap_manifest *ms[2] = {m, m2};
    /* every pair of (manifest, array), at every shift up to 16 either way */
    for (size_t x = 0; x < 6; x++)
        for (size_t y = 0; y < 6; y++)
            for (int k = -16; k <= 16; k++) {
                if (x == y && k == 0)
                    continue;
                const uint32_t *p = ms[x / 3]->arrays[x % 3].host, *q = ms[y / 3]->arrays[y % 3].host;
                size_t same = 0;
                for (int i = 16; i < 1024 - 16; i++)
                    same += p[i] == q[i + k];
                if (same > 2)
                    fail_msg("array %zu and array %zu shifted by %d agree in %zu places", x, y, k, same);
            }
    tmap_manifest_free(m);
    tmap_manifest_free(m2);
}

/* {"scan": src}: exclusive prefix sums with exact values, the count + 1
 * form (row pointers) and the count form (starts), and its errors. */
static void scan_init_is_exact(void **state)
{
    const char *j =
        "{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 4, \"threads\": 4, \"args\": [],"
        " \"arrays\": [{\"name\": \"len\", \"type\": \"i32\", \"count\": \"threads\", \"init\": \"iota\"},"
        "  {\"name\": \"ptr\", \"type\": \"i64\", \"count\": 5, \"init\": {\"scan\": \"len\"}},"
        "  {\"name\": \"start\", \"type\": \"u32\", \"count\": \"threads\", \"init\": {\"scan\": \"len\"},"
        "   \"per_thread\": 1},"
        "  {\"name\": \"w\", \"type\": \"u8\", \"count\": 3, \"init\": {\"fill\": 100}},"
        "  {\"name\": \"wsum\", \"type\": \"u8\", \"count\": 3, \"init\": {\"scan\": \"w\"}}],"
        " \"features\": [{\"name\": \"rowlen\", \"expr\": \"ptr[t+1] - ptr[t]\"}]}";
    tmap_manifest *m;
    tmap_error e = {0};
    assert_int_equal(test_load_text(j, &m, &e), TMAP_OK);
    TMAP_CHECK(tmap_manifest_generate(m, 3, err));
    const int64_t want_ptr[5] = {0, 0, 1, 3, 6};
    const uint32_t want_start[4] = {0, 0, 1, 3};
    assert_memory_equal(m->arrays[1].host, want_ptr, sizeof want_ptr);
    assert_memory_equal(m->arrays[2].host, want_start, sizeof want_start);
    double *f;
    size_t n, p;
    TMAP_CHECK(tmap_manifest_features(m, &f, &n, &p, NULL, err));
    for (size_t t = 0; t < 4; t++)
        assert_true(f[t] == (double)t);
    free(f);
    /* 0, 100, 200 fit in u8; 300 does not, and the error says where */
    assert_int_equal(((uint8_t *)m->arrays[4].host)[2], 200);
    tmap_manifest *m2;
    char *big = malloc(strlen(j) + 1);
    strcpy(big, j);
    memcpy(strstr(big, "\"count\": 3, \"init\": {\"scan\": \"w\"}") + 9, "4", 1);
    assert_int_equal(test_load_text(big, &m2, &e), TMAP_OK);
    assert_int_equal(tmap_manifest_generate(m2, 3, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "'arrays.wsum'"));
    assert_non_null(strstr(e.message, "element 3"));
    tmap_manifest_free(m2);
    free(big);
    tmap_manifest_free(m);

    static const struct { const char *arrays, *needle; } bad[] = {
        {"[{\"name\": \"p\", \"type\": \"i32\", \"count\": 4, \"init\": {\"scan\": \"q\"}}]", "earlier"},
        {"[{\"name\": \"p\", \"type\": \"i32\", \"count\": 4, \"init\": {\"scan\": \"p\"}}]", "earlier"},
        {"[{\"name\": \"q\", \"type\": \"i32\", \"count\": 4},"
         " {\"name\": \"p\", \"type\": \"i32\", \"count\": 6, \"init\": {\"scan\": \"q\"}}]", "count + 1"},
        {"[{\"name\": \"q\", \"type\": \"f32\", \"count\": 4},"
         " {\"name\": \"p\", \"type\": \"i32\", \"count\": 4, \"init\": {\"scan\": \"q\"}}]", "integer"},
        {"[{\"name\": \"q\", \"type\": \"i32\", \"count\": 4},"
         " {\"name\": \"p\", \"type\": \"f64\", \"count\": 4, \"init\": {\"scan\": \"q\"}}]", "integer"},
        {"[{\"name\": \"q\", \"type\": \"i32\", \"count\": 4},"
         " {\"name\": \"p\", \"type\": \"i32\", \"count\": 4, \"init\": {\"scan\": 3}}]", "scan needs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 4, "
                 "\"threads\": 4, \"args\": [], \"arrays\": %s}", bad[i].arrays);
        tmap_manifest *b = NULL;
        if (test_load_text(text, &b, &e) == TMAP_OK)
            fail_msg("bad scan %zu was accepted", i);
        if (!strstr(e.message, bad[i].needle) || !strstr(e.message, "'arrays.p'"))
            fail_msg("bad scan %zu: '%s' does not mention %s", i, e.message, bad[i].needle);
    }
}

/* Arrays read from .npy files: the same dtype is copied, another converted
 * only when every value fits exactly; counts must match. */
static void npy_arrays(void **state)
{
    char dir[] = "/tmp/tmap_npy_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a_path[256], b_path[256], m_path[256];
    snprintf(a_path, sizeof a_path, "%s/a.npy", dir);
    snprintf(b_path, sizeof b_path, "%s/b.npy", dir);
    int32_t a[64];
    double b[64];
    for (int i = 0; i < 64; i++)
        a[i] = 3 * i - 7, b[i] = 0.5 * i;
    size_t dim[2] = {64, 1}, dim2[2] = {8, 8};
    TMAP_CHECK(tmap_npy_save_i32(a_path, a, 1, dim, err));
    TMAP_CHECK(tmap_npy_save_f64(b_path, b, 2, dim2, err));
    static const char *fmt =
        "{\"source\": \"x.cu\", \"kernel\": \"k\", \"block\": 64, \"threads\": 64, \"args\": [],"
        " \"arrays\": [{\"name\": \"a\", \"type\": \"%s\", \"count\": 64, \"init\": {\"npy\": \"a.npy\"}},"
        " {\"name\": \"b\", \"type\": \"%s\", \"count\": %d, \"init\": {\"npy\": \"b.npy\"}}]}";
    struct { const char *ta, *tb; int nb; const char *error; } cases[] = {
        {"i32", "f64", 64, NULL},          /* same dtypes: copied */
        {"f32", "f32", 64, NULL},          /* converted exactly */
        {"i64", "i32", 64, "element 1"},   /* 0.5 does not fit an integer */
        {"i32", "f64", 65, "65"},          /* wrong count */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(m_path, sizeof m_path, "%s/m.json", dir);
        FILE *f = fopen(m_path, "w");
        fprintf(f, fmt, cases[c].ta, cases[c].tb, cases[c].nb);
        fclose(f);
        tmap_manifest *m;
        TMAP_CHECK(tmap_manifest_load(m_path, &m, err));
        tmap_error e = {0};
        tmap_status st = tmap_manifest_generate(m, 1, &e);
        if (cases[c].error) {
            assert_int_equal(st, TMAP_ERR_FORMAT);
            if (!strstr(e.message, cases[c].error) || !strstr(e.message, "arrays."))
                fail_msg("case %zu: %s", c, e.message);
        } else {
            assert_int_equal(st, TMAP_OK);
            for (int i = 0; i < 64; i++) {
                assert_true(tmap_elem_get(m->arrays[0].kind, m->arrays[0].host, (size_t)i) == a[i]);
                assert_true(tmap_elem_get(m->arrays[1].kind, m->arrays[1].host, (size_t)i) == b[i]);
            }
        }
        tmap_manifest_free(m);
    }
    unlink(a_path), unlink(b_path), unlink(m_path), rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_and_generates),   cmocka_unit_test(generation_is_seeded),
        cmocka_unit_test(compiles_its_kernel),    cmocka_unit_test(npy_arrays),    cmocka_unit_test(bad_fields_are_named),
        cmocka_unit_test(missing_file_is_io_error), cmocka_unit_test(feature_index_out_of_range),
        cmocka_unit_test(scan_init_is_exact), cmocka_unit_test(array_streams_are_unrelated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

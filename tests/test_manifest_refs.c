/*
 * test_manifest_refs.c -- a manifest's irregular references ("references"):
 * parsed exactly, checked against the manifest's arrays with errors naming
 * the file and the field, and their index arrays checked against the data
 * they index once generated.
 */
#include "tests/testutil.h"
#include "tests/testmanifest.h"
#include "threadmap/pipeline.h"

#define HEAD "{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 32, \"args\": []," \
             " \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 64}," \
             " {\"name\": \"p\", \"type\": \"i32\", \"count\": 64, \"init\": {\"uniform\": [0, 63]}}," \
             " {\"name\": \"f\", \"type\": \"f64\", \"count\": 64}],"

static void gather_manifest_is_described(void **state)
{
    tmap_manifest *m = NULL;
    TMAP_CHECK(tmap_manifest_load(TMAP_SOURCE_DIR "/tests/manifests/gather_small.json", &m, err));
    assert_int_equal(tmap_manifest_num_references(m), 1);
    tmap_reference_view v;
    assert_int_equal(tmap_manifest_reference(m, 0, &v), TMAP_OK);
    assert_string_equal(v.data, "a");
    assert_string_equal(v.index, "p");
    assert_int_equal(v.per_thread, 2);
    assert_int_equal(v.elem_bytes, 4);
    assert_int_equal(v.nelems, 16384);
    assert_true(v.read && !v.write);
    assert_int_equal(tmap_manifest_reference(m, 1, &v), TMAP_ERR_INVALID);
    uint32_t *ix = NULL;
    size_t n = 0;
    tmap_error e = {0};
    assert_int_equal(tmap_manifest_reference_index(m, 0, &ix, &n, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "not generated"));
    TMAP_CHECK(tmap_manifest_generate(m, 3, err));
    TMAP_CHECK(tmap_manifest_reference_index(m, 0, &ix, &n, err));
    assert_int_equal(n, 8192);
    tmap_array_view p;
    assert_int_equal(tmap_manifest_array(m, (size_t)tmap_manifest_find(m, "p"), &p), TMAP_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ix[i], ((const uint32_t *)p.host)[i]);
    free(ix);
    tmap_manifest_free(m);
}

/* Defaults (per_thread 1, the type's size, read) and a struct element:
 * 16-byte elements of an f32 array of 64 are 16 elements. */
static void defaults_and_struct_elements(void **state)
{
    tmap_manifest *m = NULL;
    tmap_reference_view v;
    TMAP_CHECK(test_load_text(HEAD " \"references\": [{\"data\": \"a\", \"index\": \"p\"},"
                              " {\"data\": \"a\", \"index\": \"p\", \"elem_bytes\": 16,"
                              " \"access\": \"readwrite\"}, {\"data\": \"f\", \"index\": \"p\","
                              " \"per_thread\": 2, \"access\": \"write\"}]}", &m, err));
    assert_int_equal(tmap_manifest_num_references(m), 3);
    assert_int_equal(tmap_manifest_reference(m, 0, &v), TMAP_OK);
    assert_true(v.per_thread == 1 && v.elem_bytes == 4 && v.nelems == 64 && v.read && !v.write);
    assert_int_equal(tmap_manifest_reference(m, 1, &v), TMAP_OK);
    assert_true(v.elem_bytes == 16 && v.nelems == 16 && v.read && v.write);
    assert_int_equal(tmap_manifest_reference(m, 2, &v), TMAP_OK);
    assert_true(v.per_thread == 2 && v.elem_bytes == 8 && v.nelems == 64 && !v.read && v.write);
    tmap_manifest_free(m);
}

static void bad_references_are_named(void **state)
{
    static const struct { const char *refs, *needle; } cases[] = {
        {"{}", "'references': must be an array"},
        {"[1]", "'references[0]': must be an object"},
        {"[{\"data\": \"a\", \"index\": \"p\", \"idx\": 1}]", "'references[0]': unknown key 'idx'"},
        {"[{\"index\": \"p\"}]", "'references[0].data': missing"},
        {"[{\"data\": \"b\", \"index\": \"p\"}]", "'references[0].data': names no array"},
        {"[{\"data\": \"a\", \"index\": 3}]", "'references[0].index': missing, or not"},
        {"[{\"data\": \"a\", \"index\": \"f\"}]", "'references[0].index': f is f64"},
        {"[{\"data\": \"a\", \"index\": \"a\"}]", "must not be the data array"},
        {"[{\"data\": \"a\", \"index\": \"p\", \"per_thread\": 0}]",
         "'references[0].per_thread': must be an integer in [1, 1099511627776]"},
        {"[{\"data\": \"a\", \"index\": \"p\", \"per_thread\": 3}]",
         "p has 64 elements, fewer than per_thread (3) x threads (32)"},
        {"[{\"data\": \"a\", \"index\": \"p\", \"elem_bytes\": 12}]", "12 is not a power of two"},
        {"[{\"data\": \"a\", \"index\": \"p\", \"elem_bytes\": 2}]", "multiple of a's type"},
        {"[{\"data\": \"a\", \"index\": \"p\", \"elem_bytes\": 512}]", "divide its 256 bytes"},
        {"[{\"data\": \"a\", \"index\": \"p\", \"elem_bytes\": 0}]", "'references[0].elem_bytes'"},
        {"[{\"data\": \"a\", \"index\": \"p\"}, {\"data\": \"a\", \"index\": \"p\", \"access\": \"rw\"}]",
         "'references[1].access'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[1024];
        snprintf(json, sizeof json, HEAD " \"references\": %s}", cases[i].refs);
        test_load_fails(json, cases[i].needle);
    }
}

/* An index outside the data, or negative, is found once generated: the
 * message names the manifest, the reference, the element and the value. */
static void index_outside_data(void **state)
{
    static const struct { const char *init, *needle; } cases[] = {
        {"{\"uniform\": [0, 64]}", "p["},
        {"{\"fill\": -1}", "p[0] = -1 is not an element of a (64 elements of 4 bytes)"},
        {"{\"fill\": 64}", "p[0] = 64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"source\": \"a.cu\", \"kernel\": \"k\", \"block\": 32, \"threads\": 4096,"
                 " \"args\": [], \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 64},"
                 " {\"name\": \"p\", \"type\": \"i64\", \"count\": 4096, \"init\": %s}],"
                 " \"references\": [{\"data\": \"a\", \"index\": \"p\"}]}", cases[i].init);
        tmap_manifest *m = NULL;
        TMAP_CHECK(test_load_text(json, &m, err));
        TMAP_CHECK(tmap_manifest_generate(m, 1, err));
        uint32_t *ix = (uint32_t *)1;
        size_t n = 7;
        tmap_error e = {0};
        assert_int_equal(tmap_manifest_reference_index(m, 0, &ix, &n, &e), TMAP_ERR_INVALID);
        assert_null(ix);
        assert_int_equal(n, 0);
        if (!strstr(e.message, "field 'references[0].index'") || !strstr(e.message, cases[i].needle))
            fail_msg("case %zu: '%s'", i, e.message);
        assert_int_equal(tmap_manifest_reference_index(m, 1, &ix, &n, &e), TMAP_ERR_INVALID);
        tmap_manifest_free(m);
    }
}

/* threadmap check finds it without a GPU (p = iota over 256 threads, a of
 * 100 elements: p[100] is the first outside), and checks gather_small clean. */
static void check_finds_it(void **state)
{
    tmap_check *c = malloc(sizeof *c);
    tmap_error e = {0};
    assert_int_equal(tmap_pipeline_check(TMAP_SOURCE_DIR "/tests/manifests/check_bad_index.json", 1,
                                         c, &e), TMAP_ERR_INVALID);
    assert_int_equal(c->nfindings, 1);
    assert_non_null(strstr(e.message, "check_bad_index.json: field 'references[0].index': "
                                      "p[100] = 100 is not an element of a"));
    TMAP_CHECK(tmap_pipeline_check(TMAP_SOURCE_DIR "/tests/manifests/gather_small.json", 1, c, err));
    assert_true(c->compiled && c->generated && c->nfindings == 0);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gather_manifest_is_described),
        cmocka_unit_test(defaults_and_struct_elements),
        cmocka_unit_test(bad_references_are_named),
        cmocka_unit_test(index_outside_data),
        cmocka_unit_test(check_finds_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

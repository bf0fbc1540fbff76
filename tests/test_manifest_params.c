/*
 * test_manifest_params.c -- a manifest's arguments matched to its kernel's
 * .param list (tmap_manifest_ptx): the count, each size, pointers
 * (.ptr, or used by cvta.to.global) against scalars, floats against
 * integers, and errors naming the argument and the parameter.
 */
#include "tests/testutil.h"
#include "tests/testmanifest.h"

/* tmap_manifest_ptx of tests/manifests/params.ptx with these args. */
static tmap_status ptx_with(const char *kernel, const char *args, tmap_error *e)
{
    char json[4096];
    snprintf(json, sizeof json,
             "{\"ptx\": \"%s/tests/manifests/params.ptx\", \"kernel\": \"%s\", \"threads\": 32,"
             " \"block\": 32, \"arrays\": [{\"name\": \"a\", \"type\": \"f32\", \"count\": 32},"
             " {\"name\": \"b\", \"type\": \"i32\", \"count\": 32}], \"args\": [%s]}",
             TMAP_SOURCE_DIR, kernel, args);
    tmap_manifest *m;
    char *ptx = NULL, *entry = NULL;
    tmap_status st = test_load_text(json, &m, e);
    assert_int_equal(st, TMAP_OK);
    st = tmap_manifest_ptx(m, NULL, &ptx, &entry, e);
    assert_true(st ? !ptx && !entry : ptx && entry);
    free(ptx);
    free(entry);
    tmap_manifest_free(m);
    return st;
}

#define GOOD "\"a\", \"b\", {\"u64\": 5}, {\"f32\": 1.5}, {\"u64\": 7}, {\"u8\": 3}, {\"u32\": 9}"

static void matching_arguments_pass(void **state)
{
    tmap_error e = {0};
    if (ptx_with("params", GOOD, &e) != TMAP_OK)
        fail_msg("%s", e.message);
    /* a .b32-sized struct or integer takes either; a u64 scalar for a .u64 not known as a pointer */
    if (ptx_with("params", "\"a\", \"b\", \"a\", {\"f32\": 1}, {\"f64\": 2}, {\"i8\": -1}, {\"i32\": -9}",
                 &e) != TMAP_OK)
        fail_msg("%s", e.message);
}

static void mismatches_name_argument_and_parameter(void **state)
{
    static const struct { const char *args, *field, *why; } bad[] = {
        {"{\"u64\": 0}, \"b\", {\"u64\": 5}, {\"f32\": 1.5}, {\"u64\": 7}, {\"u8\": 3}, {\"u32\": 9}",
         "'args[0]'", "parameter 0 params_param_0 (.u64, 8 bytes) of kernel params: the parameter is a pointer"},
        {"\"a\", {\"u64\": 0}, {\"u64\": 5}, {\"f32\": 1.5}, {\"u64\": 7}, {\"u8\": 3}, {\"u32\": 9}",
         "'args[1]'", "params_param_1 (.u64, 8 bytes) of kernel params: the parameter is a pointer"},
        {"\"a\", \"b\", {\"u64\": 5}, \"a\", {\"u64\": 7}, {\"u8\": 3}, {\"u32\": 9}",
         "'args[3]'", "array a (8 bytes) for parameter 3 params_param_3 (.f32, 4 bytes)"},
        {"\"a\", \"b\", {\"u64\": 5}, {\"i32\": 1}, {\"u64\": 7}, {\"u8\": 3}, {\"u32\": 9}",
         "'args[3]'", "an integer for a float parameter"},
        {"\"a\", \"b\", {\"f64\": 5}, {\"f32\": 1.5}, {\"u64\": 7}, {\"u8\": 3}, {\"u32\": 9}",
         "'args[2]'", "a float for an integer parameter"},
        {"\"a\", \"b\", {\"u64\": 5}, {\"f32\": 1.5}, {\"i32\": 7}, {\"u8\": 3}, {\"u32\": 9}",
         "'args[4]'", "scalar i32 (4 bytes) for parameter 4 params_param_4 (.b8[], 8 bytes) of kernel params: the sizes differ"},
        {"\"a\", \"b\", {\"u64\": 5}, {\"f32\": 1.5}, \"b\", {\"u8\": 3}, {\"u32\": 9}",
         "'args[4]'", "an array is a device pointer"},
        {"\"a\", \"b\", {\"u64\": 5}, {\"f32\": 1.5}, {\"u64\": 7}, {\"u32\": 3}, {\"u32\": 9}",
         "'args[5]'", "the sizes differ"},
        {"\"a\", \"b\", {\"u64\": 5}, {\"f32\": 1.5}, {\"u64\": 7}, {\"u8\": 3}",
         "'args'", "6 arguments for the 7 parameters of kernel params: parameter 6 (.u32 params_param_6) has none"},
        {GOOD ", {\"u32\": 9}", "'args[7]'", "kernel params has 7 parameters, 'args' gives 8"},
        {"", "'args'", "0 arguments for the 7 parameters"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tmap_error e = {0};
        assert_int_equal(ptx_with("params", bad[i].args, &e), TMAP_ERR_INVALID);
        if (!strstr(e.message, bad[i].field) || !strstr(e.message, bad[i].why))
            fail_msg("case %zu: '%s' does not name %s and '%s'", i, e.message, bad[i].field, bad[i].why);
    }
}

static void a_missing_entry_is_named(void **state)
{
    tmap_error e = {0};
    assert_int_equal(ptx_with("nokernel", GOOD, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "field 'kernel': the PTX has no kernel (.entry) named nokernel"));
}

/* Through NVRTC: an i32 for a 64-bit parameter, and a missing argument. */
static void compiled_kernels_are_matched(void **state)
{
    static const struct { const char *args, *needle; } cases[] = {
        {"\"n\", \"out\", {\"i32\": \"threads\"}", NULL},
        {"\"n\", {\"i32\": 0}, {\"i32\": \"threads\"}", "'args[1]'"},
        {"\"n\", \"out\"", "parameter 2 (.u32 loop_per_thread_param_2) has none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"source\": \"%s/tests/kernels/loop_per_thread.cu\", \"kernel\": \"loop_per_thread\","
                 " \"threads\": 64, \"block\": 32, \"arrays\": [{\"name\": \"n\", \"type\": \"i32\","
                 " \"count\": \"threads\"}, {\"name\": \"out\", \"type\": \"i32\", \"count\": \"threads\"}],"
                 " \"args\": [%s]}", TMAP_SOURCE_DIR, cases[i].args);
        tmap_manifest *m;
        tmap_error e = {0};
        char *ptx = NULL, *entry = NULL;
        assert_int_equal(test_load_text(json, &m, &e), TMAP_OK);
        tmap_status st = tmap_manifest_ptx(m, NULL, &ptx, &entry, &e);
        if (!cases[i].needle && st)
            fail_msg("%s", e.message);
        if (cases[i].needle && (!st || !strstr(e.message, cases[i].needle)))
            fail_msg("case %zu: '%s' does not mention %s", i, e.message, cases[i].needle);
        free(ptx);
        free(entry);
        tmap_manifest_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matching_arguments_pass),
        cmocka_unit_test(mismatches_name_argument_and_parameter),
        cmocka_unit_test(a_missing_entry_is_named),
        cmocka_unit_test(compiled_kernels_are_matched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_ptx.c -- the PTX parser, printer and counter pass on the fixtures in
 * tests/ptx/: print/reparse fixed point, ptxas acceptance of the printed and
 * instrumented PTX, and exact error lines on malformed input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base.h"
#include "instrument/bbv.h"
#include "threadmap.h"

static const char *const fixtures[] = {"features.ptx", "divergent.ptx",
                                       "divergent_lineinfo.ptx", "divergent_debug.ptx",
                                       "templ.ptx"};
#define NFIXTURES (sizeof fixtures / sizeof fixtures[0])

static char *read_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/ptx/%s", TMAP_SOURCE_DIR, name);
    char *data = NULL;
    tmap_error err;
    tmap_status st = tmap_file_read(path, &data, len, &err);
    if (st != TMAP_OK)
        fail_msg("%s", err.message);
    return data;
}

static tmap_ptx_module *parse_ok(const char *text, size_t len, const char *name)
{
    tmap_ptx_module *m = NULL;
    tmap_error err;
    tmap_status st = tmap_ptx_parse(text, len, name, &m, &err);
    if (st != TMAP_OK)
        fail_msg("%s", err.message);
    return m;
}

static char *print_ok(const tmap_ptx_module *m)
{
    char *text = NULL;
    tmap_error err;
    if (tmap_ptx_print(m, &text, &err) != TMAP_OK)
        fail_msg("%s", err.message);
    return text;
}

/* 1: ptxas accepted, 0: rejected (output printed), -1: no ptxas. */
static int ptxas_accepts(const char *text)
{
    if (access(TMAP_PTXAS_DEFAULT, X_OK) != 0)
        return -1;
    char path[] = "/tmp/tmap_test_ptx_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 '%s' -o /dev/null 2>&1", TMAP_PTXAS_DEFAULT,
             path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[512];
    while (fgets(line, sizeof line, p))
        fprintf(stderr, "ptxas: %s", line);
    int rc = pclose(p);
    unlink(path);
    return rc == 0;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* ------------------------------------------------------------ round trip */

static void test_fixed_point(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFIXTURES; i++) {
        size_t len;
        char *src = read_fixture(fixtures[i], &len);
        tmap_ptx_module *m = parse_ok(src, len, fixtures[i]);
        char *a = print_ok(m);
        tmap_ptx_module *m2 = parse_ok(a, strlen(a), "printed");
        char *b = print_ok(m2);
        assert_string_equal(a, b);
        assert_int_equal(tmap_ptx_num_kernels(m), tmap_ptx_num_kernels(m2));
        free(a);
        free(b);
        free(src);
        tmap_ptx_free(m);
        tmap_ptx_free(m2);
    }
}

static void test_ptxas_accepts_printed(void **state)
{
    (void)state;
    if (access(TMAP_PTXAS_DEFAULT, X_OK) != 0) {
        print_message("[  SKIPPED ] no ptxas at %s\n", TMAP_PTXAS_DEFAULT);
        skip();
    }
    for (size_t i = 0; i < NFIXTURES; i++) {
        size_t len;
        char *src = read_fixture(fixtures[i], &len);
        tmap_ptx_module *m = parse_ok(src, len, fixtures[i]);
        char *a = print_ok(m);
        if (ptxas_accepts(a) != 1)
            fail_msg("ptxas rejects the printed %s", fixtures[i]);
        free(a);
        free(src);
        tmap_ptx_free(m);
    }
}

static void test_module_facts(void **state)
{
    (void)state;
    size_t len;
    char *src = read_fixture("divergent.ptx", &len);
    tmap_ptx_module *m = parse_ok(src, len, "divergent.ptx");
    assert_int_equal(tmap_ptx_num_kernels(m), 2);
    assert_string_equal(tmap_ptx_kernel_name(m, 0), "divergent");
    assert_string_equal(tmap_ptx_kernel_name(m, 1), "loops");
    assert_null(tmap_ptx_kernel_name(m, 2));
    int major, minor;
    tmap_ptx_version(m, &major, &minor);
    assert_int_equal(major, 9);
    assert_int_equal(minor, 0);
    tmap_ptx_set_version(m, 8, 5);
    char *a = print_ok(m);
    assert_non_null(strstr(a, "\n.version 8.5\n"));
    assert_null(strstr(a, ".version 9.0"));
    assert_int_equal(count(a, "$L__BB1_15:"), 1);
    free(a);
    free(src);
    tmap_ptx_free(m);

    src = read_fixture("templ.ptx", &len);
    m = parse_ok(src, len, "templ.ptx");
    assert_int_equal(tmap_ptx_num_kernels(m), 3);
    assert_string_equal(tmap_ptx_kernel_name(m, 0), "_Z5scaleIfEvPT_S0_i");
    assert_string_equal(tmap_ptx_kernel_name(m, 2), "usetab");
    free(src);
    tmap_ptx_free(m);
}

static void test_keeps_debug_info(void **state)
{
    (void)state;
    size_t len;
    char *src = read_fixture("divergent_debug.ptx", &len);
    tmap_ptx_module *m = parse_ok(src, len, "divergent_debug.ptx");
    char *a = print_ok(m);
    assert_int_equal(count(a, ".section"), count(src, ".section"));
    assert_int_equal(count(a, ".loc"), count(src, ".loc"));
    assert_int_equal(count(a, ".file"), count(src, ".file"));
    free(a);
    free(src);
    tmap_ptx_free(m);
}

/* ------------------------------------------------------------- counters */

static void test_instrument_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFIXTURES; i++) {
        size_t len;
        char *src = read_fixture(fixtures[i], &len);
        tmap_ptx_module *m = parse_ok(src, len, fixtures[i]);
        size_t total = 0, nk = tmap_ptx_num_kernels(m);
        for (size_t k = 0; k < nk; k++) {
            tmap_cfg *cfg = NULL, *before = NULL;
            tmap_error err;
            const char *name = tmap_ptx_kernel_name(m, k);
            assert_int_equal(tmap_cfg_build(m, name, &before, &err), TMAP_OK);
            if (tmap_bbv_instrument(m, name, &cfg, &err) != TMAP_OK)
                fail_msg("%s: %s", fixtures[i], err.message);
            assert_int_equal(cfg->nblocks, before->nblocks);
            total += cfg->nblocks;
            tmap_cfg_free(cfg);
            tmap_cfg_free(before);
        }
        char *a = print_ok(m);
        /* each block counts once: in a register, or with a direct red */
        assert_int_equal(count(a, "\tadd.u32 %tmap_n") +
                             count(a, "@%tmap_on red.global.add.u32 [%tmap_a], 1;"),
                         total);
        assert_int_equal(count(a, ".visible .global .align 8 .u64 __tmap_bbv_base;"), 1);
        assert_int_equal(count(a, ".visible .global .align 4 .u32 __tmap_bbv_sample = 1;"), 1);
        /* the instrumented text reparses to a fixed point with the same CFG */
        tmap_ptx_module *m2 = parse_ok(a, strlen(a), "instrumented");
        char *b = print_ok(m2);
        assert_string_equal(a, b);
        for (size_t k = 0; k < nk; k++) {
            tmap_error err;
            tmap_bbv_check_stats cs;
            if (tmap_bbv_check(m2, tmap_ptx_kernel_name(m2, k), &cs, &err) != TMAP_OK)
                fail_msg("%s: %s", fixtures[i], err.message);
        }
        if (ptxas_accepts(a) == 0)
            fail_msg("ptxas rejects the instrumented %s", fixtures[i]);
        free(a);
        free(b);
        free(src);
        tmap_ptx_free(m);
        tmap_ptx_free(m2);
    }
}

static void test_instrument_twice_fails(void **state)
{
    (void)state;
    size_t len;
    char *src = read_fixture("features.ptx", &len);
    tmap_ptx_module *m = parse_ok(src, len, "features.ptx");
    tmap_error err;
    assert_int_equal(tmap_bbv_instrument(m, "features", NULL, &err), TMAP_OK);
    assert_int_equal(tmap_bbv_instrument(m, "features", NULL, &err), TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "already instrumented"));
    /* and after a print/reparse too */
    char *a = print_ok(m);
    tmap_ptx_module *m2 = parse_ok(a, strlen(a), "instrumented");
    assert_int_equal(tmap_bbv_instrument(m2, "features", NULL, &err), TMAP_ERR_UNSUPPORTED);
    assert_int_equal(tmap_bbv_instrument(m2, "nosuch", NULL, &err), TMAP_ERR_INVALID);
    free(a);
    free(src);
    tmap_ptx_free(m);
    tmap_ptx_free(m2);
}

/* --------------------------------------------------------------- errors */

typedef struct bad_case {
    const char *text;
    const char *message; /* expected prefix of err.message */
} bad_case;

static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n"; /* 3 lines */

static const bad_case bad_cases[] = {
    /* empty input */
    {"", "bad.ptx:1: empty PTX"},
    {"  // nothing\n\n", "bad.ptx:3: empty PTX"},
    /* truncated file */
    {"%s.visible .entry k()\n{\n\tret;\n", "bad.ptx:4: unterminated '{' of function k"},
    {"%s.visible .entry k(\n.param .u32 a", "bad.ptx:5: expected ',' or ')'"},
    {"%s.global .u32 x", "bad.ptx:4: the declaration is not terminated by ';'"},
    {"%s.entry k()\n{\n\tmov.u32 %%r1,", "bad.ptx:6: expected an operand"},
    /* unknown token */
    {"%s.entry k()\n{\n\tmov.u32 %%r1, #3;\n}\n", "bad.ptx:6: unexpected character '#'"},
    {"%s.entry k()\n{\n\t.bogus 1;\n}\n", "bad.ptx:6: expected a statement"},
    {"%s.frobnicate\n", "bad.ptx:4: expected a module directive"},
    {"%s.entry k()\n{\n\tmov.u32 %%r1, 0x;\n}\n", "bad.ptx:6: malformed number '0x'"},
    /* missing ';' */
    {"%s.entry k()\n{\n\tmov.u32 %%r1, 1\n\tret;\n}\n", "bad.ptx:6: missing ';' after 'mov.u32'"},
    {"%s.entry k()\n{\n\t.reg .b32 %%r<2>\n}\n", "bad.ptx:6: missing ';' at the end of .reg (found '}' on line 7)"},
    /* unterminated '{' */
    {"%s.entry k()\n{\n\t{\n\tret;\n}\n", "bad.ptx:4: unterminated '{' of function k"},
    {"%s.entry k()\n{\n\tld.global.v2.u32 {%%r1, %%r2, [%%rd1];\n}\n",
     "bad.ptx:6: expected ',' or '}' in a list opened on line 6"},
    /* garbage bytes */
    {"%s\x01\x02\x03", "bad.ptx:4: unexpected byte 0x01"},
    {"%s.entry k()\n{\n\tret;\xff\n}\n", "bad.ptx:6: unexpected byte 0xff"},
    /* other malformed shapes */
    {".version x\n", "bad.ptx:1: expected a version number"},
    {"%s.entry k()\n{\n\tbra $L__nowhere;\n}\n", NULL}, /* parses; the CFG fails */
    {"%s.entry k()\n{\n\tmov.u32 %%r1, \"abc;\n}\n", "bad.ptx:6: unterminated string"},
    {"%s/* open comment\n", "bad.ptx:4: unterminated /* comment"},
    {"%s.entry k()\n{\n\t@ 3 bra L;\n}\n", "bad.ptx:6: expected a predicate register"},
};

static void test_parse_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, bad_cases[i].text, head);
        tmap_ptx_module *m = NULL;
        tmap_error err = {0};
        tmap_status st = tmap_ptx_parse(text, strlen(text), "bad.ptx", &m, &err);
        if (!bad_cases[i].message) {
            assert_int_equal(st, TMAP_OK);
            tmap_cfg *cfg = NULL;
            assert_int_equal(tmap_cfg_build(m, "k", &cfg, &err), TMAP_ERR_PARSE);
            assert_string_equal(err.message, "bad.ptx:6: label '$L__nowhere' is not defined in k");
            assert_null(cfg);
            tmap_ptx_free(m);
            continue;
        }
        if (st != TMAP_ERR_PARSE)
            fail_msg("case %zu: status %d, expected a parse error", i, st);
        assert_null(m);
        if (strncmp(err.message, bad_cases[i].message, strlen(bad_cases[i].message)))
            fail_msg("case %zu: message '%s', expected '%s...'", i, err.message,
                     bad_cases[i].message);
    }
}

/* PTX that is no file is named by a description in angle brackets, which
 * the messages carry in place of a file name; one cut short keeps its '>'. */
static void test_described_names(void **state)
{
    (void)state;
    char name[64], text[1024];
    assert_string_equal(tmap_ptx_describe(name, sizeof name, "PTX of %s from the module image",
                                          "k"),
                        "<PTX of k from the module image>");
    assert_string_equal(tmap_ptx_describe(name, 10, "PTX of %s from the module image", "k"),
                        "<PTX of >");
    assert_string_equal(tmap_ptx_describe(name, 3, "PTX"), "<>");
    assert_string_equal(tmap_ptx_describe(name, 2, "PTX"), "");
    snprintf(text, sizeof text, "%s.entry k()\n{\n\tmov.u32 %%r1, #3;\n}\n", head);
    const char *const names[] = {"<PTX of k from the module image>", NULL};
    const char *const want[] = {"<PTX of k from the module image>:6: unexpected character '#'",
                                "<PTX>:6: unexpected character '#'"};
    for (size_t i = 0; i < 2; i++) {
        tmap_ptx_module *m = NULL;
        tmap_error err = {0};
        assert_int_equal(tmap_ptx_parse(text, strlen(text), names[i], &m, &err), TMAP_ERR_PARSE);
        assert_string_equal(err.message, want[i]);
        assert_null(m);
    }
}

/* Every prefix of a real module either parses or fails cleanly. */
static void test_truncations(void **state)
{
    (void)state;
    size_t len;
    char *src = read_fixture("features.ptx", &len);
    size_t ok = 0;
    for (size_t n = 0; n < len; n += 7) {
        tmap_ptx_module *m = NULL;
        tmap_error err;
        tmap_status st = tmap_ptx_parse(src, n, "cut.ptx", &m, &err);
        assert_true(st == TMAP_OK || st == TMAP_ERR_PARSE);
        ok += st == TMAP_OK;
        tmap_ptx_free(m);
    }
    assert_true(ok < len / 7);
    free(src);
}

/* Braces nested 3000 deep print in a size linear in the input: the
 * indentation stops at 8 tabs (issue 14 item 10: it grew with depth^2). */
static void test_deep_braces(void **state)
{
    (void)state;
    enum { DEPTH = 3000 };
    tmap_buf src = {0};
    tmap_buf_puts(&src, ".version 8.0\n.target sm_90\n.address_size 64\n"
                        ".visible .entry k()\n{\n");
    for (int i = 0; i < DEPTH; i++)
        tmap_buf_puts(&src, "{\n");
    tmap_buf_puts(&src, "ret;\n");
    for (int i = 0; i < DEPTH; i++)
        tmap_buf_puts(&src, "}\n");
    tmap_buf_puts(&src, "}\n");
    assert_false(src.oom);
    tmap_ptx_module *m = parse_ok(src.data, src.len, "deep.ptx");
    char *a = print_ok(m);
    assert_true(strlen(a) < 5 * src.len + 1000);
    assert_non_null(strstr(a, "\n\t\t\t\t\t\t\t\tret;\n"));
    assert_null(strstr(a, "\t\t\t\t\t\t\t\t\t"));
    free(a);
    tmap_ptx_free(m);
    tmap_buf_free(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_point),
        cmocka_unit_test(test_ptxas_accepts_printed),
        cmocka_unit_test(test_module_facts),
        cmocka_unit_test(test_keeps_debug_info),
        cmocka_unit_test(test_instrument_fixtures),
        cmocka_unit_test(test_instrument_twice_fails),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_described_names),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_deep_braces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

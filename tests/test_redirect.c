/*
 * test_redirect.c -- the redirection rewrite on every kernel of the corpus
 * (tests/kernels/\*.cu, NVRTC) and of tests/kernels/analytic.ptx: ptxas
 * accepts the result, no %tid/%ctaid read is left outside the preamble,
 * redirect-then-instrument is accepted too, and refusals name the line.
 */

#include "tests/testutil.h"



/* Every line reading %tid.* / %ctaid.* is a preamble line
 * `mov.u32 %tmap_rrN, %...`; returns how many there are. */
static int id_reads_only_in_preamble(const char *ptx, const char *what)
{
    int n = 0;
    for (const char *p = ptx; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), p);
        if (strstr(line, "%tid") || strstr(line, "%ctaid")) {
            if (!strstr(line, "mov.u32 %tmap_rr"))
                fail_msg("%s: an id read outside the preamble: %s", what, line);
            n++;
        }
        p += len + (nl != NULL);
    }
    return n;
}

static void check_module_text(const char *ptx, const char *file, const char *kernel)
{
    char what[1024];
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), file, &m, err));
    TMAP_CHECK(tmap_redirect_instrument(m, kernel, err));
    char *red = NULL;
    TMAP_CHECK(tmap_ptx_print(m, &red, err));
    snprintf(what, sizeof what, "redirected %s of %s", kernel, file);
    test_expect_ptxas_ok(red, what);
    assert_non_null(strstr(red, ".visible .global .align 8 .u64 " TMAP_REDIRECT_SYMBOL ";"));
    /* each preamble reads the six ids once; other kernels keep theirs */
    if (tmap_ptx_num_kernels(m) == 1 && strstr(ptx, "%tid"))
        assert_int_equal(id_reads_only_in_preamble(red, what) % 6, 0);
    /* redirect first, then count: both passes in one module */
    tmap_ptx_module *both = NULL;
    tmap_cfg *cfg = NULL;
    char *both_text = NULL;
    TMAP_CHECK(tmap_ptx_parse(red, strlen(red), file, &both, err));
    TMAP_CHECK(tmap_bbv_instrument(both, kernel, &cfg, err));
    TMAP_CHECK(tmap_ptx_print(both, &both_text, err));
    snprintf(what, sizeof what, "redirected and instrumented %s of %s", kernel, file);
    test_expect_ptxas_ok(both_text, what);
    /* and in memory, without the text round trip */
    TMAP_CHECK(tmap_bbv_instrument(m, kernel, NULL, err));
    free(both_text);
    TMAP_CHECK(tmap_ptx_print(m, &both_text, err));
    test_expect_ptxas_ok(both_text, what);
    free(both_text);
    tmap_cfg_free(cfg);
    tmap_ptx_free(both);
    free(red);
    tmap_ptx_free(m);
}

static void skip_without_ptxas(void)
{
    if (!test_have_ptxas()) {
        print_message("[  SKIPPED ] no ptxas at %s\n", TMAP_PTXAS_DEFAULT);
        skip();
    }
}

static void corpus_redirects(void **state)
{
    skip_without_ptxas();
    char **names;
    size_t n = test_corpus(&names), kernels = 0;
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++) {
        char rel[512];
        snprintf(rel, sizeof rel, "tests/kernels/%s", names[i]);
        char *src = test_read(rel);
        tmap_compile_opts o = {0};
        tmap_compiled c;
        TMAP_CHECK(tmap_compile(src, rel, &o, &c, err));
        tmap_ptx_module *m = NULL;
        TMAP_CHECK(tmap_ptx_parse(c.ptx, strlen(c.ptx), rel, &m, err));
        for (size_t k = 0; k < tmap_ptx_num_kernels(m); k++, kernels++)
            check_module_text(c.ptx, rel, tmap_ptx_kernel_name(m, k));
        tmap_ptx_free(m);
        tmap_compiled_free(&c);
        free(src);
        free(names[i]);
    }
    free(names);
    print_message("redirect: %zu kernels of the corpus passed\n", kernels);
}

static void analytic_redirects(void **state)
{
    skip_without_ptxas();
    char *ptx = test_read("tests/kernels/analytic.ptx");
    static const char *const kernels[] = {"loop_kernel", "branchy", "grid3d"};
    for (size_t i = 0; i < 3; i++)
        check_module_text(ptx, "analytic.ptx", kernels[i]);
    /* all three in one module: one __tmap_perm, three preambles */
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "analytic.ptx", &m, err));
    for (size_t i = 0; i < 3; i++)
        TMAP_CHECK(tmap_redirect_instrument(m, kernels[i], err));
    char *red = NULL;
    TMAP_CHECK(tmap_ptx_print(m, &red, err));
    test_expect_ptxas_ok(red, "analytic.ptx with three redirected kernels");
    const char *first = strstr(red, TMAP_REDIRECT_SYMBOL ";");
    assert_non_null(first);
    assert_null(strstr(first + 1, "u64 " TMAP_REDIRECT_SYMBOL));
    assert_int_equal(id_reads_only_in_preamble(red, "analytic.ptx"), 18);
    free(red);
    tmap_ptx_free(m);
    free(ptx);
}

static const char k16_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k16(.param .u64 out)\n{\n"
    "\t.reg .b16 %rs<2>;\n\t.reg .b64 %rd<3>;\n"
    "\tmov.u16 %rs1, %tid.x;\n"
    "\tld.param.u64 %rd1, [out];\n\tst.global.u16 [%rd1], %rs1;\n\tret;\n}\n";

/* k16 with a source line (.loc) on its 16-bit read, at PTX line 9. */
static const char k16_loc_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k16(.param .u64 out)\n{\n"
    "\t.reg .b16 %rs<2>;\n\t.reg .b64 %rd<3>;\n"
    "\t.loc 1 7 0\n"
    "\tmov.u16 %rs1, %tid.x;\n"
    "\tld.param.u64 %rd1, [out];\n\tst.global.u16 [%rd1], %rs1;\n\tret;\n}\n"
    "\t.file\t1 \"/src/k16.cu\"\n";

/* PTX that is no file: the refusal names its description (never a made-up
 * file), its PTX line and its source line. */
static void refusal_names_the_description(void **state)
{
    (void)state;
    tmap_ptx_module *m = NULL;
    tmap_error e = {0};
    char name[128];
    tmap_ptx_describe(name, sizeof name, "PTX of %s from the application's module image", "k16");
    TMAP_CHECK(tmap_ptx_parse(k16_loc_ptx, strlen(k16_loc_ptx), name, &m, err));
    assert_int_equal(tmap_redirect_instrument(m, "k16", &e), TMAP_ERR_UNSUPPORTED);
    const char *want = "<PTX of k16 from the application's module image>:9 (k16.cu:7): "
                       "'mov.u16' reads a thread or block id";
    if (strncmp(e.message, want, strlen(want)))
        fail_msg("%s", e.message);
    tmap_ptx_free(m);
}

/* Refusals: the legacy 16-bit read names its line; twice, and counters
 * before redirection, are refused; the module is unchanged after each. */
static void refusals(void **state)
{
    tmap_ptx_module *m = NULL;
    tmap_error e = {0};
    TMAP_CHECK(tmap_ptx_parse(k16_ptx, strlen(k16_ptx), "k16.ptx", &m, err));
    assert_int_equal(tmap_redirect_instrument(m, "k16", &e), TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "k16.ptx:8:"));
    assert_non_null(strstr(e.message, "mov.u16"));
    tmap_ptx_free(m);

    char *ptx = test_read("tests/kernels/analytic.ptx");
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), "analytic.ptx", &m, err));
    TMAP_CHECK(tmap_redirect_instrument(m, "loop_kernel", err));
    assert_int_equal(tmap_redirect_instrument(m, "loop_kernel", &e), TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "already redirected"));
    TMAP_CHECK(tmap_bbv_instrument(m, "branchy", NULL, err));
    assert_int_equal(tmap_redirect_instrument(m, "branchy", &e), TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "redirect first"));
    assert_int_equal(tmap_redirect_instrument(m, "nosuch", &e), TMAP_ERR_INVALID);
    tmap_ptx_free(m);
    free(ptx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus_redirects),
        cmocka_unit_test(refusal_names_the_description),
        cmocka_unit_test(analytic_redirects),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_func_clone.c -- a .func shared by two kernels (tests/kernels/
 * safety_shared_func.cu, nvcc -O3 and -G PTX in tests/ptx/safety): the
 * counter pass instruments every kernel of the module, the redirection of
 * one kernel leaves the other's calls on the unchanged .func, both outputs
 * pass ptxas and the counter checker, and so does `threadmap instrument` on
 * the whole module; a kernel that calls through a
 * function pointer and shares a .func is refused with advice, unchanged.
 */
#include "tests/testutil.h"

#include "instrument/bbv.h"

static const char *const builds[] = {"tests/ptx/safety/safety_shared_func.ptx",
                                     "tests/ptx/safety/safety_shared_func_G.ptx"};

static tmap_ptx_module *load(const char *rel)
{
    char *ptx = test_read(rel);
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), rel, &m, err));
    free(ptx);
    return m;
}

static char *print(const tmap_ptx_module *m)
{
    char *text = NULL;
    TMAP_CHECK(tmap_ptx_print(m, &text, err));
    return text;
}

static void skip_without_ptxas(void)
{
    if (!test_have_ptxas()) {
        print_message("[  SKIPPED ] no ptxas at %s\n", TMAP_PTXAS_DEFAULT);
        skip();
    }
}

static void counters_for_every_kernel(void **state)
{
    skip_without_ptxas();
    static const char *const kernels[] = {"shared_k1", "shared_k2"};
    for (size_t b = 0; b < 2; b++) {
        tmap_ptx_module *m = load(builds[b]);
        for (size_t k = 0; k < 2; k++) {
            tmap_cfg *cfg = NULL;
            TMAP_CHECK(tmap_bbv_instrument(m, kernels[k], &cfg, err));
            assert_int_equal(cfg->nfuncs, 2); /* named as in the module given */
            assert_string_equal(cfg->funcs[1].name, "_Z11shared_loadPKi");
            tmap_cfg_free(cfg);
        }
        char *text = print(m);
        test_expect_ptxas_ok(text, builds[b]);
        tmap_ptx_module *back = NULL;
        TMAP_CHECK(tmap_ptx_parse(text, strlen(text), builds[b], &back, err));
        for (size_t k = 0; k < 2; k++) {
            tmap_bbv_check_stats cs;
            TMAP_CHECK(tmap_bbv_check(back, kernels[k], &cs, err));
            assert_int_equal(cs.funcs, 2);
        }
        tmap_ptx_free(back);
        free(text);
        tmap_ptx_free(m);
    }
}

/* Whether the definition of .func `callee` in text is redirected. */
static void expect_callee_redirected(const char *text, const char *callee, int redirected)
{
    char head[256];
    snprintf(head, sizeof head, ") %s(", callee);
    const char *def = strstr(text, head), *close = NULL;
    for (; def; def = strstr(def + 1, head)) /* skip the declaration */
        if ((close = strchr(def + strlen(head), ')')) && !strncmp(close + 1, "\n{", 2))
            break;
    assert_non_null(def);
    const char *end = strstr(close, "\n}"), *rr = strstr(close, "%tmap_rr_id");
    assert_int_equal(rr != NULL && rr < end, redirected);
}

/* GCC 12 flags the strstr results below as dangling after the free() that
 * follows them (a false positive of -Wdangling-pointer with cmocka's
 * assertions): nothing reads them after it. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif

/* One build: k1 redirected alone, then k2 too. */
static void redirect_one_then_the_other(const char *build)
{
    tmap_ptx_module *m = load(build);
    TMAP_CHECK(tmap_redirect_instrument(m, "shared_k1", err));
    char *text = print(m);
    test_expect_ptxas_ok(text, build);
    /* k1 calls its own redirected copy; k2 still calls the .func as written */
    assert_non_null(strstr(text, "_Z11shared_loadPKi_tmap_shared_k1,"));
    expect_callee_redirected(text, "_Z11shared_loadPKi_tmap_shared_k1", 1);
    assert_non_null(strstr(text, ".entry shared_k2"));
    size_t k2 = (size_t)(strstr(text, ".entry shared_k2") - text);
    assert_non_null(strstr(text + k2, "_Z11shared_loadPKi,"));
    expect_callee_redirected(text, "_Z11shared_loadPKi", 0);
    free(text);
    TMAP_CHECK(tmap_redirect_instrument(m, "shared_k2", err));
    char *both = print(m);
    test_expect_ptxas_ok(both, build);
    free(both);
    tmap_ptx_free(m);
}

static void redirect_one_kernel_leaves_the_other(void **state)
{
    skip_without_ptxas();
    for (size_t b = 0; b < 2; b++)
        redirect_one_then_the_other(builds[b]);
}

/* `threadmap instrument` on the whole module: every kernel, exit 0. */
static void cli_instruments_the_whole_module(void **state)
{
    skip_without_ptxas();
    for (size_t b = 0; b < 2; b++) {
        char cmd[2048], out[512];
        snprintf(out, sizeof out, "%s/func_clone_%zu.ptx", TMAP_BINARY_DIR, b);
        snprintf(cmd, sizeof cmd, "'%s/threadmap' instrument '%s/%s' -o '%s' > /dev/null",
                 TMAP_BINARY_DIR, TMAP_SOURCE_DIR, builds[b], out);
        assert_int_equal(system(cmd), 0);
        FILE *f = fopen(out, "rb");
        assert_non_null(f);
        char *text = calloc(1, 1 << 20);
        size_t len = fread(text, 1, (1 << 20) - 1, f);
        fclose(f);
        assert_true(len > 0);
        assert_non_null(strstr(text, "_Z11shared_loadPKi_tmap_shared_k1"));
        test_expect_ptxas_ok(text, out);
        free(text);
        remove(out);
    }
}

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

/* k1 calls f directly and through a pointer; k2 calls f. */
static const char pointer_ptx[] =
    HEAD ".visible .func (.param .b32 r) f()\n{\n\t.reg .b32 %r<2>;\n"
    "\tmov.u32 %r1, %tid.x;\n\tst.param.b32 [r+0], %r1;\n\tret;\n}\n"
    ".visible .entry k1()\n{\n\t.reg .b64 %rd<2>;\n"
    "\t{\n\t.param .b32 rv;\n\tcall.uni (rv), f, ();\n\t}\n"
    "\tmov.u64 %rd1, f;\n"
    "\t{\n\t.param .b32 rv;\n\tproto: .callprototype (.param .b32 _) _ ();\n"
    "\tcall (rv), %rd1, (), proto;\n\t}\n\tret;\n}\n"
    ".visible .entry k2()\n{\n\t{\n\t.param .b32 rv;\n\tcall.uni (rv), f, ();\n\t}\n\tret;\n}\n";

static void function_pointer_is_refused_unchanged(void **state)
{
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(pointer_ptx, strlen(pointer_ptx), "p.ptx", &m, err));
    char *before = print(m);
    tmap_error e = {0};
    assert_int_equal(tmap_redirect_instrument(m, "k1", &e), TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "function pointer"));
    assert_non_null(strstr(e.message, "module of its own"));
    assert_int_equal(tmap_bbv_instrument(m, "k1", NULL, &e), TMAP_ERR_UNSUPPORTED);
    char *after = print(m);
    assert_string_equal(before, after);
    free(before);
    free(after);
    tmap_ptx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counters_for_every_kernel),
        cmocka_unit_test(redirect_one_kernel_leaves_the_other),
        cmocka_unit_test(cli_instruments_the_whole_module),
        cmocka_unit_test(function_pointer_is_refused_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

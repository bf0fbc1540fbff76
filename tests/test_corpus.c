/*
 * test_corpus.c -- every kernel of the .cu files in tests/kernels, compiled by NVRTC at
 * test time with default options, -lineinfo and -G: its PTX parses, prints
 * back to PTX that ptxas accepts, reparses to the same text, and every
 * kernel instruments into PTX that ptxas accepts and that passes the
 * counter checker (tmap_bbv_check: each block counts once, every register
 * counter is flushed exactly once before every exit).
 */

#include "tests/testutil.h"

#include "instrument/bbv.h"

static const char *variants[][2] = {{NULL, "default"}, {"-lineinfo", "-lineinfo"}, {"-G", "-G"}};



static void check_kernel_file(const char *file, const char *option, const char *vname,
                              size_t *checked, size_t *flushes)
{
    char rel[512], what[1024];
    snprintf(rel, sizeof rel, "tests/kernels/%s", file);
    char *src = test_read(rel);
    tmap_compile_opts o = {.options = option ? &option : NULL, .noptions = option ? 1 : 0};
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, rel, &o, &c, err));
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(c.ptx, strlen(c.ptx), rel, &m, err));
    char *printed = NULL;
    TMAP_CHECK(tmap_ptx_print(m, &printed, err));
    snprintf(what, sizeof what, "the printed PTX of %s (%s)", file, vname);
    test_expect_ptxas_ok(printed, what);
    tmap_ptx_module *again = NULL;
    char *printed2 = NULL;
    TMAP_CHECK(tmap_ptx_parse(printed, strlen(printed), rel, &again, err));
    TMAP_CHECK(tmap_ptx_print(again, &printed2, err));
    assert_string_equal(printed, printed2);
    size_t nk = tmap_ptx_num_kernels(m);
    assert_true(nk >= 1);
    for (size_t i = 0; i < nk; i++) {
        const char *k = tmap_ptx_kernel_name(m, i);
        tmap_ptx_module *w = NULL;
        tmap_cfg *cfg = NULL;
        char *inst = NULL;
        TMAP_CHECK(tmap_ptx_parse(c.ptx, strlen(c.ptx), rel, &w, err));
        TMAP_CHECK(tmap_bbv_instrument(w, k, &cfg, err));
        assert_true(cfg->nblocks >= 1);
        assert_true(cfg->funcs[0].is_entry);
        TMAP_CHECK(tmap_ptx_print(w, &inst, err));
        snprintf(what, sizeof what, "the instrumented PTX of %s in %s (%s)", k, file, vname);
        test_expect_ptxas_ok(inst, what);
        tmap_ptx_module *back = NULL;
        tmap_bbv_check_stats cs;
        TMAP_CHECK(tmap_ptx_parse(inst, strlen(inst), rel, &back, err));
        tmap_error ce = {0};
        if (tmap_bbv_check(back, k, &cs, &ce) != TMAP_OK)
            fail_msg("%s: %s", what, ce.message);
        assert_int_equal(cs.reg_blocks + cs.direct_blocks, cfg->nblocks);
        assert_int_equal(cs.funcs, cfg->nfuncs);
        *checked += 1;
        *flushes += cs.flushes;
        tmap_ptx_free(back);
        free(inst);
        tmap_cfg_free(cfg);
        tmap_ptx_free(w);
    }
    free(printed);
    free(printed2);
    tmap_ptx_free(again);
    tmap_ptx_free(m);
    tmap_compiled_free(&c);
    free(src);
}

static void corpus_round_trips_and_instruments(void **state)
{
    if (!test_have_ptxas()) {
        print_message("[  SKIPPED ] no ptxas at %s\n", TMAP_PTXAS_DEFAULT);
        skip();
    }
    char **names;
    size_t n = test_corpus(&names);
    assert_true(n >= 20);
    size_t checked = 0, flushes = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
            check_kernel_file(names[i], variants[v][0], variants[v][1], &checked, &flushes);
        free(names[i]);
    }
    free(names);
    print_message("corpus: %zu kernel files x %zu option sets passed; %zu instrumented kernels "
                  "checked, %zu flushes\n",
                  n, sizeof variants / sizeof variants[0], checked, flushes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus_round_trips_and_instruments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_bbv_pass.c -- the register counters of the counter pass on small
 * hand-written PTX: the exact number of increments, direct counters and
 * flushes, the flush before guarded rets and exits, the register budget,
 * the rule that only loop blocks hold registers, and the static checker
 * (which must also reject broken output).  ptxas, when present, accepts every instrumented text.
 */
#include "tests/testutil.h"

#include "instrument/bbv.h"

static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n";

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Instrumented text of `body` (appended to head) for `kernel`, with a
 * budget; the checker must pass on its reparse and ptxas accept it. */
static char *instrument(const char *body, const char *kernel, uint32_t budget,
                        tmap_bbv_check_stats *stats, size_t *nblocks)
{
    tmap_buf src = {0};
    tmap_buf_puts(&src, head);
    tmap_buf_puts(&src, body);
    tmap_ptx_module *m = NULL, *again = NULL;
    tmap_cfg *cfg = NULL;
    char *text = NULL;
    TMAP_CHECK(tmap_ptx_parse(src.data, src.len, "t.ptx", &m, err));
    TMAP_CHECK(tmap_bbv_instrument_budget(m, kernel, budget, &cfg, err));
    TMAP_CHECK(tmap_ptx_print(m, &text, err));
    TMAP_CHECK(tmap_ptx_parse(text, strlen(text), "inst.ptx", &again, err));
    TMAP_CHECK(tmap_bbv_check(again, kernel, stats, err));
    assert_int_equal(stats->reg_blocks + stats->direct_blocks, cfg->nblocks);
    if (nblocks)
        *nblocks = cfg->nblocks;
    char log[8192];
    if (test_have_ptxas() && test_ptxas(text, "sm_90", log, sizeof log) != 0)
        fail_msg("ptxas rejects:\n%s\n%s", log, text);
    tmap_cfg_free(cfg);
    tmap_ptx_free(m);
    tmap_ptx_free(again);
    tmap_buf_free(&src);
    return text;
}

static size_t increments(const char *t) { return count(t, "\tadd.u32 %tmap_n"); }
static size_t directs(const char *t) { return count(t, "@%tmap_on red.global.add.u32 [%tmap_a], 1;"); }
static size_t flush_reds(const char *t) { return count(t, "@%tmap_f red.global.add.u32"); }

/* entry, LOOP (a self loop), DONE: 3 blocks, one ret. */
static const char loop_ptx[] =
    ".visible .entry k(.param .u64 out)\n{\n"
    "\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n"
    "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, 0;\n"
    "LOOP:\n\tadd.u32 %r2, %r2, 1;\n\tsetp.lt.u32 %p1, %r2, %r1;\n\t@%p1 bra LOOP;\n"
    "\tld.param.u64 %rd1, [out];\n\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";

static void loop_in_registers(void **state)
{
    (void)state;
    tmap_bbv_check_stats s;
    size_t nb;
    char *t = instrument(loop_ptx, "k", TMAP_BBV_REG_BUDGET, &s, &nb);
    assert_int_equal(nb, 3);
    assert_int_equal(increments(t), 1); /* only the loop block holds a register */
    assert_int_equal(directs(t), 2);    /* entry and exit blocks: one red each */
    assert_int_equal(flush_reds(t), 1); /* one ret, one register */
    assert_int_equal(s.exits, 1);
    assert_int_equal(s.flushes, 1);
    assert_int_equal(count(t, ".reg .b32 %tmap_n<1>;"), 1);
    /* the loop block (block 1, row 4) takes register 0 */
    assert_non_null(strstr(t, "LOOP:\n\tadd.u32 %tmap_n0, %tmap_n0, 1;\n"));
    assert_non_null(strstr(t, "setp.ne.and.u32 %tmap_f, %tmap_n0, 0, %tmap_on;\n"
                              "\t@%tmap_f mad.wide.u32 %tmap_a, %tmap_ns, 4, %tmap_p;\n"
                              "\t@%tmap_f red.global.add.u32 [%tmap_a], %tmap_n0;\n"));
    /* the flush is immediately before the ret */
    assert_non_null(strstr(t, "red.global.add.u32 [%tmap_a], %tmap_n0;\n\tret;\n"));
    free(t);
}

/* Budget 1: only the loop block in a register, the others direct. */
static void budget_keeps_loops_first(void **state)
{
    (void)state;
    tmap_bbv_check_stats s;
    char *t = instrument(loop_ptx, "k", 1, &s, NULL);
    assert_int_equal(increments(t), 1);
    assert_int_equal(directs(t), 2);
    assert_int_equal(flush_reds(t), 1);
    assert_int_equal(s.reg_blocks, 1);
    assert_int_equal(s.direct_blocks, 2);
    assert_non_null(strstr(t, "LOOP:\n\tadd.u32 %tmap_n0, %tmap_n0, 1;\n"));
    assert_non_null(strstr(t, "@%tmap_on mad.wide.u32 %tmap_a, %tmap_ns, 0, %tmap_p;\n"));
    assert_non_null(strstr(t, "@%tmap_on mad.wide.u32 %tmap_a, %tmap_ns, 8, %tmap_p;\n"));
    free(t);
    /* budget 0: everything direct, no flush at all */
    t = instrument(loop_ptx, "k", 0, &s, NULL);
    assert_int_equal(increments(t), 0);
    assert_int_equal(directs(t), 3);
    assert_int_equal(flush_reds(t), 0);
    assert_null(strstr(t, "%tmap_n0"));
    free(t);
}

/* The start of a kernel k(a) whose LOOP block runs a times (%r1 = a, %p1
 * and %p2 free): the guarded-exit tests append their endings. */
#define LOOP_A_HEAD                                                                   \
    ".visible .entry k(.param .u32 a)\n{\n"                                           \
    "\t.reg .pred %p<3>;\n\t.reg .b32 %r<3>;\n"                                       \
    "\tld.param.u32 %r1, [a];\n\tmov.u32 %r2, 0;\n"                                   \
    "LOOP:\n\tadd.u32 %r2, %r2, 1;\n\tsetp.lt.u32 %p0, %r2, %r1;\n\t@%p0 bra LOOP;\n"

/* @%p ret and @!%p ret, then a plain ret: three flushes with their guards. */
static void guarded_ret(void **state)
{
    (void)state;
    static const char ptx[] = LOOP_A_HEAD
        "\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 ret;\n"
        "\tsetp.eq.u32 %p2, %r1, 1;\n\t@!%p2 ret;\n"
        "\tmov.u32 %r2, 3;\n\tret;\n}\n";
    tmap_bbv_check_stats s;
    size_t nb;
    char *t = instrument(ptx, "k", TMAP_BBV_REG_BUDGET, &s, &nb);
    assert_int_equal(nb, 5);
    assert_int_equal(increments(t), 1);
    assert_int_equal(directs(t), 4);
    assert_int_equal(flush_reds(t), 3);
    assert_int_equal(s.flushes, 3);
    assert_non_null(strstr(t, "\tand.pred %tmap_g, %tmap_on, %p1;\n"
                              "\tsetp.ne.and.u32 %tmap_f, %tmap_n0, 0, %tmap_g;\n"));
    assert_non_null(strstr(t, "\tnot.pred %tmap_g, %p2;\n\tand.pred %tmap_g, %tmap_g, %tmap_on;\n"));
    assert_non_null(strstr(t, "red.global.add.u32 [%tmap_a], %tmap_n0;\n\t@%p1 ret;\n"));
    assert_non_null(strstr(t, "red.global.add.u32 [%tmap_a], %tmap_n0;\n\t@!%p2 ret;\n"));
    assert_int_equal(count(t, "%tmap_n0, 0, %tmap_g;\n"), 2); /* one setp per guarded exit */
    free(t);
}

/* @%p exit in a kernel, and a body that falls off its end. */
static void guarded_exit_and_fall_off(void **state)
{
    (void)state;
    static const char ptx[] = LOOP_A_HEAD
        "\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 exit;\n"
        "\tadd.u32 %r1, %r1, 1;\n}\n";
    tmap_bbv_check_stats s;
    char *t = instrument(ptx, "k", TMAP_BBV_REG_BUDGET, &s, NULL);
    assert_int_equal(increments(t), 1);
    assert_int_equal(s.exits, 2);
    assert_int_equal(s.flushes, 2);
    assert_int_equal(flush_reds(t), 2);
    assert_non_null(strstr(t, "red.global.add.u32 [%tmap_a], %tmap_n0;\n\t@%p1 exit;\n"));
    assert_non_null(strstr(t, "\tadd.u32 %r1, %r1, 1;\n\tsetp.ne.and.u32 %tmap_f, %tmap_n0, 0, "
                              "%tmap_on;\n"));
    assert_non_null(strstr(t, "red.global.add.u32 [%tmap_a], %tmap_n0;\n}\n"));
    free(t);
}

/* A .func with two returns, called from a kernel: each function flushes
 * its own registers at its own returns. */
static const char func_ptx[] =
    ".func (.param .b32 r) pick(.param .b32 x)\n{\n"
    "\t.reg .pred %q<2>;\n\t.reg .b32 %t<3>;\n"
    "\tld.param.b32 %t1, [x];\n\tmov.u32 %t0, 0;\n"
    "PL:\n\tadd.u32 %t0, %t0, 1;\n\tsetp.lt.u32 %q0, %t0, 3;\n\t@%q0 bra PL;\n"
    "\tsetp.gt.s32 %q1, %t1, 5;\n\t@%q1 bra BIG;\n"
    "\tst.param.b32 [r], %t1;\n\tret;\n"
    "BIG:\n\tadd.s32 %t2, %t1, %t1;\n\tst.param.b32 [r], %t2;\n\tret;\n}\n"
    ".visible .entry k(.param .u64 out)\n{\n"
    "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n"
    "\tmov.u32 %r1, %tid.x;\n"
    "\t{\n\t.param .b32 p0;\n\t.param .b32 r0;\n\tst.param.b32 [p0], %r1;\n"
    "\tcall.uni (r0), pick, (p0);\n\tld.param.b32 %r2, [r0];\n\t}\n"
    "\tld.param.u64 %rd1, [out];\n\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";

static void func_two_returns(void **state)
{
    (void)state;
    tmap_bbv_check_stats s;
    size_t nb;
    char *t = instrument(func_ptx, "k", TMAP_BBV_REG_BUDGET, &s, &nb);
    assert_int_equal(nb, 6); /* k: 1, pick: 5 */
    assert_int_equal(s.funcs, 2);
    assert_int_equal(increments(t), 1); /* pick's loop PL */
    assert_int_equal(directs(t), 5);
    assert_int_equal(s.exits, 3);
    assert_int_equal(flush_reds(t), 2); /* pick's two rets, one register each */
    assert_int_equal(count(t, ".reg .b32 %tmap_n<1>;"), 1);
    /* pick's blocks are 1..5; PL is block 2, row 8, flushed at both rets */
    assert_int_equal(count(t, "@%tmap_f mad.wide.u32 %tmap_a, %tmap_ns, 8, %tmap_p;"), 2);
    assert_non_null(strstr(t, "PL:\n\tadd.u32 %tmap_n0, %tmap_n0, 1;\n"));
    assert_int_equal(count(t, "$tmap_counted:"), 2);
    free(t);
}

/* A .func that executes exit: its caller keeps nothing in registers. */
static void exit_in_callee(void **state)
{
    (void)state;
    static const char ptx[] =
        ".func stop()\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 0;\n"
        "LS:\n\tadd.u32 %r1, %r1, 1;\n\tsetp.lt.u32 %p1, %r1, 4;\n\t@%p1 bra LS;\n"
        "\texit;\n}\n"
        ".visible .entry k()\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 0;\n"
        "LK:\n\tadd.u32 %r1, %r1, 1;\n\tsetp.lt.u32 %p1, %r1, 4;\n\t@%p1 bra LK;\n"
        "\tcall.uni stop;\n\tret;\n}\n";
    tmap_bbv_check_stats s;
    char *t = instrument(ptx, "k", TMAP_BBV_REG_BUDGET, &s, NULL);
    assert_int_equal(s.reg_blocks, 1);    /* stop's loop LS */
    assert_int_equal(s.direct_blocks, 5); /* k's loop LK too: k calls a .func that exits */
    assert_non_null(strstr(t, "red.global.add.u32 [%tmap_a], %tmap_n0;\n\texit;\n"));
    assert_non_null(strstr(t, "LK:\n\t@%tmap_on mad.wide.u32"));
    free(t);
}

/* More blocks than the default budget: a chain of guarded branches. */
static void over_budget(void **state)
{
    (void)state;
    /* entry, N self-loops, the ret block: more loop blocks than registers */
    enum { N = TMAP_BBV_REG_BUDGET + 5, NB = N + 2 };
    tmap_buf b = {0};
    tmap_buf_puts(&b, ".visible .entry k(.param .u32 a)\n{\n"
                      "\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n"
                      "\tld.param.u32 %r1, [a];\n");
    for (int i = 0; i < N; i++)
        tmap_buf_printf(&b, "L%d:\n\tadd.u32 %%r1, %%r1, 1;\n\tsetp.lt.u32 %%p1, %%r1, %d;\n"
                            "\t@%%p1 bra L%d;\n", i, 4 * (i + 1), i);
    tmap_buf_puts(&b, "\tret;\n}\n");
    tmap_bbv_check_stats s;
    size_t nb;
    char *t = instrument(b.data, "k", TMAP_BBV_REG_BUDGET, &s, &nb);
    assert_int_equal(nb, NB);
    assert_int_equal(increments(t), TMAP_BBV_REG_BUDGET);
    assert_int_equal(directs(t), NB - TMAP_BBV_REG_BUDGET);
    assert_int_equal(flush_reds(t), TMAP_BBV_REG_BUDGET);
    /* the first loops, in order, take the registers; the rest count directly */
    assert_non_null(strstr(t, "L0:\n\tadd.u32 %tmap_n0, %tmap_n0, 1;\n"));
    char want[64];
    snprintf(want, sizeof want, "L%d:\n\t@%%tmap_on mad.wide.u32", (int)TMAP_BBV_REG_BUDGET);
    assert_non_null(strstr(t, want));
    free(t);
    tmap_buf_free(&b);
}

/* The analytic kernels pass the checker; and broken output fails it. */
static void checker_accepts_and_rejects(void **state)
{
    (void)state;
    char *src = test_read("tests/kernels/analytic.ptx");
    static const char *const kernels[] = {"loop_kernel", "branchy", "grid3d"};
    for (size_t i = 0; i < 3; i++) {
        tmap_ptx_module *m = NULL, *again = NULL;
        char *text = NULL;
        tmap_bbv_check_stats s;
        TMAP_CHECK(tmap_ptx_parse(src, strlen(src), "analytic.ptx", &m, err));
        TMAP_CHECK(tmap_bbv_instrument(m, kernels[i], NULL, err));
        TMAP_CHECK(tmap_ptx_print(m, &text, err));
        TMAP_CHECK(tmap_ptx_parse(text, strlen(text), "inst.ptx", &again, err));
        TMAP_CHECK(tmap_bbv_check(again, kernels[i], &s, err));
        int has_loop = s.reg_blocks > 0; /* branchy has no loop: nothing to flush */
        assert_true(has_loop ? s.flushes >= 1 : s.direct_blocks >= 1);
        tmap_ptx_free(again);
        /* loops: drop the last flush red before the first exit;
         * no loop: drop the first block's direct counter */
        char entry[64];
        snprintf(entry, sizeof entry, ".entry %s(", kernels[i]);
        assert_non_null(strstr(text, entry));
        char *cut = strstr(strstr(text, entry), "\tret;\n");
        assert_non_null(cut);
        char *red = has_loop ? cut : strstr(strstr(text, entry), "\t@%tmap_on red");
        while (has_loop && red > text && strncmp(red, "\t@%tmap_f red", 13))
            red--;
        assert_non_null(red);
        memmove(red, strchr(red, '\n') + 1, strlen(strchr(red, '\n') + 1) + 1);
        tmap_error e = {0};
        TMAP_CHECK(tmap_ptx_parse(text, strlen(text), "broken.ptx", &again, err));
        assert_int_equal(tmap_bbv_check(again, kernels[i], NULL, &e), TMAP_ERR_INVALID);
        if (!strstr(e.message, has_loop ? "complete flush" : "counter"))
            fail_msg("%s: %s", kernels[i], e.message);
        tmap_ptx_free(again);
        free(text);
        tmap_ptx_free(m);
    }
    free(src);
}

/* Moving a block's increment into another block is caught. */
static void checker_rejects_misplaced_counter(void **state)
{
    (void)state;
    tmap_bbv_check_stats s;
    char *t = instrument(loop_ptx, "k", TMAP_BBV_REG_BUDGET, &s, NULL);
    char *inc = strstr(t, "LOOP:\n\tadd.u32 %tmap_n0, %tmap_n0, 1;\n");
    assert_non_null(inc);
    memcpy(inc + 6, "//", 2); /* comment the loop's increment out */
    tmap_ptx_module *m = NULL;
    tmap_error e = {0};
    TMAP_CHECK(tmap_ptx_parse(t, strlen(t), "broken.ptx", &m, err));
    assert_int_equal(tmap_bbv_check(m, "k", NULL, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "no counter"));
    tmap_ptx_free(m);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_in_registers),
        cmocka_unit_test(budget_keeps_loops_first),
        cmocka_unit_test(guarded_ret),
        cmocka_unit_test(guarded_exit_and_fall_off),
        cmocka_unit_test(func_two_returns),
        cmocka_unit_test(exit_in_callee),
        cmocka_unit_test(over_budget),
        cmocka_unit_test(checker_accepts_and_rejects),
        cmocka_unit_test(checker_rejects_misplaced_counter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

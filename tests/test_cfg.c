/*
 * test_cfg.c -- exact blocks, edges and immediate post-dominators of small
 * hand-written kernels: diamond, loop, early return, jump table, predicated
 * exit, a call to a .func, empty blocks; loop depths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "threadmap.h"

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

/* Parses text into *state (freed by teardown) and builds kernel's CFG. */
static tmap_cfg *build(void **state, const char *text, const char *kernel)
{
    tmap_error err;
    tmap_ptx_module *m = NULL;
    tmap_ptx_free(*state);
    *state = NULL;
    if (tmap_ptx_parse(text, strlen(text), "t.ptx", &m, &err) != TMAP_OK)
        fail_msg("%s", err.message);
    *state = m;
    tmap_cfg *cfg = NULL;
    if (tmap_cfg_build(m, kernel, &cfg, &err) != TMAP_OK)
        fail_msg("%s", err.message);
    return cfg;
}

/* succ: -1 terminated list. */
static void check(const tmap_cfg *cfg, uint32_t b, const char *name, uint32_t line,
                  uint32_t ninstr, tmap_term term, int pred, int ipdom, const int *succ)
{
    const tmap_cfg_block *blk = &cfg->blocks[b];
    assert_string_equal(blk->name, name);
    assert_int_equal(blk->line, line);
    assert_int_equal(blk->ninstr, ninstr);
    assert_int_equal(blk->term, term);
    assert_int_equal(blk->predicated_term, pred);
    assert_int_equal(blk->ipdom, ipdom);
    uint32_t n = 0;
    while (succ[n] >= 0)
        n++;
    assert_int_equal(blk->nsucc, n);
    for (uint32_t k = 0; k < n; k++)
        assert_int_equal(blk->succ[k], succ[k]);
}

#define S(...) ((const int[]){__VA_ARGS__, -1})
#define NOSUCC ((const int[]){-1})

static const char diamond[] = HEAD     /* lines 1-3 */
    ".visible .entry k(.param .u32 n)\n" /* 4 */
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<4>;\n"
    "\tld.param.u32 %r1, [n];\n"      /* 8 */
    "\tsetp.lt.u32 %p1, %r1, 4;\n"
    "\t@%p1 bra $L_else;\n"
    "\tadd.u32 %r2, %r1, 1;\n"        /* 11 */
    "\tbra.uni $L_join;\n"
    "$L_else:\n"                      /* 13 */
    "\tsub.u32 %r2, %r1, 1;\n"        /* 14 */
    "$L_join:\n"
    "\tst.global.u32 [%r1], %r2;\n"   /* 16 */
    "\tret;\n"
    "}\n";

static void test_diamond(void **state)
{
    tmap_cfg *cfg = build(state, diamond, "k");
    assert_int_equal(cfg->nfuncs, 1);
    assert_int_equal(cfg->nblocks, 4);
    assert_string_equal(cfg->funcs[0].name, "k");
    assert_int_equal(cfg->funcs[0].is_entry, 1);
    assert_int_equal(cfg->funcs[0].first_block, 0);
    assert_int_equal(cfg->funcs[0].nblocks, 4);
    check(cfg, 0, "k/+0", 8, 3, TMAP_TERM_CBRA, 1, 3, S(2, 1));
    check(cfg, 1, "k/+1", 11, 2, TMAP_TERM_BRA, 0, 3, S(3));
    check(cfg, 2, "k/$L_else", 14, 1, TMAP_TERM_FALL, 0, 3, S(3));
    check(cfg, 3, "k/$L_join", 16, 2, TMAP_TERM_RET, 0, -1, NOSUCC);
    assert_string_equal(cfg->blocks[0].opcodes[0], "ld.param.u32");
    assert_string_equal(cfg->blocks[0].opcodes[2], "bra");
    assert_string_equal(cfg->blocks[1].opcodes[1], "bra.uni");
    /* the blocks' names in column order, pointing into the CFG */
    const char **names = NULL;
    tmap_error err = {0};
    assert_int_equal(tmap_cfg_names(cfg, &names, &err), TMAP_OK);
    for (size_t b = 0; b < cfg->nblocks; b++)
        assert_ptr_equal(names[b], cfg->blocks[b].name);
    assert_string_equal(names[2], "k/$L_else");
    free(names);
    assert_int_equal(tmap_cfg_names(NULL, &names, &err), TMAP_ERR_INVALID);
    tmap_cfg_free(cfg);
}

static const char loop[] = HEAD
    ".visible .entry k()\n"           /* 4 */
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<4>;\n"
    "\tmov.u32 %r1, 0;\n"             /* 8 */
    "$L_head:\n"                      /* 9 */
    "\tadd.u32 %r1, %r1, 1;\n"        /* 10 */
    "\tsetp.lt.u32 %p1, %r1, 10;\n"
    "\t@%p1 bra $L_head;\n"
    "\t@!%p1 bra $L_head;\n"          /* 13: falls to the exit block */
    "\texit;\n"                       /* 14 */
    "}\n";

static void test_loop(void **state)
{
    tmap_cfg *cfg = build(state, loop, "k");
    assert_int_equal(cfg->nblocks, 4);
    check(cfg, 0, "k/+0", 8, 1, TMAP_TERM_FALL, 0, 1, S(1));
    check(cfg, 1, "k/$L_head", 10, 3, TMAP_TERM_CBRA, 1, 2, S(1, 2));
    check(cfg, 2, "k/+2", 13, 1, TMAP_TERM_CBRA, 1, 3, S(1, 3));
    check(cfg, 3, "k/+3", 14, 1, TMAP_TERM_EXIT, 0, -1, NOSUCC);
    tmap_cfg_free(cfg);
}

/* Two loops, one inside the other, and a loop of two latches: depths by hand. */
static const char nested[] = HEAD
    ".visible .entry k(.param .u32 n)\n"
    "{\n"
    "\t.reg .pred %p<3>;\n"
    "\t.reg .b32 %r<4>;\n"
    "\tld.param.u32 %r1, [n];\n"      /* block 0: depth 0 */
    "\tmov.u32 %r2, 0;\n"
    "$L_outer:\n"                     /* block 1: the outer header, depth 1 */
    "\tmov.u32 %r3, 0;\n"
    "$L_inner:\n"                     /* block 2: the inner loop, depth 2 */
    "\tadd.u32 %r3, %r3, 1;\n"
    "\tsetp.lt.u32 %p1, %r3, %r1;\n"
    "\t@%p1 bra $L_inner;\n"
    "\tadd.u32 %r2, %r2, 1;\n"        /* block 3: the outer latch, depth 1 */
    "\tsetp.lt.u32 %p2, %r2, %r1;\n"
    "\t@%p2 bra $L_outer;\n"
    "\texit;\n"                       /* block 4: depth 0 */
    "}\n";

/* want: the depths, then the outermost headers (1 + header, 0: none) */
static void check_loops(void **state, const char *text, size_t n, const uint32_t *want)
{
    tmap_cfg *cfg = build(state, text, "k");
    tmap_error err;
    uint32_t depth[8], outer[8], only[8];
    memset(depth, 0xff, sizeof depth), memset(only, 0xff, sizeof only); /* it zeroes them */
    assert_int_equal(cfg->nblocks, n);
    assert_int_equal(tmap_cfg_loops(cfg, depth, outer, &err), TMAP_OK);
    assert_int_equal(tmap_cfg_loops(cfg, only, NULL, &err), TMAP_OK);
    for (size_t b = 0; b < n; b++) {
        assert_int_equal(depth[b], want[b]);
        assert_int_equal(only[b], want[b]);
        assert_int_equal(outer[b], want[n + b]);
    }
    tmap_cfg_free(cfg);
}

static void test_loops(void **state)
{
    check_loops(state, nested, 5, (const uint32_t[]){0, 1, 2, 1, 0, 0, 2, 2, 2, 0});
    check_loops(state, loop, 4, (const uint32_t[]){0, 1, 1, 0, 0, 2, 2, 0}); /* two latches */
    check_loops(state, diamond, 4, (const uint32_t[]){0, 0, 0, 0, 0, 0, 0, 0});
}

static void check_idom(void **state, const char *text, size_t n, const int32_t *want)
{
    tmap_cfg *cfg = build(state, text, "k");
    tmap_error err;
    int32_t idom[8];
    assert_int_equal(cfg->nblocks, n);
    assert_int_equal(tmap_cfg_dominators(cfg, idom, &err), TMAP_OK);
    for (size_t b = 0; b < n; b++)
        assert_int_equal(idom[b], want[b]);
    tmap_cfg_free(cfg);
}

/* Immediate dominators by hand; each function's first block has none. */
static void test_dominators(void **state)
{
    check_idom(state, diamond, 4, (const int32_t[]){-1, 0, 0, 0});
    check_idom(state, loop, 4, (const int32_t[]){-1, 0, 1, 2});
    check_idom(state, nested, 5, (const int32_t[]){-1, 0, 1, 2, 3});
}

static const char early_return[] = HEAD
    ".visible .entry k()\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\tsetp.eq.u32 %p1, 1, 1;\n"      /* 7 */
    "\t@%p1 ret;\n"                   /* 8 */
    "\tmov.u32 %r1, 1;\n"             /* 9 */
    "$L_spin:\n"                      /* 10 */
    "\tbra.uni $L_spin;\n"            /* 11: never reaches the exit */
    "}\n";

static void test_early_return_and_infinite_loop(void **state)
{
    tmap_cfg *cfg = build(state, early_return, "k");
    assert_int_equal(cfg->nblocks, 3);
    check(cfg, 0, "k/+0", 7, 2, TMAP_TERM_RET, 1, -1, S(1));
    check(cfg, 1, "k/+1", 9, 1, TMAP_TERM_FALL, 0, -1, S(2));
    check(cfg, 2, "k/$L_spin", 11, 1, TMAP_TERM_BRA, 0, -1, S(2));
    tmap_cfg_free(cfg);
}

static const char jump_table[] = HEAD
    ".visible .entry k(.param .u32 n)\n"
    "{\n"
    "\t.reg .b32 %r<4>;\n"
    "\tld.param.u32 %r1, [n];\n"      /* 7 */
    "\ttbl: .branchtargets $L_a, $L_b, $L_a, $L_c;\n"
    "\tbrx.idx %r1, tbl;\n"           /* 9 */
    "$L_a:\n"                         /* 10 */
    "\tadd.u32 %r2, %r1, 1;\n"        /* 11 */
    "\tbra.uni $L_end;\n"
    "$L_b:\n"                         /* 13: empty block, falls into $L_c */
    "$L_c:\n"                         /* 14 */
    "\tadd.u32 %r2, %r1, 2;\n"        /* 15 */
    "$L_end:\n"                       /* 16 */
    "\texit;\n"                       /* 17 */
    "}\n";

static void test_jump_table_and_empty_block(void **state)
{
    tmap_cfg *cfg = build(state, jump_table, "k");
    assert_int_equal(cfg->nblocks, 5);
    check(cfg, 0, "k/+0", 7, 2, TMAP_TERM_BRX, 0, 4, S(1, 2, 3));
    check(cfg, 1, "k/$L_a", 11, 2, TMAP_TERM_BRA, 0, 4, S(4));
    check(cfg, 2, "k/$L_b", 13, 0, TMAP_TERM_FALL, 0, 3, S(3));
    check(cfg, 3, "k/$L_c", 15, 1, TMAP_TERM_FALL, 0, 4, S(4));
    check(cfg, 4, "k/$L_end", 17, 1, TMAP_TERM_EXIT, 0, -1, NOSUCC);
    assert_string_equal(cfg->blocks[0].opcodes[1], "brx.idx");
    tmap_cfg_free(cfg);
}

static const char calls[] = HEAD
    ".func (.param .b32 r) g(.param .b32 a);\n"              /* 4: declaration */
    ".func (.param .b32 r) f(.param .b32 a)\n"              /* 5 */
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<3>;\n"
    "\tld.param.b32 %r1, [a];\n"      /* 9 */
    "\tsetp.eq.u32 %p1, %r1, 0;\n"
    "\t@%p1 trap;\n"                  /* 11 */
    "\tst.param.b32 [r], %r1;\n"      /* 12 */
    "\tret;\n"
    "}\n"
    ".func (.param .b32 r) g(.param .b32 a)\n"              /* 15 */
    "{\n"
    "\tret;\n"                        /* 17 */
    "}\n"
    ".func unused()\n"
    "{\n"
    "\tret;\n"
    "}\n"
    ".visible .entry k()\n"           /* 23 */
    "{\n"
    "\t.reg .b32 %r<3>;\n"
    "\t.reg .b64 %rd<2>;\n"
    "\t.reg .pred %p<2>;\n"
    "\tmov.u32 %r1, %tid.x;\n"        /* 28 */
    "\t{\n"
    "\t.param .b32 p0;\n"
    "\t.param .b32 r0;\n"
    "\tst.param.b32 [p0], %r1;\n"
    "\tcall.uni (r0), f, (p0);\n"
    "\tld.param.b32 %r2, [r0];\n"
    "\t}\n"
    "\tsetp.eq.u32 %p1, %r2, 0;\n"
    "\t@%p1 exit;\n"                  /* 37 */
    "\tmov.u64 %rd1, g;\n"            /* 38 */
    "\t{\n"
    "\t.param .b32 p0;\n"
    "\t.param .b32 r0;\n"
    "\tproto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
    "\tcall (r0), %rd1, (p0), proto;\n"
    "\t}\n"
    "\tret;\n"
    "}\n";

static void test_calls_and_predicated_exit(void **state)
{
    tmap_cfg *cfg = build(state, calls, "k");
    assert_int_equal(cfg->nfuncs, 3);
    assert_string_equal(cfg->funcs[0].name, "k");
    assert_string_equal(cfg->funcs[1].name, "f");
    assert_string_equal(cfg->funcs[2].name, "g");
    assert_int_equal(cfg->funcs[1].is_entry, 0);
    assert_int_equal(cfg->nblocks, 5);
    assert_int_equal(cfg->funcs[0].nblocks, 2);
    assert_int_equal(cfg->funcs[1].first_block, 2);
    assert_int_equal(cfg->funcs[1].nblocks, 2);
    assert_int_equal(cfg->funcs[2].first_block, 4);
    check(cfg, 0, "k/+0", 28, 6, TMAP_TERM_EXIT, 1, -1, S(1));
    check(cfg, 1, "k/+1", 38, 3, TMAP_TERM_RET, 0, -1, NOSUCC);
    check(cfg, 2, "f/+0", 9, 3, TMAP_TERM_TRAP, 1, -1, S(3));
    check(cfg, 3, "f/+1", 12, 2, TMAP_TERM_RET, 0, -1, NOSUCC);
    check(cfg, 4, "g/+0", 17, 1, TMAP_TERM_RET, 0, -1, NOSUCC);
    assert_int_equal(cfg->blocks[4].func, 2);
    assert_string_equal(cfg->blocks[0].opcodes[2], "call.uni");
    tmap_error err;
    int32_t idom[5];
    assert_int_equal(tmap_cfg_dominators(cfg, idom, &err), TMAP_OK);
    const int32_t want[] = {-1, 0, -1, 2, -1}; /* per function */
    for (size_t b = 0; b < 5; b++)
        assert_int_equal(idom[b], want[b]);
    tmap_cfg_free(cfg);
}

static const char scoped_labels[] = HEAD
    ".visible .entry k()\n"
    "{\n"
    "\t.reg .b32 %r<3>;\n"
    "\tmov.u32 %r1, 0;\n"             /* 7 */
    "\t{ .reg .pred p; $L_in: add.u32 %r1, %r1, 1; setp.lt.u32 p, %r1, 3; @p bra $L_in; }\n"
    "\t{ .reg .pred p; $L_in: add.u32 %r1, %r1, 2; setp.lt.u32 p, %r1, 9; @p bra $L_in; }\n"
    "\tret;\n"                        /* 10 */
    "}\n";

static void test_labels_resolve_in_their_scope(void **state)
{
    tmap_cfg *cfg = build(state, scoped_labels, "k");
    assert_int_equal(cfg->nblocks, 4);
    check(cfg, 0, "k/+0", 7, 1, TMAP_TERM_FALL, 0, 1, S(1));
    check(cfg, 1, "k/$L_in#1", 8, 3, TMAP_TERM_CBRA, 1, 2, S(1, 2));
    check(cfg, 2, "k/$L_in#2", 9, 3, TMAP_TERM_CBRA, 1, 3, S(2, 3));
    check(cfg, 3, "k/+3", 10, 1, TMAP_TERM_RET, 0, -1, NOSUCC);
    tmap_cfg_free(cfg);
}

static void test_errors(void **state)
{
    tmap_error err;
    tmap_cfg *cfg = build(state, diamond, "k");
    tmap_cfg_free(cfg);
    cfg = (tmap_cfg *)1;
    assert_int_equal(tmap_cfg_build(*state, "nosuch", &cfg, &err), TMAP_ERR_INVALID);
    assert_null(cfg);
    assert_string_equal(err.message, "t.ptx: no kernel (.entry with a body) named 'nosuch'");
    tmap_cfg_free(NULL);
}

static int teardown(void **state)
{
    tmap_ptx_free(*state);
    *state = NULL;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_diamond, teardown),
        cmocka_unit_test_teardown(test_loop, teardown),
        cmocka_unit_test_teardown(test_loops, teardown),
        cmocka_unit_test_teardown(test_dominators, teardown),
        cmocka_unit_test_teardown(test_early_return_and_infinite_loop, teardown),
        cmocka_unit_test_teardown(test_jump_table_and_empty_block, teardown),
        cmocka_unit_test_teardown(test_calls_and_predicated_exit, teardown),
        cmocka_unit_test_teardown(test_labels_resolve_in_their_scope, teardown),
        cmocka_unit_test_teardown(test_errors, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_sass.c -- SASS instruction counts per CFG block (instrument/sass.c):
 * the listing parser on recorded `nvdisasm -gp` listings, whose counts were
 * checked by hand (a function's instructions from its label on, less NOPs
 * and the padding loop; each SASS basic block for one CFG block), and the
 * whole ptxas + nvdisasm path when the tools are here.
 */
#include <sys/stat.h>
#include <time.h>

#include "testutil.h"

typedef struct fixture {
    char *ptx;
    tmap_ptx_module *m;
    tmap_cfg *cfg;
    double *counts;
    tmap_sass_splits splits;
} fixture;

static void fixture_load(fixture *f, const char *name)
{
    memset(f, 0, sizeof *f);
    char path[256];
    snprintf(path, sizeof path, "tests/sass/%s.ptx", name);
    f->ptx = test_read(path);
    TMAP_CHECK(tmap_ptx_parse(f->ptx, strlen(f->ptx), path, &f->m, err));
    TMAP_CHECK(tmap_cfg_build(f->m, name, &f->cfg, err));
    f->counts = calloc(f->cfg->nblocks, sizeof *f->counts);
    assert_non_null(f->counts);
}

static void fixture_free(fixture *f)
{
    free(f->counts);
    tmap_sass_splits_free(&f->splits);
    tmap_cfg_free(f->cfg);
    tmap_ptx_free(f->m);
    free(f->ptx);
}

/* fixture_load, and tests/sass/NAME.sass counted into f->counts. */
static void fixture_count(fixture *f, const char *name)
{
    fixture_load(f, name);
    char path[256];
    snprintf(path, sizeof path, "tests/sass/%s.sass", name);
    char *lst = test_read(path);
    TMAP_CHECK(tmap_sass_count_listing(lst, f->cfg, f->counts, &f->splits, err));
    free(lst);
}

static void expect_counts(const fixture *f, const double *want, size_t nb)
{
    assert_int_equal(f->cfg->nblocks, nb);
    for (size_t b = 0; b < nb; b++)
        if (f->counts[b] != want[b])
            fail_msg("block %zu (%s): %g SASS instructions, want %g", b, f->cfg->blocks[b].name,
                     f->counts[b], want[b]);
}

static double func_total(const fixture *f, size_t fn)
{
    double s = 0;
    const tmap_cfg_func *F = &f->cfg->funcs[fn];
    for (size_t b = F->first_block; b < F->first_block + F->nblocks; b++)
        s += f->counts[b];
    return s;
}

static size_t block_named(const tmap_cfg *cfg, const char *name)
{
    for (size_t b = 0; b < cfg->nblocks; b++)
        if (!strcmp(cfg->blocks[b].name, name))
            return b;
    fail_msg("no block %s", name);
    return 0;
}

/* switch_case: a division's 14 SASS instructions in its block, the slow-path
 * subroutine (110 instructions) and the padding not counted. */
static void test_listing_switch(void **state)
{
    (void)state;
    fixture f;
    fixture_count(&f, "switch_case");
    /* block 1 takes the entry's ULDC (line 20) that ptxas sank below the
     * range check's EXIT; the last store's block takes the final EXIT (line
     * 110, the ret block's), as ptxas gave the out-of-range threads their
     * own EXIT at 0x0070 */
    /* the join's lone BSYNC B2 (0x03f0) runs with every in-range thread,
     * as the store's block does (20), not with the x*x case (19) whose PTX
     * line ptxas gave it */
    static const double want[22] = {8, 12, 0, 2, 2, 2, 0, 2, 2, 2, 2,
                                    0, 2, 2, 2, 3, 2, 2, 14, 2, 3, 0};
    expect_counts(&f, want, 22);
    assert_true(func_total(&f, 0) == 66); /* 0x0000..0x0410 */
    size_t div = block_named(f.cfg, "switch_case/$L__BB0_13");
    assert_string_equal(f.cfg->blocks[div].opcodes[0], "div.rn.f32");
    assert_true(f.counts[div] == 14);
    fixture_free(&f);
}

/* device_call: two .func bodies that ptxas put after the kernel, in its
 * section, as "$device_call$<name>"; the Collatz loop (0x01c0..0x0240, 9
 * instructions) has a constant of its mad.lo hoisted in front of it
 * (0x01b0, PTX line 32): that one runs once per call, with the loop's
 * preheader (PTX line 27), not once per iteration. */
static void test_listing_funcs(void **state)
{
    (void)state;
    fixture f;
    fixture_count(&f, "device_call");
    assert_int_equal(f.cfg->nfuncs, 3);
    double totals[3] = {0};
    for (size_t fn = 0; fn < 3; fn++) {
        const char *name = f.cfg->funcs[fn].name;
        size_t k = !strcmp(name, "device_call") ? 0 : strstr(name, "collatz") ? 1 : 2;
        totals[k] = func_total(&f, fn);
    }
    assert_true(totals[0] == 23 && totals[1] == 18 && totals[2] == 6);
    assert_true(f.counts[block_named(f.cfg, "_Z13collatz_stepsj/$L__BB0_2")] == 9);
    assert_true(f.counts[block_named(f.cfg, "_Z13collatz_stepsj/+1")] == 2);
    /* 0x0000..0x0070 is block 0 (8); 0x0080..0x0160 (15) runs for the
     * in-range threads only, and takes the header's ULDC (line 73) and the
     * ret block's final EXIT (line 127): out-of-range threads leave by the
     * EXIT at 0x0070 */
    assert_true(f.counts[block_named(f.cfg, "device_call/+0")] == 8);
    assert_true(f.counts[block_named(f.cfg, "device_call/+1")] == 15);
    assert_true(f.counts[block_named(f.cfg, "device_call/$L__BB2_2")] == 0);
    /* lines before a function's first block (its header) count for it */
    assert_true(f.counts[block_named(f.cfg, "_Z13collatz_stepsj/+0")] == 3);
    fixture_free(&f);
}

/* warp_shuffle: ptxas sinks the last reduction FADD (PTX line 70, block
 * $L__BB0_2) below the `lane != 0` EXIT at 0x0190, into the SASS block
 * 0x01a0..0x0210 of lane 0's store (+3), and gives the other lanes their
 * own EXIT there, so the ret block's EXIT (line 85) runs with +3 too.  The
 * SASS basic block decides: 26 instructions per warp before the EXIT, 8
 * with one thread after it, as Nsight Compute counts.  The range check's
 * join, a lone BSYNC (0x00e0), runs with every thread, as the shuffles'
 * block ($L__BB0_2) does, not with the in-range load (+1). */
static void test_listing_sunk(void **state)
{
    (void)state;
    fixture f;
    fixture_count(&f, "warp_shuffle");
    static const double want[5] = {11, 3, 12, 8, 0};
    expect_counts(&f, want, 5);
    fixture_free(&f);
}

/* syncthreads_shared: ptxas predicates the reduction's `if (tid < s)` body
 * (+4: five instructions in 0x0180..0x01d0) into the loop's single SASS
 * block (0x0170..0x0200), which every thread runs each iteration, so the
 * whole SASS block counts for the loop's unpredicated latch $L__BB0_5, not
 * for +4, which has more instructions there; the guarded load (+1) runs
 * within the entry's SASS block likewise. */
static void test_listing_predicated(void **state)
{
    (void)state;
    fixture f;
    fixture_count(&f, "syncthreads_shared");
    static const double want[9] = {22, 0, 1, 0, 0, 10, 1, 8, 0};
    expect_counts(&f, want, 9);
    fixture_free(&f);
}

/* The split with this block and key, or NULL. */
static const tmap_sass_split *split_of(const fixture *f, uint32_t block, const uint32_t *key,
                                      uint32_t nkey)
{
    for (size_t k = 0; k < f->splits.n; k++) {
        const tmap_sass_split *e = &f->splits.v[k];
        if (e->block == block && e->nkey == nkey && !memcmp(e->key, key, nkey * sizeof *key))
            return e;
    }
    return NULL;
}

static void expect_split(const fixture *f, uint32_t block, uint32_t ninstr, const uint32_t *key,
                         uint32_t nkey)
{
    const tmap_sass_split *e = split_of(f, block, key, nkey);
    if (!e || e->ninstr != ninstr)
        fail_msg("block %u (%s): no split of %u instructions with the key given", block,
                 f->cfg->blocks[block].name, ninstr);
}

/* Splits, derived by hand from the listings (sass_flow.c). */
static void test_listing_splits(void **state)
{
    (void)state;
    fixture f;
    /* device_call: the Collatz loop's exit has no BSSY in the .func, so
     * its tail (0x0250..0x0280, block 6) and the caller's BSYNC (0x0100,
     * block 1) run once per group of threads that left the loop together:
     * equal counts of the loop (5) and of the blocks before it since the
     * kernel's entry.  The other blocks' keys are blocks every thread
     * there ran once.  After the BSYNC (0x0110) the warp is whole again:
     * scale's block (7) is no split. */
    fixture_count(&f, "device_call");
    assert_string_equal(f.cfg->blocks[5].name, "_Z13collatz_stepsj/$L__BB0_2");
    assert_string_equal(f.cfg->blocks[7].name, "_Z5scalefi/+0");
    assert_int_equal(f.splits.n, 6);
    expect_split(&f, 1, 1, (uint32_t[]){3, 4, 5, 6}, 4);
    expect_split(&f, 1, 4, (uint32_t[]){7}, 1);
    expect_split(&f, 3, 3, (uint32_t[]){1}, 1);
    expect_split(&f, 4, 2, (uint32_t[]){1, 3}, 2);
    expect_split(&f, 5, 9, (uint32_t[]){1, 3, 4}, 3); /* not its own loop */
    expect_split(&f, 6, 4, (uint32_t[]){1, 3, 4, 5}, 4);
    fixture_free(&f);
    /* warp_shuffle: the range check's join (0x00e0) runs once for the
     * threads that loaded (+1) and once for those that did not */
    fixture_count(&f, "warp_shuffle");
    assert_int_equal(f.splits.n, 1);
    expect_split(&f, 2, 1, (uint32_t[]){1}, 1);
    fixture_free(&f);
    /* switch_case: the cases branch to the join's BSYNC B2 (0x03f0, block
     * 20) past the division's BSYNC B1, so each case's threads wait there
     * apart: its key holds the tests and the cases; the store after it
     * (2 instructions) runs once per warp */
    fixture_count(&f, "switch_case");
    static const uint32_t join[] = {1, 3, 4, 5, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19};
    expect_split(&f, 20, 1, join, 16);
    assert_true(f.counts[20] == 3);
    fixture_free(&f);
}

static void test_listing_errors(void **state)
{
    (void)state;
    fixture f;
    fixture_load(&f, "switch_case");
    tmap_error e = {0};
    /* another kernel's listing names none of this CFG's functions */
    char *lst = test_read("tests/sass/device_call.sass");
    assert_int_equal(tmap_sass_count_listing(lst, f.cfg, f.counts, NULL, &e), TMAP_ERR_PARSE);
    assert_non_null(strstr(e.message, "switch_case"));
    assert_int_equal(tmap_sass_count_listing("", f.cfg, f.counts, NULL, &e), TMAP_ERR_PARSE);
    assert_int_equal(tmap_sass_count_listing(NULL, f.cfg, f.counts, NULL, &e), TMAP_ERR_INVALID);
    free(lst);
    fixture_free(&f);
}

/* The whole path: ptxas and nvdisasm of this toolkit.  Their code may
 * differ from the recorded one, so properties are checked, and that a
 * wrong architecture is reported with ptxas's message. */
static void test_tools(void **state)
{
    (void)state;
    char path[1024];
    tmap_error e = {0};
    if (tmap_sass_tool_find("ptxas", path, sizeof path, &e) ||
        tmap_sass_tool_find("nvdisasm", path, sizeof path, &e)) {
        print_message("[  SKIPPED ] %s\n", e.message);
        skip();
    }
    fixture f;
    fixture_load(&f, "switch_case");
    TMAP_CHECK(tmap_sass_block_counts(f.ptx, f.cfg, "sm_90", f.counts, &f.splits, err));
    size_t div = block_named(f.cfg, "switch_case/$L__BB0_13");
    assert_true(f.counts[div] >= 5 * f.cfg->blocks[div].ninstr); /* expanded */
    double total = func_total(&f, 0);
    assert_true(total > 30 && total < 150); /* the slow path is not counted */
    /* the virtual arch the pipeline passes (tmap_cuda_arch) is assembled as sm_90 */
    double *virt = malloc(f.cfg->nblocks * sizeof *virt);
    assert_non_null(virt);
    TMAP_CHECK(tmap_sass_block_counts(f.ptx, f.cfg, "compute_90", virt, NULL, err));
    for (size_t b = 0; b < f.cfg->nblocks; b++)
        assert_true(virt[b] == f.counts[b]);
    free(virt);
    assert_int_equal(tmap_sass_block_counts(f.ptx, f.cfg, "sm_1", f.counts, NULL, &e), TMAP_ERR_IO);
    assert_non_null(strstr(e.message, "ptxas"));
    fixture_free(&f);
}

static void test_tool_not_found(void **state)
{
    (void)state;
    char path[64];
    tmap_error e = {0};
    const char *was = getenv("TMAP_NVDISASM");
    char *saved = was ? strdup(was) : NULL;
    setenv("TMAP_NVDISASM", "/nonexistent/nvdisasm", 1);
    assert_int_equal(tmap_sass_tool_find("nvdisasm", path, sizeof path, &e),
                     TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "TMAP_NVDISASM"));
    if (saved)
        setenv("TMAP_NVDISASM", saved, 1);
    else
        unsetenv("TMAP_NVDISASM");
    free(saved);
}

/* A kernel of n branches over one instruction each, PTX and listing: with
 * sync, each label's first instruction is a BSYNC (the warp whole again);
 * without, no branch ever rejoins. */
static void big_listing(size_t n, int sync, tmap_buf *ptx, tmap_buf *lst)
{
    tmap_buf_puts(ptx, ".version 8.0\n.target sm_90\n.address_size 64\n"
                       ".visible .entry k(.param .u32 n)\n{\n.reg .pred %p<2>;\n"
                       ".reg .b32 %r<4>;\nld.param.u32 %r1, [n];\nsetp.gt.u32 %p1, %r1, 3;\n");
    tmap_buf_puts(lst, "\t.section\t.text.k,\"ax\",@progbits\nk:\n.text.k:\n");
    for (size_t i = 0; i < n; i++) {
        size_t line = 10 + 3 * i; /* of the bra; the add and the label follow */
        tmap_buf_printf(ptx, "@%%p1 bra $L__BB0_%zu;\nadd.u32 %%r2, %%r2, 1;\n$L__BB0_%zu:\n",
                        i + 1, i + 1);
        tmap_buf_printf(lst, "\t//## File \".nv_debug_ptx_txt\", line %zu\n"
                             "        /*0010*/ @P0 BRA `(.L_x_%zu) ;\n"
                             "\t//## File \".nv_debug_ptx_txt\", line %zu\n"
                             "        /*0020*/ IADD3 R2, R2, 0x1, RZ ;\n.L_x_%zu:\n%s",
                        line, i, line + 1, i, sync ? "        /*0030*/ BSYNC B0 ;\n" : "");
    }
    tmap_buf_puts(ptx, "ret;\n}\n");
    tmap_buf_printf(lst, "\t//## File \".nv_debug_ptx_txt\", line %zu\n"
                         "        /*0040*/ EXIT ;\n",
                    10 + 3 * n);
    assert_false(ptx->oom || lst->oom);
}

/* 100k labels: counted when branches rejoin, a clear error when they never
 * do (issue 14 item 11: the search for splits was quadratic in blocks and
 * took over 30 s).  The CPU time is printed, not asserted: a unit test does
 * not time; CTest's TIMEOUT on test_sass (CMakeLists.txt) stops a quadratic
 * search. */
static void test_listing_large(void **state)
{
    (void)state;
    for (int sync = 1; sync >= 0; sync--) {
        tmap_buf ptx = {0}, lst = {0};
        big_listing(100000, sync, &ptx, &lst);
        tmap_ptx_module *m = NULL;
        tmap_cfg *cfg = NULL;
        TMAP_CHECK(tmap_ptx_parse(ptx.data, ptx.len, "big.ptx", &m, err));
        TMAP_CHECK(tmap_cfg_build(m, "k", &cfg, err));
        double *counts = calloc(cfg->nblocks, sizeof *counts);
        tmap_sass_splits sp = {0};
        tmap_error e = {0};
        clock_t t0 = clock();
        tmap_status s = tmap_sass_count_listing(lst.data, cfg, counts, &sp, &e);
        double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
        if (sync) {
            if (s)
                fail_msg("%s", e.message);
            assert_true(counts[1] == 1 && counts[2] == 2); /* the add; BSYNC + bra */
            assert_int_equal(sp.n, 100000); /* each add, per group of the bra's threads */
        } else {
            assert_int_equal(s, TMAP_ERR_UNSUPPORTED);
            assert_non_null(strstr(e.message, "sass: 200001 SASS blocks whose branches rejoin "
                                              "too late"));
        }
        print_message("%s: %.2f s of CPU\n", sync ? "rejoining" : "never rejoining", cpu);
        tmap_sass_splits_free(&sp);
        free(counts);
        tmap_cfg_free(cfg);
        tmap_ptx_free(m);
        tmap_buf_free(&ptx);
        tmap_buf_free(&lst);
    }
}

/* A tool that never finishes is stopped after TMAP_TOOL_TIMEOUT seconds
 * with a clear error (issue 14 item 11: ptxas and nvdisasm had no limit). */
static void test_tool_timeout(void **state)
{
    (void)state;
    const char *tool = TMAP_BINARY_DIR "/sleeping_tool.sh";
    const char *script = "#!/bin/sh\nexec sleep 60\n";
    tmap_error e = {0};
    assert_int_equal(tmap_file_write(tool, script, strlen(script), &e), TMAP_OK);
    assert_int_equal(chmod(tool, 0755), 0);
    const char *vars[] = {"TMAP_PTXAS", "TMAP_NVDISASM", "TMAP_TOOL_TIMEOUT"};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    setenv("TMAP_PTXAS", tool, 1);
    setenv("TMAP_NVDISASM", tool, 1);
    setenv("TMAP_TOOL_TIMEOUT", "0.5", 1);
    fixture f;
    fixture_load(&f, "switch_case");
    double t0 = tmap_clock_seconds();
    assert_int_equal(tmap_sass_block_counts(f.ptx, f.cfg, "sm_90", f.counts, NULL, &e),
                     TMAP_ERR_IO);
    double took = tmap_clock_seconds() - t0;
    char want[512];
    snprintf(want, sizeof want, "%s did not finish in 0.5 s and was stopped (TMAP_TOOL_TIMEOUT "
                                "sets the limit in seconds)", tool);
    assert_string_equal(e.message, want);
    assert_true(took >= 0.5 && took < 10);
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(vars[i], saved[i], 1);
        else
            unsetenv(vars[i]);
        free(saved[i]);
    }
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listing_switch),
        cmocka_unit_test(test_listing_funcs),
        cmocka_unit_test(test_listing_sunk),
        cmocka_unit_test(test_listing_predicated),
        cmocka_unit_test(test_listing_splits),
        cmocka_unit_test(test_listing_errors),
        cmocka_unit_test(test_listing_large),
        cmocka_unit_test(test_tools),
        cmocka_unit_test(test_tool_not_found),
        cmocka_unit_test(test_tool_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_safety.c -- exact findings of the safety analysis on small corpus
 * kernels (NVRTC) and hand-written PTX, and reasons that name PTX lines.
 */
#include "tests/testutil.h"

typedef struct analyzed {
    char *ptx;
    tmap_safety s;
} analyzed;

static void analyze_text(const char *ptx, const char *file, const char *kernel, tmap_safety *s)
{
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), file, &m, err));
    TMAP_CHECK(tmap_safety_analyze(m, kernel, s, err));
    tmap_ptx_free(m);
}

/* Compiles tests/kernels/NAME.cu and analyzes kernel NAME (file "NAME.ptx"). */
static analyzed analyze_corpus(const char *name)
{
    char rel[256], file[256];
    snprintf(rel, sizeof rel, "tests/kernels/%s.cu", name);
    snprintf(file, sizeof file, "%s.ptx", name);
    char *src = test_read(rel);
    tmap_compile_opts o = {0};
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, rel, &o, &c, err));
    analyzed a = {strdup(c.ptx), {0}};
    analyze_text(a.ptx, file, name, &a.s);
    tmap_compiled_free(&c);
    free(src);
    return a;
}

/* The 1-based line of the first line of text containing `needle`. */
static unsigned line_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    assert_non_null(p);
    unsigned line = 1;
    for (const char *q = text; q < p; q++)
        line += *q == '\n';
    return line;
}

static void expect_reason_at(const tmap_safety *s, const char *file, unsigned line,
                             const char *what)
{
    char want[256];
    snprintf(want, sizeof want, "%s:%u: `%s`", file, line, what);
    if (!strstr(s->reasons, want))
        fail_msg("reasons lack \"%s\":\n%s", want, s->reasons);
}

static void syncthreads_shared_is_block_scope(void **state)
{
    analyzed a = analyze_corpus("syncthreads_shared");
    assert_true(a.s.barriers >= 1);
    assert_true(a.s.shared_memory >= 1);
    assert_int_equal(a.s.warp_collectives, 0);
    assert_int_equal(a.s.hardware_ids, 0);
    assert_int_equal(a.s.atomics, 0);
    assert_int_equal(a.s.tid_as_value, 0);
    assert_true(a.s.tid_in_control >= 1); /* t < s, t == 0, i < count */
    assert_int_equal(a.s.scope, TMAP_SAFE_BLOCK);
    assert_true(a.s.layout_ok);
    assert_true(a.s.redirect_ok);
    expect_reason_at(&a.s, "syncthreads_shared.ptx", line_of(a.ptx, "bar.sync"), "bar.sync");
    assert_non_null(strstr(a.s.reasons, "within thread blocks"));
    free(a.ptx);
}

static void warp_shuffle_moves_whole_warps(void **state)
{
    analyzed a = analyze_corpus("warp_shuffle");
    assert_true(a.s.warp_collectives >= 1);
    assert_int_equal(a.s.barriers, 0);
    assert_int_equal(a.s.shared_memory, 0);
    assert_int_equal(a.s.scope, TMAP_SAFE_WARPS);
    /* (threadIdx.x & 31) == 0 compares a lane position, not an index */
    assert_int_equal(a.s.tid_as_value, 1);
    assert_false(a.s.layout_ok);
    assert_true(a.s.redirect_ok);
    expect_reason_at(&a.s, "warp_shuffle.ptx", line_of(a.ptx, "shfl.sync"), "shfl.sync.down.b32");
    free(a.ptx);
}

static void warp_vote_and_laneid(void **state)
{
    analyzed a = analyze_corpus("warp_vote");
    assert_true(a.s.warp_collectives >= 4); /* ballot, any, all, %laneid */
    assert_int_equal(a.s.scope, TMAP_SAFE_WARPS);
    assert_int_equal(a.s.tid_as_value, 0);
    assert_true(a.s.tid_in_control >= 1);
    expect_reason_at(&a.s, "warp_vote.ptx", line_of(a.ptx, "%laneid"), "%laneid");
    expect_reason_at(&a.s, "warp_vote.ptx", line_of(a.ptx, "vote.sync"), "vote.sync.ballot.b32");
    free(a.ptx);
}

static void loop_per_thread_control_only(void **state)
{
    analyzed a = analyze_corpus("loop_per_thread");
    assert_int_equal(a.s.barriers + a.s.shared_memory + a.s.warp_collectives, 0);
    assert_int_equal(a.s.hardware_ids + a.s.atomics + a.s.cluster + a.s.unredirectable, 0);
    assert_int_equal(a.s.tid_as_value, 0);
    assert_int_equal(a.s.tid_in_control, 1); /* i >= count */
    assert_int_equal(a.s.scope, TMAP_SAFE_GRID);
    assert_true(a.s.layout_ok);
    assert_true(a.s.redirect_ok);
    assert_non_null(strstr(a.s.reasons, "no tail threads"));
    expect_reason_at(&a.s, "loop_per_thread.ptx", line_of(a.ptx, "setp.ge.s32"), "setp.ge.s32");
    free(a.ptx);
}

static void grid_3d_uses_ids_as_values(void **state)
{
    analyzed a = analyze_corpus("grid_3d");
    assert_true(a.s.tid_as_value >= 1);  /* (x + y + z) % 5 bounds a loop */
    assert_true(a.s.tid_in_control >= 3); /* x >= nx, y >= ny, z >= nz */
    assert_int_equal(a.s.scope, TMAP_SAFE_GRID);
    assert_false(a.s.layout_ok);
    assert_true(a.s.redirect_ok);
    assert_non_null(strstr(a.s.reasons, "never used as an index"));
    free(a.ptx);
}

static void atomics_reported(void **state)
{
    analyzed a = analyze_corpus("atomics");
    assert_int_equal(a.s.atomics, 2); /* atomicAdd, atomicCAS */
    assert_int_equal(a.s.scope, TMAP_SAFE_GRID);
    assert_int_equal(a.s.tid_as_value, 0);
    assert_true(a.s.layout_ok);
    assert_true(a.s.redirect_ok);
    expect_reason_at(&a.s, "atomics.ptx", line_of(a.ptx, "atom.global"), "atom.global.add.u32");
    free(a.ptx);
}

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

static const char float_ptx[] =
    HEAD ".visible .entry k(.param .u64 out)\n{\n"             /* 1..5 */
    "\t.reg .b32 %r<3>;\n\t.reg .f32 %f<2>;\n\t.reg .b64 %rd<4>;\n" /* 6..8 */
    "\tmov.u32 %r1, %tid.x;\n"                                   /* 9 */
    "\tcvt.rn.f32.u32 %f1, %r1;\n"                               /* 10 */
    "\tld.param.u64 %rd1, [out];\n"                              /* 11 */
    "\tmul.wide.u32 %rd2, %r1, 4;\n"                             /* 12 */
    "\tadd.s64 %rd3, %rd1, %rd2;\n"                              /* 13 */
    "\tst.global.f32 [%rd3], %f1;\n\tret;\n}\n";

static void cvt_to_float_is_a_value(void **state)
{
    tmap_safety s;
    analyze_text(float_ptx, "f.ptx", "k", &s);
    assert_int_equal(s.tid_as_value, 1);
    assert_int_equal(s.tid_in_control, 0);
    assert_int_equal(s.scope, TMAP_SAFE_GRID);
    assert_false(s.layout_ok);
    assert_true(s.redirect_ok);
    expect_reason_at(&s, "f.ptx", 10, "cvt.rn.f32.u32");
    assert_non_null(strstr(s.reasons, "floating point"));
}

static const char index_only_ptx[] =
    HEAD ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
    "\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<6>;\n"
    "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ntid.x;\n"
    "\tmad.lo.s32 %r1, %r2, %r3, %r1;\n"
    "\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n"
    "\tmul.wide.s32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n\tadd.s64 %rd5, %rd2, %rd3;\n"
    "\tld.global.u32 %r4, [%rd4];\n\tadd.s32 %r5, %r4, 1;\n\tst.global.u32 [%rd5], %r5;\n"
    "\tret;\n}\n";

/* (registers are told apart by name: reusing %r2 for the loaded value would
 * taint it, a documented limit of the flow-insensitive analysis) */
static void loaded_values_are_clean(void **state)
{
    tmap_safety s;
    analyze_text(index_only_ptx, "i.ptx", "k", &s);
    assert_int_equal(s.tid_as_value + s.tid_in_control, 0);
    assert_int_equal(s.scope, TMAP_SAFE_GRID);
    assert_true(s.layout_ok && s.redirect_ok);
    assert_non_null(strstr(s.reasons, "no finding"));
}

static const char hw_ptx[] =
    HEAD ".extern .shared .align 4 .b8 smem[];\n"              /* 4 */
    ".visible .entry k(.param .u64 out)\n{\n"                   /* 5..6 */
    "\t.reg .b16 %rs<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n" /* 7..9 */
    "\tmov.u32 %r1, %smid;\n"                                   /* 10 */
    "\tmov.u16 %rs1, %tid.x;\n"                                 /* 11 */
    "\tmov.u32 %r2, smem;\n"                                    /* 12 */
    "\tld.param.u64 %rd1, [out];\n"                             /* 13 */
    "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

static void hardware_ids_shared_symbol_and_16bit_reads(void **state)
{
    tmap_safety s;
    analyze_text(hw_ptx, "h.ptx", "k", &s);
    assert_int_equal(s.hardware_ids, 1);
    assert_int_equal(s.shared_memory, 1); /* the name of an extern .shared */
    assert_int_equal(s.unredirectable, 1);
    assert_int_equal(s.scope, TMAP_SAFE_BLOCK);
    assert_false(s.redirect_ok);
    assert_true(s.layout_ok);
    expect_reason_at(&s, "h.ptx", 10, "%smid");
    expect_reason_at(&s, "h.ptx", 11, "mov.u16");
    expect_reason_at(&s, "h.ptx", 12, "smem");
    assert_non_null(strstr(s.reasons, "harmless"));
}

static const char cluster_ptx[] =
    HEAD ".visible .entry k()\n{\n"
    "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\tbar.sync 0;\n\tret;\n}\n";

static void clusters_allow_nothing(void **state)
{
    tmap_safety s;
    analyze_text(cluster_ptx, "c.ptx", "k", &s);
    assert_int_equal(s.cluster, 2);
    assert_int_equal(s.barriers, 1); /* bar.sync; barrier.cluster is not block-level */
    assert_int_equal(s.scope, TMAP_SAFE_NONE);
    assert_false(s.layout_ok);
    assert_false(s.redirect_ok);
    assert_string_equal(tmap_scope_advice_name(s.scope), "none");
}

static void unknown_kernel_is_an_error(void **state)
{
    tmap_ptx_module *m = NULL;
    tmap_safety s;
    tmap_error e = {0};
    TMAP_CHECK(tmap_ptx_parse(cluster_ptx, strlen(cluster_ptx), "c.ptx", &m, err));
    assert_int_equal(tmap_safety_analyze(m, "nosuch", &s, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "nosuch"));
    tmap_ptx_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(syncthreads_shared_is_block_scope),
        cmocka_unit_test(warp_shuffle_moves_whole_warps),
        cmocka_unit_test(warp_vote_and_laneid),
        cmocka_unit_test(loop_per_thread_control_only),
        cmocka_unit_test(grid_3d_uses_ids_as_values),
        cmocka_unit_test(atomics_reported),
        cmocka_unit_test(cvt_to_float_is_a_value),
        cmocka_unit_test(loaded_values_are_clean),
        cmocka_unit_test(hardware_ids_shared_symbol_and_16bit_reads),
        cmocka_unit_test(clusters_allow_nothing),
        cmocka_unit_test(unknown_kernel_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

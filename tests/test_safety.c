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

/* Compiles tests/kernels/NAME.cu (with NVRTC option `option`, or none) and
 * analyzes kernel NAME (file "NAME.ptx"). */
static analyzed analyze_corpus_with(const char *name, const char *option)
{
    char rel[256], file[256];
    snprintf(rel, sizeof rel, "tests/kernels/%s.cu", name);
    snprintf(file, sizeof file, "%s.ptx", name);
    char *src = test_read(rel);
    tmap_compile_opts o = {.options = option ? &option : NULL, .noptions = option != NULL};
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, rel, &o, &c, err));
    analyzed a = {strdup(c.ptx), {0}};
    analyze_text(a.ptx, file, name, &a.s);
    tmap_compiled_free(&c);
    free(src);
    return a;
}

static analyzed analyze_corpus(const char *name)
{
    return analyze_corpus_with(name, NULL);
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
    /* `t < s` compares the position with a loop variable (the shape of the
     * reduction tree, so the order of the sums): a value; i < count is a
     * bounds check */
    assert_int_equal(a.s.tid_as_value, 1);
    assert_int_equal(a.s.tid_in_control, 2);
    assert_int_equal(a.s.scope, TMAP_SAFE_BLOCK);
    assert_false(a.s.layout_ok);
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
    assert_non_null(strstr(a.s.reasons, "not as a bounds check"));
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

/* The example of issue 14: a bounds check on a register that re-reads
 * %tid.x (as -G code does) is the same bounds check as one on the register
 * used in the address. */
static const char reuse_head[] =
    HEAD ".visible .entry k(.param .u64 a)\n{\n"                          /* 4..5 */
    "\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<5>;\n"     /* 6..8 */
    "\tld.param.u64 %rd1, [a];\n"                                          /* 9 */
    "\tmov.u32 %r1, %tid.x;\n\tcvt.u64.u32 %rd2, %r1;\n\tshl.b64 %rd3, %rd2, 2;\n"
    "\tadd.s64 %rd4, %rd1, %rd3;\n";                                       /* 13 */
static const char reuse_tail[] = "\t@!%p1 bra DONE;\n\tst.global.u32 [%rd4], 0;\nDONE:\n\tret;\n}\n";

static void register_reuse_keeps_the_verdict(void **state)
{
    static const char *const variants[] = {
        "\tmov.u32 %r2, %tid.x;\n\tsetp.lt.u32 %p1, %r1, 16;\n", /* reuses %r1 */
        "\tmov.u32 %r2, %tid.x;\n\tsetp.lt.u32 %p1, %r2, 16;\n", /* re-reads %tid.x */
    };
    for (size_t i = 0; i < 2; i++) {
        char ptx[1024] = "";
        strcat(strcat(strcat(ptx, reuse_head), variants[i]), reuse_tail);
        tmap_safety s;
        analyze_text(ptx, "r.ptx", "k", &s);
        assert_int_equal(s.tid_as_value, 0);
        assert_int_equal(s.tid_in_control, 1);
        assert_true(s.layout_ok && s.redirect_ok);
        expect_reason_at(&s, "r.ptx", 15, "setp.lt.u32");
    }
}

/* A store at a loaded index into an array never indexed by the thread. */
static const char scatter_ptx[] =
    HEAD ".visible .entry k(.param .u64 idx, .param .u64 out)\n{\n"   /* 4..5 */
    "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<8>;\n"                   /* 6..7 */
    "\tld.param.u64 %rd1, [idx];\n\tld.param.u64 %rd2, [out];\n"  /* 8..9 */
    "\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 4;\n"      /* 10..11 */
    "\tadd.s64 %rd4, %rd1, %rd3;\n\tld.global.u32 %r2, [%rd4];\n" /* 12..13 */
    "\tmul.wide.u32 %rd5, %r2, 4;\n\tadd.s64 %rd6, %rd2, %rd5;\n" /* 14..15 */
    "\tst.global.u32 [%rd6], 1;\n\tret;\n}\n";                    /* 16 */

/* (right under the layout transform as long as `out` is not moved: said,
 * but not a reason to refuse it) */
static void data_indexed_store_is_not_per_thread(void **state)
{
    tmap_safety s;
    analyze_text(scatter_ptx, "s.ptx", "k", &s);
    assert_int_equal(s.non_thread_arrays, 0);
    assert_int_equal(s.tid_as_value, 0);
    assert_true(s.layout_ok);
    assert_true(s.redirect_ok);
    expect_reason_at(&s, "s.ptx", 16, "st.global.u32");
    assert_non_null(strstr(s.reasons, "parameter out is written at a data-dependent index"));
}

/* The verdict on tests/ptx/safety/NAME.ptx (nvcc -O3) and NAME_G.ptx (-G):
 * the same counts and verdicts for both; returns the -O3 one. */
static tmap_safety analyze_both_builds(const char *name, tmap_safety *g)
{
    tmap_safety s[2];
    for (int k = 0; k < 2; k++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/ptx/safety/%s%s.ptx", name, k ? "_G" : "");
        char *ptx = test_read(rel);
        analyze_text(ptx, rel, name, &s[k]);
        free(ptx);
    }
    assert_int_equal(s[0].tid_as_value, s[1].tid_as_value);
    assert_int_equal(s[0].tid_in_control, s[1].tid_in_control);
    assert_int_equal(s[0].non_thread_arrays, s[1].non_thread_arrays);
    assert_int_equal(s[0].scope, s[1].scope);
    assert_int_equal(s[0].layout_ok, s[1].layout_ok);
    assert_int_equal(s[0].redirect_ok, s[1].redirect_ok);
    *g = s[1];
    return s[0];
}

static void bounds_check_same_with_g(void **state)
{
    tmap_safety g, s = analyze_both_builds("safety_bounds", &g);
    assert_int_equal(s.tid_as_value, 0);
    assert_int_equal(s.tid_in_control, 2); /* threadIdx.x < n, i + 1 < n */
    assert_int_equal(s.non_thread_arrays, 0);
    assert_true(s.layout_ok && s.redirect_ok);
}

/* __umul24(blockIdx.x, blockDim.x) + threadIdx.x: a call under -G, whose
 * arguments and result the taint follows. */
static void umul24_call_followed(void **state)
{
    tmap_safety g, s = analyze_both_builds("safety_umul24", &g);
    assert_int_equal(s.tid_as_value, 0);
    assert_int_equal(s.tid_in_control, 1);
    assert_true(s.layout_ok && s.redirect_ok);
}

static void expect_array(const tmap_safety *s, const char *param, const char *what)
{
    char want[256];
    snprintf(want, sizeof want, "parameter %s %s", param, what);
    if (!strstr(s->reasons, want))
        fail_msg("reasons lack \"%s\":\n%s", want, s->reasons);
}

static void csr_arrays_not_per_thread(void **state)
{
    tmap_safety g, s = analyze_both_builds("safety_csr", &g);
    for (int k = 0; k < 2; k++) {
        const tmap_safety *v = k ? &g : &s;
        assert_int_equal(v->non_thread_arrays, 2);
        assert_int_equal(v->tid_as_value, 0);
        assert_false(v->layout_ok);
        assert_true(v->redirect_ok);
        expect_array(v, "safety_csr_param_0", "is indexed by the thread id beyond the thread's element");
        expect_array(v, "safety_csr_param_3", "is indexed both by the thread id and by data");
    }
}

static void bfs_cost_not_per_thread(void **state)
{
    tmap_safety g, s = analyze_both_builds("safety_bfs", &g);
    for (int k = 0; k < 2; k++) {
        const tmap_safety *v = k ? &g : &s;
        assert_int_equal(v->non_thread_arrays, 2);
        assert_false(v->layout_ok);
        expect_array(v, "safety_bfs_param_0", "is indexed by the thread id beyond the thread's element");
        expect_array(v, "safety_bfs_param_2", "is indexed both by the thread id and by data");
    }
}

/* `for (k = 0; k <= t; k++) s += tile[k]`: the loop bound is the thread's
 * position (a value), though t also indexes tile; -G and default agree. */
static void loop_bound_on_position_is_a_value(void **state)
{
    for (int k = 0; k < 2; k++) {
        analyzed a = analyze_corpus_with("dynamic_shared", k ? "-G" : NULL);
        assert_true(a.s.tid_as_value >= 1);
        assert_false(a.s.layout_ok);
        assert_non_null(strstr(a.s.reasons, "not as a bounds check"));
        free(a.ptx);
    }
}

/* in[i + k], k < 4: unrolled (-O3: offsets 0..12) or a loop (-G: a step);
 * slice[4 * i + k] stays within the thread's four elements */
static void window_reads_neighbours(void **state)
{
    tmap_safety g, s = analyze_both_builds("safety_window", &g);
    for (int k = 0; k < 2; k++) {
        const tmap_safety *v = k ? &g : &s;
        assert_int_equal(v->non_thread_arrays, 1);
        assert_int_equal(v->tid_as_value, 0);
        assert_int_equal(v->tid_in_control, 1); /* i + 3 >= n */
        assert_false(v->layout_ok);
        expect_array(v, "safety_window_param_0", "is indexed by the thread id beyond");
        assert_null(strstr(v->reasons, "safety_window_param_1"));
    }
}

/* Both kernels sharing a .func that reads the ids as an index: no finding,
 * whichever build. */
static void shared_func_kernels_are_safe(void **state)
{
    static const char *const kernels[] = {"shared_k1", "shared_k2"};
    for (int b = 0; b < 2; b++) {
        const char *rel = b ? "tests/ptx/safety/safety_shared_func_G.ptx"
                            : "tests/ptx/safety/safety_shared_func.ptx";
        char *ptx = test_read(rel);
        for (int k = 0; k < 2; k++) {
            tmap_safety s;
            analyze_text(ptx, rel, kernels[k], &s);
            assert_int_equal(s.tid_as_value + s.tid_in_control + s.non_thread_arrays, 0);
            assert_int_equal(s.scope, TMAP_SAFE_GRID);
            assert_true(s.layout_ok && s.redirect_ok);
            assert_non_null(strstr(s.reasons, "no finding"));
        }
        free(ptx);
    }
}

/* The verdicts of a kernel of a module compiled with NVRTC option `option`. */
static void corpus_verdicts(const char *file, const char *option, tmap_safety *out, size_t cap,
                            size_t *n)
{
    char rel[512];
    snprintf(rel, sizeof rel, "tests/kernels/%s", file);
    char *src = test_read(rel);
    tmap_compile_opts o = {.options = option ? &option : NULL, .noptions = option != NULL};
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, rel, &o, &c, err));
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(c.ptx, strlen(c.ptx), rel, &m, err));
    *n = tmap_ptx_num_kernels(m);
    assert_true(*n <= cap);
    for (size_t k = 0; k < *n; k++)
        TMAP_CHECK(tmap_safety_analyze(m, tmap_ptx_kernel_name(m, k), &out[k], err));
    tmap_ptx_free(m);
    tmap_compiled_free(&c);
    free(src);
}

/* Issue 14: the verdicts must not depend on how the compiler uses registers
 * (nor on the calls -G keeps, count_launches.cu). */
static void corpus_verdicts_same_with_g(void **state)
{
    char **names;
    size_t n = test_corpus(&names);
    for (size_t i = 0; i < n; i++) {
        tmap_safety o[8], g[8];
        size_t no, ng;
        corpus_verdicts(names[i], NULL, o, 8, &no);
        corpus_verdicts(names[i], "-G", g, 8, &ng);
        assert_int_equal(no, ng);
        for (size_t k = 0; k < no; k++)
            if (o[k].layout_ok != g[k].layout_ok || o[k].redirect_ok != g[k].redirect_ok ||
                o[k].scope != g[k].scope || !o[k].tid_as_value != !g[k].tid_as_value ||
                !o[k].non_thread_arrays != !g[k].non_thread_arrays)
                fail_msg("%s: default and -G differ:\n%s\n-G:\n%s", names[i], o[k].reasons,
                         g[k].reasons);
        free(names[i]);
    }
    free(names);
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

/* An ld.param with no address operand (found by fuzz_safety): the value
 * numbering read past the statement's operands. */
static void param_load_without_address(void **state)
{
    static const char ptx[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .b32 %r<3>;\n"
        "ld.param.u64 %rd1;\nmov.u32 %r1, %tid.x;\nret;\n}\n";
    tmap_ptx_module *m = NULL;
    tmap_safety s;
    tmap_error e = {0};
    if (tmap_ptx_parse(ptx, strlen(ptx), "noaddr.ptx", &m, &e) == TMAP_OK)
        (void)tmap_safety_analyze(m, "k", &s, &e); /* any verdict or error, no crash */
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
        cmocka_unit_test(register_reuse_keeps_the_verdict),
        cmocka_unit_test(data_indexed_store_is_not_per_thread),
        cmocka_unit_test(bounds_check_same_with_g),
        cmocka_unit_test(csr_arrays_not_per_thread),
        cmocka_unit_test(bfs_cost_not_per_thread),
        cmocka_unit_test(loop_bound_on_position_is_a_value),
        cmocka_unit_test(window_reads_neighbours),
        cmocka_unit_test(corpus_verdicts_same_with_g),
        cmocka_unit_test(umul24_call_followed),
        cmocka_unit_test(shared_func_kernels_are_safe),
        cmocka_unit_test(param_load_without_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_attach_run.c -- run mode's parts that need no GPU: the key
 * expression turned into a CUDA kernel (the exact code, NVRTC compiles it;
 * its errors are in test_expr.c), the options' checks, the safety
 * refusal with its reason and source line, and the summary's lines from
 * stand-in statistics.
 */
#include <math.h>

#include "tests/testutil.h"

#include "attach/launch.h"
#include "runtime/expr.h"

static void key_code(void **state)
{
    (void)state;
    tmap_attach_key k;
    const char *e = "arg0[t+1]-arg0[t]";
    TMAP_CHECK(tmap_attach_key_make(&e, 1, NULL, 0, &k, err));
    assert_int_equal(k.nslots, 1);
    assert_int_equal(k.slot[0].arg, 0);
    assert_int_equal(k.slot[0].elem_size, 4);
    assert_int_equal(k.nexprs, 1);
    const char *want = "        v[0] = (double)(ld<int>(p0, (long long)t + 1LL, lo0, "
                       "hi0) - ld<int>(p0, (long long)t + 0LL, lo0, hi0));\n";
    if (!strstr(k.source, want) || !strstr(k.source, "store_rows<1>(out, n, t, v);") ||
        !strstr(k.source, "tmap_key(double *out, unsigned long long n,\n    const void *p0, "
                          "long long lo0, long long hi0)"))
        fail_msg("%s", k.source);
    tmap_attach_key_free(&k);
}

/* Features, types, unary minus, parentheses: one slot per (arg, type). */
static void key_features_and_types(void **state)
{
    (void)state;
    tmap_attach_feature f;
    TMAP_CHECK(tmap_attach_feature_parse("n=arg2:u32[t+1]", &f, err));
    tmap_attach_key k;
    const char *e = " -(n * 2.5) / arg1:f64[t - 3] + arg2:u32[t+1] + arg2:i64[t]";
    TMAP_CHECK(tmap_attach_key_make(&e, 1, &f, 1, &k, err));
    assert_int_equal(k.nslots, 3);
    assert_int_equal(k.slot[0].arg, 2);
    assert_string_equal(k.slot[0].type, "u32");
    assert_int_equal(k.slot[1].arg, 1);
    assert_int_equal(k.slot[1].elem_size, 8);
    assert_string_equal(k.slot[2].type, "i64");
    const char *want = "-((ld<unsigned>(p0, (long long)t + 1LL, lo0, hi0) * 2.5)) / "
                       "ld<double>(p1, (long long)t + -3LL, lo1, hi1) + ld<unsigned>(p0, "
                       "(long long)t + 1LL, lo0, hi0) + ld<long long>(p2, (long long)t + 0LL, "
                       "lo2, hi2)";
    if (!strstr(k.source, want))
        fail_msg("%s", k.source);
    tmap_attach_key_free(&k);
}

static void key_compile(const char *const *e, size_t n)
{
    tmap_attach_key k;
    TMAP_CHECK(tmap_attach_key_make(e, n, NULL, 0, &k, err));
    tmap_compiled out;
    TMAP_CHECK(tmap_expr_cuda_compile(k.source, "key.cu", &out, err));
    assert_non_null(strstr(out.ptx, ".entry tmap_key("));
    tmap_compiled_free(&out);
    tmap_attach_key_free(&k);
}

/* The generated kernel compiles (NVRTC: no GPU needed). */
static void key_compiles(void **state)
{
    (void)state;
    const char *e[] = {"arg0:u8[t] * arg3:f32[t-1] - arg1:i64[t+2] / (arg0:u8[t] + 1)",
                       "arg2:u64[t]"};
    key_compile(e, 2);
    /* the deepest nesting the parser takes: 256 parentheses, 256 minuses */
    tmap_buf paren = {0}, minus = {0};
    for (int i = 0; i < 256; i++) {
        tmap_buf_puts(&paren, "(");
        tmap_buf_puts(&minus, "-");
    }
    tmap_buf_puts(&paren, "arg0[t]");
    tmap_buf_puts(&minus, "arg0[t]");
    for (int i = 0; i < 256; i++)
        tmap_buf_puts(&paren, ")");
    const char *d[] = {paren.data, minus.data};
    key_compile(d, 2);
    tmap_buf_free(&paren);
    tmap_buf_free(&minus);
}

static void options(void **state)
{
    (void)state;
    tmap_error e = {0};
    tmap_attach_opts o = {.launch_count = -1, .run = 1};
    assert_int_equal(tmap_attach_opts_check(&o, &e), TMAP_ERR_INVALID); /* no key */
    assert_non_null(strstr(e.message, "give the key"));
    o.key = "arg0[t+1]-arg0[t]";
    TMAP_CHECK(tmap_attach_opts_check(&o, err)); /* no -o: run mode makes one */
    o.key = "arg0[t";
    assert_int_equal(tmap_attach_opts_check(&o, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "--key: expression 'arg0[t' at column 7"));
    o.key = "len[t]";
    o.features[0] = "len=arg1:i32[t]";
    o.nfeatures = 1;
    TMAP_CHECK(tmap_attach_opts_check(&o, err));
    o.key = NULL; /* a predictor instead: its features given, in number */
    o.predictor = TMAP_SOURCE_DIR "/benchmarks/results/bench/uniform_control/model.txt";
    TMAP_CHECK(tmap_attach_opts_check(&o, err));
    o.nfeatures = 0;
    assert_int_equal(tmap_attach_opts_check(&o, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "model.txt reads 1 features (x...); give them with --feature"));
    o.key = "len[t]"; /* not both */
    assert_int_equal(tmap_attach_opts_check(&o, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "give the key"));
    o.predictor = NULL;
    o.nfeatures = 1;
    o.trial_launches = 17;
    assert_int_equal(tmap_attach_opts_check(&o, &e), TMAP_ERR_INVALID);
    o.trial_launches = 0;
    o.run = 0; /* profile: a key is refused, -o required */
    o.out = "x";
    assert_int_equal(tmap_attach_opts_check(&o, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "a key is for run mode"));
}

static const char vote_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n\n"
    ".visible .entry vote(\n\t.param .u64 vote_param_0\n)\n{\n"
    "\t.reg .pred %p<2>;\n\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<4>;\n"
    "\t.loc\t1 3 0\n"
    "\tld.param.u64 %rd1, [vote_param_0];\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n"
    "\tmov.u32 %r1, %tid.x;\n"
    "\tmul.wide.u32 %rd3, %r1, 4;\n"
    "\tadd.s64 %rd2, %rd2, %rd3;\n"
    "\tld.global.u32 %r2, [%rd2];\n"
    "\tsetp.ne.s32 %p1, %r2, 0;\n"
    "\t.loc\t1 4 5\n"
    "\tvote.sync.ballot.b32 %r3, %p1, -1;\n"
    "\tst.global.u32 [%rd2], %r3;\n"
    "\tret;\n}\n"
    "\t.file\t1 \"/src/vote.cu\"\n";

/* A kernel whose warps must stay whole is refused, with the finding's PTX
 * line (of the module image, no file) and source line; a safe one is
 * allowed over the grid. */
static void safety_refusal(void **state)
{
    (void)state;
    tmap_regroup_scope scope;
    tmap_error e = {0};
    assert_int_equal(tmap_attach_regroup_check(vote_ptx, "vote", &scope, &e),
                     TMAP_ERR_UNSUPPORTED);
    const char *want = "kernel vote is left alone: the safety analysis allows no regrouping by "
                       "redirection (scope warps): <PTX of vote from the application's module "
                       "image>:21 (vote.cu:4): `vote.sync.ballot.b32`: warp membership matters";
    if (!strstr(e.message, want))
        fail_msg("%s", e.message);
    char *loc = test_read("tests/ptx/loc.ptx");
    TMAP_CHECK(tmap_attach_regroup_check(loc, "loc", &scope, err));
    assert_int_equal(scope, TMAP_REGROUP_GRID);
    free(loc);
}

static char *summary(const tmap_attach_run_stats *s, size_t n)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    tmap_attach_regroup_summary(s, n, f);
    fclose(f);
    return out;
}

/* The summary's lines, from stand-in statistics. */
static void summary_lines(void **state)
{
    (void)state;
    tmap_attach_run_stats s[3] = {
        {.kernel = "_Z4spinPKiPi", .seen = 100, .trial = 21, .regrouped = 79,
         .saved_ms = 79 * 0.25, .setup_ms = 151.3, .original_ms = 1.0, .chosen_ms = 0.75,
         .chosen = "sorting (grid), redirected", .note = "sorting (grid), redirected: ..."},
        {.kernel = "uniform", .seen = 30, .trial = 21, .alone = 2, .original_ms = 1.0,
         .chosen_ms = 1.0, .chosen = "original",
         .note = "original: ...; none beats the original by the threshold: leave launches alone"},
        {.kernel = "vote", .seen = 4, .original_ms = NAN, .chosen_ms = NAN,
         .note = "kernel vote is left alone: the safety analysis ..."},
    };
    char *out = summary(s, 3);
    const char *want =
        "threadmap run: _Z4spinPKiPi: 100 launches seen, 21 before the trial decided, 79 "
        "regrouped by sorting (grid), redirected; saved 19.750 ms measured (0.250 ms per launch: "
        "1.000 -> 0.750 ms, the trial's medians, regrouping counted); setup 151.3 ms, once; "
        "sorting (grid), redirected: ...\n"
        "threadmap run: uniform: 30 launches seen, 21 before the trial decided, 0 regrouped, 2 left alone "
        "(another launch shape, a graph capture, launch attributes or an error); original: ...; "
        "none beats the original by the threshold: leave launches alone\n"
        "threadmap run: vote: 4 launches seen, 0 regrouped; kernel vote is left alone: the "
        "safety analysis ...\n";
    assert_string_equal(out, want);
    free(out);
    out = summary(NULL, 0);
    assert_string_equal(out, "threadmap run: no selected kernel was launched\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_code),       cmocka_unit_test(key_features_and_types),
        cmocka_unit_test(key_compiles),
        cmocka_unit_test(options),        cmocka_unit_test(safety_refusal),
        cmocka_unit_test(summary_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

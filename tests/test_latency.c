/*
 * test_latency.c -- latency tables: Listing 2 of Liang et al. costs 610
 * cycles with the GTX480 table, the fallback chain, malformed tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "threadmap/model.h"

static tmap_lat_table *parse(const char *text)
{
    tmap_lat_table *t = NULL;
    tmap_error err = {0};
    tmap_status s = tmap_lat_parse(text, strlen(text), "t.tsv", &t, &err);
    if (s)
        fail_msg("%s", err.message);
    return t;
}

/* A one-block CFG with the given opcodes (not owned: test data). */
static void one_block_cfg(tmap_cfg *cfg, tmap_cfg_block *blk, char **ops, uint32_t n)
{
    memset(blk, 0, sizeof *blk);
    blk->name = "k/bb_32";
    blk->ninstr = n;
    blk->opcodes = ops;
    blk->term = TMAP_TERM_RET;
    blk->ipdom = -1;
    cfg->nfuncs = 0;
    cfg->funcs = NULL;
    cfg->nblocks = 1;
    cfg->blocks = blk;
}

static void test_listing2_610(void **state)
{
    (void)state;
    tmap_lat_table *t;
    tmap_error err = {0};
    assert_int_equal(tmap_lat_load(TMAP_SOURCE_DIR "/latency_tables/gtx480.tsv", &t, &err), TMAP_OK);
    assert_string_equal(tmap_lat_arch(t), "sm_20");
    char *ops[] = {"mul.lo.s32", "ld.const.u32", "mul.lo.u32", "rem.u32", "div.u32"};
    tmap_cfg cfg;
    tmap_cfg_block blk;
    one_block_cfg(&cfg, &blk, ops, 5);
    double *lat;
    tmap_lat_report rep;
    assert_int_equal(tmap_lat_blocks(t, &cfg, &lat, &rep, &err), TMAP_OK);
    assert_true(lat[0] == 610.0);
    assert_int_equal(rep.n, 0); /* every opcode matched exactly */
    free(lat);
    tmap_lat_report_free(&rep);
    /* An opcode the paper gives no number for and no class default covers. */
    char *bad[] = {"add.f32"};
    one_block_cfg(&cfg, &blk, bad, 1);
    assert_int_equal(tmap_lat_blocks(t, &cfg, &lat, NULL, &err), TMAP_ERR_INVALID);
    assert_non_null(strstr(err.message, "add.f32"));
    assert_non_null(strstr(err.message, "k/bb_32"));
    tmap_lat_free(t);
}

static void test_sm90_table_loads(void **state)
{
    (void)state;
    tmap_lat_table *t;
    tmap_error err = {0};
    assert_int_equal(tmap_lat_load(TMAP_SOURCE_DIR "/latency_tables/sm_90.tsv", &t, &err), TMAP_OK);
    assert_string_equal(tmap_lat_arch(t), "sm_90");
    tmap_lat_lookup l;
    /* the committed table was measured on an H200: it must agree with the
     * published Hopper figures (prior-art.md section 2): fp32 add/mul/fma 4
     * cycles, fp64 add/mul/fma 8, and divisions far slower than either */
    assert_non_null(strstr(tmap_lat_device(t), "H"));
    static const char *const fp32[] = {"add.f32", "mul.f32", "fma.rn.f32"};
    static const char *const fp64[] = {"add.f64", "mul.f64", "fma.rn.f64"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tmap_lat_lookup_opcode(t, fp32[i], &l, &err), TMAP_OK);
        assert_int_equal(l.match, TMAP_LAT_EXACT);
        assert_true(l.latency == 4);
        assert_int_equal(tmap_lat_lookup_opcode(t, fp64[i], &l, &err), TMAP_OK);
        assert_true(l.latency == 8);
    }
    assert_int_equal(tmap_lat_lookup_opcode(t, "div.rn.f64", &l, &err), TMAP_OK);
    assert_true(l.match == TMAP_LAT_EXACT && l.latency > 50 && l.latency < 400);
    /* a load form the table lacks still finds a global-memory latency */
    assert_int_equal(tmap_lat_lookup_opcode(t, "ld.global.nc.v4.f32", &l, &err), TMAP_OK);
    assert_true(l.latency >= 20 && l.latency <= 700);
    tmap_lat_free(t);
}

static const char *chain_table =
    "# arch: test\n"
    "# device: unit test\n"
    "ld.global.f32\t400\t-\tt\n"
    "mad.lo.s32\t5\t2\tt\n"
    "setp.u32\t6\t-\tt\n"
    "bra\t7\t-\tt\n"
    "class:fp32\t8\t-\tt\n"
    "class:int\t9\t-\tt\n"
    "class:int.div\t99\t-\tt\n"
    "class:mem.shared\t30\t-\tt\n"
    "class:default\t1\t-\tt\n";

static void check(const tmap_lat_table *t, const char *op, double lat, tmap_lat_match m,
                  const char *key)
{
    tmap_lat_lookup l;
    tmap_error err = {0};
    assert_int_equal(tmap_lat_lookup_opcode(t, op, &l, &err), TMAP_OK);
    if (l.latency != lat || l.match != m || strcmp(l.key, key))
        fail_msg("%s: got %g via %s (%s), want %g via %s (%s)", op, l.latency,
                 tmap_lat_match_name(l.match), l.key, lat, tmap_lat_match_name(m), key);
}

static void test_fallback_chain(void **state)
{
    (void)state;
    tmap_lat_table *t = parse(chain_table);
    assert_string_equal(tmap_lat_device(t), "unit test");
    check(t, "mad.lo.s32", 5, TMAP_LAT_EXACT, "mad.lo.s32");
    /* .nc and the vector width do not change latency. */
    check(t, "ld.global.nc.v2.f32", 400, TMAP_LAT_NORMALIZED, "ld.global.f32");
    check(t, "ld.global.L1::evict_last.f32", 400, TMAP_LAT_NORMALIZED, "ld.global.f32");
    /* op + type, with signedness ignored: setp.ge.s32 -> setp.u32 */
    check(t, "setp.ge.s32", 6, TMAP_LAT_ROOT_TYPE, "setp.u32");
    check(t, "bra.uni", 7, TMAP_LAT_NORMALIZED, "bra");
    check(t, "bra.uni.foo", 7, TMAP_LAT_ROOT, "bra");
    /* classes and their parents */
    check(t, "fma.rn.f32", 8, TMAP_LAT_CLASS, "class:fp32");
    check(t, "div.rn.f32", 8, TMAP_LAT_CLASS, "class:fp32");    /* fp32.div -> fp32 */
    check(t, "rem.s64", 99, TMAP_LAT_CLASS, "class:int.div");
    check(t, "mul.wide.u32", 9, TMAP_LAT_CLASS, "class:int");   /* int.mul -> int */
    check(t, "ld.shared::cta.u32", 30, TMAP_LAT_CLASS, "class:mem.shared");
    check(t, "sin.approx.f32", 1, TMAP_LAT_DEFAULT, "class:default");
    check(t, "cvt.rn.f32.s32", 1, TMAP_LAT_DEFAULT, "class:default");
    tmap_lat_lookup l;
    tmap_error err = {0};
    assert_int_equal(tmap_lat_lookup_opcode(t, "add..s32", &l, &err), TMAP_ERR_INVALID);
    tmap_lat_free(t);
}

static void test_report_lists_fallbacks(void **state)
{
    (void)state;
    tmap_lat_table *t = parse(chain_table);
    char *ops[] = {"mad.lo.s32", "setp.ge.s32", "fma.rn.f32", "setp.ge.s32", "bra.uni"};
    tmap_cfg cfg;
    tmap_cfg_block blk;
    one_block_cfg(&cfg, &blk, ops, 5);
    double *lat;
    tmap_lat_report rep;
    tmap_error err = {0};
    assert_int_equal(tmap_lat_blocks(t, &cfg, &lat, &rep, &err), TMAP_OK);
    assert_true(lat[0] == 5 + 6 + 8 + 6 + 7);
    assert_int_equal(rep.n, 3); /* sorted by opcode */
    assert_string_equal(rep.items[0].opcode, "bra.uni");
    assert_string_equal(rep.items[1].opcode, "fma.rn.f32");
    assert_string_equal(rep.items[2].opcode, "setp.ge.s32");
    assert_int_equal(rep.items[2].count, 2);
    assert_int_equal(rep.items[2].how.match, TMAP_LAT_ROOT_TYPE);
    free(lat);
    tmap_lat_report_free(&rep);
    tmap_lat_free(t);
}

static void bad_table(const char *text, const char *needle)
{
    tmap_lat_table *t = NULL;
    tmap_error err = {0};
    tmap_status s = tmap_lat_parse(text, strlen(text), "bad.tsv", &t, &err);
    assert_int_equal(s, TMAP_ERR_FORMAT);
    assert_null(t);
    if (!strstr(err.message, needle))
        fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_malformed_tables(void **state)
{
    (void)state;
    bad_table("add.s32\tfour\t-\tsrc\n", "bad.tsv:1: latency 'four' is not a number");
    bad_table("# c\nadd.s32\t4\t-\n", "bad.tsv:2: expected 4 tab-separated columns");
    bad_table("add.s32\t4\t-\tsrc\textra\n", "bad.tsv:1: expected 4");
    bad_table("add.s32\t4\t-\tsrc\n\nadd.s32\t5\t-\tsrc\n",
              "bad.tsv:3: duplicate key 'add.s32' (first on line 1)");
    bad_table("add.s32\t-4\t-\tsrc\n", "bad.tsv:1: latency -4 is not in [0, 1e+15] cycles");
    /* absurd latencies are refused where they are read (issue 14 item 6) */
    bad_table("add.s32\t4\t-\tsrc\nmul.s32\t1e308\t-\tsrc\n",
              "bad.tsv:2: latency 1e+308 is not in [0, 1e+15] cycles");
    bad_table("add.s32\t4\t1e300\tsrc\n", "bad.tsv:1: issue interval '1e300'");
    bad_table("add.s32\t4\t0\tsrc\n", "bad.tsv:1: issue interval '0'");
    bad_table("add.s32\t4\t-\t\n", "bad.tsv:1: empty source");
    bad_table("add s32\t4\t-\tsrc\n", "bad.tsv:1: bad opcode key");
    bad_table("class:fp33\t4\t-\tsrc\n", "bad.tsv:1: unknown class 'class:fp33'");
    bad_table("add.s32\tnan\t-\tsrc\n", "bad.tsv:1: latency 'nan'");
    /* No trailing newline and CRLF line ends are fine. */
    tmap_lat_table *t = parse("add.s32\t4\t-\tsrc\r\nsub.s32\t5\t-\tsrc");
    tmap_lat_free(t);
}

/* Sums of a block above TMAP_LAT_MAX are refused too: one rule for every
 * latency (issue 14 item 6: estimate printed null, regroup refused). */
static void test_latency_rule(void **state)
{
    (void)state;
    tmap_lat_table *t = parse("add.s32\t6e14\t-\tsrc\nclass:default\t1\t-\tsrc\n");
    char *ops[] = {"add.s32", "add.s32"};
    tmap_cfg cfg;
    tmap_cfg_block blk;
    one_block_cfg(&cfg, &blk, ops, 2);
    double *lat = NULL;
    tmap_error err = {0};
    assert_int_equal(tmap_lat_blocks(t, &cfg, &lat, NULL, &err), TMAP_ERR_INVALID);
    assert_string_equal(err.message, "the latency table's block sums: block latency 0 = 1.2e+15 "
                                     "is not in [0, 1e+15] cycles");
    assert_null(lat);
    tmap_lat_free(t);
    double v[3] = {1, 1e15, INFINITY};
    assert_int_equal(tmap_lat_check(v, 2, "l.npy", &err), TMAP_OK);
    assert_int_equal(tmap_lat_check(v, 3, "l.npy", &err), TMAP_ERR_INVALID);
    assert_string_equal(err.message, "l.npy: block latency 2 = inf is not in [0, 1e+15] cycles");
}

static void test_default_path(void **state)
{
    (void)state;
    char buf[4096];
    tmap_error err = {0};
    assert_int_equal(tmap_lat_default_path("sm_90", buf, sizeof buf, &err), TMAP_OK);
    assert_non_null(strstr(buf, "sm_90.tsv"));
    assert_int_equal(tmap_lat_default_path("sm_999", buf, sizeof buf, &err), TMAP_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listing2_610),
        cmocka_unit_test(test_sm90_table_loads),
        cmocka_unit_test(test_fallback_chain),
        cmocka_unit_test(test_report_lists_fallbacks),
        cmocka_unit_test(test_malformed_tables),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_latency_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_attach_loc.c -- source lines (.file/.loc of PTX compiled with
 * -lineinfo): every block's file:line on a hand-written PTX
 * (tests/ptx/loc.ptx) and on PTX nvcc writes here from a kernel of this
 * file (skipped without nvcc), the errors of malformed directives, the
 * safety findings' source lines, and the report's table of the source
 * lines that cost the most divergence, with exact costs.
 */
#include "tests/testutil.h"

#include "report/report_priv.h"

static tmap_ptx_module *parse(const char *text, const char *name)
{
    tmap_ptx_module *m = NULL;
    TMAP_CHECK(tmap_ptx_parse(text, strlen(text), name, &m, err));
    return m;
}

static tmap_cfg *cfg_of(const char *relpath, const char *kernel)
{
    char *text = test_read(relpath);
    tmap_ptx_module *m = parse(text, relpath);
    tmap_cfg *cfg = NULL;
    TMAP_CHECK(tmap_cfg_build(m, kernel, &cfg, err));
    tmap_ptx_free(m);
    free(text);
    return cfg;
}

static const char *src(const tmap_cfg_block *b, char *buf, size_t n)
{
    return tmap_ptx_loc_format(b->src_file, b->src_line, buf, n);
}

/* loc.ptx: the .loc after the label, line 0 skipped for the block's next
 * line, an inlined line of another file, the .file table at the end. */
static void blocks_get_their_lines(void **state)
{
    (void)state;
    tmap_cfg *cfg = cfg_of("tests/ptx/loc.ptx", "loc");
    static const char *const want[] = {"loc.cu:5", "loc.cu:7", "helper.h:3", "loc.cu:9",
                                       "loc.cu:11"};
    assert_int_equal(cfg->nblocks, 5);
    char buf[256];
    for (size_t b = 0; b < 5; b++)
        assert_string_equal(src(&cfg->blocks[b], buf, sizeof buf), want[b]);
    assert_string_equal(cfg->blocks[2].src_file, "/src/inc/helper.h");
    tmap_cfg_free(cfg);
}

static void no_loc_no_line(void **state)
{
    (void)state;
    tmap_cfg *cfg = cfg_of("tests/ptx/divergent.ptx", "divergent");
    for (size_t b = 0; b < cfg->nblocks; b++) {
        assert_null(cfg->blocks[b].src_file);
        assert_int_equal(cfg->blocks[b].src_line, 0);
    }
    char buf[8];
    assert_string_equal(tmap_ptx_loc_format(NULL, 3, buf, sizeof buf), "");
    assert_string_equal(tmap_ptx_loc_format("a/b.cu", 0, buf, sizeof buf), "");
    tmap_cfg_free(cfg);
}

/* The CFG of loc.ptx with `from` replaced by `to` (NULL and e's message
 * when it fails). */
static tmap_cfg *edited(const char *from, const char *to, tmap_error *e)
{
    char *text = test_read("tests/ptx/loc.ptx");
    size_t off = 0, n = strlen(from);
    while (text[off] && strncmp(text + off, from, n))
        off++;
    assert_true(text[off]);
    tmap_buf b = {0};
    tmap_buf_printf(&b, "%.*s%s%s", (int)off, text, to, text + off + n);
    tmap_ptx_module *m = NULL;
    tmap_cfg *cfg = NULL;
    if (tmap_ptx_parse(b.data, b.len, "bad.ptx", &m, e) == TMAP_OK)
        tmap_cfg_build(m, "loc", &cfg, e);
    tmap_ptx_free(m);
    tmap_buf_free(&b);
    free(text);
    return cfg;
}

/* The edited loc.ptx fails with `want` in its message. */
static void bad(const char *from, const char *to, const char *want)
{
    tmap_error e = {0};
    tmap_cfg *cfg = edited(from, to, &e);
    if (cfg)
        fail_msg("'%s' for '%s' was taken", to, from);
    if (!strstr(e.message, want))
        fail_msg("'%s' not in '%s'", want, e.message);
}

/* A .file inside a function body declares its file too. */
static void file_in_body(void **state)
{
    (void)state;
    tmap_error e = {0};
    tmap_cfg *cfg = edited("$L__BB0_2:\n\t.loc\t2 3 9",
                           "\t.file\t3 \"/src/other.cu\"\n$L__BB0_2:\n\t.loc\t3 3 9", &e);
    if (!cfg)
        fail_msg("%s", e.message);
    char buf[64];
    assert_string_equal(src(&cfg->blocks[2], buf, sizeof buf), "other.cu:3");
    tmap_cfg_free(cfg);
}

static void malformed_directives_fail(void **state)
{
    (void)state;
    bad(".loc\t1 7 5", ".loc\t1 x 5", "bad.ptx:27: .loc: expected");
    bad(".loc\t1 7 5", ".loc\t7 7 5", "bad.ptx:27: .loc names file 7, which no .file declares");
    bad(".loc\t1 7 5", ".loc\t1 99999999999 5", "bad.ptx:27: .loc: expected");
    bad(".loc\t1 7 5", ".loc\t1 7", "bad.ptx:27: .loc: expected");
    bad(".loc\t1 7 5", ".loc\t1 7 5 3", "bad.ptx:27: .loc: expected");
    bad(".file\t1 \"/src/loc.cu\"", ".file\t1 \"/src/loc.cu\" 4", ".file: expected");
}

static void safety_names_the_source_line(void **state)
{
    (void)state;
    char *text = test_read("tests/ptx/loc.ptx");
    tmap_ptx_module *m = parse(text, "tests/ptx/loc.ptx");
    tmap_safety s;
    TMAP_CHECK(tmap_safety_analyze(m, "loc", &s, err));
    if (!strstr(s.reasons, "tests/ptx/loc.ptx:23 (loc.cu:6): `setp.ge.s32`"))
        fail_msg("%s", s.reasons);
    char buf[64];
    TMAP_CHECK(tmap_ptx_loc_of_line(m, 35, buf, sizeof buf, err));
    assert_string_equal(buf, "helper.h:3");
    TMAP_CHECK(tmap_ptx_loc_of_line(m, 3, buf, sizeof buf, err)); /* outside every function */
    assert_string_equal(buf, "");
    tmap_ptx_free(m);
    free(text);
}

/* A kernel compiled here with nvcc -ptx -lineinfo: the loop's lines. */
static const char spin_cu[] =
    "__global__ void spin(const int *n, int *out)\n"             /* 1 */
    "{\n"                                                       /* 2 */
    "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"      /* 3 */
    "    int s = 0;\n"                                          /* 4 */
    "    for (int i = 0; i < n[t]; i++)\n"                      /* 5 */
    "        s += i * i ^ s;\n"                                 /* 6 */
    "    out[t] = s;\n"                                         /* 7 */
    "}\n";

static void nvcc_lineinfo(void **state)
{
    (void)state;
    const char *nvcc = "/usr/local/cuda/bin/nvcc";
    if (access(nvcc, X_OK)) {
        print_message("[  SKIPPED ] nvcc_lineinfo: no %s\n", nvcc);
        skip();
    }
    char dir[] = "/tmp/tmap_loc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cu[4200], ptx[4200], cmd[9000];
    snprintf(cu, sizeof cu, "%s/spin.cu", dir);
    snprintf(ptx, sizeof ptx, "%s/spin.ptx", dir);
    TMAP_CHECK(tmap_file_write(cu, spin_cu, strlen(spin_cu), err));
    snprintf(cmd, sizeof cmd, "'%s' -ptx -lineinfo -arch=sm_90 -o '%s' '%s'", nvcc, ptx, cu);
    assert_int_equal(system(cmd), 0);
    char *text = NULL;
    TMAP_CHECK(tmap_file_read(ptx, &text, NULL, err));
    tmap_ptx_module *m = parse(text, ptx);
    tmap_cfg *cfg = NULL;
    TMAP_CHECK(tmap_cfg_build(m, "_Z4spinPKiPi", &cfg, err));
    int loop = 0;
    char buf[256];
    for (size_t b = 0; b < cfg->nblocks; b++) {
        const tmap_cfg_block *blk = &cfg->blocks[b];
        if (!blk->src_line)
            continue;
        assert_string_equal(blk->src_file, cu);
        assert_in_range(blk->src_line, 1, 8);
        loop |= blk->src_line == 5 || blk->src_line == 6;
    }
    assert_true(loop); /* the loop's blocks name its lines */
    assert_string_equal(src(&cfg->blocks[0], buf, sizeof buf), "spin.cu:1"); /* the function's line */
    tmap_cfg_free(cfg);
    tmap_ptx_free(m);
    free(text);
    unlink(ptx);
    unlink(cu);
    rmdir(dir);
}

/* One warp over loc.ptx: threads t < 16 enter (b1, b3) and loop t + 1
 * times (b2); all run b0 and b4.  Costs lat x (max - mean) per block:
 * b1 10 x 0.5, b2 4 x (16 - 136/32), b3 8 x 0.5. */
static void report_ranks_lines(void **state)
{
    (void)state;
    tmap_cfg *cfg = cfg_of("tests/ptx/loc.ptx", "loc");
    uint32_t counts[32 * 5];
    for (uint32_t t = 0; t < 32; t++) {
        uint32_t in = t < 16, row[5] = {1, in, in ? t + 1 : 0, in, 1};
        memcpy(&counts[t * 5], row, sizeof row);
    }
    tmap_bbv bbv = {.nthreads = 32, .nblocks = 5, .counts = counts};
    double lat[5] = {3, 20, 4, 8, 2};
    tmap_model_params params = {.block_size = 32, .nsms = 1, .blocks_per_sm = 1};
    tmap_report r = {.bbv = &bbv, .lat = lat, .params = &params, .cfg = cfg};
    tmap_report_line *lines = NULL;
    size_t n = 0;
    double total = 0;
    TMAP_CHECK(tmap_report_lines(&r, &lines, &n, &total, err));
    assert_int_equal(n, 5);
    assert_float_equal(total, 10 + 47 + 4, 1e-9);
    assert_string_equal(lines[0].file, "/src/inc/helper.h");
    assert_int_equal(lines[0].line, 3);
    assert_float_equal(lines[0].cost, 47, 1e-9);
    assert_float_equal(lines[0].share, 47.0 / 61, 1e-12);
    assert_int_equal(lines[1].line, 7);
    assert_float_equal(lines[1].cost, 10, 1e-9);
    assert_int_equal(lines[2].line, 9);
    assert_float_equal(lines[2].cost, 4, 1e-9);
    assert_float_equal(lines[3].cost, 0, 0);
    free(lines);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    TMAP_CHECK(tmap_report_lines_write(&r, f, TMAP_LINES_TEXT, err));
    fclose(f);
    const char *a = strstr(out, "helper.h:3"), *b = strstr(out, "loc.cu:7"),
               *c = strstr(out, "loc.cu:9");
    if (!a || !b || !c || !(a < b && b < c) || strstr(out, "loc.cu:5") || !strstr(out, "77.0 %"))
        fail_msg("%s", out);
    free(out);
    f = open_memstream(&out, &len);
    TMAP_CHECK(tmap_report_lines_write(&r, f, TMAP_LINES_HTML, err));
    fclose(f);
    if (!strstr(out, "<tr><td><code>helper.h:3</code></td><td>47</td><td>77.0 %</td><td>1</td>"))
        fail_msg("%s", out);
    free(out);
    r.cfg = NULL; /* no CFG: no section */
    f = open_memstream(&out, &len);
    TMAP_CHECK(tmap_report_lines_write(&r, f, TMAP_LINES_TEXT, err));
    fclose(f);
    assert_int_equal(len, 0);
    free(out);
    tmap_cfg_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocks_get_their_lines),
        cmocka_unit_test(no_loc_no_line),
        cmocka_unit_test(malformed_directives_fail),
        cmocka_unit_test(file_in_body),
        cmocka_unit_test(safety_names_the_source_line),
        cmocka_unit_test(nvcc_lineinfo),
        cmocka_unit_test(report_ranks_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_latency_measure.c -- the latency microbenchmarks without a GPU:
 * every generated kernel is accepted by ptxas for sm_90 (both lengths) and
 * sm_75 (the short one: the long one repeats the same step), and, the real
 * check, its sm_90 SASS between the two clock reads holds the unfolded
 * chain (at least steps x sass_per_step instructions of the expected kinds;
 * the integer divisions branch-free).  Also the self-check and the table
 * format on given numbers (test_gpu_latency.c measures on a GPU).
 *
 * The SASS check needs nvdisasm or cuobjdump: $TMAP_NVDISASM, then
 * $TMAP_CUOBJDUMP, then /usr/local/cuda/bin, then PATH; without one, the
 * sm_90 kernels go through ptxas alone and the test shows as skipped.
 */
#include <limits.h>
#include <sys/wait.h>

#include "latency_tables/probe.h"
#include "threadmap/model.h"
#include "tests/testutil.h"

/* ---------------------------------------------------------- the tools */

typedef struct disasm {
    char path[1024];
    int is_nvdisasm;
} disasm;

/* Finds a disassembler (nvdisasm, else cuobjdump); 0 when there is none. */
static int find_disasm(disasm *d)
{
    const char *names[2] = {"nvdisasm", "cuobjdump"};
    for (int k = 0; k < 2; k++)
        if (tmap_sass_tool_find(names[k], d->path, sizeof d->path, NULL) == TMAP_OK) {
            d->is_nvdisasm = k == 0;
            return 1;
        }
    return 0;
}

static char *gen_ptx(const tmap_latency_probe *b, unsigned steps, const char *arch)
{
    tmap_buf buf = {0};
    tmap_error e = {0};
    if (tmap_latency_probe_ptx(b, steps, arch, &buf, &e) != TMAP_OK)
        fail_msg("%s", e.message);
    return buf.data;
}

/* Writes text to a new temporary file; its name into path (>= 32 bytes). */
static void write_temp(const char *text, char *path)
{
    strcpy(path, "/tmp/tmap_lat_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_true(write(fd, text, n) == (ssize_t)n);
    close(fd);
}

/* Runs cmd; its output (malloc'ed) into *text; returns the exit status. */
static int run_capture(const char *cmd, char **text)
{
    FILE *p = popen(cmd, "r");
    tmap_buf b = {0};
    char chunk[65536];
    size_t got;
    while (p && (got = fread(chunk, 1, sizeof chunk, p)) > 0)
        tmap_buf_put(&b, chunk, got);
    int rc = p ? pclose(p) : -1;
    if (!b.data)
        tmap_buf_puts(&b, "");
    *text = b.data;
    return rc;
}

/* Compiles PTX for sm_90 (failing the test if ptxas rejects it) and
 * returns the disassembly (malloc'ed); NULL when d is NULL. */
static char *sass_of(const disasm *d, const char *ptx, const char *what)
{
    char in[64], cubin[80], cmd[4096];
    write_temp(ptx, in);
    snprintf(cubin, sizeof cubin, "%s.cubin", in);
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -o '%s' '%s' 2>&1", TMAP_PTXAS_DEFAULT, cubin,
             in);
    char *log = NULL;
    int rc = run_capture(cmd, &log);
    unlink(in);
    char msg[4096];
    snprintf(msg, sizeof msg, "%s", log);
    free(log);
    if (rc != 0) {
        unlink(cubin);
        fail_msg("%s: ptxas -arch=sm_90 failed: %s", what, msg);
    }
    if (!d) { /* no disassembler: ptxas accepted it, which is all we can check */
        unlink(cubin);
        return NULL;
    }
    snprintf(cmd, sizeof cmd, d->is_nvdisasm ? "'%s' -c '%s' 2>&1" : "'%s' -sass '%s' 2>&1",
             d->path, cubin);
    char *sass = NULL;
    rc = run_capture(cmd, &sass);
    unlink(cubin);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "%s", sass);
        free(sass);
        fail_msg("%s: %s failed: %s", what, d->path, msg);
    }
    return sass;
}

/* ------------------------------------------------------ SASS analysis */

/* The instruction on a disassembly line ("/ *0060* /  @P0 FADD R0, ...;"),
 * without its guard, into ins; 0 if the line holds none. */
static int instruction_of(const char *line, char *ins, size_t size)
{
    const char *p = strstr(line, "*/");
    if (!p || !strstr(line, ";"))
        return 0;
    p += 2;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '@') /* guard: @P0, @!PT ... */
        while (*p && *p != ' ')
            p++;
    while (*p == ' ')
        p++;
    if (!*p || *p == '/' || *p == ';')
        return 0;
    size_t n = strcspn(p, ";");
    if (n >= size)
        n = size - 1;
    memcpy(ins, p, n);
    ins[n] = '\0';
    return 1;
}

/* ins's mnemonic is `name` or starts with "name." */
static int is_kind(const char *ins, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(ins, name, n) && (ins[n] == '.' || ins[n] == ' ' || ins[n] == '\0');
}

typedef struct sass_count {
    int clocks;      /* clock reads seen (the region is between the first two) */
    int total;       /* instructions between them */
    int expected;    /* ... of the benchmark's kinds */
    int branches;    /* ... BRA, CALL, BSSY, JMP */
} sass_count;

static sass_count count_region(const char *sass, const tmap_latency_probe *b)
{
    sass_count c = {0};
    char ins[256];
    for (const char *line = sass; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        line = nl ? nl + 1 : NULL;
        if (!instruction_of(buf, ins, sizeof ins))
            continue;
        if (strstr(ins, "SR_CLOCK")) {
            if (++c.clocks == 2)
                break;
            continue;
        }
        if (c.clocks != 1)
            continue;
        c.total++;
        for (int k = 0; k < 4 && b->sass[k]; k++)
            if (is_kind(ins, b->sass[k])) {
                c.expected++;
                break;
            }
        if (is_kind(ins, "BRA") || is_kind(ins, "CALL") || is_kind(ins, "JMP") ||
            is_kind(ins, "BRX"))
            c.branches++;
    }
    return c;
}

/* ------------------------------------------------------------- tests */

static const char *const known_classes[] = {"int", "fp32", "fp64", "sfu", "conversion",
                                            "control", "global", "shared", "const", "local",
                                            "atomic", "other"};

static void test_list_is_sane(void **state)
{
    (void)state;
    size_t n = 0, opcodes = 0;
    const tmap_latency_probe *list = tmap_latency_probes(&n);
    for (size_t i = 0; i < n; i++) {
        const tmap_latency_probe *b = &list[i];
        int known = 0;
        for (size_t k = 0; k < sizeof known_classes / sizeof *known_classes; k++)
            known |= !strcmp(b->cls, known_classes[k]);
        if (!known)
            fail_msg("%s: unknown class %s", b->opcodes[0], b->cls);
        assert_non_null(strstr(b->step, "{X}"));
        assert_non_null(strstr(b->step, "{Y}"));
        assert_non_null(b->sass[0]);
        assert_true(b->sass_per_step >= 1);
        assert_true(b->ops_per_step == 1 || (b->ops_per_step == 2 && b->opcodes[1]));
        assert_true(b->threads == 1 || b->threads == 32);
        for (int j = 0; j < 2 && b->opcodes[j]; j++, opcodes++)
            assert_ptr_equal(tmap_latency_find(b->opcodes[j]), b);
        if (b->companion) { /* measured before its users */
            const tmap_latency_probe *c = tmap_latency_find(b->companion);
            assert_non_null(c);
            assert_true(c < b);
        }
    }
    assert_true(opcodes >= 40);
    assert_null(tmap_latency_find("no.such.op"));
}

static void test_ptx_text(void **state)
{
    (void)state;
    char *ptx = NULL;
    TMAP_CHECK(tmap_latency_ptx("add.f32", 128, "sm_90", &ptx, err));
    assert_non_null(strstr(ptx, ".target sm_90\n"));
    assert_non_null(strstr(ptx, ".version 8.0\n"));
    assert_non_null(strstr(ptx, "%clock64"));
    assert_null(strchr(ptx, '{') == NULL ? NULL : strstr(ptx, "{X}"));
    size_t adds = 0;
    for (const char *p = ptx; (p = strstr(p, "add.f32 %x")); p++)
        adds++;
    assert_int_equal(adds, 128);
    /* step 0 writes x0 from x1, step 1 writes x1 from x0 */
    assert_non_null(strstr(ptx, "add.f32 %x0, %x1, %c;\n    add.f32 %x1, %x0, %c;"));
    free(ptx);
    /* PTX vector braces survive the placeholder pass */
    TMAP_CHECK(tmap_latency_ptx("mul.wide.s32", 2, "sm_90", &ptx, err));
    assert_non_null(strstr(ptx, "mov.b64 {%t, %x0}, %w;"));
    free(ptx);

    tmap_error e = {0};
    assert_int_equal(tmap_latency_ptx("add.f32", 8, "compute_90", &ptx, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_latency_ptx("add.f32", 0, "sm_90", &ptx, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_latency_ptx("bogus.op", 8, "sm_90", &ptx, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "bogus.op"));
    TMAP_CHECK(tmap_latency_ptx("add.f32", 4, "sm_100a", &ptx, err));
    assert_non_null(strstr(ptx, ".version 8.6\n"));
    free(ptx);
}

/* The kernels of every benchmark that runs on sm_<max_sm> or older, at
 * each of the nsteps lengths, for arch, as one module (one ptxas and one
 * disassembler run: each takes seconds to start where the page cache is
 * cold).  Kernel (i, k) is named tmap_lat_III_K, and every name a benchmark
 * declares (tmap_lat, tmap_lat_const...) is renamed alike, so none collide. */
static char *all_ptx(const tmap_latency_probe *list, size_t n, const unsigned *steps, int nsteps,
                     const char *arch, unsigned max_sm)
{
    tmap_buf m = {0};
    char *header = NULL;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < nsteps && list[i].min_sm <= max_sm; k++) {
            char *ptx = gen_ptx(&list[i], steps[k], arch);
            char *body = strstr(ptx, ".address_size 64\n");
            assert_non_null(body);
            body += strlen(".address_size 64\n");
            if (!header)
                header = strndup(ptx, (size_t)(body - ptx)), tmap_buf_puts(&m, header);
            assert_true(!strncmp(ptx, header, strlen(header))); /* one .version for all */
            for (const char *p = body, *q; *p; p = q + strlen("tmap_lat")) {
                if (!(q = strstr(p, "tmap_lat"))) {
                    tmap_buf_puts(&m, p);
                    break;
                }
                tmap_buf_put(&m, p, (size_t)(q - p));
                tmap_buf_printf(&m, "tmap_lat_%03zu_%d", i, k);
            }
            free(ptx);
        }
    free(header);
    assert_false(m.oom);
    return m.data;
}

/* Every benchmark that runs on sm_75, at the short length, through ptxas
 * for sm_75 as one module; where ptxas rejects it, each kernel alone, to
 * name the first it rejects. */
static void test_ptxas_sm75(void **state)
{
    (void)state;
    if (!test_have_ptxas()) {
        print_message("[  SKIPPED ] no ptxas at %s\n", TMAP_PTXAS_DEFAULT);
        skip();
    }
    size_t n = 0, done = 0;
    const tmap_latency_probe *list = tmap_latency_probes(&n);
    for (size_t i = 0; i < n; i++)
        if (list[i].min_sm > 75)
            print_message("  %s needs sm_%u: not tried on sm_75\n", list[i].opcodes[0],
                          list[i].min_sm);
        else
            done++;
    const unsigned steps[1] = {TMAP_LATENCY_SHORT};
    char *all = all_ptx(list, n, steps, 1, "sm_75", 75), log[8192];
    int rc = test_ptxas(all, "sm_75", log, sizeof log);
    free(all);
    for (size_t i = 0; rc != 0 && i < n; i++) {
        if (list[i].min_sm > 75)
            continue;
        char *ptx = gen_ptx(&list[i], TMAP_LATENCY_SHORT, "sm_75");
        int one = test_ptxas(ptx, "sm_75", log, sizeof log);
        free(ptx);
        if (one != 0)
            fail_msg("%s: ptxas -arch=sm_75: %s", list[i].opcodes[0], log);
    }
    if (rc != 0)
        fail_msg("the module of every sm_75 kernel: ptxas -arch=sm_75 rejects it, each alone not");
    print_message("  %zu kernels accepted by ptxas -arch=sm_75\n", done);
}

/* The disassembly of kernel (i, k) within all of it: from its section's
 * banner to the next banner (NULL if it is missing). */
static char *sass_of_kernel(const char *sass, size_t i, int k)
{
    char banner[64];
    snprintf(banner, sizeof banner, "-- .text.tmap_lat_%03zu_%d ", i, k);
    const char *p = strstr(sass, banner);
    if (!p)
        return NULL;
    p += strlen(banner);
    const char *end = strstr(p, "\n//----");
    return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/* The chain is in the SASS, unfolded: see the file comment. */
static void test_sass_not_folded(void **state)
{
    (void)state;
    disasm d;
    if (!test_have_ptxas()) {
        print_message("[  SKIPPED ] no ptxas at %s\n", TMAP_PTXAS_DEFAULT);
        skip();
    }
    int have_disasm = find_disasm(&d);
    size_t n = 0;
    const tmap_latency_probe *list = tmap_latency_probes(&n);
    const unsigned steps[2] = {TMAP_LATENCY_SHORT, TMAP_LATENCY_LONG};
    char *ptx = all_ptx(list, n, steps, 2, "sm_90", UINT_MAX);
    char *sass = sass_of(have_disasm ? &d : NULL, ptx, "the benchmarks' module");
    free(ptx);
    if (!sass) {
        print_message("[  SKIPPED ] all %zu kernels accepted by ptxas -arch=sm_90; their SASS "
                      "needs nvdisasm or cuobjdump (set TMAP_NVDISASM or TMAP_CUOBJDUMP)\n",
                      2 * n);
        skip();
    }
    tmap_buf bad = {0};
    print_message("  %-22s %5s %9s %9s  (sm_90, per step; with %s)\n", "opcode", "steps",
                  "expected", "all SASS", d.path);
    for (size_t i = 0; i < n; i++) {
        const tmap_latency_probe *b = &list[i];
        for (int k = 0; k < 2; k++) {
            char *one = sass_of_kernel(sass, i, k);
            if (!one) {
                tmap_buf_printf(&bad, "%s (%u steps): not in the disassembly\n",
                                b->opcodes[0], steps[k]);
                continue;
            }
            sass_count c = count_region(one, b);
            free(one);
            unsigned want = steps[k] * b->sass_per_step;
            print_message("  %-22s %5u %9.2f %9.2f%s\n", b->opcodes[0], steps[k],
                          (double)c.expected / steps[k], (double)c.total / steps[k],
                          c.expected >= (int)want ? "" : "  FOLDED?");
            if (c.clocks < 2)
                tmap_buf_printf(&bad, "%s (%u steps): %d clock reads in the SASS, want 2\n",
                                b->opcodes[0], steps[k], c.clocks);
            else if (c.expected < (int)want)
                tmap_buf_printf(&bad, "%s (%u steps): %d of %s... between the clock reads, "
                                      "want >= %u\n",
                                b->opcodes[0], steps[k], c.expected, b->sass[0], want);
            if (!strcmp(b->cls, "int") && c.branches)
                tmap_buf_printf(&bad, "%s (%u steps): %d branches in an integer chain\n",
                                b->opcodes[0], steps[k], c.branches);
        }
    }
    free(sass);
    if (bad.data) {
        print_error("%s", bad.data);
        tmap_buf_free(&bad);
        fail_msg("some chains are not in the SASS as expected (above)");
    }
}

static void test_self_check(void **state)
{
    (void)state;
    double per = 0;
    char note[200];
    assert_true(tmap_latency_check(530, 1042, &per, note, sizeof note));
    assert_true(per > 3.99 && per < 4.01);
    /* folded: no growth */
    assert_false(tmap_latency_check(40, 41, &per, note, sizeof note));
    assert_non_null(strstr(note, "folded"));
    /* growth but far from linear */
    assert_false(tmap_latency_check(100, 400, &per, note, sizeof note));
    assert_non_null(strstr(note, "linear"));
    assert_false(tmap_latency_check(0, 0, &per, note, sizeof note));
}

/* The issue interval: with 8 warps per sub-partition a step of an
 * issue-bound chain costs 8 intervals; one that hid its latency is only a
 * bound, and not written. */
static void test_issue_interval(void **state)
{
    (void)state;
    double issue = -1;
    char note[160];
    assert_true(tmap_latency_issue(4, 16, 1, &issue, note, sizeof note));
    assert_true(issue > 1.999 && issue < 2.001);
    assert_true(tmap_latency_issue(23, 64, 2, &issue, note, sizeof note)); /* a pair */
    assert_true(issue > 3.999 && issue < 4.001);
    assert_false(tmap_latency_issue(40, 44, 1, &issue, note, sizeof note));
    assert_true(issue == 0);
    assert_non_null(strstr(note, "latency-bound"));
    assert_non_null(strstr(note, "at most 5.50"));
    assert_false(tmap_latency_issue(0, 16, 1, &issue, note, sizeof note));
    assert_false(tmap_latency_issue(4, 16, 0, &issue, note, sizeof note));
}

/* Measured intervals go in the issue column, their class's median in the
 * class line; an unmeasured one says why in its source. */
static void test_table_issue(void **state)
{
    (void)state;
    tmap_device_info info = {0};
    info.cc_major = 9;
    tmap_latency_result r[2] = {0};
    const char *ops[2] = {"add.s32", "sub.s32"};
    for (int i = 0; i < 2; i++) {
        r[i].bench = tmap_latency_find(ops[i]);
        r[i].reps = 5, r[i].ok = 1, r[i].per_step = r[i].latency = 4;
    }
    r[0].per_step_full = 8, r[0].issue = 1;
    snprintf(r[1].issue_note, sizeof r[1].issue_note, "latency-bound at 8 warps");
    tmap_buf out = {0};
    tmap_latency_table_format(&info, "2026-01-01", r, 2, NULL, 0, NULL, &out);
    const char *t = out.data;
    assert_non_null(strstr(t, "\nadd.s32\t4.0\t1.00\tmeasured: dependent chain, 256 vs 128 "
                              "steps, median of 5; issue: 1024 threads in one block (8 warps "
                              "per sub-partition), 8.0 cycles per step\n"));
    assert_non_null(strstr(t, "\nsub.s32\t4.0\t-\tmeasured: dependent chain, 256 vs 128 "
                              "steps, median of 5; issue not measured: latency-bound at 8 warps\n"));
    assert_non_null(strstr(t, "\nclass:int\t4.0\t1.00\tderived: median of add.s32, sub.s32\n"));
    tmap_lat_table *back = NULL;
    tmap_error e = {0};
    assert_int_equal(tmap_lat_parse(t, strlen(t), "measured", &back, &e), TMAP_OK);
    tmap_lat_lookup how;
    assert_int_equal(tmap_lat_lookup_opcode(back, "add.s32", &how, &e), TMAP_OK);
    assert_true(how.issue > 0.999 && how.issue < 1.001);
    tmap_lat_free(back);
    tmap_buf_free(&out);
}

static void test_table_format(void **state)
{
    (void)state;
    tmap_device_info info = {0};
    snprintf(info.name, sizeof info.name, "Test GPU");
    info.cc_major = 9;
    info.clock_khz = 1980000;
    info.driver_version = 13000;
    tmap_latency_result r[4] = {0};
    const char *ops[4] = {"add.s32", "and.b32", "cvt.rn.f32.s32", "add.f32"};
    const double per[4] = {4, 8, 12, 4};
    for (int i = 0; i < 4; i++) {
        r[i].bench = tmap_latency_find(ops[i]);
        r[i].reps = 5;
        r[i].per_step = per[i];
        r[i].ok = i != 3;
        r[i].latency = per[i] / r[i].bench->ops_per_step;
    }
    r[1].latency -= r[0].latency; /* what the companion step does */
    snprintf(r[3].note, sizeof r[3].note, "only 0.10 cycles more per step");
    tmap_buf out = {0};
    const char base_text[] = "st.global.u32\t5\t-\tpublished\n"
                             "add.s32\t9\t-\told\n"
                             "class:int\t7\t-\told\n"
                             "class:sync\t4\t4\tguess\n";
    tmap_lat_table *base = NULL;
    tmap_error e = {0};
    assert_int_equal(tmap_lat_parse(base_text, strlen(base_text), "base", &base, &e), TMAP_OK);
    tmap_latency_table_format(&info, "2026-01-01", r, 4, NULL, 0, base, &out);
    const char *t = out.data;
    assert_non_null(strstr(t, "# arch: sm_90\n"));
    assert_non_null(strstr(t, "# device: Test GPU\n"));
    assert_non_null(strstr(t, "# sm_clock_mhz: 1980\n"));
    assert_non_null(strstr(t, "# driver: 13.0\n"));
    assert_non_null(strstr(t, "# measured_by: threadmap latency --measure\n"));
    assert_non_null(strstr(t, "# date: 2026-01-01\n"));
    assert_non_null(strstr(t, "\nadd.s32\t4.0\t-\tmeasured: dependent chain, 256 vs 128 steps, "
                              "median of 5\n"));
    assert_non_null(strstr(t, "\nand.b32\t4.0\t-\t"));
    assert_non_null(strstr(t, "\ncvt.rn.f32.s32\t6.0\t-\t"));
    assert_non_null(strstr(t, "\ncvt.rzi.s32.f32\t6.0\t-\t"));
    assert_non_null(strstr(t, "half of a cvt.rn.f32.s32 + cvt.rzi.s32.f32 pair"));
    assert_null(strstr(t, "\nadd.f32\t")); /* suspect: left out */
    assert_non_null(strstr(t, "# suspect, left out: add.f32: only 0.10"));
    assert_non_null(strstr(t, "\nclass:int\t4.0\t-\tderived: median of add.s32, and.b32\n"));
    assert_non_null(strstr(t, "\nclass:convert\t6.0\t-\t"));
    assert_non_null(strstr(t, "# class:fp32: nothing measured\n"));
    /* the base table fills what was not measured, and only that */
    assert_non_null(strstr(t, "\nst.global.u32\t5\t-\tnot measured, kept from the base table: "
                              "published\n"));
    assert_non_null(strstr(t, "\nclass:sync\t4\t4\tnot measured, kept from the base table: guess\n"));
    assert_null(strstr(t, "\told\n"));
    /* and what is written is what the model reads */
    tmap_lat_table *back = NULL;
    if (tmap_lat_parse(t, strlen(t), "written", &back, &e) != TMAP_OK)
        fail_msg("the written table does not parse: %s", e.message);
    tmap_lat_lookup lk;
    assert_int_equal(tmap_lat_lookup_opcode(back, "and.b32", &lk, &e), TMAP_OK);
    assert_true(lk.latency == 4.0 && lk.match == TMAP_LAT_EXACT);
    tmap_lat_free(back);
    tmap_lat_free(base);
    /* every data line has 4 tab-separated fields */
    for (const char *l = t; *l; l = strchr(l, '\n') + 1) {
        if (*l != '#') {
            int tabs = 0;
            for (const char *p = l; *p && *p != '\n'; p++)
                tabs += *p == '\t';
            assert_int_equal(tabs, 3);
        }
        if (!strchr(l, '\n'))
            break;
    }
    tmap_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_is_sane),   cmocka_unit_test(test_ptx_text),
        cmocka_unit_test(test_self_check),     cmocka_unit_test(test_table_format),
        cmocka_unit_test(test_ptxas_sm75),
        cmocka_unit_test(test_sass_not_folded), cmocka_unit_test(test_issue_interval),
        cmocka_unit_test(test_table_issue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

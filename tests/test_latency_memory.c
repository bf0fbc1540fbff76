/*
 * test_latency_memory.c -- the memory probes without a GPU: the list, the
 * arithmetic that turns records into per-SM-cycle figures, the random
 * cycle the chases follow, the PTX through ptxas (sm_90, sm_75) with the
 * loads the probes claim in its SASS, and their lines in the table, read
 * back by the model (test_gpu_latency.c measures them on a GPU).
 */
#include "latency_tables/probe.h"
#include "threadmap/model.h"
#include "tests/testutil.h"

static void test_list(void **state)
{
    (void)state;
    size_t n = 0;
    const tmap_latency_memprobe *p = tmap_latency_memprobes(&n);
    assert_int_equal(n, 11);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(strncmp(p[i].key, "sm:", 3), 0);
        assert_ptr_equal(tmap_latency_memprobe_find(p[i].key), &p[i]);
        assert_null(tmap_latency_find(p[i].key)); /* not a chain's opcode */
        int constant = p[i].kind >= TMAP_MEM_CONST_LINES && p[i].kind <= TMAP_MEM_CONST_FILL;
        int local = p[i].kind == TMAP_MEM_L1_LOCAL;
        assert_true(constant ? p[i].bytes == 57344
                             : local ? p[i].bytes == 512u << 10 : p[i].bytes >= 8u << 20);
        assert_int_equal(constant, !strncmp(p[i].key, "sm:const.", 9));
    }
    /* the constant probes: the capacity before the rates that need it */
    assert_int_equal(p[7].kind, TMAP_MEM_CONST_LINES);
    assert_int_equal(p[8].kind, TMAP_MEM_CONST_IDC);
    assert_int_equal(p[9].kind, TMAP_MEM_CONST_FILL);
    assert_string_equal(p[10].key, "sm:l1.local_bytes");
    /* the DRAM stream (which flushes the L2) comes first */
    assert_string_equal(p[0].key, "sm:dram.bytes_per_cycle");
    assert_non_null(tmap_latency_memprobe_find("sm:l2.bytes_per_cycle"));
    assert_null(tmap_latency_memprobe_find("sm:const.lanes1"));
    assert_null(tmap_latency_memprobe_find(NULL));
    /* the one-SM rates are stream and gather alone; the others every SM's */
    size_t one = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].one_sm) {
            assert_true(p[i].kind != TMAP_MEM_CHASE);
            assert_non_null(strstr(p[i].key, ".one_sm."));
            one++;
        }
    assert_int_equal(one, 2);
}

/* 6.4e9 bytes in 2 ms at 1600 MHz on 100 SMs: 3.2e6 cycles, 20 bytes per
 * SM cycle per SM. */
static void test_per_sm_cycle(void **state)
{
    (void)state;
    double v = tmap_latency_per_sm_cycle(6.4e9, 2e6, 1600, 100);
    assert_true(v > 19.9999 && v < 20.0001);
    assert_true(tmap_latency_per_sm_cycle(1, 0, 1600, 100) == 0);
    assert_true(tmap_latency_per_sm_cycle(1, 1, 0, 100) == 0);
    assert_true(tmap_latency_per_sm_cycle(1, 1, 1600, 0) == 0);
}

/* Three blocks {timer start, end, clock start, end}: the span runs from
 * the earliest start to the latest end; the clock is the median ratio. */
static void test_span(void **state)
{
    (void)state;
    const uint64_t rec[12] = {1000, 3000, 50, 3050,        /* 1500 MHz */
                              1100, 3100, 10, 4010,        /* 2000 MHz */
                              900,  2900, 7, 3207};        /* 1600 MHz */
    double ns = 0, mhz = 0;
    assert_true(tmap_latency_span(rec, 3, &ns, &mhz));
    assert_true(ns == 2200);
    assert_true(mhz > 1599.999 && mhz < 1600.001);
    const uint64_t back[4] = {5000, 4000, 1, 2}; /* the timer ran backwards */
    assert_false(tmap_latency_span(back, 1, &ns, &mhz));
    assert_true(ns == 0 && mhz == 0);
    assert_false(tmap_latency_span(rec, 0, &ns, &mhz));
}

/* One cycle through every node, for any n. */
static void test_cycle(void **state)
{
    (void)state;
    const uint32_t sizes[] = {1, 2, 3, 1000, 65536};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint32_t n = sizes[k], *next = malloc(n * sizeof *next);
        unsigned char *seen = calloc(n, 1);
        assert_non_null(next);
        assert_non_null(seen);
        tmap_latency_cycle(next, n, 42);
        uint32_t x = 0, steps = 0;
        do {
            assert_true(next[x] < n);
            assert_false(seen[x]);
            seen[x] = 1, x = next[x], steps++;
        } while (x != 0 && steps <= n);
        assert_int_equal(steps, n);
        if (n > 2) /* not the identity's successor */
            assert_true(next[0] != 1 || next[1] != 2 || next[2] != 3);
        free(next), free(seen);
    }
}

static char *mem_ptx(const char *arch)
{
    tmap_buf b = {0};
    tmap_error e = {0};
    if (tmap_latency_mem_ptx(arch, &b, &e) != TMAP_OK)
        fail_msg("%s", e.message);
    return b.data;
}

static void test_ptx(void **state)
{
    (void)state;
    char *ptx = mem_ptx("sm_90");
    assert_non_null(strstr(ptx, ".target sm_90\n"));
    const char *entries[] = {TMAP_MEM_ENTRY_LINK,   TMAP_MEM_ENTRY_CHASE,
                             TMAP_MEM_ENTRY_STREAM, TMAP_MEM_ENTRY_GATHER,
                             TMAP_MEM_ENTRY_CCHASE, TMAP_MEM_ENTRY_CTPUT,
                             TMAP_MEM_ENTRY_LSWEEP};
    assert_non_null(strstr(ptx, ".const .align 4 .b32 " TMAP_MEM_CTAB "[14336];"));
    for (int i = 0; i < 7; i++) {
        char want[64];
        snprintf(want, sizeof want, ".entry %s(", entries[i]);
        assert_non_null(strstr(ptx, want));
    }
    free(ptx);
    tmap_buf b = {0};
    tmap_error e = {0};
    assert_int_equal(tmap_latency_mem_ptx("compute_90", &b, &e), TMAP_ERR_INVALID);
    tmap_buf_free(&b);
    if (!test_have_ptxas()) {
        print_message("[  SKIPPED ] no ptxas at %s\n", TMAP_PTXAS_DEFAULT);
        skip();
    }
    const char *arch[2] = {"sm_90", "sm_75"};
    char log[8192];
    for (int k = 0; k < 2; k++) {
        ptx = mem_ptx(arch[k]);
        if (test_ptxas(ptx, arch[k], log, sizeof log) != 0)
            fail_msg("memory probes: ptxas -arch=%s: %s", arch[k], log);
        free(ptx);
    }
}

/* The SASS of each kernel holds the loads it claims: the chase's 8
 * dependent 64-bit L2 loads (.cg: STRONG.GPU) in its loop, the stream's
 * 128-bit ones, the gather's 32-bit ones, the constant kernels' indexed
 * reads of bank 3 (LDC, the constant cache: not turned into global loads),
 * the local sweep's LDL (its row kept in local memory, not registers). */
static void test_sass(void **state)
{
    (void)state;
    char tool[1024], in[] = "/tmp/tmap_mem_XXXXXX", cmd[4096];
    if (!test_have_ptxas() || tmap_sass_tool_find("nvdisasm", tool, sizeof tool, NULL)) {
        print_message("[  SKIPPED ] needs ptxas and nvdisasm\n");
        skip();
    }
    char *ptx = mem_ptx("sm_90");
    int fd = mkstemp(in);
    assert_true(fd >= 0);
    assert_true(write(fd, ptx, strlen(ptx)) == (ssize_t)strlen(ptx));
    close(fd);
    free(ptx);
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -o '%s.cubin' '%s' && '%s' -c '%s.cubin'",
             TMAP_PTXAS_DEFAULT, in, in, tool, in);
    FILE *p = popen(cmd, "r");
    tmap_buf sass = {0};
    char chunk[4096];
    size_t got;
    while (p && (got = fread(chunk, 1, sizeof chunk, p)) > 0)
        tmap_buf_put(&sass, chunk, got);
    assert_int_equal(p ? pclose(p) : -1, 0);
    unlink(in);
    snprintf(cmd, sizeof cmd, "%s.cubin", in);
    unlink(cmd);
    struct { const char *entry, *load; int at_least; } want[] = {
        {TMAP_MEM_ENTRY_CHASE, "LDG.E.64.STRONG.GPU", 8},
        {TMAP_MEM_ENTRY_STREAM, "LDG.E.128.STRONG.GPU", 4},
        {TMAP_MEM_ENTRY_GATHER, "LDG.E ", 4},
        {TMAP_MEM_ENTRY_CCHASE, "LDC R", 2},
        {TMAP_MEM_ENTRY_CTPUT, "c[0x3][R", 4},
        {TMAP_MEM_ENTRY_LSWEEP, "LDL ", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char head[80];
        snprintf(head, sizeof head, ".text.%s:", want[i].entry);
        const char *s = strstr(sass.data, head);
        assert_non_null(s);
        const char *end = strstr(s + 1, "\n.text.");
        int n = 0;
        for (const char *q = s; (q = strstr(q, want[i].load)) && (!end || q < end); q++)
            n++;
        if (n < want[i].at_least)
            fail_msg("%s: %d x %s in its SASS, want >= %d", want[i].entry, n, want[i].load,
                     want[i].at_least);
    }
    tmap_buf_free(&sass);
}

/* The measured sm: lines replace the base's, a suspect one is a comment,
 * and the model reads what was written. */
static void test_table(void **state)
{
    (void)state;
    tmap_device_info info = {0};
    info.cc_major = 9;
    tmap_latency_mem_result m[3] = {0};
    m[0].probe = tmap_latency_memprobe_find("sm:l2.bytes_per_cycle");
    m[0].ok = 1, m[0].value = 21.5, m[0].amount = 8e9, m[0].ns = 2e6, m[0].mhz = 1755;
    m[0].blocks = 264, m[0].threads = 512, m[0].passes = 463, m[0].reps = 5;
    m[1].probe = tmap_latency_memprobe_find("sm:dram.latency");
    m[1].ok = 1, m[1].value = 812.3, m[1].amount = 1024, m[1].ns = 470e3, m[1].mhz = 1769;
    m[1].reps = 5;
    m[2].probe = tmap_latency_memprobe_find("sm:l2.gather_sectors_per_cycle");
    snprintf(m[2].note, sizeof m[2].note, "the launch took 0 ns");
    const char base_text[] = "sm:l2.bytes_per_cycle\t13.8\t-\tpublished\n"
                             "sm:const.lanes1\t37\t-\tmeasured\n";
    tmap_lat_table *base = NULL, *back = NULL;
    tmap_error e = {0};
    assert_int_equal(tmap_lat_parse(base_text, strlen(base_text), "base", &base, &e), TMAP_OK);
    tmap_buf out = {0};
    tmap_latency_table_format(&info, "2026-01-01", NULL, 0, m, 3, base, &out);
    const char *t = out.data;
    assert_non_null(strstr(t, "\nsm:l2.bytes_per_cycle\t21.500\t-\tmeasured: every SM streams"));
    assert_non_null(strstr(t, "264 blocks of 512 threads"));
    assert_non_null(strstr(t, "463 passes: 8e+09 bytes in 2000.0 us"));
    assert_non_null(strstr(t, "\nsm:dram.latency\t812.3\t-\tmeasured: one thread chases"));
    assert_non_null(strstr(t, "2048 vs 1024 steps, median of 5: 831795 cycles more = 470000 ns"));
    assert_non_null(strstr(t, "# suspect, left out: sm:l2.gather_sectors_per_cycle: the "
                              "launch took 0 ns\n"));
    assert_null(strstr(t, "13.8"));
    assert_non_null(strstr(t, "\nsm:const.lanes1\t37\t-\tnot measured, kept"));
    assert_int_equal(tmap_lat_parse(t, strlen(t), "written", &back, &e), TMAP_OK);
    double l2 = 0;
    tmap_sm_params p = {0};
    tmap_sm_table_params(back, &l2, &p);
    assert_true(p.bytes_per_cycle == 21.5 && p.gather_sectors_per_cycle == 0);
    tmap_lat_free(back), tmap_lat_free(base);
    tmap_buf_free(&out);
}

/* const.fill's c1 on the H100's k = 32 windows of
 * benchmarks/results/const-cache-tput.txt (cache 2048 bytes, c0 1.89): the
 * fit written there, 34.15; windows within the cache take no part; none
 * past it, 0. */
static void test_idc_fill(void **state)
{
    (void)state;
    const double w[] = {1024, 2560, 3072, 3584, 4096, 6144, 8192, 16384, 49152},
                 y[] = {1.89, 3.17, 5.39, 7.82, 10.09, 16.97, 21.15, 28.18, 33.34};
    double c1 = tmap_latency_idc_fill(w, y, 9, 2048, 1.89);
    assert_true(c1 > 34.10 && c1 < 34.20);
    assert_true(tmap_latency_idc_fill(w + 1, y + 1, 8, 2048, 1.89) == c1);
    assert_true(tmap_latency_idc_fill(w, y, 1, 2048, 1.89) == 0);
    /* exact: cycles = 2 + 30 m^2 */
    double ex[3], wx[3] = {4096, 8192, 32768};
    for (int i = 0; i < 3; i++)
        ex[i] = 2 + 30 * (1 - 2048 / wx[i]) * (1 - 2048 / wx[i]);
    c1 = tmap_latency_idc_fill(wx, ex, 3, 2048, 2);
    assert_true(c1 > 29.999999 && c1 < 30.000001);
}

/* The constant and local probes' lines: the bytes whole, the rates to 2
 * places, what each measured; the model reads them. */
static void test_const_table(void **state)
{
    (void)state;
    tmap_device_info info = {0};
    info.cc_major = 9;
    tmap_latency_mem_result m[4] = {0};
    m[0].probe = tmap_latency_memprobe_find("sm:const.cache_bytes");
    m[0].ok = 1, m[0].value = 2048, m[0].amount = 32, m[0].lo = 49, m[0].hi = 119, m[0].reps = 5;
    m[1].probe = tmap_latency_memprobe_find("sm:const.idc_cycles");
    m[1].ok = 1, m[1].value = 1.8912, m[1].lo = 1.79, m[1].hi = 1.95, m[1].mhz = 1980;
    m[1].blocks = 1056, m[1].threads = 256, m[1].passes = 64, m[1].reps = 5;
    m[2].probe = tmap_latency_memprobe_find("sm:const.idc_fill_cycles");
    m[2].ok = 1, m[2].value = 34.153, m[2].lo = 1.89, m[2].hi = 2048, m[2].amount = 8;
    m[2].mhz = 1980, m[2].reps = 5;
    m[3].probe = tmap_latency_memprobe_find("sm:l1.local_bytes");
    m[3].ok = 1, m[3].value = 221184, m[3].amount = 432, m[3].lo = 35.2, m[3].hi = 210.4;
    m[3].threads = 128, m[3].passes = 8, m[3].reps = 5;
    tmap_buf out = {0};
    tmap_latency_table_format(&info, "2026-01-01", NULL, 0, m, 4, NULL, &out);
    const char *t = out.data, *want[] = {
        "\nsm:const.cache_bytes\t2048\t-\tmeasured: one thread's chain",
        "49.0 cycles an access at one line, 119.0 at 896; 32 lines of 64",
        "\nsm:const.idc_cycles\t1.89\t-\tmeasured: every SM",
        "1056 blocks of 256 threads, 4 ld.const.u32 chains a thread, 64",
        "\nsm:const.idc_fill_cycles\t34.15\t-\tmeasured:",
        "8 windows of 1.25 to 24 times the cache (2048 bytes)",
        "\nsm:l1.local_bytes\t221184\t-\tmeasured: one block of 4 warps",
        "35.2 cycles an access at 8 KB of rows, 210.4 at 524288; 432 words a thread"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(t, want[i]))
            fail_msg("not in the table: %s\n%s", want[i], t);
    tmap_lat_table *back = NULL;
    TMAP_CHECK(tmap_lat_parse(t, strlen(t), "written", &back, err));
    double l2 = 0;
    tmap_sm_params p = {0};
    tmap_sm_table_params(back, &l2, &p);
    assert_true(p.const_cache_bytes == 2048 && p.idc_cycles == 1.89 && p.idc_fill_cycles == 34.15);
    double local = 0; /* read by the model beside sm:l2.latency: the line itself */
    for (size_t i = 0; i < tmap_lat_num_entries(back); i++) {
        const char *k, *src;
        double lat, issue;
        tmap_lat_entry(back, i, &k, &lat, &issue, &src);
        if (!strcmp(k, "sm:l1.local_bytes"))
            local = lat;
    }
    assert_true(local == 221184);
    tmap_lat_free(back);
    tmap_buf_free(&out);
}

/* What the SM model takes from a table: the random chase's L2 latency
 * before the one word's, the L2's bandwidth and rate of gathered sectors. */
static void test_model_params(void **state)
{
    (void)state;
    const char one[] = "ld.global.cg.u64\t252.8\t-\tmeasured\n"
                       "sm:l2.bytes_per_cycle\t29.7\t-\tmeasured\n";
    const char both[] = "ld.global.cg.u64\t252.8\t-\tmeasured\n"
                        "sm:l2.latency\t284.9\t-\tmeasured\n"
                        "sm:l2.gather_sectors_per_cycle\t0.526\t-\tmeasured\n"
                        "sm:l2.one_sm.bytes_per_cycle\t77.2\t-\tmeasured\n"
                        "sm:l2.one_sm.gather_sectors_per_cycle\t1.006\t-\tmeasured\n";
    tmap_lat_table *t = NULL;
    tmap_sm_params p = {0};
    double l2 = 0;
    TMAP_CHECK(tmap_lat_parse(one, strlen(one), "one", &t, err));
    tmap_sm_table_params(t, &l2, &p);
    assert_true(l2 == 252.8 && p.bytes_per_cycle == 29.7 && p.gather_sectors_per_cycle == 0);
    assert_true(p.one_sm_bytes_per_cycle == 0 && p.one_sm_gather_sectors_per_cycle == 0);
    tmap_lat_free(t);
    TMAP_CHECK(tmap_lat_parse(both, strlen(both), "both", &t, err));
    tmap_sm_table_params(t, &l2, &p);
    assert_true(l2 == 284.9 && p.bytes_per_cycle == 0 && p.gather_sectors_per_cycle == 0.526);
    assert_true(p.one_sm_bytes_per_cycle == 77.2 && p.one_sm_gather_sectors_per_cycle == 1.006);
    tmap_lat_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list),  cmocka_unit_test(test_per_sm_cycle),
        cmocka_unit_test(test_span),  cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_ptx),   cmocka_unit_test(test_sass),
        cmocka_unit_test(test_table), cmocka_unit_test(test_model_params),
        cmocka_unit_test(test_idc_fill), cmocka_unit_test(test_const_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

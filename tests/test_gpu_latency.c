/*
 * test_gpu_latency.c -- on a GPU: the latency microbenchmarks measure
 * add.f32, ld.shared.u32 and div.rn.f32 within plausible ranges of cycles,
 * and the table they make holds the opcodes and their classes; the memory
 * probes all pass their self-checks, within plausible ranges.  Skipped
 * (exit 77) without a GPU.
 */
#include "threadmap/latency_tables.h"
#include "tests/testutil.h"

static void progress_line(void *user, size_t i, size_t total, const char *line)
{
    (void)user;
    print_message("  [%zu/%zu] %s\n", i + 1, total, line);
}

static void test_gpu_measure(void **state)
{
    (void)state;
    tmap_cuda *c = test_gpu_open();
    const char *only[] = {"add.f32", "ld.shared.u32", "div.rn.f32"};
    const double lo[] = {2, 10, 8}, hi[] = {12, 80, 200};
    tmap_latency_measure_opts o = {0};
    o.only = only;
    o.nonly = 3;
    o.progress = progress_line;
    tmap_latency_result *r = NULL;
    size_t n = 0;
    TMAP_CHECK(tmap_latency_measure_results(c, &o, &r, &n, err));
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (strcmp(only[k], r[i].bench->opcodes[0]))
            k++;
        if (!r[i].ok)
            fail_msg("%s suspect: %s", only[k], r[i].note);
        if (r[i].latency < lo[k] || r[i].latency > hi[k])
            fail_msg("%s: %.2f cycles, outside the plausible %.0f..%.0f", only[k],
                     r[i].latency, lo[k], hi[k]);
    }
    free(r);
    char *table = NULL;
    TMAP_CHECK(tmap_latency_measure(c, &o, &table, err));
    assert_non_null(strstr(table, "\nadd.f32\t"));
    assert_non_null(strstr(table, "\nclass:fp32\t"));
    print_message("%s", table);
    free(table);
    tmap_cuda_close(c);
}

/* Each memory probe passes its self-checks (the L2 faster than the DRAM,
 * the DRAM below its peak) within a range that any GPU since Turing keeps;
 * sm_90's constant cache exactly, its L1's room for local rows near the
 * Nsight Compute figure. */
static void test_gpu_memory(void **state)
{
    (void)state;
    tmap_cuda *c = test_gpu_open();
    tmap_latency_measure_opts o = {0};
    o.progress = progress_line;
    tmap_latency_mem_result *r = NULL;
    size_t n = 0;
    TMAP_CHECK(tmap_latency_measure_memory(c, &o, &r, &n, err));
    const struct { const char *key; double lo, hi; } want[] = {
        {"sm:dram.bytes_per_cycle", 1, 64},  {"sm:dram.latency", 200, 3000},
        {"sm:l2.bytes_per_cycle", 4, 256},   {"sm:l2.gather_sectors_per_cycle", 0.05, 8},
        {"sm:l2.one_sm.bytes_per_cycle", 4, 512},
        {"sm:l2.one_sm.gather_sectors_per_cycle", 0.05, 16},
        {"sm:l2.latency", 80, 1000},         {"sm:const.cache_bytes", 512, 57344},
        {"sm:const.idc_cycles", 0.25, 20},   {"sm:const.idc_fill_cycles", 1, 1000},
        {"sm:l1.local_bytes", 16384, 524288}};
    assert_int_equal(n, sizeof want / sizeof *want);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(r[i].probe->key, want[i].key);
        if (!r[i].ok)
            fail_msg("%s suspect: %s", want[i].key, r[i].note);
        if (r[i].value < want[i].lo || r[i].value > want[i].hi)
            fail_msg("%s: %.3f %s, outside the plausible %g..%g", want[i].key, r[i].value,
                     r[i].probe->unit, want[i].lo, want[i].hi);
    }
    /* sm_90's constant cache: 2 KB (benchmarks/results/const-cache-geom.txt) */
    tmap_device_info info;
    TMAP_CHECK(tmap_cuda_info(c, &info, err));
    /* and its L1's room for local rows: 209.6 KB from Nsight Compute's hit
     * rates (benchmarks/results/l1-local.txt), every load a hit to 216 KB */
    if (info.cc_major == 9 && info.cc_minor == 0) {
        assert_true(r[7].value == 2048);
        assert_true(r[10].value >= 200 * 1024 && r[10].value <= 232 * 1024);
    }
    free(r);
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gpu_measure),
                                       cmocka_unit_test(test_gpu_memory)};
    return test_gpu_main(tests, NULL, NULL);
}

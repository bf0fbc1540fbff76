/*
 * test_gpu_bench.c -- `threadmap bench` end to end on the GPU (skipped
 * without one): the bundled example (features: profiled on two seeds,
 * trained, predicted; where the GPU path runs, its features computed on
 * the GPU and timed) and a small kernel without features (BBVs measured),
 * then every output file checked: CSV rows, JSON read back with the device
 * and per-kernel data, the per-kernel folders, the report's sections.
 */
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/testutil.h"

static int exists(const char *dir, const char *file)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return stat(path, &st) == 0 && st.st_size > 0;
}

static size_t count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    int c;
    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

static void test_bench_end_to_end(void **state)
{
    (void)state;
    tmap_cuda *c = test_gpu_open();
    tmap_cuda_close(c);
    char dir[] = "/tmp/tmap_gpu_bench_XXXXXX", cmd[8192], path[4200];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/threadmap' bench --kernels "
                              "examples/divergent/manifest.json,tests/manifests/vector_small.json "
                              "--out '%s' --launches 4 > '%s/stdout.txt' 2> '%s/stderr.txt'",
             TMAP_SOURCE_DIR, TMAP_BINARY_DIR, dir, dir, dir);
    int rc = system(cmd);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    char *log = NULL;
    tmap_file_read(path, &log, NULL, NULL);
    print_message("%s", log ? log : "");
    free(log);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 0);
    static const char *const files[] = {"results.csv", "results.json", "report.md", "speedup_kernel.svg",
                                        "predicted_vs_measured_bbv_weighted_scheduled.svg",
                                        "divergent/model.txt", "divergent/report.md", "divergent/report.json",
                                        "vector_small/report.md"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!exists(dir, files[i]))
            fail_msg("%s/%s missing", dir, files[i]);
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        fail_msg("%s: %s", path, je.text);
    json_t *dev = json_object_get(j, "device");
    assert_true(strlen(json_string_value(json_object_get(dev, "name"))) > 0);
    assert_true(json_integer_value(json_object_get(dev, "bus_width_bits")) > 0);
    assert_true(json_real_value(json_object_get(dev, "peak_dram_gbps")) > 100);
    json_t *ks = json_object_get(j, "kernels");
    assert_int_equal(json_array_size(ks), 2);
    size_t rows = 0;
    for (size_t i = 0; i < 2; i++) {
        json_t *k = json_array_get(ks, i), *opts = json_object_get(k, "options");
        assert_true(json_is_true(json_object_get(k, "ok")));
        assert_true(json_is_true(json_object_get(k, "outputs_ok")));
        assert_true(json_real_value(json_object_get(json_array_get(opts, 0), "kernel_ms")) > 0);
        rows += json_array_size(opts);
    }
    json_t *div = json_array_get(ks, 0), *tr = json_object_get(div, "training");
    assert_true(json_array_size(json_object_get(tr, "r2_per_block")) > 0);
    assert_true(json_is_real(json_object_get(div, "predict_ms")));
    /* the GPU path, where it ran, computed the features on the GPU, counted,
     * unless its trial kept the original (its note starts "original:"):
     * then no launch reads a key and none are computed */
    json_t *dopts = json_object_get(div, "options");
    for (size_t i = 0; i < json_array_size(dopts); i++) {
        json_t *o = json_array_get(dopts, i);
        if (strcmp(json_string_value(json_object_get(o, "name")), "gpu-path"))
            continue;
        double fms = json_real_value(json_object_get(div, "gpu_features_ms"));
        const char *note = json_string_value(json_object_get(o, "note"));
        int kept_original = note && !strncmp(note, "original:", 9);
        print_message("divergent: features on the GPU %.4f ms per input (%s)\n", fms,
                      note ? note : "no note");
        assert_true(kept_original ? fms == 0 : fms > 0 && fms < 1);
    }
    const char *none = json_string_value(json_object_get(json_object_get(json_array_get(ks, 1), "training"), "model"));
    assert_true(!strncmp(none, "none", 4));
    json_decref(j);
    snprintf(path, sizeof path, "%s/results.csv", dir);
    assert_int_equal(count_lines(path), 1 + rows);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = NULL;
    TMAP_CHECK(tmap_file_read(path, &md, NULL, err));
    assert_non_null(strstr(md, "## (f) Targets"));
    assert_non_null(strstr(md, "(--launches 4)"));
    free(md);
    print_message("bench output kept in %s\n", dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bench_end_to_end)};
    return test_gpu_main(tests, NULL, NULL);
}

/*
 * test_gpu_features.c -- a manifest's features computed on the GPU
 * (tmap_manifest_features_gpu, runtime/manifest_features.c) equal
 * tmap_manifest_features' host matrix bit for bit, on three suite
 * manifests with features (escape_time: float expressions; bfs_topdown: a
 * product of two integer arrays; mummer_match: i32 times f32) at their full
 * size and on tests/manifests/features_mixed.json (every element type,
 * offsets, literals); a second call launches the kernel kept from the
 * first and writes the same.  Prints each kernel's
 * time per call (CUDA events, median of 21) next to the first call's,
 * which compiles it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap.h"
#include "tests/testutil.h"
#include "runtime/manifest.h"

enum { REPS = 21 };

static int cmp_float(const void *a, const void *b)
{
    float p = *(const float *)a, q = *(const float *)b;
    return (p > q) - (p < q);
}

/* The device matrix at d equals the host's, bit for bit. */
static void expect_equal(tmap_cuda *c, const tmap_manifest *m, uint64_t d, const double *host,
                         size_t n, size_t q, const char *what)
{
    double *got = malloc(n * q * sizeof *got);
    assert_non_null(got);
    TMAP_CHECK(tmap_cuda_download(c, got, d, n * q * sizeof *got, err));
    size_t i = 0;
    while (i < n * q && !memcmp(&got[i], &host[i], sizeof *got))
        i++;
    double g = i < n * q ? got[i] : 0;
    free(got);
    if (i < n * q)
        fail_msg("%s (%s): features.%s, thread %zu: GPU %a, host %a", m->path, what,
                 m->feature_names[i % q], i / q, g, host[i]);
}

/* Median time of a call, the kernel kept (CUDA events around each). */
static float median_ms(tmap_cuda *c, tmap_manifest *m, uint64_t d)
{
    tmap_timer *t;
    float ms[REPS];
    TMAP_CHECK(tmap_timer_create(c, &t, err));
    for (int i = 0; i < REPS; i++) {
        TMAP_CHECK(tmap_timer_start(t, NULL, err));
        TMAP_CHECK(tmap_manifest_features_gpu(m, d, NULL, err));
        TMAP_CHECK(tmap_timer_stop(t, NULL, err));
        TMAP_CHECK(tmap_timer_wait(t, &ms[i], err));
    }
    tmap_timer_free(t);
    qsort(ms, REPS, sizeof *ms, cmp_float);
    return ms[REPS / 2];
}

/* *state: the manifest's path from the source folder. */
static void check_manifest(void **state)
{
    const char *rel = *state;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", TMAP_SOURCE_DIR, rel);
    tmap_cuda *c = test_gpu_open();
    tmap_manifest *m;
    tmap_launch l;
    double *host;
    size_t n, q;
    TMAP_CHECK(tmap_manifest_load(path, &m, err));
    TMAP_CHECK(tmap_manifest_generate(m, 3, err));
    TMAP_CHECK(tmap_manifest_bind(m, c, &l, err));
    TMAP_CHECK(tmap_manifest_features(m, &host, &n, &q, NULL, err));
    size_t bytes = n * q * sizeof(double);
    uint64_t d = test_device_alloc(c, bytes);
    TMAP_CHECK(tmap_cuda_zero(c, d, bytes, err));
    double t0 = tmap_clock_seconds();
    TMAP_CHECK(tmap_manifest_features_gpu(m, d, NULL, err));
    expect_equal(c, m, d, host, n, q, "first call"); /* the download waits */
    double first_ms = (tmap_clock_seconds() - t0) * 1e3;
    const void *kept = m->fgpu;
    assert_non_null(kept);

    /* again: the kernel kept */
    TMAP_CHECK(tmap_cuda_zero(c, d, bytes, err));
    TMAP_CHECK(tmap_manifest_features_gpu(m, d, NULL, err));
    assert_ptr_equal(m->fgpu, kept);
    expect_equal(c, m, d, host, n, q, "second call");

    float ms = median_ms(c, m, d);
    print_message("features on the GPU: %s, %zu threads x %zu features (%.1f MB): %.1f us per "
                  "call (median of %d), first call %.1f ms (compiles)\n", tmap_manifest_name(m),
                  n, q, bytes / 1e6, ms * 1e3, REPS, first_ms);
    expect_equal(c, m, d, host, n, q, "after the timed calls");
    tmap_cuda_free(c, d);
    free(host);
    tmap_manifest_free(m);
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(check_manifest, "benchmarks/suite/escape_time.json"),
        cmocka_unit_test_prestate(check_manifest, "benchmarks/suite/bfs_topdown.json"),
        cmocka_unit_test_prestate(check_manifest, "benchmarks/suite/mummer_match.json"),
        cmocka_unit_test_prestate(check_manifest, "tests/manifests/features_mixed.json"),
    };
    return test_gpu_main(tests, NULL, NULL);
}

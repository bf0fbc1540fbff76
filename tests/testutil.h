/*
 * testutil.h -- what several tests share: reading fixtures, running ptxas on
 * PTX text, compiling corpus kernels, and the main of a GPU test program
 * (skipped, exit 77, without a GPU).
 * Included by test programs only (each is one translation unit).
 */
#ifndef TMAP_TESTS_TESTUTIL_H
#define TMAP_TESTS_TESTUTIL_H

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/base.h"
#include "threadmap.h"

/* Built with AddressSanitizer (gcc or clang): its allocator and its
 * runtime's place in the library list change what some tests can see. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* Fails the test with the library's message when a call does not succeed. */
#define TMAP_CHECK(call)                                                          \
    do {                                                                          \
        tmap_error e_ = {0};                                                      \
        tmap_error *err = &e_;                                                    \
        (void)err;                                                                \
        tmap_status s_ = (call);                                                  \
        if (s_ != TMAP_OK)                                                        \
            fail_msg("%s failed: %s", #call, e_.message);                         \
    } while (0)

static inline char *test_read(const char *relpath)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", TMAP_SOURCE_DIR, relpath);
    char *data = NULL;
    tmap_error e = {0};
    if (tmap_file_read(path, &data, NULL, &e) != TMAP_OK)
        fail_msg("%s", e.message);
    return data;
}

static inline int test_have_ptxas(void) { return access(TMAP_PTXAS_DEFAULT, X_OK) == 0; }

/* Runs ptxas -arch=ARCH on the text; returns its exit status, and its output
 * in log (at least 4096 bytes). */
static inline int test_ptxas(const char *ptx, const char *arch, char *log, size_t logsize)
{
    char in[] = "/tmp/tmap_ptxas_XXXXXX";
    int fd = mkstemp(in);
    if (fd < 0)
        return -1;
    size_t n = strlen(ptx);
    int ok = write(fd, ptx, n) == (ssize_t)n;
    close(fd);
    if (!ok) {
        unlink(in);
        return -1;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s -o /dev/null '%s' 2>&1", TMAP_PTXAS_DEFAULT,
             arch, in);
    FILE *p = popen(cmd, "r");
    size_t got = 0;
    if (p) {
        got = fread(log, 1, logsize - 1, p);
    }
    log[got] = '\0';
    int rc = p ? pclose(p) : -1;
    unlink(in);
    return rc;
}

static inline int test_by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .cu file names in tests/kernels, sorted (malloc'ed; free each). */
static inline size_t test_corpus(char ***names)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/kernels", TMAP_SOURCE_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    *names = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".cu"))
            continue;
        *names = realloc(*names, (n + 1) * sizeof **names);
        (*names)[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(*names, n, sizeof **names, test_by_name);
    return n;
}

/* Fails the test with ptxas's log unless ptxas -arch=sm_90 accepts ptx. */
static inline void test_expect_ptxas_ok(const char *ptx, const char *what)
{
    char log[8192];
    if (test_ptxas(ptx, "sm_90", log, sizeof log) != 0)
        fail_msg("ptxas rejected %s:\n%s", what, log);
}

/* A seeded random permutation of 0..n-1 (malloc'ed). */
static inline uint32_t *test_random_perm(size_t n, uint64_t seed)
{
    uint32_t *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t j = (size_t)((seed >> 33) % (i + 1));
        uint32_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    return p;
}

/* Opens GPU 0; fails the test when it cannot (test_gpu_main has checked
 * that there is one). */
static inline tmap_cuda *test_gpu_open(void)
{
    tmap_cuda *c = NULL;
    TMAP_CHECK(tmap_cuda_open(0, &c, err));
    return c;
}

/* bytes of device memory, or a device copy of the bytes at h (0 when h is
 * NULL); fails the test when the allocation or the copy does. */
static inline uint64_t test_device_alloc(tmap_cuda *c, size_t bytes)
{
    uint64_t d = 0;
    TMAP_CHECK(tmap_cuda_alloc(c, bytes, &d, err));
    return d;
}

static inline uint64_t test_device_copy(tmap_cuda *c, const void *h, size_t bytes)
{
    if (!h)
        return 0;
    uint64_t d = test_device_alloc(c, bytes);
    TMAP_CHECK(tmap_cuda_upload(c, d, h, bytes, err));
    return d;
}

/* The n words at device address d equal the CPU's want[]; else fails
 * naming what, the first index that differs, the GPU's word and the CPU's. */
static inline void test_expect_device_u32(tmap_cuda *c, uint64_t d, const uint32_t *want,
                                          size_t n, const char *what)
{
    uint32_t *got = malloc(n * sizeof *got);
    assert_non_null(got);
    TMAP_CHECK(tmap_cuda_download(c, got, d, n * sizeof *got, err));
    size_t i = 0;
    while (i < n && got[i] == want[i])
        i++;
    uint32_t g = i < n ? got[i] : 0;
    free(got);
    if (i < n)
        fail_msg("%s[%zu] of %zu: GPU %u, CPU %u", what, i, n, g, want[i]);
}

/* The main of a GPU test program (tests/test_gpu_*.c, GPU tests only):
 * without a GPU or driver it names the reason and each test on
 * `[  SKIPPED ]` lines and returns 77, which CTest reports as skipped
 * (SKIP_RETURN_CODE); otherwise it runs the tests, so that any other
 * failure to open the GPU fails them. */
static inline int test_gpu_run(const char *group, const struct CMUnitTest *tests, size_t n,
                               CMFixtureFunction setup, CMFixtureFunction teardown)
{
    tmap_cuda *c = NULL;
    tmap_error e = {0};
    if (tmap_cuda_open(0, &c, &e) == TMAP_ERR_NO_DEVICE) {
        print_message("[  SKIPPED ] no GPU: %s\n", e.message);
        for (size_t i = 0; i < n; i++)
            print_message("[  SKIPPED ] %s\n", tests[i].name);
        return 77;
    }
    tmap_cuda_close(c);
    return _cmocka_run_group_tests(group, tests, n, setup, teardown);
}
#define test_gpu_main(tests, setup, teardown)                                              \
    test_gpu_run(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

#endif

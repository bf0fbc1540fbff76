/*
 * test_nvrtc.c -- the NVRTC front end: PTX out, names lowered, errors with
 * the compile log, the PTX ISA version table, and libnvrtc loaded only when
 * a compile needs it.
 */
#include "tests/testutil.h"
#include "instrument/nvrtc.h"

/* Whether libnvrtc is mapped into this process. */
static int nvrtc_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "/libnvrtc.so") != NULL;
    fclose(f);
    return found;
}

/* libnvrtc is loaded by the first compile, not at start: a command that
 * compiles nothing does not pay for its 100 MB.  Runs first. */
static void loaded_on_first_compile(void **state)
{
    assert_false(nvrtc_mapped());
    int ma = 0, mi = -1;
    assert_int_equal(tmap_nvrtc_version(&ma, &mi), 0);
    assert_true(ma >= 12 && mi >= 0);
    assert_int_equal(tmap_nvrtc_version(NULL, &mi), -1);
    const char *src = "extern \"C\" __global__ void k(int *p) { p[0] = 1; }";
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, "k.cu", NULL, &c, err));
    assert_true(nvrtc_mapped());
    tmap_compiled_free(&c);
}

/* THREADMAP_LIBNVRTC names the library alone: one that is not there is an
 * error naming NVRTC, not a crash. */
static void missing_library_is_an_error(void **state)
{
    assert_int_equal(setenv("THREADMAP_LIBNVRTC", "/nonexistent/libnvrtc.so", 1), 0);
    tmap_compiled c;
    tmap_error e = {0};
    tmap_status s = tmap_compile("__global__ void k() {}", "k.cu", NULL, &c, &e);
    int ma, mi;
    int v = tmap_nvrtc_version(&ma, &mi);
    unsetenv("THREADMAP_LIBNVRTC");
    assert_int_equal(s, TMAP_ERR_NVRTC);
    assert_non_null(strstr(e.message, "k.cu: cannot load NVRTC (/nonexistent/libnvrtc.so"));
    assert_null(c.ptx);
    assert_int_equal(v, -1);
}

/* A library without NVRTC's entry points (the C library): the first one
 * missing is named, in table order (common/dl.c). */
static void wrong_library_is_an_error(void **state)
{
    assert_int_equal(setenv("THREADMAP_LIBNVRTC", "libc.so.6", 1), 0);
    tmap_compiled c;
    tmap_error e = {0};
    tmap_status s = tmap_compile("__global__ void k() {}", "k.cu", NULL, &c, &e);
    unsetenv("THREADMAP_LIBNVRTC");
    assert_int_equal(s, TMAP_ERR_NVRTC);
    assert_string_equal(e.message, "k.cu: the NVRTC library loaded has no nvrtcGetErrorString");
    assert_null(c.ptx);
}

static void compiles_extern_c(void **state)
{
    const char *src = "extern \"C\" __global__ void k(int *p) { p[threadIdx.x] = 1; }";
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, "k.cu", NULL, &c, err));
    assert_non_null(strstr(c.ptx, ".visible .entry k("));
    assert_non_null(strstr(c.ptx, ".target sm_90"));
    tmap_compiled_free(&c);
}

static void lowers_cpp_names(void **state)
{
    const char *src = "namespace n { template <int K> __global__ void k(int *p) { p[0] = K; } "
                      "template __global__ void k<3>(int *); }";
    const char *names[] = {"n::k<3>"};
    tmap_compile_opts o = {.arch = "compute_80", .names = names, .nnames = 1};
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, "t.cu", &o, &c, err));
    const char *low = tmap_compiled_lowered(&c, "n::k<3>");
    assert_non_null(low);
    assert_string_equal(low, "_ZN1n1kILi3EEEvPi");
    assert_non_null(strstr(c.ptx, ".target sm_80"));
    assert_null(tmap_compiled_lowered(&c, "n::k<4>"));
    tmap_compiled_free(&c);
}

static void reports_log_on_error(void **state)
{
    const char *src = "extern \"C\" __global__ void k(int *p) { p[0] = undefined_thing; }";
    tmap_compiled c;
    tmap_error e = {0};
    assert_int_equal(tmap_compile(src, "bad.cu", NULL, &c, &e), TMAP_ERR_NVRTC);
    assert_non_null(strstr(e.message, "bad.cu"));
    assert_non_null(strstr(e.message, "undefined_thing"));
    assert_null(c.ptx);
}

static void rejects_unknown_kernel_name(void **state)
{
    const char *src = "extern \"C\" __global__ void k(int *p) { p[0] = 1; }";
    const char *names[] = {"nope"};
    tmap_compile_opts o = {.names = names, .nnames = 1};
    tmap_compiled c;
    tmap_error e = {0};
    assert_int_not_equal(tmap_compile(src, "k.cu", &o, &c, &e), TMAP_OK);
    assert_non_null(strstr(e.message, "nope"));
}

static void user_options_and_includes(void **state)
{
    const char *src = "#include <cuda_fp16.h>\n"
                      "extern \"C\" __global__ void k(__half *p) { p[0] = __float2half(VAL); }";
    const char *opts[] = {"-DVAL=2.0f", "-lineinfo"};
    tmap_compile_opts o = {.options = opts, .noptions = 2};
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, "h.cu", &o, &c, err));
    assert_non_null(strstr(c.ptx, ".loc"));
    tmap_compiled_free(&c);
}

/* A 0xFF byte ends the source for NVRTC: with a kernel name it gave a NULL
 * lowered name (strdup(NULL)), without one the kernels after it were
 * dropped unsaid (issue 14 item 8).  Both are now an error naming the line. */
static void rejects_byte_0xff(void **state)
{
    const char *src = "extern \"C\" __global__ void k1(int *p) { p[0] = 1; } // \xff\n"
                      "extern \"C\" __global__ void k2(int *p) { p[0] = 2; }\n";
    const char *names[] = {"k2"};
    tmap_compile_opts o = {.names = names, .nnames = 1};
    for (int with_name = 0; with_name < 2; with_name++) {
        tmap_compiled c;
        tmap_error e = {0};
        assert_int_equal(tmap_compile(src, "ff.cu", with_name ? &o : NULL, &c, &e),
                         TMAP_ERR_INVALID);
        assert_string_equal(e.message, "ff.cu:1: byte 0xFF: NVRTC would take it for the end "
                                       "of the source and drop the rest");
        assert_null(c.ptx);
    }
}

/* <cooperative_groups.h> needs include/cccl (CUDA 13), one of a list of
 * toolkit include folders that must reach NVRTC whole (issue 14 item 13:
 * a ';'-joined list split the compile definition). */
static void includes_cooperative_groups(void **state)
{
    const char *src = "#include <cooperative_groups.h>\n"
                      "namespace cg = cooperative_groups;\n"
                      "extern \"C\" __global__ void k(int *p) {\n"
                      "    p[threadIdx.x] = cg::this_thread_block().thread_rank(); }\n";
    tmap_compiled c;
    TMAP_CHECK(tmap_compile(src, "cg.cu", NULL, &c, err));
    assert_non_null(strstr(c.ptx, ".entry k"));
    tmap_compiled_free(&c);
}

static void ptx_version_table(void **state)
{
    int ma, mi;
    tmap_ptx_version_for_driver(13000, &ma, &mi);
    assert_int_equal(ma * 10 + mi, 90);
    tmap_ptx_version_for_driver(12080, &ma, &mi);
    assert_int_equal(ma * 10 + mi, 87);
    tmap_ptx_version_for_driver(12060, &ma, &mi);
    assert_int_equal(ma * 10 + mi, 85);
    tmap_ptx_version_for_driver(12000, &ma, &mi);
    assert_int_equal(ma * 10 + mi, 80);
    tmap_ptx_version_for_driver(13020, &ma, &mi);
    assert_int_equal(ma * 10 + mi, 91);
}

static void no_gpu_is_a_clear_error(void **state)
{
    tmap_cuda *c = NULL;
    tmap_error e = {0};
    tmap_status s = tmap_cuda_open(0, &c, &e);
    if (s == TMAP_OK) {
        tmap_cuda_close(c);
        print_message("[  SKIPPED ] a GPU is present: the no-GPU error cannot be seen\n");
        skip();
    }
    assert_int_equal(s, TMAP_ERR_NO_DEVICE);
    assert_true(strlen(e.message) > 10);
    assert_null(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loaded_on_first_compile), cmocka_unit_test(rejects_byte_0xff),
        cmocka_unit_test(includes_cooperative_groups),
        cmocka_unit_test(compiles_extern_c),       cmocka_unit_test(lowers_cpp_names),
        cmocka_unit_test(reports_log_on_error),    cmocka_unit_test(rejects_unknown_kernel_name),
        cmocka_unit_test(user_options_and_includes), cmocka_unit_test(ptx_version_table),
        cmocka_unit_test(no_gpu_is_a_clear_error), cmocka_unit_test(missing_library_is_an_error),
        cmocka_unit_test(wrong_library_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

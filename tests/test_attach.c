/*
 * test_attach.c -- attach mode on the CPU: finding each kernel's PTX in the
 * test applications (tests/apps, built with nvcc: compressed PTX inflated
 * here, the same text cuobjdump extracts, also from a shared library; plain PTX in a fatbin file; the
 * error for a SASS-only binary), a kernel's parameter layout from its PTX,
 * feature specs, option checks, and the options' trip through the
 * environment to the injected library.
 */
#include "tests/testutil.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include "attach/env.h"
#include "attach/image.h"

#ifndef TMAP_TEST_APPS
#define TMAP_TEST_APPS ""
#endif

static char *app(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", TMAP_TEST_APPS, name);
    if (!TMAP_TEST_APPS[0] || access(path, R_OK))
        return NULL;
    return path;
}

/* Leading and trailing blank lines aside, a equals b. */
static int same_text(const char *a, const char *b)
{
    while (*a == '\n') a++;
    while (*b == '\n') b++;
    size_t na = strlen(a), nb = strlen(b);
    while (na && (a[na - 1] == '\n' || a[na - 1] == '\0')) na--;
    while (nb && (b[nb - 1] == '\n' || b[nb - 1] == '\0')) nb--;
    return na == nb && !memcmp(a, b, na);
}

static void runtime_app_ptx(void **state)
{
    (void)state;
    const char *path = app("loop_runtime");
    void *zstd = dlopen("libzstd.so.1", RTLD_NOW); /* nvcc 13 compresses PTX with it */
    if (!path || !zstd)
        skip();
    dlclose(zstd);
    const char *kernels[] = {"_Z8count_upPKiPii", "_Z5scaleILi3EEvPii"};
    for (size_t i = 0; i < 2; i++) {
        char *ptx = NULL, want[128];
        TMAP_CHECK(tmap_attach_file_ptx(path, kernels[i], 90, NULL, &ptx, err));
        snprintf(want, sizeof want, ".entry %s(", kernels[i]);
        assert_non_null(strstr(ptx, want));
        assert_non_null(strstr(ptx, ".target sm_90"));
        const char *tool = getenv("THREADMAP_CUOBJDUMP");
        tmap_image img = {0};
        if (tool && access(tool, X_OK) == 0) { /* the same text as cuobjdump's */
            TMAP_CHECK(tmap_cuobjdump_scan(&img, tool, path, err));
            const char *theirs = tmap_image_find(&img, kernels[i], 90);
            assert_non_null(theirs);
            assert_true(same_text(ptx, theirs));
            tmap_image_free(&img);
        }
        free(ptx);
    }
    /* a kernel in a shared library */
    const char *lib = app("libloop_lib.so");
    if (lib) {
        char *p = NULL;
        TMAP_CHECK(tmap_attach_file_ptx(lib, "_Z9lib_countPKiPii", 90, NULL, &p, err));
        assert_non_null(strstr(p, ".entry _Z9lib_countPKiPii("));
        free(p);
    }
    /* a kernel the binary does not hold */
    char *ptx = NULL;
    tmap_error e = {0};
    assert_int_equal(tmap_attach_file_ptx(path, "no_such_kernel", 90, NULL, &ptx, &e),
                     TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "no_such_kernel"));
}

static void fatbin_file_ptx(void **state)
{
    (void)state;
    const char *path = app("loop_kernel.fatbin");
    if (!path)
        skip();
    char *data = NULL;
    size_t n = 0;
    tmap_image img = {0};
    TMAP_CHECK(tmap_file_read(path, &data, &n, err));
    TMAP_CHECK(tmap_image_scan(&img, data, n, err));
    assert_int_equal(img.nptx, 1);
    assert_int_equal(img.ptx[0].arch, 90);
    assert_int_equal(img.nsass, 1);
    assert_int_equal(img.nopaque, 0);
    assert_non_null(tmap_image_find(&img, "count_up", 90));
    assert_null(tmap_image_find(&img, "count_up", 80)); /* only compute_90 inside */
    tmap_param *p = NULL;
    size_t np = 0;
    TMAP_CHECK(tmap_attach_params(tmap_image_find(&img, "count_up", 0), "count_up", &p, &np, err));
    size_t want_off[] = {0, 8, 16, 24}, want_size[] = {8, 8, 4, 8};
    assert_int_equal(np, 4);
    for (size_t i = 0; i < np; i++) {
        assert_int_equal(p[i].offset, want_off[i]);
        assert_int_equal(p[i].size, want_size[i]);
    }
    assert_string_equal(p[2].name, "count_up_param_2");
    free(p);
    /* the same image behind the CUDA runtime's wrapper */
    struct { uint32_t magic, version; const void *data; void *unused; } wrap = {
        0x466243B1u, 1, data, NULL};
    tmap_image w = {0};
    TMAP_CHECK(tmap_image_scan(&w, &wrap, 0, err));
    assert_int_equal(w.nptx, 1);
    assert_string_equal(w.ptx[0].text, img.ptx[0].text);
    tmap_image_free(&w);
    tmap_image_free(&img);
    free(data);
}

/* A copy of loop_runtime whose PTX entries cannot be inflated (their
 * compressed size set to 1): the PTX must then come from cuobjdump, here
 * a stand-in script printing its format. */
static void cuobjdump_fallback(void **state)
{
    (void)state;
    const char *path = app("loop_runtime");
    if (!path)
        skip();
    char *d = NULL;
    size_t n = 0, patched = 0;
    TMAP_CHECK(tmap_file_read(path, &d, &n, err));
    const unsigned char ptx_head[8] = {1, 0, 1, 1, 0x50, 0, 0, 0};
    for (size_t i = 0; i + 24 <= n; i += 8)
        if (!memcmp(d + i, ptx_head, 8)) {
            uint32_t one = 1;
            memcpy(d + i + 16, &one, 4);
            patched++;
        }
    assert_true(patched >= 1);
    char bin[] = "/tmp/tmap_attach_bin_XXXXXX", tool[] = "/tmp/tmap_attach_tool_XXXXXX";
    int fb = mkstemp(bin), ft = mkstemp(tool);
    assert_true(fb >= 0 && ft >= 0);
    assert_int_equal(write(fb, d, n), (ssize_t)n);
    const char script[] =
        "#!/bin/sh\n[ \"$1\" = -ptx ] || exit 3\ncat <<'X'\n\nFatbin elf code:\n"
        "================\narch = sm_90\n\nFatbin ptx code:\n================\narch = sm_90\n"
        "code version = [9,0]\nhost = linux\ncompile_size = 64bit\ncompressed\n"
        "ptxasOptions = \n\n.version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry from_tool(\n.param .u32 from_tool_param_0\n)\n{\nret;\n}\nX\n";
    assert_int_equal(write(ft, script, strlen(script)), (ssize_t)strlen(script));
    close(fb);
    close(ft);
    assert_int_equal(chmod(tool, 0700), 0);
    char *ptx = NULL;
    tmap_error e = {0};
    /* without the tool: the entries are unread, and the message says so */
    assert_int_equal(tmap_attach_file_ptx(bin, "from_tool", 90, NULL, &ptx, &e),
                     TMAP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "PTX present but unread"));
    TMAP_CHECK(tmap_attach_file_ptx(bin, "from_tool", 90, tool, &ptx, err));
    assert_true(same_text(ptx, ".version 9.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry from_tool(\n.param .u32 from_tool_param_0\n)\n"
                               "{\nret;\n}\n"));
    free(ptx);
    unlink(bin);
    unlink(tool);
    free(d);
}

static void sass_only_error(void **state)
{
    (void)state;
    const char *path = app("sass_only");
    if (!path)
        skip();
    char *ptx = NULL;
    tmap_error e = {0};
    assert_int_equal(tmap_attach_file_ptx(path, "_Z11sass_kernelPi", 90, NULL, &ptx, &e),
                     TMAP_ERR_INVALID);
    assert_null(ptx);
    assert_non_null(strstr(e.message, "kernel '_Z11sass_kernelPi' has SASS only (sm_90)"));
    assert_non_null(strstr(e.message, "-gencode arch=compute_90,code=compute_90"));
    /* a bare cubin handed to the driver: SASS of an architecture it does not
     * state, so the advice names the GPU's */
    const char cubin[16] = "\177ELF\002\001\001";
    tmap_image img = {0};
    TMAP_CHECK(tmap_image_scan(&img, cubin, sizeof cubin, err));
    assert_int_equal(img.nsass, 1);
    assert_null(tmap_image_find(&img, "k", 0));
    assert_int_equal(tmap_image_missing(&img, "k", "the module loaded", 80, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "the module loaded: kernel 'k' has SASS only (sm_80)"));
    assert_non_null(strstr(e.message, "arch=compute_80,code=compute_80"));
    tmap_image_free(&img);
}

static void params_layout(void **state)
{
    (void)state;
    const char *ptx =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(\n"
        "  .param .u8 k_p0,\n"
        "  .param .u64 .ptr .global .align 16 k_p1,\n"
        "  .param .align 8 .b8 k_p2[12],\n"
        "  .param .f32 k_p3,\n"
        "  .param .align 16 .b8 k_p4[32],\n"
        "  .param .u16 k_p5\n"
        ")\n{\n  ret;\n}\n";
    tmap_param *p = NULL;
    size_t n = 0;
    TMAP_CHECK(tmap_attach_params(ptx, "k", &p, &n, err));
    size_t off[] = {0, 8, 16, 28, 32, 64}, size[] = {1, 8, 12, 4, 32, 2}, al[] = {1, 8, 8, 4, 16, 2};
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(p[i].offset, off[i]);
        assert_int_equal(p[i].size, size[i]);
        assert_int_equal(p[i].align, al[i]);
    }
    assert_string_equal(p[4].name, "k_p4");
    free(p);
    tmap_error e = {0};
    assert_int_equal(tmap_attach_params(ptx, "nope", &p, &n, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "nope"));
}

static void feature_specs(void **state)
{
    (void)state;
    tmap_attach_feature f;
    TMAP_CHECK(tmap_attach_feature_parse("n=arg2:i32[t]", &f, err));
    assert_string_equal(f.name, "n");
    assert_int_equal(f.arg, 2);
    assert_string_equal(f.type, "i32");
    assert_int_equal(f.elem_size, 4);
    assert_int_equal(f.offset, 0);
    TMAP_CHECK(tmap_attach_feature_parse("next=arg10:f64[t+1]", &f, err));
    assert_int_equal(f.arg, 10);
    assert_int_equal(f.elem_size, 8);
    assert_int_equal(f.offset, 1);
    TMAP_CHECK(tmap_attach_feature_parse("prev=arg0:u8[t-3]", &f, err));
    assert_int_equal(f.offset, -3);
    const char *bad[] = {"n", "=arg1:i32[t]", "n=1:i32[t]", "n=argx:i32[t]", "n=arg1:i16[t]",
                         "n=arg1:i32[2]", "n=arg1:i32[t*2]", "n=arg1:i32", "n=arg1:i32[t+1]x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tmap_error e = {0};
        assert_int_equal(tmap_attach_feature_parse(bad[i], &f, &e), TMAP_ERR_INVALID);
        assert_non_null(strstr(e.message, bad[i]));
    }
}

static void options_through_env(void **state)
{
    (void)state;
    tmap_attach_opts o = {.out = "/tmp/x", .kernel_regex = "count_up|scale<3>",
                          .launch_skip = 2, .launch_count = 5,
                          .features = {"n=arg0:i32[t]", "m=arg1:f32[t+1]"}, .nfeatures = 2,
                          .quiet = 1};
    TMAP_CHECK(tmap_attach_opts_check(&o, err));
    TMAP_CHECK(tmap_attach_env_set(&o, err));
    tmap_attach_env e;
    TMAP_CHECK(tmap_attach_env_get(&e, err));
    assert_string_equal(e.opts.out, "/tmp/x");
    assert_string_equal(e.opts.kernel_regex, "count_up|scale<3>");
    assert_int_equal(e.opts.launch_skip, 2);
    assert_int_equal(e.opts.launch_count, 5);
    assert_int_equal(e.opts.nfeatures, 2);
    assert_string_equal(e.opts.features[1], "m=arg1:f32[t+1]");
    assert_int_equal(e.features[1].arg, 1);
    assert_int_equal(e.features[1].offset, 1);
    assert_int_equal(e.opts.quiet, 1);
    tmap_attach_env_free(&e);
    tmap_error er = {0};
    o.kernel_regex = "count_up(";
    assert_int_equal(tmap_attach_opts_check(&o, &er), TMAP_ERR_INVALID);
    assert_non_null(strstr(er.message, "count_up("));
    o.kernel_regex = NULL;
    o.features[1] = "m=arg1:f32[t];x=arg0:i8[t]";
    assert_int_equal(tmap_attach_opts_check(&o, &er), TMAP_ERR_INVALID);
    o.features[1] = "m=arg1:f32[t]";
    o.launch_count = -2;
    assert_int_equal(tmap_attach_opts_check(&o, &er), TMAP_ERR_INVALID);
    o.launch_count = -1;
    o.out = NULL;
    assert_int_equal(tmap_attach_opts_check(&o, &er), TMAP_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runtime_app_ptx),   cmocka_unit_test(fatbin_file_ptx),
        cmocka_unit_test(cuobjdump_fallback), cmocka_unit_test(sass_only_error),
        cmocka_unit_test(params_layout),
        cmocka_unit_test(feature_specs),     cmocka_unit_test(options_through_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

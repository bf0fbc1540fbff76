/*
 * test_expr.c -- the one expression parser (runtime/expr.c) and its two
 * back ends: the tree it builds, its errors with their columns and bounds
 * (the same for a manifest's features and run mode's key), and the host
 * evaluator against the CUDA the emitter writes (runtime/expr_cuda.c) for
 * run mode's key (attach/key.c) and for a manifest's features
 * (runtime/manifest_features.c), that code compiled by the host's C++
 * compiler and run thread by thread on the CPU: the same value, bit for
 * bit, wherever the host has one.
 */
#include <math.h>
#include <stdint.h>

#include "tests/testutil.h"
#include "tests/testmanifest.h"

#include "runtime/expr.h"
#include "runtime/manifest.h"

/* "a - b * -(c) / 2": a SUM of a and a PRODUCT of b, NEG(PAREN(c)), 2. */
static void tree_shape(void **state)
{
    (void)state;
    tmap_expr x;
    TMAP_CHECK(tmap_expr_parse("a - b * -(c) / 2", &x, err));
    const tmap_expr_node *n = x.node, *sum = &n[x.root];
    assert_int_equal(sum->kind, TMAP_EXPR_SUM);
    assert_int_equal(sum->pos, 0);
    assert_int_equal(sum->end, 16);
    const tmap_expr_node *a = &n[sum->kid], *prod = &n[a->next];
    assert_int_equal(a->kind, TMAP_EXPR_REF);
    assert_int_equal(a->name_len, 1);
    assert_int_equal(a->indexed, 0);
    assert_int_equal(prod->kind, TMAP_EXPR_PRODUCT);
    assert_int_equal(prod->join, '-');
    assert_int_equal(prod->next, TMAP_EXPR_NONE);
    const tmap_expr_node *b = &n[prod->kid], *neg = &n[b->next], *two = &n[neg->next];
    assert_int_equal(b->pos, 4);
    assert_int_equal(neg->kind, TMAP_EXPR_NEG);
    assert_int_equal(neg->join, '*');
    assert_int_equal(n[neg->kid].kind, TMAP_EXPR_PAREN);
    assert_int_equal(n[n[neg->kid].kid].pos, 10);
    assert_int_equal(two->kind, TMAP_EXPR_NUM);
    assert_int_equal(two->join, '/');
    assert_true(two->num == 2);
    assert_int_equal(two->next, TMAP_EXPR_NONE);
    tmap_expr_free(&x);

    TMAP_CHECK(tmap_expr_parse(" arg3:u8 [ t - 7 ]", &x, err));
    const tmap_expr_node *r = &x.node[x.root];
    assert_int_equal(r->kind, TMAP_EXPR_REF);
    assert_int_equal(r->pos, 1);
    assert_int_equal(r->name_len, 4);
    assert_true(r->typed && r->type == 6 && r->type_len == 2);
    assert_true(r->indexed && r->index == 9 && r->offset == -7);
    assert_int_equal(r->end, 18);
    tmap_expr_free(&x);
}

enum { N = 64 };

/* Arrays a (f64), b (i32), c (u8) of N elements; c has zeros. */
typedef struct arrays {
    double a[N];
    int32_t b[N];
    uint8_t c[N];
    tmap_marray arr[3];
    tmap_manifest m;
} arrays;

static void arrays_fill(arrays *d)
{
    for (int t = 0; t < N; t++) {
        d->a[t] = t * 0.37 - 3.1;
        d->b[t] = (t * 7) % 11 - 5;
        d->c[t] = (uint8_t)(t % 5);
    }
    d->arr[0] = (tmap_marray){.name = "a", .kind = TMAP_F64, .count = N, .host = d->a};
    d->arr[1] = (tmap_marray){.name = "b", .kind = TMAP_I32, .count = N, .host = d->b};
    d->arr[2] = (tmap_marray){.name = "c", .kind = TMAP_U8, .count = N, .host = d->c};
    d->m = (tmap_manifest){.arrays = d->arr, .narrays = 3, .threads = N};
}

/* The call refused src with a message holding want, and made nothing. */
static void refused(tmap_status st, const tmap_error *e, const void *made, const char *src,
                    const char *want)
{
    if (st == TMAP_OK)
        fail_msg("'%s' was taken", src);
    if (!strstr(e->message, want))
        fail_msg("'%s': '%s' not in '%s'", src, want, e->message);
    assert_null(made);
}

static void parse_error(const char *src, const char *want)
{
    tmap_expr x;
    tmap_error e = {0};
    tmap_status st = tmap_expr_parse(src, &x, &e);
    refused(st, &e, x.node, src, want);
}

/* The key's back end: argK[:TYPE] with an index, --feature names. */
static void key_error(const char *src, const char *want)
{
    tmap_attach_key k;
    tmap_error e = {0};
    tmap_status st = tmap_attach_key_make(&src, 1, NULL, 0, &k, &e);
    refused(st, &e, k.source, src, want);
}

/* The host's back end: a manifest's array names, no type. */
static void bind_error(const char *src, const char *want)
{
    arrays d;
    arrays_fill(&d);
    tmap_expr x;
    tmap_error e = {0};
    TMAP_CHECK(tmap_expr_parse(src, &x, err));
    refused(tmap_expr_bind(&d.m, &x, &e), &e, NULL, src, want);
    tmap_expr_free(&x);
}

static void back_end_errors(void **state)
{
    (void)state;
    key_error("arg0[t+1]-", "at column 11: unexpected end");
    key_error("arg0", "at column 5: an array needs an index");
    key_error("arg0[s]", "at column 6: an index must be t");
    key_error("arg0[t+x]", "at column 8: expected an integer offset");
    key_error("arg0[t+1", "at column 9: expected ']'");
    key_error("arg0:f16[t]", "at column 6: a type must be one of");
    key_error("arg0:[t]", "at column 6: a type must be one of");
    key_error("n[t]", "at column 1: names neither a pointer argument argK nor a --feature");
    key_error("argx[t]", "names neither");
    key_error("arg4097[t]", "names neither");
    key_error("((arg0[t])", "expected ')'");
    key_error("arg0[t] $", "at column 9: unexpected text after the expression");
    key_error("1e999", "expected a finite number");
    char deep[300];
    memset(deep, '(', 257);
    strcpy(deep + 257, "arg0[t]");
    key_error(deep, "at column 257: nested more than 256 deep");
    tmap_buf many = {0};
    for (int i = 0; i < 17; i++)
        tmap_buf_printf(&many, "%sarg%d[t]", i ? "+" : "", i);
    key_error(many.data, "more than 16 distinct arrays");
    tmap_buf_free(&many);
    tmap_attach_key k;
    tmap_attach_feature f;
    TMAP_CHECK(tmap_attach_feature_parse("n=arg2:u32[t+1]", &f, err));
    const char *typed = "2 * n:u32";
    tmap_error e = {0};
    tmap_status st = tmap_attach_key_make(&typed, 1, &f, 1, &k, &e);
    refused(st, &e, k.source, typed, "at column 6: unexpected ':' (a --feature has its type)");
    bind_error("a + arg0[t]", "at column 5: names no array");
    bind_error("2 * a:f64[t]", "at column 6: unexpected ':' (an array's type is the manifest's)");
}

/* One grammar, one set of bounds, one message style. */
static void errors_and_bounds(void **state)
{
    (void)state;
    parse_error("a[t+1]-", "expression 'a[t+1]-' at column 8: unexpected end");
    parse_error("a[t+-1]", "at column 5: expected an integer offset (up to 2^40)");
    parse_error("a[t+1099511627777]", "at column 5: expected an integer offset");
    parse_error("a[t+99999999999999999999]", "at column 5: expected an integer offset");
    parse_error("1e999", "at column 1: expected a finite number");
    parse_error(".", "at column 1: expected a finite number");
    parse_error("(a", "at column 3: expected ')'");
    parse_error("a b", "at column 3: unexpected text after the expression");
    char name[200];
    memset(name, 'n', 128);
    name[128] = '\0';
    parse_error(name, "at column 1: a name longer than 127 characters");
    name[127] = '\0';
    tmap_expr x;
    TMAP_CHECK(tmap_expr_parse(name, &x, err));
    tmap_expr_free(&x);
    TMAP_CHECK(tmap_expr_parse("a[t-1099511627776]", &x, err));
    assert_true(x.node[x.root].offset == -TMAP_EXPR_MAX_OFFSET);
    tmap_expr_free(&x);
    char deep[600];
    memset(deep, '-', 256);
    memset(deep + 256, '(', 1);
    strcpy(deep + 257, "a)");
    parse_error(deep, "at column 257: nested more than 256 deep");
    const char *long_src = "a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a +";
    parse_error(long_src, "expression 'a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + "
                          "...' at column 68: unexpected end");
}

/* A long chain is one node, walked by a loop: no recursion per operand. */
static void long_chain(void **state)
{
    (void)state;
    tmap_buf b = {0};
    for (int i = 0; i < 100000; i++)
        tmap_buf_printf(&b, "%s1", i ? (i % 2 ? " * " : " + ") : "");
    tmap_expr x;
    TMAP_CHECK(tmap_expr_parse(b.data, &x, err));
    tmap_manifest m = {0};
    TMAP_CHECK(tmap_expr_bind(&m, &x, err));
    double v;
    TMAP_CHECK(tmap_expr_value(&m, &x, 0, &v, err));
    assert_true(v == 50000);
    tmap_expr_free(&x);
    tmap_buf_free(&b);
}

/* An array a kernel's slot reads on the CPU. */
typedef struct cpu_slot {
    const void *host;
    size_t bytes, count;
} cpu_slot;

/* Writes `source` (kernel `name`, nexprs expressions) and a main that runs
 * it for threads 0..n-1 on the CPU (slot i: the bytes of slot[i], bounds
 * [0, count)) and prints out[] in hex; compiles it with c++, reads the
 * values.  0 without a compiler. */
static int run_on_cpu(const char *source, const char *name, size_t nexprs, const cpu_slot *slot,
                      size_t nslots, size_t n, double *out)
{
    const char *dir = TMAP_BINARY_DIR "/expr_key";
    char path[512], cmd[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0)
        return 0;
    snprintf(path, sizeof path, "%s/%s.cpp", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#include <stdio.h>\n#define __device__\n#define __global__\n"
               "#define __launch_bounds__(n)\n"
               "static struct { unsigned x; } blockIdx, blockDim, threadIdx;\n%s\n", source);
    for (size_t i = 0; i < nslots; i++) {
        fprintf(f, "alignas(8) static const unsigned char d%zu[] = {", i);
        for (size_t b = 0; b < slot[i].bytes; b++)
            fprintf(f, "%u,", ((const unsigned char *)slot[i].host)[b]);
        fprintf(f, "};\n");
    }
    fprintf(f, "int main() {\n    static double out[%zu];\n    blockDim.x = %zu;\n"
               "    for (threadIdx.x = 0; threadIdx.x < %zu; threadIdx.x++)\n"
               "        %s(out, %zu", n * nexprs, n, n, name, n);
    for (size_t i = 0; i < nslots; i++)
        fprintf(f, ", d%zu, 0, %zu", i, slot[i].count);
    fprintf(f, ");\n    for (int i = 0; i < %zu; i++)\n"
               "        printf(\"%%a\\n\", out[i]);\n}\n", n * nexprs);
    fclose(f);
    snprintf(cmd, sizeof cmd, "c++ -std=c++17 -O1 -ffp-contract=off -fno-strict-aliasing -w "
             "-o '%s/%s' '%s' >'%s/cc.log' 2>&1", dir, name, path, dir);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "c++ --version >/dev/null 2>&1");
        if (system(cmd) != 0)
            return 0;
        fail_msg("the kernel %s does not compile as C++: see %s/cc.log", name, dir);
    }
    snprintf(cmd, sizeof cmd, "'%s/%s'", dir, name);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[128];
    size_t got = 0;
    while (got < n * nexprs && fgets(line, sizeof line, p))
        out[got++] = strtod(line, NULL);
    assert_int_equal(pclose(p), 0);
    assert_int_equal(got, n * nexprs);
    return 1;
}

static int same(double x, double y)
{
    return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0;
}

/* Integer literals (1/2 is 0 in C), chains and their associativity,
 * unary minus, offsets past the ends (the host refuses, the kernel reads
 * 0: not compared), division by zero (likewise), overflow to inf. */
static const char *const cases[] = {
    "a",
    "a[t+1] - a[t] + b[t-2]",
    "1/2 + 7/2/2 * b",
    "3/2*b - 100000*100000*c",
    "-a * -b - - -c",
    "a - b - c",
    "a - (b - c)",
    "a / b / 2",
    "a / (b / 2)",
    "2*a + 3*b - c/4 + 0.1 + 0.2",
    "-(a + b) * c * 1e308 * 10",
    "((((a)))) * ((b))",
    "b / c",
    "1.5e-3 - .5 * a[t + 3] / c[t - 1]",
    "0x10 * a - 1e-320",
    "b[t+1] + b[t-1] + 4294967296 * b",
};

static void host_equals_emitted(void **state)
{
    (void)state;
    enum { M = sizeof cases / sizeof cases[0] };
    arrays d;
    arrays_fill(&d);
    tmap_attach_feature f[3];
    TMAP_CHECK(tmap_attach_feature_parse("a=arg0:f64[t]", &f[0], err));
    TMAP_CHECK(tmap_attach_feature_parse("b=arg1:i32[t]", &f[1], err));
    TMAP_CHECK(tmap_attach_feature_parse("c=arg2:u8[t]", &f[2], err));
    tmap_attach_key k;
    TMAP_CHECK(tmap_attach_key_make(cases, M, f, 3, &k, err));
    static double dev[N * M];
    cpu_slot slot[TMAP_ATTACH_KEY_MAX_SLOTS];
    const void *host[] = {d.a, d.b, d.c};
    for (size_t i = 0; i < k.nslots; i++)
        slot[i] = (cpu_slot){host[k.slot[i].arg], N * k.slot[i].elem_size, N};
    if (!run_on_cpu(k.source, "tmap_key", k.nexprs, slot, k.nslots, N, dev)) {
        tmap_attach_key_free(&k);
        print_message("[  SKIPPED ] no C++ compiler (c++)\n");
        skip();
    }
    size_t compared = 0;
    for (size_t j = 0; j < M; j++) {
        tmap_expr x;
        TMAP_CHECK(tmap_expr_parse(cases[j], &x, err));
        TMAP_CHECK(tmap_expr_bind(&d.m, &x, err));
        for (size_t t = 0; t < N; t++) {
            double host;
            tmap_error e = {0};
            if (tmap_expr_value(&d.m, &x, t, &host, &e) != TMAP_OK)
                continue; /* out of range or division by zero: the host refuses */
            if (!same(host, dev[t * M + j]))
                fail_msg("'%s', thread %zu: host %a, emitted %a\n%s", cases[j], t, host,
                         dev[t * M + j], k.source);
            compared++;
        }
        tmap_expr_free(&x);
    }
    assert_true(compared > N * M * 3 / 4);
    tmap_attach_key_free(&k);
}

/* The features of tests/manifests/features_mixed.json (every element type,
 * offsets, integer literals, chains, unary minus, hex, denormals) as the
 * kernel tmap_manifest_features_gpu compiles, run on the CPU (where each
 * thread stores its own row; the GPU's staged store is checked by
 * test_gpu_features): every value equals tmap_manifest_features', bit for
 * bit. */
static void manifest_equals_emitted(void **state)
{
    (void)state;
    tmap_manifest *m;
    TMAP_CHECK(tmap_manifest_load(TMAP_SOURCE_DIR "/tests/manifests/features_mixed.json", &m, err));
    TMAP_CHECK(tmap_manifest_generate(m, 7, err));
    tmap_error e = {0};
    assert_int_equal(tmap_manifest_features_gpu(m, 8, NULL, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "features_mixed.json: features on the GPU need the arrays "
                                      "bound"));
    double *host;
    size_t n, q, array[TMAP_EXPR_CUDA_MAX_SLOTS], nslots;
    char *src;
    TMAP_CHECK(tmap_manifest_features(m, &host, &n, &q, NULL, err));
    TMAP_CHECK(tmap_manifest_features_source(m, &src, array, &nslots, err));
    assert_int_equal(q, 8);
    assert_int_equal(nslots, 10); /* n x len big ubig y c s rowptr deg, each once */
    assert_non_null(strstr(src, "ld<unsigned long long>(p4, (long long)t + 0LL, lo4, hi4) * "
                                "0.001"));
    assert_non_null(strstr(src, "1.0 / 3.0"));
    /* NVRTC takes it as the GPU compiles it: rows staged in shared memory,
     * no multiply-add contracted into an fma */
    tmap_compiled ptx;
    TMAP_CHECK(tmap_expr_cuda_compile(src, "features_mixed", &ptx, err));
    assert_non_null(strstr(ptx.ptx, ".entry tmap_features("));
    assert_non_null(strstr(ptx.ptx, ".shared .align 8 .b8"));
    assert_non_null(strstr(ptx.ptx, "mul.rn.f64"));
    assert_null(strstr(ptx.ptx, "fma.rn.f64"));
    tmap_compiled_free(&ptx);
    cpu_slot slot[TMAP_EXPR_CUDA_MAX_SLOTS];
    for (size_t i = 0; i < nslots; i++) {
        const tmap_marray *a = &m->arrays[array[i]];
        slot[i] = (cpu_slot){a->host, a->count * tmap_elem_size(a->kind), a->count};
    }
    double *dev = malloc(n * q * sizeof *dev);
    assert_non_null(dev);
    if (!run_on_cpu(src, "tmap_features", q, slot, nslots, n, dev)) {
        print_message("[  SKIPPED ] no C++ compiler (c++)\n");
    } else {
        for (size_t i = 0; i < n * q; i++)
            if (!same(host[i], dev[i]))
                fail_msg("features.%s, thread %zu: host %a, emitted %a", m->feature_names[i % q],
                         i / q, host[i], dev[i]);
    }
    free(dev);
    free(src);
    free(host);
    tmap_manifest_free(m);
}

/* An index outside its array: the GPU's kernel is refused before it runs,
 * with the host's message (the feature, the first such thread, the
 * column). */
static void manifest_outside_refused(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"x[t+1] * 2", "features.f, thread 4095: expression 'x[t+1] * 2' at column 7: index out"},
        {"1 + x[t + 9000]", "features.f, thread 0: expression '1 + x[t + 9000]' at column 16"},
        {"x[t-2]", "features.f, thread 0: expression 'x[t-2]' at column 7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "{\"source\": \"k.cu\", \"kernel\": \"k\", \"threads\": "
                 "4096, \"block\": 128, \"arrays\": [{\"name\": \"x\", \"type\": \"f32\", "
                 "\"count\": \"threads\"}], \"args\": [\"x\"], \"features\": [{\"name\": "
                 "\"f\", \"expr\": \"%s\"}]}", bad[i][0]);
        tmap_manifest *m;
        TMAP_CHECK(test_load_text(text, &m, err));
        TMAP_CHECK(tmap_manifest_generate(m, 1, err));
        tmap_error host = {0}, gpu = {0};
        double *f = NULL;
        size_t n, q, array[TMAP_EXPR_CUDA_MAX_SLOTS], nslots;
        char *src = NULL;
        assert_int_not_equal(tmap_manifest_features(m, &f, &n, &q, NULL, &host), TMAP_OK);
        assert_int_not_equal(tmap_manifest_features_source(m, &src, array, &nslots, &gpu), TMAP_OK);
        assert_null(src);
        if (!strstr(gpu.message, bad[i][1]))
            fail_msg("'%s' not in '%s'", bad[i][1], gpu.message);
        assert_string_equal(strchr(gpu.message, ':'), strchr(host.message, ':'));
        tmap_manifest_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tree_shape),
        cmocka_unit_test(errors_and_bounds),
        cmocka_unit_test(long_chain),
        cmocka_unit_test(back_end_errors),
        cmocka_unit_test(host_equals_emitted),
        cmocka_unit_test(manifest_equals_emitted),
        cmocka_unit_test(manifest_outside_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_gpu_regrouper.c -- regroup() on the GPU with measured feedback
 * (pipeline/regrouper.c): every launch, on trial or after, gives the
 * original launch's results, an accumulating in/out array included (the
 * remap cache and the persistent layout must not lose an update); on a
 * kernel where one thread in eight loops 2000 times longer, a regrouping is
 * kept (the heavy threads loop 40000 times: the kernel takes about 0.5 ms,
 * far more than the regrouping costs even when each launch starts from an
 * idle GPU, as here); on a uniform one, the launches are left alone; in thread-block
 * scope only the candidates that keep threads in their block run.  The
 * grid-scope runs take the key from a model on device features, the
 * block-scope one from the caller's key kernel; the uniform run also
 * offers redirection, and one run offers redirection alone.  The
 * uniform kernel loops as long as the divergent one's heaviest thread, so
 * that noise stays far below the 3% threshold.  With overlap, each next
 * input's permutation is made beside the current launch: taken when done,
 * and when late (a key that spins on the side stream) the launch goes
 * ahead with the last one; the results stay the original's.
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

/* out[t] = seed[t] run through `trips[t]` steps of an LCG; acc[t] += it. */
static const char src[] =
    "extern \"C\" __global__ void work(const unsigned *trips, const unsigned *seed,\n"
    "    unsigned *out, unsigned *acc, unsigned n) {\n"
    "  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (t >= n) return;\n"
    "  unsigned h = seed[t];\n"
    "  for (unsigned i = 0; i < trips[t]; i++) h = h * 1664525u + 1013904223u;\n"
    "  out[t] = h;\n"
    "  acc[t] += h;\n"
    "}\n"
    "extern \"C\" __global__ void key(const unsigned *trips, double *key, unsigned n) {\n"
    "  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (t < n) key[t] = trips[t];\n"
    "}\n"
    "extern \"C\" __global__ void spin(long long cycles) {\n"
    "  long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {}\n"
    "}\n";

enum { BS = 256, NB = 512, N = BS * NB };

typedef struct bench {
    tmap_cuda *c;
    tmap_kernel *work, *key, *redirected, *spin;
    uint64_t trips, seed, out, acc;
    uint64_t key_src;   /* what the key reads: trips, or the next input's */
    long long spin_cycles; /* > 0: the key function first spins this long */
    unsigned n;
    void *args[5];
    tmap_launch l;
    uint32_t *h_trips, *h_seed, *h_acc;
} bench;

static int key_fn(void *user, uint64_t key, void *stream)
{
    bench *b = user;
    void *spin_args[] = {&b->spin_cycles};
    tmap_launch spin = {{1, 1, 1}, {1, 1, 1}, 0, spin_args, 1};
    if (b->spin_cycles > 0 && tmap_kernel_enqueue(b->spin, &spin, stream, NULL) != TMAP_OK)
        return 1;
    void *args[] = {&b->key_src, &key, &b->n};
    tmap_launch l = {{NB, 1, 1}, {BS, 1, 1}, 0, args, 3};
    return tmap_kernel_enqueue(b->key, &l, stream, NULL) != TMAP_OK;
}

static void open_bench(bench *b)
{
    memset(b, 0, sizeof *b);
    b->c = test_gpu_open();
    tmap_compiled out;
    TMAP_CHECK(tmap_compile(src, "regrouper_test.cu", NULL, &out, err));
    TMAP_CHECK(tmap_kernel_load(b->c, out.ptx, "work", &b->work, err));
    TMAP_CHECK(tmap_kernel_load(b->c, out.ptx, "key", &b->key, err));
    TMAP_CHECK(tmap_redirect_load(b->c, out.ptx, "work", &b->redirected, err));
    TMAP_CHECK(tmap_kernel_load(b->c, out.ptx, "spin", &b->spin, err));
    tmap_compiled_free(&out);
    uint64_t *bufs[] = {&b->trips, &b->seed, &b->out, &b->acc};
    for (int i = 0; i < 4; i++)
        TMAP_CHECK(tmap_cuda_alloc(b->c, N * 4, bufs[i], err));
    TMAP_CHECK(tmap_cuda_zero(b->c, b->acc, N * 4, err));
    b->key_src = b->trips;
    b->h_trips = malloc(N * 4), b->h_seed = malloc(N * 4), b->h_acc = calloc(N, 4);
    for (uint32_t t = 0; t < N; t++)
        b->h_seed[t] = t * 2654435761u;
    TMAP_CHECK(tmap_cuda_upload(b->c, b->seed, b->h_seed, N * 4, err));
    b->n = N;
    void *args[] = {&b->trips, &b->seed, &b->out, &b->acc, &b->n};
    memcpy(b->args, args, sizeof args);
    b->l = (tmap_launch){{NB, 1, 1}, {BS, 1, 1}, 0, b->args, 5};
}

static void close_bench(bench *b)
{
    uint64_t bufs[] = {b->trips, b->seed, b->out, b->acc};
    for (int i = 0; i < 4; i++)
        tmap_cuda_free(b->c, bufs[i]);
    tmap_kernel_free(b->work);
    tmap_kernel_free(b->key);
    tmap_kernel_free(b->redirected);
    tmap_kernel_free(b->spin);
    tmap_cuda_close(b->c);
    free(b->h_trips), free(b->h_seed), free(b->h_acc);
}

/* Trip counts, and the model's feature (trips as doubles) if features. */
static void set_trips(bench *b, uint32_t heavy, uint32_t light, uint32_t shift, uint64_t features)
{
    double *f = malloc(N * sizeof *f);
    for (uint32_t t = 0; t < N; t++)
        f[t] = b->h_trips[t] = (t + shift) % 8 == 0 ? heavy : light;
    TMAP_CHECK(tmap_cuda_upload(b->c, b->trips, b->h_trips, N * 4, err));
    if (features)
        TMAP_CHECK(tmap_cuda_upload(b->c, features, f, N * sizeof *f, err));
    free(f);
}

/* h after k steps of h <- h * 1664525 + 1013904223 (mod 2^32), in
 * O(log k): the step composed with itself by squaring. */
static uint32_t lcg_jump(uint32_t h, uint32_t k)
{
    uint32_t mul = 1, add = 0, m = 1664525u, a = 1013904223u;
    for (; k; k >>= 1) {
        if (k & 1)
            mul *= m, add = add * m + a;
        a = a * m + a, m *= m;
    }
    return h * mul + add;
}

/* After a launch: out and acc as the original launch leaves them. */
static void expect_results(bench *b, int launch)
{
    uint32_t *out = malloc(N * 4), *acc = malloc(N * 4);
    TMAP_CHECK(tmap_cuda_download(b->c, out, b->out, N * 4, err));
    TMAP_CHECK(tmap_cuda_download(b->c, acc, b->acc, N * 4, err));
    for (uint32_t t = 0; t < N; t++) {
        uint32_t h = lcg_jump(b->h_seed[t], b->h_trips[t]);
        b->h_acc[t] += h;
        if (out[t] != h || acc[t] != b->h_acc[t])
            fail_msg("launch %d, thread %u: out %u acc %u, want %u and %u", launch, t, out[t],
                     acc[t], h, b->h_acc[t]);
    }
    free(out), free(acc);
}

static const tmap_thread_array arrays[] = {
    {0, 4, 1, 1, 0}, {1, 4, 1, 1, 0}, {2, 4, 1, 0, 1}, {3, 4, 1, 1, 1}};

/* `launches` launches, one thread in 8 looping `heavy` times and the rest
 * `light`; input changed (new signature) every `change` launches (0:
 * never); returns the candidate kept.  The decisions asserted have wide
 * margins (8x the work per warp; 3% with identical work) but rest on
 * timings: under compute-sanitizer (run it with TMAP_TEST_UNTIMED=1) only
 * the results are meaningful. */
static int run_named(bench *b, tmap_regroup_scope scope, uint32_t heavy, int launches,
                     int change, uint32_t light, int redirect, int alt, char *name);

static int run(bench *b, tmap_regroup_scope scope, uint32_t heavy, int launches, int change,
               uint32_t light, int redirect)
{
    char name[128];
    return run_named(b, scope, heavy, launches, change, light, redirect, 0, name);
}

/* alt: the model's key is constant (no use) and a second key, "key trips",
 * reads the trip counts; name receives the kept candidate's name. */
static int run_named(bench *b, tmap_regroup_scope scope, uint32_t heavy, int launches,
                     int change, uint32_t light, int redirect, int alt, char *name)
{
    tmap_regrouper_opts o = {.scope = scope, .key = key_fn, .key_user = b,
                             .redirected = redirect ? b->redirected : NULL};
    /* identical work: a regrouping is then at best as fast as the original,
     * and 9 candidates of 3 launches each may see one 3% faster by chance */
    if (heavy == light)
        o.threshold = 0.10;
    /* the grid-scope runs take the key from a model instead: one block
     * whose count is the trip count, feature 0 (a device copy of trips) */
    double coef[3] = {0, 1, 0}, lat[1] = {1}, flat[3] = {1, 0, 0};
    tmap_predictor model = {.nblocks = 1, .nfeatures = 1, .coef = alt ? flat : coef};
    tmap_predictor by_trips = {.nblocks = 1, .nfeatures = 1, .coef = coef};
    uint64_t features = 0;
    if (scope == TMAP_REGROUP_GRID) {
        TMAP_CHECK(tmap_cuda_alloc(b->c, N * sizeof(double), &features, err));
        o.key = NULL, o.model = &model, o.lat = lat, o.features = features;
        if (alt)
            o.alt_model = &by_trips, o.alt_lat = lat, o.alt_name = "key trips";
    }
    tmap_regrouper *r = NULL;
    /* redirect 2: by redirection only (no arrays to move) */
    size_t narrays = redirect == 2 ? 0 : 4;
    TMAP_CHECK(tmap_regrouper_create(b->c, &b->l, narrays ? arrays : NULL, narrays, &o, &r, err));
    uint64_t sig = 1;
    set_trips(b, heavy, light, 0, features);
    for (int i = 0; i < launches; i++) {
        if (change && i && i % change == 0)
            set_trips(b, heavy, light, (uint32_t)i, features), sig++;
        TMAP_CHECK(tmap_regrouper_launch(r, b->work, sig, NULL, err));
        TMAP_CHECK(tmap_regrouper_poll(r, 1, NULL, err));
        expect_results(b, i);
    }
    int chosen = tmap_regrouper_chosen(r);
    snprintf(name, 128, "%s", tmap_regrouper_chosen_name(r));
    print_message("%s\n", tmap_regrouper_why(r));
    tmap_regrouper_free(r);
    if (features)
        tmap_cuda_free(b->c, features);
    return chosen;
}

/* Under compute-sanitizer (TMAP_TEST_UNTIMED set) kernel times say nothing
 * of the regrouping: only the results are checked. */
static int timed_decisions(void) { return !getenv("TMAP_TEST_UNTIMED"); }

static void test_divergent_is_regrouped(void **state)
{
    bench b;
    open_bench(&b);
    int c = run(&b, TMAP_REGROUP_GRID, 40000, 20, 0, 20, 0);
    if (timed_decisions())
        assert_true(c > TMAP_REGROUPER_ORIGINAL && c < TMAP_REGROUPER_COUNT);
    close_bench(&b);
}

static void test_uniform_is_left_alone(void **state)
{
    bench b;
    open_bench(&b);
    int c = run(&b, TMAP_REGROUP_GRID, 40000, 30, 0, 40000, 1);
    if (timed_decisions())
        assert_int_equal(c, TMAP_REGROUPER_ORIGINAL);
    close_bench(&b);
}

/* Redirection alone: the redirected kernel reads the permutation; nothing
 * moves, and the begin/end path (which cannot redirect) is refused. */
static void test_redirection(void **state)
{
    bench b;
    open_bench(&b);
    int c = run(&b, TMAP_REGROUP_GRID, 40000, 30, 0, 20, 2);
    if (timed_decisions())
        assert_true(c != TMAP_REGROUPER_ORIGINAL);
    tmap_regrouper_opts o = {.scope = TMAP_REGROUP_GRID, .key = key_fn, .key_user = &b,
                             .redirected = b.redirected};
    tmap_regrouper *r = NULL;
    TMAP_CHECK(tmap_regrouper_create(b.c, &b.l, NULL, 0, &o, &r, err));
    tmap_error e;
    assert_int_equal(tmap_regrouper_begin(r, 1, NULL, &e), TMAP_ERR_INVALID);
    tmap_regrouper_free(r);
    close_bench(&b);
}

/* Two keys: the model's says nothing (every thread alike), the second
 * reads the trip counts: the kept candidate sorts by the second. */
static void test_second_key(void **state)
{
    bench b;
    open_bench(&b);
    char name[128];
    int c = run_named(&b, TMAP_REGROUP_GRID, 40000, 30, 0, 20, 0, 1, name);
    if (timed_decisions()) {
        assert_true(c != TMAP_REGROUPER_ORIGINAL);
        assert_non_null(strstr(name, ", by key trips"));
    }
    close_bench(&b);
}

static void test_block_scope_new_inputs(void **state)
{
    bench b;
    open_bench(&b);
    int c = run(&b, TMAP_REGROUP_BLOCK, 40000, 16, 3, 20, 0);
    assert_true(c == TMAP_REGROUPER_ORIGINAL || c == TMAP_REGROUPER_SORT_BLOCK);
    close_bench(&b);
}

/* One overlapped launch: the next input (heavy threads shifted by
 * next_shift; < 0: the same as the current one, nothing written) into
 * `next`, announced, then the launch of the current one and its results;
 * the next input then becomes the launch's. */
enum { OVERLAP_HEAVY = 2000000 };

static void overlapped_launch(bench *b, tmap_regrouper *r, uint64_t next, int next_shift,
                              uint64_t *sig, int wait, int i)
{
    uint32_t *h = malloc(N * 4);
    for (uint32_t t = 0; t < N; t++)
        h[t] = (t + (uint32_t)next_shift) % 8 == 0 ? OVERLAP_HEAVY : 20;
    if (next_shift >= 0)
        TMAP_CHECK(tmap_cuda_upload(b->c, next, h, N * 4, err));
    TMAP_CHECK(tmap_regrouper_prepare(r, *sig + 1, NULL, err));
    TMAP_CHECK(tmap_regrouper_launch(r, b->work, *sig, NULL, err));
    TMAP_CHECK(tmap_regrouper_poll(r, wait, NULL, err));
    expect_results(b, i);
    if (next_shift >= 0) {
        memcpy(b->h_trips, h, N * 4);
        TMAP_CHECK(tmap_cuda_upload(b->c, b->trips, h, N * 4, err));
    }
    ++*sig;
    free(h);
}

/* Overlap: after the trial, each launch's successor is prepared beside it
 * (its trips in a second buffer, which the key reads).  Waiting for both
 * streams after each launch, every prepared permutation is taken; with a
 * key that spins 50 ms first (the next input unchanged, so that nothing
 * it reads is rewritten), launches find theirs not done, go ahead with
 * the last permutation and are counted late.  Results: always the
 * original's.  The heavy threads loop 2e6 times (the original about 6 ms,
 * sorted per block 8x less), so that sorting is kept even under
 * compute-sanitizer, whose cost per launch would otherwise outweigh the
 * gain; there (TMAP_TEST_UNTIMED) the counts, which rest on timing, are
 * not asserted. */
static void test_overlap(void **state)
{
    bench b;
    open_bench(&b);
    tmap_regrouper_opts o = {.scope = TMAP_REGROUP_BLOCK, .key = key_fn, .key_user = &b,
                             .candidates = 1u << TMAP_REGROUPER_SORT_BLOCK, .overlap = 1};
    tmap_regrouper *r = NULL;
    uint64_t sig = 1, next;
    size_t used, late;
    TMAP_CHECK(tmap_regrouper_create(b.c, &b.l, arrays, 4, &o, &r, err));
    TMAP_CHECK(tmap_cuda_alloc(b.c, N * 4, &next, err));
    set_trips(&b, OVERLAP_HEAVY, 20, 0, 0);
    int i = 0;
    for (; i < 40 && tmap_regrouper_chosen(r) < 0; i++) {
        TMAP_CHECK(tmap_regrouper_launch(r, b.work, sig, NULL, err));
        TMAP_CHECK(tmap_regrouper_poll(r, 1, NULL, err));
        expect_results(&b, i);
    }
    print_message("%s\n", tmap_regrouper_why(r));
    int kept = tmap_regrouper_chosen(r) == TMAP_REGROUPER_SORT_BLOCK;
    if (timed_decisions())
        assert_true(kept);
    b.key_src = next;
    for (int k = 0; k < 8; k++, i++)
        overlapped_launch(&b, r, next, k + 1, &sig, 1, i);
    tmap_regrouper_overlap_counts(r, &used, &late);
    if (kept) /* the first overlapped launch had none prepared */
        assert_true(used == 7 && late == 0);
    b.spin_cycles = 100000000; /* about 50 ms at 2 GHz */
    for (int k = 0; k < 3; k++, i++)
        overlapped_launch(&b, r, next, -1, &sig, 0, i);
    tmap_regrouper_overlap_counts(r, &used, &late);
    print_message("overlap: %zu prepared permutations taken, %zu late\n", used, late);
    if (kept && timed_decisions())
        assert_true(late >= 2);
    TMAP_CHECK(tmap_regrouper_poll(r, 1, NULL, err));
    tmap_error e;
    tmap_regrouper_opts plain = {.scope = TMAP_REGROUP_BLOCK, .key = key_fn, .key_user = &b};
    tmap_regrouper *q = NULL;
    TMAP_CHECK(tmap_regrouper_create(b.c, &b.l, arrays, 4, &plain, &q, err));
    assert_int_equal(tmap_regrouper_prepare(q, 2, NULL, &e), TMAP_ERR_INVALID);
    tmap_regrouper_free(q);
    tmap_regrouper_free(r);
    tmap_cuda_free(b.c, next);
    close_bench(&b);
}

/* The jump equals stepping (the reference must be right to fail a launch). */
static void test_lcg_jump(void **state)
{
    for (uint32_t k = 0; k < 300; k += 7) {
        uint32_t h = 12345u;
        for (uint32_t i = 0; i < k; i++)
            h = h * 1664525u + 1013904223u;
        assert_int_equal(lcg_jump(12345u, k), h);
    }
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lcg_jump),
        cmocka_unit_test(test_divergent_is_regrouped),
        cmocka_unit_test(test_uniform_is_left_alone),
        cmocka_unit_test(test_block_scope_new_inputs),
        cmocka_unit_test(test_redirection),
        cmocka_unit_test(test_second_key),
        cmocka_unit_test(test_overlap),
    };
    return test_gpu_main(tests, NULL, NULL);
}

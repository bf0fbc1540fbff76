/*
 * test_gpu_regroup.c -- the GPU regroup path (runtime/gpu_regroup.cu)
 * against the CPU references on the same inputs: each thread's folded
 * eq. 11 latency (threadmap/runtime.h: blocks of equal coefficients
 * merged, per tile of 256 threads the rows proven never clamped folded
 * into one linear form, those always clamped at 0 dropped, the others
 * clamped per thread in single precision, each step one fma) must equal,
 * bit for bit, a CPU computing the same sequence, and the mathematical sum
 * of lat * clamp(eq. 1) to its rounding bound; the device sort's
 * permutation must equal
 * tmap_regroup_sort_key's on the keys rounded to bfloat16, over
 * the grid and within thread blocks (a last partial block included),
 * descending and ascending, with many ties; and the one-graph path (cost
 * then sort, the grid's sort keys written by the cost kernel) must give
 * the same permutation, per block and over the grid, also when relaunched
 * and when the model changes; bin-and-deal's graph (sort and deal) too,
 * and every graph when the calls alternate as the regrouper's trial makes
 * them (the graph cache).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "threadmap.h"
#include "tests/testutil.h"

enum { N = 100000 + 77, P = 3, B = 12, TILE = 256, W = P + 2 };
/* U rows summed in single precision per run of RUN rows: 16 KiB of rows
 * of P + 3 floats padded to a multiple of 4 */
enum { RUN = 16384 / (4 * ((P + 3 + 3) / 4 * 4)) };

static double uniform(uint64_t *s, double lo, double hi)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* The model as the device compiles it: rows [c0, c1..cp, ct] of weight
 * rows[k][W], equal rows merged, weight 0 dropped; returns the count. */
static size_t compile(const double *coef, const double *lat, size_t nb, double (*rows)[W + 1])
{
    size_t m = 0, kept = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t k = 0;
        while (k < m && memcmp(rows[k], coef + b * W, W * sizeof(double)))
            k++;
        if (k == m)
            memcpy(rows[m], coef + b * W, W * sizeof(double)), rows[m++][W] = 0;
        rows[k][W] += lat[b];
    }
    for (size_t k = 0; k < m; k++)
        if (rows[k][W] != 0)
            memmove(rows[kept++], rows[k], sizeof rows[k]);
    return kept;
}

enum { Z, L, U };

/* A row's class on a tile's box, as threadmap/runtime.h states it. */
static int row_class(const double *r, const double *lo, const double *hi, double t0, double t1)
{
    double ct = r[P + 1], vlo = r[0], vhi = r[0], s = fabs(r[0]);
    vlo = fma(ct, ct >= 0 ? t0 : t1, vlo);
    vhi = fma(ct, ct >= 0 ? t1 : t0, vhi);
    s = fma(fabs(ct), t1, s);
    for (size_t j = 0; j < P; j++) {
        double c = r[j + 1];
        vlo = fma(c, c >= 0 ? lo[j] : hi[j], vlo);
        vhi = fma(c, c >= 0 ? hi[j] : lo[j], vhi);
        s = fma(fabs(c), fmax(fabs(lo[j]), fabs(hi[j])), s);
    }
    double margin = s * ((double)(P + 3) * 0x1p-52);
    return vlo > margin ? L : vhi < -margin ? Z : U;
}

/* x widened to a float below (dir < 0) or above; as an unsigned that
 * orders floats by value (the device reduces these). */
static uint32_t widened(double x, int dir)
{
    float f = (float)x;
    if (dir < 0 ? (double)f > x : (double)f < x)
        f = nextafterf(f, dir < 0 ? -INFINITY : INFINITY);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u >> 31) ? ~u : u | 0x80000000u;
}

static double unwidened(uint32_t u)
{
    float f;
    u = (u >> 31) ? u & 0x7fffffffu : ~u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The single-precision sum of the clamped terms of U rows u[0..nu-1]
 * for thread t (fmaf: rounded once, as the device's). */
static float u_terms(double (*rows)[W + 1], const size_t *u, size_t nu, const double *xt,
                     size_t t)
{
    float sum = 0;
    for (size_t i = 0; i < nu; i++) {
        const double *r = rows[u[i]];
        float v = fmaf((float)r[P + 1], (float)t, (float)r[0]);
        for (size_t j = 0; j < P; j++)
            v = fmaf((float)r[j + 1], (float)xt[j], v);
        sum = fmaf((float)r[W], v > 0 ? v : 0.0f, sum); /* NaN: 0 */
    }
    return sum;
}

static double clamp_count(double v) { return v > 0 ? v : 0.0; }

/* The CPU reference of the folded key; classes[c] counts the (tile, row)
 * pairs of each class. */
static double *cpu_cost(const double *x, const double *coef, const double *lat, size_t nb,
                        size_t classes[3])
{
    double (*rows)[W + 1] = malloc(nb * sizeof *rows), *cost = malloc(N * sizeof *cost);
    int *cls = malloc(nb * sizeof *cls);
    size_t *u = malloc(nb * sizeof *u), nu;
    size_t m = compile(coef, lat, nb, rows);
    memset(classes, 0, 3 * sizeof *classes);
    for (size_t first = 0; first < N; first += TILE) {
        size_t last = N - first < TILE ? N - 1 : first + TILE - 1;
        double lo[P], hi[P], fold[W] = {0};
        for (size_t j = 0; j < P; j++) { /* the box, widened to floats */
            uint32_t a = UINT32_MAX, z = 0;
            for (size_t t = first; t <= last; t++) {
                uint32_t u = widened(x[t * P + j], -1), v = widened(x[t * P + j], 1);
                a = u < a ? u : a, z = v > z ? v : z;
            }
            lo[j] = unwidened(a), hi[j] = unwidened(z);
        }
        nu = 0;
        for (size_t k = 0; k < m; k++) {
            cls[k] = row_class(rows[k], lo, hi, (double)first, (double)last);
            classes[cls[k]]++;
            for (size_t j = 0; j < W && cls[k] == L; j++)
                fold[j] = fma(rows[k][W], rows[k][j], fold[j]);
            if (cls[k] == U)
                u[nu++] = k;
        }
        for (size_t t = first; t <= last; t++) {
            double key = fma(fold[P + 1], (double)t, fold[0]);
            for (size_t j = 0; j < P; j++)
                key = fma(fold[j + 1], x[t * P + j], key);
            for (size_t i = 0; i < nu; i += RUN)
                key = key + (double)u_terms(rows, u + i, nu - i < RUN ? nu - i : RUN,
                                            x + t * P, t);
            cost[t] = key;
        }
    }
    free(rows), free(cls), free(u);
    return cost;
}

/* The key is eq. 11 of eq. 1's clamped counts, to rounding: the U rows'
 * terms in single precision, each within (P + 5) 2^-24 of its scale
 * (rounded coefficients, features, fmas), their sum within nb 2^-24 more;
 * a factor 2 for the second-order terms. */
static void expect_near_eq11(const double *x, const double *coef, const double *lat,
                             size_t nb, const double *got)
{
    for (size_t t = 0; t < N; t++) {
        double sum = 0, scale = 1; /* scale: the sum of the terms' magnitudes */
        for (size_t b = 0; b < nb; b++) {
            const double *c = coef + b * W;
            double v = c[0] + c[P + 1] * (double)t, mag = fabs(c[0]) + fabs(c[P + 1]) * t;
            for (size_t j = 0; j < P; j++)
                v += c[j + 1] * x[t * P + j], mag += fabs(c[j + 1] * x[t * P + j]);
            sum += lat[b] * clamp_count(v), scale += lat[b] * mag;
        }
        if (fabs(got[t] - sum) > 2.0 * (P + 6 + (double)nb) * 0x1p-24 * scale)
            fail_msg("thread %zu: key %.17g, eq. 11 %.17g", t, got[t], sum);
    }
}

/* key rounded to single precision, then to bfloat16 (round to nearest
 * even on the 16 dropped bits), as the device sort keys it. */
static double bf16_round(double key)
{
    float f = (float)key;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The GPU's keys for features x (uploaded to *d_x) and this model: equal
 * to want bit for bit, and to eq. 11 to rounding.  Returns the scratch. */
static tmap_gpu_regroup *expect_gpu_cost(tmap_cuda *c, const double *x, uint64_t *d_x,
                                         const double *coef, const double *lat, size_t nb,
                                         const double *want)
{
    tmap_gpu_regroup *g = NULL;
    double *got = malloc(N * sizeof *got);
    TMAP_CHECK(tmap_gpu_regroup_create(c, N, &g, err));
    TMAP_CHECK(tmap_cuda_alloc(c, N * P * sizeof *x, d_x, err));
    TMAP_CHECK(tmap_cuda_upload(c, *d_x, x, N * P * sizeof *x, err));
    TMAP_CHECK(tmap_gpu_regroup_model(g, coef, lat, nb, P, err));
    TMAP_CHECK(tmap_gpu_regroup_cost(g, *d_x, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    TMAP_CHECK(tmap_cuda_download(c, got, tmap_gpu_regroup_cost_ptr(g), N * sizeof *got, err));
    for (size_t t = 0; t < N; t++)
        if (memcmp(&got[t], &want[t], sizeof got[t]))
            fail_msg("thread %zu: GPU cost %.17g, CPU %.17g", t, got[t], want[t]);
    expect_near_eq11(x, coef, lat, nb, got);
    free(got);
    return g;
}

/* The CPU's permutation of the keys as the device sort rounds them. */
static uint32_t *cpu_sort(const double *key, int descending, size_t block_size)
{
    uint32_t *want = malloc(N * sizeof *want);
    double *q = malloc(N * sizeof *q);
    for (size_t t = 0; t < N; t++)
        q[t] = bf16_round(key[t]);
    tmap_regroup_opts o = {32, block_size ? TMAP_REGROUP_BLOCK : TMAP_REGROUP_GRID,
                           block_size, 1};
    TMAP_CHECK(tmap_regroup_sort_key(q, N, descending, &o, want, err));
    free(q);
    return want;
}

static void check_sort(tmap_cuda *c, tmap_gpu_regroup *g, const double *key, int descending,
                       size_t block_size)
{
    uint64_t d_key, d_perm;
    uint32_t *want = cpu_sort(key, descending, block_size);
    TMAP_CHECK(tmap_cuda_alloc(c, N * sizeof(double), &d_key, err));
    TMAP_CHECK(tmap_cuda_alloc(c, N * sizeof(uint32_t), &d_perm, err));
    TMAP_CHECK(tmap_cuda_upload(c, d_key, key, N * sizeof(double), err));
    TMAP_CHECK(tmap_gpu_regroup_sort(g, d_key, descending, block_size, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    char what[64];
    snprintf(what, sizeof what, "descending %d, block size %zu: perm", descending, block_size);
    test_expect_device_u32(c, d_perm, want, N, what);
    tmap_cuda_free(c, d_key);
    tmap_cuda_free(c, d_perm);
    free(want);
}

static void test_equal_to_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    uint64_t s = 99;
    double *x = malloc(N * P * sizeof *x), coef[B * W], lat[B], base[P];
    for (size_t t = 0; t < N; t++) /* even tiles: features close together; odd: spread */
        for (size_t j = 0; j < P; j++) {
            if (t % TILE == 0)
                base[j] = uniform(&s, 0, 50);
            x[t * P + j] = (t / TILE) % 2 ? uniform(&s, 0, 50) : base[j] + uniform(&s, 0, 0.5);
        }
    for (size_t i = 0; i < B * W; i++)
        coef[i] = uniform(&s, -3, 3);
    for (size_t b = 0; b < B; b++) {
        coef[b * W + P + 1] = uniform(&s, -1e-4, 1e-4); /* the thread id term */
        lat[b] = uniform(&s, 1, 40);
    }
    memcpy(coef + 5 * W, coef + 2 * W, W * sizeof *coef); /* merged with block 2 */
    lat[7] = 0;                                              /* dropped */
    size_t classes[3];
    double *want = cpu_cost(x, coef, lat, B, classes);
    assert_true(classes[Z] > 0 && classes[L] > 0 && classes[U] > 0); /* every class exercised */
    uint64_t d_x, d_perm;
    tmap_gpu_regroup *g = expect_gpu_cost(c, x, &d_x, coef, lat, B, want);
    TMAP_CHECK(tmap_cuda_alloc(c, N * sizeof(uint32_t), &d_perm, err));
    /* the one-graph path, twice, then after the model changes */
    uint32_t *ref = cpu_sort(want, 1, 256);
    for (int i = 0; i < 2; i++) {
        TMAP_CHECK(tmap_cuda_zero(c, d_perm, N * sizeof(uint32_t), err));
        TMAP_CHECK(tmap_gpu_regroup_run(g, d_x, 1, 256, d_perm, NULL, err));
        TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
        test_expect_device_u32(c, d_perm, ref, N, "the graph path: perm");
    }
    free(ref);
    for (size_t b = 0; b < B; b++)
        lat[b] = B - (double)b;
    double *want2 = cpu_cost(x, coef, lat, B, classes);
    ref = cpu_sort(want2, 1, 256);
    TMAP_CHECK(tmap_gpu_regroup_model(g, coef, lat, B, P, err));
    TMAP_CHECK(tmap_gpu_regroup_run(g, d_x, 1, 256, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    test_expect_device_u32(c, d_perm, ref, N, "the graph path after a new model: perm");
    free(ref);
    ref = cpu_sort(want2, 1, 0);
    TMAP_CHECK(tmap_gpu_regroup_run(g, d_x, 1, 0, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    test_expect_device_u32(c, d_perm, ref, N, "the graph path over the grid: perm");
    free(ref);
    ref = cpu_sort(want2, 0, 0);
    TMAP_CHECK(tmap_gpu_regroup_run(g, d_x, 0, 0, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    test_expect_device_u32(c, d_perm, ref, N, "the graph path over the grid, ascending: perm");
    free(ref), free(want2);
    check_sort(c, g, want, 1, 0);
    check_sort(c, g, want, 0, 256);
    for (size_t t = 0; t < N; t++) /* few distinct keys: ties broken by thread index */
        want[t] = (double)((int)want[t] / 500) - 3.0;
    check_sort(c, g, want, 1, 0);
    check_sort(c, g, want, 1, 128);
    check_sort(c, g, want, 0, 0);
    tmap_gpu_regroup_free(g);
    tmap_cuda_free(c, d_x);
    tmap_cuda_free(c, d_perm);
    free(x), free(want);
    tmap_cuda_close(c);
}

/* Features uniform in [0, 50), nb blocks of coefficients in [-3, 3] (the
 * thread id's in [-1e-4, 1e-4]) and latencies in [1, 40]. */
static void random_model(uint64_t *s, double *x, double *coef, double *lat, size_t nb)
{
    for (size_t i = 0; i < N * P; i++)
        x[i] = uniform(s, 0, 50);
    for (size_t i = 0; i < nb * W; i++)
        coef[i] = uniform(s, -3, 3);
    for (size_t b = 0; b < nb; b++)
        coef[b * W + P + 1] = uniform(s, -1e-4, 1e-4), lat[b] = uniform(s, 1, 40);
}

/* A model of more U rows than one run of the cost tile's shared memory
 * (900 distinct blocks, most of them U in every tile: two runs of
 * single-precision terms per thread) gives the CPU's bits too. */
static void test_many_blocks(void **state)
{
    enum { NB = 900 };
    tmap_cuda *c = test_gpu_open();
    uint64_t s = 5, d_x;
    double *x = malloc(N * P * sizeof *x), *coef = malloc(NB * W * sizeof *coef);
    double *lat = malloc(NB * sizeof *lat);
    random_model(&s, x, coef, lat, NB);
    size_t classes[3];
    double *want = cpu_cost(x, coef, lat, NB, classes);
    assert_true(classes[U] > (N + TILE - 1) / TILE * RUN); /* some tile has two runs */
    tmap_gpu_regroup_free(expect_gpu_cost(c, x, &d_x, coef, lat, NB, want));
    tmap_cuda_free(c, d_x);
    free(x), free(coef), free(lat), free(want);
    tmap_cuda_close(c);
}

/* The CPU's permutation of n keys as the device rounds them: sorted
 * descending over the grid (deal 0), then dealt to blocks of deal threads;
 * or sorted descending within blocks of block_size threads. */
static uint32_t *cpu_order(const double *key, size_t n, size_t block_size, size_t deal)
{
    uint32_t *sorted = malloc(n * sizeof *sorted), *want = malloc(n * sizeof *want);
    double *q = malloc(n * sizeof *q);
    for (size_t t = 0; t < n; t++)
        q[t] = bf16_round(key[t]);
    tmap_regroup_opts o = {32, block_size ? TMAP_REGROUP_BLOCK : TMAP_REGROUP_GRID,
                           block_size, 1};
    TMAP_CHECK(tmap_regroup_sort_key(q, n, 1, &o, sorted, err));
    if (deal)
        TMAP_CHECK(tmap_regroup_deal(sorted, n, deal, 32, want, err));
    else
        memcpy(want, sorted, n * sizeof *want);
    free(q), free(sorted);
    return want;
}

/* The graph path in turns, as the regrouper's trial calls it: grid sort,
 * block sort, bin-and-deal (sort and deal in one graph), into two output
 * arrays, over three rounds (the cache keeps every graph); each
 * permutation equals the CPU's.  The first ND threads of test_equal_to_cpu's
 * features: whole tiles, so their keys are the same. */
static void test_graphs_in_turns(void **state)
{
    enum { ND = N / 256 * 256 };
    tmap_cuda *c = test_gpu_open();
    uint64_t s = 3, d_x, d_perm[2];
    double *x = malloc(N * P * sizeof *x), coef[B * W], lat[B];
    random_model(&s, x, coef, lat, B);
    size_t classes[3];
    double *want = cpu_cost(x, coef, lat, B, classes);
    tmap_gpu_regroup *g0 = expect_gpu_cost(c, x, &d_x, coef, lat, B, want), *g = NULL;
    tmap_gpu_regroup_free(g0);
    TMAP_CHECK(tmap_gpu_regroup_create(c, ND, &g, err));
    TMAP_CHECK(tmap_gpu_regroup_model(g, coef, lat, B, P, err));
    for (int k = 0; k < 2; k++)
        TMAP_CHECK(tmap_cuda_alloc(c, ND * sizeof(uint32_t), &d_perm[k], err));
    uint32_t *ref[3] = {cpu_order(want, ND, 0, 0), cpu_order(want, ND, 256, 0),
                        cpu_order(want, ND, 0, 256)};
    const char *what[3] = {"grid sort", "block sort", "bin-and-deal"};
    for (int round = 0; round < 3; round++)
        for (int m = 0; m < 3; m++)
            for (int k = 0; k < 2; k++) {
                TMAP_CHECK(tmap_cuda_zero(c, d_perm[k], ND * sizeof(uint32_t), err));
                if (m == 2)
                    TMAP_CHECK(tmap_gpu_regroup_run_deal(g, d_x, 256, d_perm[k], NULL, err));
                else
                    TMAP_CHECK(tmap_gpu_regroup_run(g, d_x, 1, m ? 256 : 0, d_perm[k], NULL,
                                                    err));
                TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
                char msg[96];
                snprintf(msg, sizeof msg, "graph in turns, round %d, %s, output %d: perm", round,
                         what[m], k);
                test_expect_device_u32(c, d_perm[k], ref[m], ND, msg);
            }
    tmap_error e;
    assert_int_equal(tmap_gpu_regroup_run_deal(g, d_x, 48, d_perm[0], NULL, &e),
                     TMAP_ERR_INVALID);
    assert_int_equal(tmap_gpu_regroup_run_deal(g, d_x, 256, 0, NULL, &e), TMAP_ERR_INVALID);
    tmap_gpu_regroup_free(g);
    tmap_cuda_free(c, d_x);
    for (int k = 0; k < 2; k++)
        tmap_cuda_free(c, d_perm[k]);
    for (int m = 0; m < 3; m++)
        free(ref[m]);
    free(x), free(want);
    tmap_cuda_close(c);
}

/* Bin-and-deal: the GPU's deal of a grid order equals the CPU's. */
static void test_deal_equal_to_cpu(void **state)
{
    tmap_cuda *c = test_gpu_open();
    enum { ND = 400 * 256 };
    uint64_t s = 7, d_sorted, d_perm;
    double *key = malloc(ND * sizeof *key);
    uint32_t *sorted = malloc(ND * sizeof *sorted), *want = malloc(ND * sizeof *want);
    uint32_t *got = malloc(ND * sizeof *got);
    for (size_t t = 0; t < ND; t++)
        key[t] = (double)(int)uniform(&s, 0, 40);
    tmap_regroup_opts o = {32, TMAP_REGROUP_GRID, 0, 1};
    TMAP_CHECK(tmap_regroup_sort_key(key, ND, 1, &o, sorted, err));
    TMAP_CHECK(tmap_regroup_deal(sorted, ND, 256, 32, want, err));
    tmap_gpu_regroup *g = NULL;
    TMAP_CHECK(tmap_gpu_regroup_create(c, ND, &g, err));
    TMAP_CHECK(tmap_cuda_alloc(c, ND * sizeof(uint32_t), &d_sorted, err));
    TMAP_CHECK(tmap_cuda_alloc(c, ND * sizeof(uint32_t), &d_perm, err));
    TMAP_CHECK(tmap_cuda_upload(c, d_sorted, sorted, ND * sizeof(uint32_t), err));
    TMAP_CHECK(tmap_gpu_regroup_deal(g, d_sorted, 256, d_perm, NULL, err));
    TMAP_CHECK(tmap_gpu_regroup_sync(g, NULL, err));
    TMAP_CHECK(tmap_cuda_download(c, got, d_perm, ND * sizeof(uint32_t), err));
    for (size_t i = 0; i < ND; i++)
        if (got[i] != want[i])
            fail_msg("deal: slot %zu holds thread %u, the CPU's %u", i, got[i], want[i]);
    tmap_error e;
    assert_int_equal(tmap_gpu_regroup_deal(g, d_sorted, 128, d_perm, NULL, &e), TMAP_OK);
    assert_int_equal(tmap_gpu_regroup_deal(g, d_sorted, 48, d_perm, NULL, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_gpu_regroup_deal(g, d_sorted, 256, d_sorted, NULL, &e),
                     TMAP_ERR_INVALID);
    tmap_gpu_regroup_free(g);
    tmap_cuda_free(c, d_sorted);
    tmap_cuda_free(c, d_perm);
    free(key), free(sorted), free(want), free(got);
    tmap_cuda_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_to_cpu),
        cmocka_unit_test(test_many_blocks),
        cmocka_unit_test(test_deal_equal_to_cpu),
        cmocka_unit_test(test_graphs_in_turns),
    };
    return test_gpu_main(tests, NULL, NULL);
}

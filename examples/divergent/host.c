/*
 * host.c -- a complete program using threadmap's C API on the bundled
 * example kernel (divergent.cu): it compiles the kernel with NVRTC,
 * profiles two inputs, trains the BBV regression, and then, for a new
 * input, predicts the BBVs from the input's features and calls regroup()
 * before the launch; the results are checked against an unregrouped launch.
 *
 *   build:  see CMakeLists.txt beside it (find_package(threadmap))
 *   run:    ./divergent_host [path/to/divergent.cu]    (exit 3: no GPU)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <threadmap.h>

enum { THREADS = 1 << 18, BLOCK = 256, NFEAT = 4 };

/* One input: per-thread step counts (heavy-tailed), classes, values. */
typedef struct input {
    int32_t steps[THREADS], cls[THREADS];
    float x[THREADS];
    double features[THREADS * NFEAT];
} input;

static void make_input(input *in, unsigned seed)
{
    srand(seed);
    for (int t = 0; t < THREADS; t++) {
        double u = (rand() + 1.0) / ((double)RAND_MAX + 2.0);
        int s = (int)(4.0 / (u * u)); /* a power law, cut at 2000 */
        in->steps[t] = s > 2000 ? 2000 : s;
        in->cls[t] = rand() & 1;
        in->x[t] = (float)rand() / (float)RAND_MAX;
        double *f = &in->features[t * NFEAT];
        f[0] = in->steps[t], f[1] = in->cls[t];
        f[2] = in->steps[t] * in->cls[t], f[3] = in->steps[t] * (1 - in->cls[t]);
    }
}

/* Device buffers and the kernel's argument list (steps, cls, x, y, count). */
typedef struct buffers {
    uint64_t steps, cls, x, y;
    int32_t count;
    void *args[5];
} buffers;

static int check(tmap_status st, const tmap_error *err)
{
    if (st != TMAP_OK)
        fprintf(stderr, "divergent_host: %s\n", err->message);
    return st != TMAP_OK;
}

static tmap_status upload(tmap_cuda *c, buffers *b, const input *in, tmap_error *err)
{
    tmap_status st = tmap_cuda_upload(c, b->steps, in->steps, sizeof in->steps, err);
    if (!st) st = tmap_cuda_upload(c, b->cls, in->cls, sizeof in->cls, err);
    if (!st) st = tmap_cuda_upload(c, b->x, in->x, sizeof in->x, err);
    if (!st) st = tmap_cuda_zero(c, b->y, THREADS * sizeof(float), err);
    return st;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) == (size_t)n)
        s[n] = '\0';
    else
        free(s), s = NULL;
    fclose(f);
    return s;
}

/* Profiles two inputs and fits the regression (eq. 1). */
static tmap_status train(tmap_cuda *c, const char *ptx, buffers *b, const tmap_launch *l,
                         input *in, tmap_predictor *pred, tmap_error *err)
{
    tmap_profile prof[2];
    memset(prof, 0, sizeof prof);
    tmap_regress_run runs[2];
    double *feats[2] = {malloc(sizeof in->features), malloc(sizeof in->features)};
    const char *fnames[NFEAT] = {"steps", "cls", "steps_if_cls", "steps_if_not_cls"};
    tmap_status st = feats[0] && feats[1] ? TMAP_OK : TMAP_ERR_NOMEM;
    for (int r = 0; r < 2 && !st; r++) {
        make_input(in, 100 + r);
        memcpy(feats[r], in->features, sizeof in->features);
        st = upload(c, b, in, err);
        if (!st)
            st = tmap_profile_run(c, ptx, "divergent", l, 1, &prof[r], err);
        runs[r] = (tmap_regress_run){feats[r], &prof[r].bbv};
    }
    const char **names = NULL;
    if (!st && (names = malloc(prof[0].cfg->nblocks * sizeof *names)))
        for (size_t i = 0; i < prof[0].cfg->nblocks; i++)
            names[i] = prof[0].cfg->blocks[i].name;
    if (!st)
        st = tmap_regress_fit(runs, 2, NFEAT, "divergent", names, fnames, pred, err);
    free(names);
    for (int r = 0; r < 2; r++)
        tmap_profile_free(&prof[r]), free(feats[r]);
    return st;
}

/* Block latencies of the kernel's CFG from the installed sm_90 table. */
static tmap_status latencies(const char *ptx, tmap_cfg **cfg, double **lat, tmap_error *err)
{
    char path[4096];
    tmap_ptx_module *m = NULL;
    tmap_lat_table *t = NULL;
    tmap_status st = tmap_ptx_parse(ptx, strlen(ptx), "<PTX of divergent compiled by NVRTC>", &m,
                                    err);
    if (!st) st = tmap_cfg_build(m, "divergent", cfg, err);
    if (!st) st = tmap_lat_default_path("sm_90", path, sizeof path, err);
    if (!st) st = tmap_lat_load(path, &t, err);
    if (!st) st = tmap_lat_blocks(t, *cfg, lat, NULL, err);
    tmap_lat_free(t);
    tmap_ptx_free(m);
    return st;
}

int main(int argc, char **argv)
{
    const char *src_path = argc > 1 ? argv[1] : "divergent.cu";
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_status st = tmap_cuda_open(0, &c, &err);
    if (st == TMAP_ERR_NO_DEVICE) {
        printf("divergent_host: no GPU here (%s); nothing to run\n", err.message);
        return 3;
    }
    char *src = read_file(src_path);
    if (check(st, &err) || !src) {
        fprintf(stderr, "divergent_host: cannot read %s\n", src_path);
        return 1;
    }
    const char *names[] = {"divergent"};
    tmap_compile_opts copt = {.names = names, .nnames = 1};
    tmap_compiled k;
    if (check(tmap_compile(src, src_path, &copt, &k, &err), &err))
        return 1;

    input *in = malloc(sizeof *in);
    buffers b = {.count = THREADS};
    tmap_cuda_alloc(c, sizeof in->steps, &b.steps, &err);
    tmap_cuda_alloc(c, sizeof in->cls, &b.cls, &err);
    tmap_cuda_alloc(c, sizeof in->x, &b.x, &err);
    st = tmap_cuda_alloc(c, THREADS * sizeof(float), &b.y, &err);
    void *args[5] = {&b.steps, &b.cls, &b.x, &b.y, &b.count};
    tmap_launch l = {{THREADS / BLOCK, 1, 1}, {BLOCK, 1, 1}, 0, args, 5};

    /* profile, then train */
    tmap_predictor pred = {0};
    tmap_cfg *cfg = NULL;
    double *lat = NULL;
    if (!st) st = train(c, k.ptx, &b, &l, in, &pred, &err);
    if (!st) st = latencies(k.ptx, &cfg, &lat, &err);

    /* a new input: reference outputs from an unregrouped launch */
    tmap_kernel *orig = NULL;
    tmap_kernel_stats stats;
    float *ref = malloc(THREADS * sizeof *ref), *got = malloc(THREADS * sizeof *got), t0;
    make_input(in, 7);
    if (!st) st = tmap_kernel_load(c, k.ptx, "divergent", &orig, &err);
    if (!st) st = tmap_kernel_stats_get(orig, &l, &stats, &err);
    if (!st) st = upload(c, &b, in, &err);
    if (!st) st = tmap_kernel_time(orig, &l, 1, 1, &t0, &err);
    if (!st) st = tmap_cuda_download(c, ref, b.y, THREADS * sizeof *ref, &err);

    /* regroup() before the launch, from BBVs predicted from the features */
    tmap_bbv predicted = {0};
    tmap_device_info dev;
    tmap_plan plan = {0};
    float ms[3] = {0};
    uint64_t perm = 0;
    tmap_thread_array arrays[4] = {{0, 4, 1, 1, 0}, {1, 4, 1, 1, 0}, {2, 4, 1, 1, 0}, {3, 4, 1, 0, 1}};
    tmap_regroup_target target = {c, orig, NULL, arrays, 4, NULL};
    if (!st) st = tmap_predict(&pred, in->features, THREADS, &predicted, &err);
    if (!st) st = tmap_cuda_info(c, &dev, &err);
    if (!st) st = tmap_cuda_alloc(c, THREADS * sizeof(uint32_t), &perm, &err);
    if (!st) st = upload(c, &b, in, &err);
    tmap_plan_opts po = {{BLOCK, (size_t)dev.sms, (size_t)stats.blocks_per_sm},
                         {32, TMAP_REGROUP_GRID, BLOCK}, NULL, 0, 0.05, t0, 0, 100};
    if (!st)
        st = tmap_regroup(&target, &l, TMAP_MECH_LAYOUT, &predicted, lat, cfg, &po, perm, &plan,
                          ms, &err);
    if (!st) st = tmap_cuda_download(c, got, b.y, THREADS * sizeof *got, &err);
    int rc = check(st, &err);
    if (!rc) {
        printf("original launch: %.3f ms\n", t0);
        printf("decision: %s\n", plan.why);
        printf("launched with %s: gather %.3f ms, kernel %.3f ms, scatter %.3f ms\n",
               plan.chosen ? tmap_algo_name(plan.cand[plan.chosen].algo) : "no regrouping",
               ms[0], ms[1], ms[2]);
        rc = memcmp(ref, got, THREADS * sizeof *got) != 0;
        printf("outputs %s the unregrouped launch's\n", rc ? "DIFFER from" : "equal");
    }
    tmap_plan_free(&plan);
    tmap_bbv_free(&predicted);
    tmap_predictor_free(&pred);
    tmap_cfg_free(cfg);
    tmap_kernel_free(orig);
    free(lat), free(ref), free(got), free(in), free(src);
    tmap_compiled_free(&k);
    tmap_cuda_close(c);
    return rc;
}

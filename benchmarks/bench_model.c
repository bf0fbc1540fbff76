/*
 * bench_model.c -- how well the models rank regroupings, against the GPU.
 * For each manifest (default: every .json of benchmarks/suite), BBVs measured by
 * profiling the evaluation input (so the regression plays no part), every
 * plan candidate applied and timed (tmap_evaluate, measure_all), then per
 * candidate the improvement 1 - t_c / t_original
 *   measured  -- from the kernel-only medians (layout transform or
 *                redirection, the kernel between its events) against the
 *                original kernel's median;
 *   scheduled -- the paper's BBV-weighted-scheduled (the plan's gain);
 *   sub-sum   -- the sub-partition model (model/sm.c) with SASS
 *                instruction counts as issue cycles where nvdisasm is found
 *                (else PTX counts) and, as each block's latency, the sum
 *                of its instructions' latencies (tmap_lat_blocks);
 *   sub-chain -- the same with each block's latency chain
 *                (tmap_lat_chains: in-order issue, register dependences).
 * Prints one row per candidate and, per model, the mean absolute error in
 * percentage points, the sign right on the candidates that move the
 * measured time by more than 5%, and the kernels whose predicted best is
 * within 5% of the measured best.
 * With --dump DIR, each kernel's data is also written to DIR/NAME/, so that
 * models can be fitted on the CPU (bench_model --from DIR, later):
 *   kernel.ptx  the PTX the evaluation ran
 *   meta.txt    "key value" lines: kernel, entry, nthreads, nblocks, block_size,
 *               nsms, blocks_per_sm, registers, local_bytes, shared_bytes,
 *               mechanism, device, sm_clock_khz, mem_clock_khz, original_ms;
 *               then per candidate "cand ALGO MEASURED_MS APPLY_MS GAIN"
 *   agg.bin     per candidate in that order, little-endian uint32:
 *               c[w][b] = max over warp w's threads of BBV_t[b],
 *               a[w][b] = sum over them (nwarps x nblocks each), and
 *               d[w] = distinct 32-byte sectors of the warp's perm[i] * 4
 *               (what a redirected tid-indexed 4-byte access touches)
 *   bench_model [--reps N] [--seed S] [--dump DIR] [MANIFEST.json...]
 */
#include <getopt.h>
#include <math.h>
#include <sys/stat.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

enum { M_SCHED, M_SUM, M_CHAIN, M_COUNT };
static const char *const model_name[M_COUNT] = {"scheduled", "sub-sum", "sub-chain"};

typedef struct tally {
    double abs_err[M_COUNT];
    size_t n, moved, sign_ok[M_COUNT], kernels, best_ok[M_COUNT];
} tally;

/* Issue cycles per block execution: SASS counts, else PTX counts. */
static const char *block_issue(const tmap_eval *e, const char *ptx, double *issue)
{
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", e->device.cc_major, e->device.cc_minor);
    tmap_error err = {0};
    if (tmap_sass_block_counts(ptx, e->cfg, arch, issue, NULL, &err) == TMAP_OK)
        return "SASS";
    for (size_t b = 0; b < e->cfg->nblocks; b++)
        issue[b] = e->cfg->blocks[b].ninstr;
    return "PTX";
}

static tmap_status subpart_time(const tmap_eval *e, const uint32_t *perm, const double *issue,
                                const double *lat, double *cycles, tmap_error *err)
{
    size_t nwarps = (e->bbv.nthreads + 31) / 32;
    double *wi = malloc(nwarps * sizeof *wi), *wl = malloc(nwarps * sizeof *wl);
    tmap_sm_params p = {e->params.nsms, e->params.blocks_per_sm, 4,
                        (e->params.block_size + 31) / 32};
    tmap_status st = wi && wl ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (!st)
        st = tmap_sm_warps(&e->bbv, perm, issue, lat, wi, wl, err);
    if (!st)
        st = tmap_sm_schedule(wi, wl, nwarps, &p, cycles, err);
    free(wi), free(wl);
    return st;
}

static double pct(double orig, double cand) { return 100.0 * (1.0 - cand / orig); }

/* Each block's latency chain, with the table the evaluation used. */
static tmap_status block_chains(const tmap_eval *e, const char *ptx, double **chain,
                                tmap_error *err)
{
    tmap_lat_table *t = NULL;
    tmap_ptx_module *m = NULL;
    tmap_status st = tmap_lat_load(e->table, &t, err);
    if (!st) st = tmap_ptx_parse(ptx, strlen(ptx), "kernel.ptx", &m, err);
    if (!st) st = tmap_lat_chains(t, m, e->entry, chain, err);
    tmap_ptx_free(m);
    tmap_lat_free(t);
    return st;
}

/* Rows of one kernel; adds to the tally. */
static tmap_status report_kernel(const char *name, const tmap_eval *e, const char *ptx,
                                 tally *t, tmap_error *err)
{
    double *issue = malloc((e->cfg->nblocks + 1) * sizeof *issue), *chain = NULL, t0, c0;
    if (!issue)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    const char *src = block_issue(e, ptx, issue);
    tmap_status st = block_chains(e, ptx, &chain, err);
    if (!st) st = subpart_time(e, NULL, issue, e->lat, &t0, err);
    if (!st) st = subpart_time(e, NULL, issue, chain, &c0, err);
    double best_meas = INFINITY, best_pred[M_COUNT] = {INFINITY, INFINITY, INFINITY};
    int arg_pred[M_COUNT] = {0};
    double meas_of[TMAP_ALGO_COUNT] = {0};
    for (size_t i = 0; !st && i < e->plan.n; i++) {
        const tmap_candidate *c = &e->plan.cand[i];
        double ms = i ? e->measured_ms[i] : e->original_ms; /* the identity: as written */
        meas_of[i] = ms;
        if (!c->available || !isfinite(ms))
            continue;
        double tc, cc;
        st = subpart_time(e, i ? c->perm : NULL, issue, e->lat, &tc, err);
        if (!st)
            st = subpart_time(e, i ? c->perm : NULL, issue, chain, &cc, err);
        if (st)
            break;
        double pred[M_COUNT] = {100.0 * c->gain, pct(t0, tc), pct(c0, cc)};
        double meas = pct(e->original_ms, ms);
        printf("%-20s %-11s %9.4f %9.1f | %9.1f %9.1f %9.1f | %s\n", name,
               tmap_algo_name(c->algo), ms, meas, pred[M_SCHED], pred[M_SUM], pred[M_CHAIN], src);
        if (ms < best_meas)
            best_meas = ms;
        for (int m = 0; m < M_COUNT; m++)
            if (-pred[m] < best_pred[m])
                best_pred[m] = -pred[m], arg_pred[m] = (int)i;
        if (i == 0)
            continue;
        t->n++;
        int moved = fabs(meas) > 5.0;
        t->moved += moved;
        for (int m = 0; m < M_COUNT; m++) {
            t->abs_err[m] += fabs(pred[m] - meas);
            t->sign_ok[m] += moved && (pred[m] > 0) == (meas > 0);
        }
    }
    if (!st) {
        t->kernels++;
        for (int m = 0; m < M_COUNT; m++)
            t->best_ok[m] += meas_of[arg_pred[m]] <= 1.05 * best_meas;
    }
    free(issue);
    free(chain);
    return st;
}


/* c, a (nwarps x nb) and d (nwarps) of one grouping, appended to f. */
static tmap_status dump_grouping(FILE *f, const tmap_bbv *bbv, const uint32_t *perm,
                                 tmap_error *err)
{
    size_t n = bbv->nthreads, nb = bbv->nblocks, nw = (n + 31) / 32;
    uint32_t *c = calloc(nw * nb + 1, sizeof *c), *d = calloc(nw + 1, sizeof *d);
    uint64_t *a = calloc(nw * nb + 1, sizeof *a);
    uint32_t *a32 = calloc(nw * nb + 1, sizeof *a32);
    tmap_status st = c && d && a && a32 ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        size_t w = i / 32, t = perm ? perm[i] : i;
        const uint32_t *row = &bbv->counts[t * nb];
        for (size_t b = 0; b < nb; b++) {
            if (row[b] > c[w * nb + b])
                c[w * nb + b] = row[b];
            a[w * nb + b] += row[b];
        }
    }
    for (size_t k = 0; !st && k < nw * nb; k++) {
        if (a[k] > UINT32_MAX)
            st = tmap_fail(err, TMAP_ERR_UNSUPPORTED, "dump: a warp's count sum %llu exceeds 32 bits",
                           (unsigned long long)a[k]);
        a32[k] = (uint32_t)a[k];
    }
    for (size_t w = 0; !st && w < nw; w++) {
        uint32_t sec[32];
        size_t ns = 0;
        for (size_t i = w * 32; i < n && i < w * 32 + 32; i++) {
            uint32_t s = (uint32_t)((perm ? perm[i] : i) / 8), j = 0;
            while (j < ns && sec[j] != s)
                j++;
            if (j == ns)
                sec[ns++] = s;
        }
        d[w] = (uint32_t)ns;
    }
    if (!st && (fwrite(c, sizeof *c, nw * nb, f) != nw * nb ||
                fwrite(a32, sizeof *a32, nw * nb, f) != nw * nb || fwrite(d, sizeof *d, nw, f) != nw))
        st = tmap_fail(err, TMAP_ERR_IO, "dump: write failed");
    free(c), free(d), free(a), free(a32);
    return st;
}

static tmap_status dump_kernel(const char *dir, const char *name, const tmap_eval *e,
                               const char *ptx, tmap_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(dir, 0777);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/kernel.ptx", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(ptx, f) < 0) {
        if (f) fclose(f);
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot write", path);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/%s/meta.txt", dir, name);
    f = fopen(path, "w");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot write", path);
    fprintf(f, "kernel %s\nentry %s\nnthreads %zu\nnblocks %zu\nblock_size %zu\nnsms %zu\n"
            "blocks_per_sm %zu\nregisters %d\nlocal_bytes %d\nshared_bytes %d\nmechanism %s\n"
            "device %s\ncc %d%d\nsm_clock_khz %d\nmem_clock_khz %d\noriginal_ms %.6f\n", name,
            e->entry, e->bbv.nthreads, e->bbv.nblocks, e->params.block_size, e->params.nsms,
            e->params.blocks_per_sm, e->stats.registers, e->stats.local_bytes,
            e->stats.static_shared_bytes, tmap_mechanism_name(e->mechanism), e->device.name,
            e->device.cc_major, e->device.cc_minor, e->device.clock_khz, e->device.mem_clock_khz,
            e->original_ms);
    for (size_t i = 0; i < e->plan.n; i++) {
        const tmap_candidate *c = &e->plan.cand[i];
        if (c->available && isfinite(i ? e->measured_ms[i] : e->original_ms))
            fprintf(f, "cand %s %.6f %.6f %.6f\n", tmap_algo_name(c->algo),
                    i ? e->measured_ms[i] : e->original_ms, i ? e->measured_apply_ms[i] : 0.0,
                    c->gain);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/%s/agg.bin", dir, name);
    f = fopen(path, "wb");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot write", path);
    tmap_status st = TMAP_OK;
    for (size_t i = 0; !st && i < e->plan.n; i++) {
        const tmap_candidate *c = &e->plan.cand[i];
        if (c->available && isfinite(i ? e->measured_ms[i] : e->original_ms))
            st = dump_grouping(f, &e->bbv, i ? c->perm : NULL, err);
    }
    if (fclose(f) && !st)
        st = tmap_fail(err, TMAP_ERR_IO, "%s: write failed", path);
    return st;
}

static tmap_status one(tmap_cuda *c, const char *path, uint64_t seed, int reps, const char *dump,
                       tally *t, tmap_error *err)
{
    tmap_manifest *m = NULL;
    char *ptx = NULL, *entry = NULL;
    tmap_eval e;
    int have = 0;
    tmap_eval_opts o = {.seed = seed, .warmup = 3, .reps = reps, .threshold = 0.05,
                        .groupsize = 32, .scope = -1, .mechanism = -1, .measure_all = 1,
                        .launches = 1};
    tmap_status st = tmap_manifest_load(path, &m, err);
    if (!st) st = tmap_manifest_ptx(m, NULL, &ptx, &entry, err);
    if (!st) st = tmap_evaluate(c, m, &o, &e, err);
    have = st == TMAP_OK;
    if (!st) st = report_kernel(tmap_manifest_name(m), &e, ptx, t, err);
    if (!st && dump) st = dump_kernel(dump, tmap_manifest_name(m), &e, ptx, err);
    if (have)
        tmap_eval_free(&e);
    free(ptx), free(entry);
    tmap_manifest_free(m);
    return st;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"reps", 1, 0, 'r'}, {"seed", 1, 0, 's'},
                                       {"dump", 1, 0, 'd'},
                                       {"help", 0, 0, 'h'}, {0}};
    int reps = 10;
    uint64_t seed = 7;
    const char *dump = NULL;
    for (int ch; (ch = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        if (ch == 'r' && atoi(optarg) > 0)
            reps = atoi(optarg);
        else if (ch == 's')
            seed = strtoull(optarg, NULL, 10);
        else if (ch == 'd')
            dump = optarg;
        else {
            fprintf(stderr, "usage: bench_model [--reps N] [--seed S] [--dump DIR] [MANIFEST.json...]\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    size_t n = 0;
    char **list = bench_manifests(argc, argv, optind, TMAP_SOURCE_DIR "/benchmarks/suite", &n);
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_device_info d;
    if (tmap_cuda_open(0, &c, &err) || tmap_cuda_info(c, &d, &err)) {
        fprintf(stderr, "bench_model: %s\n", err.message);
        return 1;
    }
    bench_banner(stdout, &d, "# ");
    printf("# improvement = 1 - t / t_original, in %%; BBVs measured on seed %llu; %d reps\n",
           (unsigned long long)seed, reps);
    printf("%-20s %-11s %9s %9s | %9s %9s %9s | issue\n", "kernel", "candidate", "kernel_ms",
           "measured", model_name[0], model_name[1], model_name[2]);
    tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < n; i++) {
        tmap_error e = {0};
        if (one(c, list[i], seed, reps, dump, &t, &e))
            printf("%-20s failed: %s\n", list[i], e.message);
        free(list[i]);
    }
    free(list);
    for (int m = 0; m < M_COUNT; m++)
        printf("# %-9s: mean absolute error %.1f pp over %zu regroupings; sign right on %zu of "
               "%zu that move the time > 5%%; best within 5%% of the measured best on %zu of "
               "%zu kernels\n", model_name[m], t.n ? t.abs_err[m] / t.n : NAN, t.n,
               t.sign_ok[m], t.moved, t.best_ok[m], t.kernels);
    tmap_cuda_close(c);
    return 0;
}

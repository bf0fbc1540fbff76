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
 *   bench_model [--reps N] [--seed S] [MANIFEST.json...]
 */
#include <getopt.h>
#include <math.h>

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

static tmap_status one(tmap_cuda *c, const char *path, uint64_t seed, int reps, tally *t,
                       tmap_error *err)
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
    if (have)
        tmap_eval_free(&e);
    free(ptx), free(entry);
    tmap_manifest_free(m);
    return st;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"reps", 1, 0, 'r'}, {"seed", 1, 0, 's'},
                                       {"help", 0, 0, 'h'}, {0}};
    int reps = 10;
    uint64_t seed = 7;
    for (int ch; (ch = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        if (ch == 'r' && atoi(optarg) > 0)
            reps = atoi(optarg);
        else if (ch == 's')
            seed = strtoull(optarg, NULL, 10);
        else {
            fprintf(stderr, "usage: bench_model [--reps N] [--seed S] [MANIFEST.json...]\n");
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
        if (one(c, list[i], seed, reps, &t, &e))
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

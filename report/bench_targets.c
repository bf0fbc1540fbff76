/*
 * bench_targets.c -- section (f) of report.md: each target of issue 5 (and
 * each claim of the paper the run can check), the number measured on this
 * run, met or missed, and why, in words built from the run's own data:
 * the kernels behind a miss, with what limits them.  Nothing is hidden: a
 * target with no data to judge it is "missed (no data)".
 */
#include <math.h>
#include <string.h>

#include "report/bench_priv.h"

static const char *verdict(int met, int have) { return !have ? "**missed** (no data)" : met ? "met" : "**missed**"; }

/* Up to three ok kernels of largest error for metric m (indices into r->k). */
static size_t worst_kernels(const tmap_bench_run *r, tmap_bench_metric m, int compute_only,
                            size_t out[3])
{
    size_t n = 0;
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok || !isfinite(k->error_pp[m]) || (compute_only && k->memory_bound != 0))
            continue;
        size_t at = n < 3 ? n++ : 3;
        while (at > 0 && k->error_pp[m] > r->k[out[at - 1]].error_pp[m]) {
            if (at < 3)
                out[at] = out[at - 1];
            at--;
        }
        if (at < 3)
            out[at] = i;
    }
    return n;
}

/* The regrouping of kernel k whose metric m error is largest. */
static const tmap_bench_option *worst_option(const tmap_bench_kernel *k, tmap_bench_metric m)
{
    const tmap_bench_option *w = NULL;
    for (size_t j = 1; j < k->noptions; j++)
        if (isfinite(k->opt[j].error_pp[m]) && (!w || k->opt[j].error_pp[m] > w->error_pp[m]))
            w = &k->opt[j];
    return w;
}

static void error_target(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    double v = s->mae_compute[TMAP_BM_SCHEDULED];
    int have = s->n_compute[TMAP_BM_SCHEDULED] > 0, met = have && v <= TMAP_BENCH_TARGET_SCHEDULED_ERR;
    fprintf(f, "| BBV-weighted-scheduled mean absolute error, compute-bound kernels <= %.0f pp | %.1f pp | ",
            TMAP_BENCH_TARGET_SCHEDULED_ERR, TMAP_BENCH_PAPER_SCHEDULED_ERR);
    if (have)
        fprintf(f, "%.1f pp over %zu kernels | %s | ", v, s->n_compute[TMAP_BM_SCHEDULED], verdict(met, 1));
    else
        fprintf(f, "- | %s | no compute-bound kernel has a measured regrouping with equal outputs", verdict(0, 0));
    if (have) {
        size_t w[3], n = worst_kernels(r, TMAP_BM_SCHEDULED, 1, w);
        fprintf(f, "%s", met ? "largest: " : "the largest errors: ");
        for (size_t i = 0; i < n; i++) {
            const tmap_bench_kernel *k = &r->k[w[i]];
            const tmap_bench_option *o = worst_option(k, TMAP_BM_SCHEDULED);
            tmap_bench_md(f, k->name);
            fprintf(f, " %.1f pp", k->error_pp[TMAP_BM_SCHEDULED]);
            if (o)
                fprintf(f, " (%s: predicted %.1f%%, measured %.1f%%)", o->name,
                        100 * o->predicted[TMAP_BM_SCHEDULED], 100 * o->measured_impr);
            fputs(i + 1 < n ? "; " : "", f);
        }
        if (!met)
            fprintf(f, ". The metric models issue cycles of the divergent code only; memory "
                       "latency, caches and coalescing changes of the regrouped layout are not in it, "
                       "and predicted BBVs add the regression's error (see the predictor table)");
    }
    fputs(" |\n", f);
}

/* Issue 16's three figures for the SM model; mean error over all kernels
 * (the mean of their kernel errors). */
static void sm90_target(const tmap_bench_summary *s, FILE *f)
{
    double e = s->mae_all[TMAP_BM_SM90];
    size_t right = s->sign_right[TMAP_BM_SM90], best = s->best_ok[TMAP_BM_SM90];
    int have = s->n_all[TMAP_BM_SM90] > 0;
    int met = have && e <= TMAP_BENCH_TARGET_SM90_ERR &&
              right >= TMAP_BENCH_TARGET_SM90_SIGN * (double)s->sign_n &&
              s->best_n - best <= 14 - TMAP_BENCH_TARGET_SM90_BEST; /* misses allowed */
    fprintf(f, "| SM model (sm90): mean absolute error, all kernels <= %.0f pp; sign right on >= "
               "%.0f%% of the regroupings that move the kernel > %.0f%%; best predicted within "
               "%.0f%% of the fastest on >= %d of 14 kernels | - | ",
            TMAP_BENCH_TARGET_SM90_ERR, 100 * TMAP_BENCH_TARGET_SM90_SIGN, 100 * TMAP_BENCH_MOVES,
            100 * TMAP_BENCH_WITHIN, TMAP_BENCH_TARGET_SM90_BEST);
    if (have)
        fprintf(f, "%.1f pp over %zu kernels; sign %zu of %zu; best %zu of %zu | %s | "
                   "docs/model.md: what the model cannot see |\n",
                e, s->n_all[TMAP_BM_SM90], right, s->sign_n, best, s->best_n, verdict(met, 1));
    else
        fprintf(f, "- | %s | no regrouping has an SM model prediction |\n", verdict(0, 0));
}

static void weighted_rows(const tmap_bench_summary *s, FILE *f)
{
    char a[48], b[48], c[48];
    double ws = s->mae_compute[TMAP_BM_SCHEDULED], ww = s->mae_compute[TMAP_BM_WEIGHTED];
    double dw = s->mae_compute[TMAP_BM_DIV_WARPS], db = s->mae_compute[TMAP_BM_DIV_BRANCHES];
    int have = isfinite(ws) && isfinite(ww);
    fprintf(f, "| BBV-weighted-scheduled more accurate than BBV-weighted, compute-bound (the paper's "
               "claim) | %.1f pp vs %.1f pp | %s vs %s | %s | %s |\n",
            TMAP_BENCH_PAPER_SCHEDULED_ERR, TMAP_BENCH_PAPER_WEIGHTED_ERR,
            tmap_bench_cell(a, sizeof a, "%.1f pp", ws), tmap_bench_cell(b, sizeof b, "%.1f pp", ww),
            verdict(have && ws <= ww, have),
            !have || ws <= ww ? "" : "BBV-weighted (eq. 5: static round robin, the slowest SM) came "
                                     "closer to the measured improvements than the dynamic scheduling "
                                     "simulation on these kernels (per-kernel errors in Table V)");
    have = isfinite(ws) && isfinite(dw) && isfinite(db);
    fprintf(f, "| older metrics less accurate than BBV-weighted-scheduled, compute-bound (the paper's "
               "claim) | large | divergent warps %s, divergent branches %s | %s | %s |\n",
            tmap_bench_cell(a, sizeof a, "%.1f pp", dw), tmap_bench_cell(c, sizeof c, "%.1f pp", db),
            verdict(have && dw > ws && db > ws, have),
            have ? "" : "an error is missing (divergent branches need the CFG; a kernel without "
                        "divergent warps has no relative reduction when a regrouping adds some)");
}

/* Why kernel k's Greedy-Max speedup with overhead is below the target. */
static void speedup_why(const tmap_bench_kernel *k, FILE *f)
{
    int g = tmap_bench_find(k, "greedy-max");
    double cap = tmap_bench_zero_div_speedup(k);
    tmap_bench_md(f, k->name);
    if (g < 0 || !k->opt[g].valid) {
        fprintf(f, " (greedy-max %s)", g < 0 || !k->opt[g].available ? "not available"
                                       : k->opt[g].outputs_equal == 0 ? "outputs differ"
                                       : !strcmp(k->mechanism, "none") ? "not applied: no mechanism keeps "
                                                                         "this kernel's results"
                                                                       : "not measured");
        return;
    }
    const tmap_bench_option *o = &k->opt[g];
    double over = o->total_ms - o->kernel_ms;
    fprintf(f, " %.2fx", o->speedup_total);
    if (isfinite(cap) && cap < TMAP_BENCH_TARGET_GMAX_SPEEDUP)
        fprintf(f, " (with no divergence left the model predicts %.2fx)", cap);
    else if (over > 0.5 * o->total_ms)
        fprintf(f, " (overhead %.0f%% of the regrouped time; kernel only %.2fx)", 100 * over / o->total_ms,
                o->speedup_kernel);
    else
        fprintf(f, " (kernel only %.2fx; with no divergence left the model predicts %.2fx)", o->speedup_kernel, cap);
}

static void speedup_target(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    const tmap_bench_speedup *x = &s->speedup[2]; /* greedy-max */
    int have = x->n > 0, met = have && x->geo_total >= TMAP_BENCH_TARGET_GMAX_SPEEDUP;
    fprintf(f, "| Greedy-Max speedup with overhead, geometric mean over the divergent kernels >= %.1fx "
               "| %.1fx (average) | ", TMAP_BENCH_TARGET_GMAX_SPEEDUP, TMAP_BENCH_PAPER_GMAX_SPEEDUP);
    if (have)
        fprintf(f, "%.2fx over %zu kernels | %s | ", x->geo_total, x->n, verdict(met, 1));
    else
        fprintf(f, "- | %s | ", verdict(0, 0));
    if (x->missing)
        fprintf(f, "%zu divergent kernels have no valid Greedy-Max run and are not in the mean. ", x->missing);
    int first = 1;
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        int g = k->ok && k->divergent ? tmap_bench_find(k, "greedy-max") : -1;
        if (!k->ok || !k->divergent ||
            (g >= 0 && k->opt[g].valid && k->opt[g].speedup_total >= TMAP_BENCH_TARGET_GMAX_SPEEDUP))
            continue;
        fputs(first ? "below the target: " : "; ", f);
        speedup_why(k, f);
        first = 0;
    }
    fputs(" |\n", f);
}

static void regroup_target(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    int have = s->regroup_n > 0, met = have && s->regroup_ok == s->regroup_n;
    fprintf(f, "| regroup() within %.0f%% of the best measured option on every kernel | - | %zu of %zu | %s | ",
            100 * TMAP_BENCH_WITHIN, s->regroup_ok, s->regroup_n, verdict(met, have));
    int first = 1;
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok || k->regroup_ok)
            continue;
        fputs(first ? "missed on: " : "; ", f);
        tmap_bench_md(f, k->name);
        const tmap_bench_option *c = &k->opt[k->chosen];
        if (!c->valid)
            fprintf(f, " (chose %s, which %s)", c->name, c->outputs_equal == 0 ? "gave different outputs"
                                                                               : "was not measured");
        else
            fprintf(f, " (chose %s %.3f ms, best %s %.3f ms: the model predicted %s %.1f%% vs measured %.1f%%)",
                    c->name, c->total_ms, k->opt[k->best].name, k->opt[k->best].total_ms, k->opt[k->best].name,
                    100 * k->opt[k->best].predicted[TMAP_BM_SCHEDULED], 100 * k->opt[k->best].measured_impr);
        first = 0;
    }
    fputs(" |\n", f);
}

/* regroup() with its overhead: the geometric mean over the divergent
 * kernels against issue 15's target for this --launches, and the floor
 * no kernel may fall below. */
static void regroup_speedup_target(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    const tmap_bench_speedup *x = &s->regroup;
    double want = r->launches > 1 ? TMAP_BENCH_TARGET_REGROUP_MANY : TMAP_BENCH_TARGET_REGROUP_ONE;
    int have = x->n > 0, met = have && x->geo_total >= want;
    fprintf(f, "| regroup() speedup with overhead at %d launch%s per input, geometric mean over the "
               "divergent kernels >= %.1fx | - | ", r->launches, r->launches > 1 ? "es" : "", want);
    if (have)
        fprintf(f, "%.2fx over %zu kernels (kernel only %.2fx) | %s | ", x->geo_total, x->n,
                x->geo_kernel, verdict(met, 1));
    else
        fprintf(f, "- | %s | ", verdict(0, 0));
    if (x->missing)
        fprintf(f, "%zu divergent kernels have no valid choice and are not in the mean. ", x->missing);
    if (have && !met)
        fputs("kernels left alone count as 1.00x: where no candidate pays, regroup() keeps the "
              "original (see each kernel's GPU path line)", f);
    fputs(" |\n", f);
    const tmap_bench_speedup *y = &s->regroup_overlap;
    if (y->n > 0)
        fprintf(f, "| the same with overlap (each next input's key and sort beside the current "
                   "kernel, zhang2010 4.1) | - | %.2fx over %zu kernels | %s | the pipelined "
                   "case: an application that knows its next input one launch ahead |\n",
                y->geo_total, y->n, verdict(y->geo_total >= want, 1));
    int k = s->regroup_min_kernel;
    have = k >= 0;
    met = have && s->regroup_min >= TMAP_BENCH_TARGET_FLOOR;
    fprintf(f, "| no kernel below %.2fx of its original under regroup() | - | ", TMAP_BENCH_TARGET_FLOOR);
    if (have) {
        fprintf(f, "lowest %.2fx (", s->regroup_min);
        tmap_bench_md(f, r->k[k].name);
        fprintf(f, ") | %s | |\n", verdict(met, 1));
    } else {
        fprintf(f, "- | %s | |\n", verdict(0, 0));
    }
}

static void run_targets(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    fprintf(f, "| every regrouped launch's outputs equal the original's | - | %zu kernels differ | %s | %s |\n",
            s->outputs_bad, verdict(s->outputs_bad == 0, s->ok > 0),
            s->outputs_bad ? "see Outputs above: a difference is a failure of the run" : "");
    fprintf(f, "| every kernel runs | - | %zu of %zu | %s | %s |\n", s->ok, r->nkernels,
            verdict(s->failed == 0, r->nkernels > 0), s->failed ? "see Kernels that failed" : "");
    fprintf(f, "| the whole run under %.0f s on one GPU | - | %.0f s | %s | %s |\n", TMAP_BENCH_TIME_LIMIT_S,
            r->wall_s, verdict(r->wall_s < TMAP_BENCH_TIME_LIMIT_S, r->wall_s > 0),
            r->wall_s < TMAP_BENCH_TIME_LIMIT_S ? "" : "per-kernel wall times in the predictor table");
}

void tmap_bench_targets(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    fprintf(f, "## (f) Targets\n\n| target | paper (GTX480) | this run | | why |\n|---|---|---|---|---|\n");
    error_target(r, s, f);
    sm90_target(s, f);
    weighted_rows(s, f);
    speedup_target(r, s, f);
    regroup_target(r, s, f);
    regroup_speedup_target(r, s, f);
    run_targets(r, s, f);
    fputc('\n', f);
}

/*
 * bench_markdown.c -- report.md: the paper-style tables of a bench run.
 * (a) divergence of the original launches (Table IV), (b) estimation error
 * per kernel and metric (Table V) with the means next to the paper's, (c)
 * speedups per kernel and algorithm (Fig. 9), (d) closeness to the
 * zero-divergence time, (e) regroup()'s choice against the best measured
 * option, (f) the targets (bench_targets.c), then the plots, the predictor
 * quality and the kernels that failed.
 */
#include <math.h>
#include <string.h>

#include "threadmap/report.h"
#include "common/base.h"
#include "report/bench_priv.h"

void tmap_bench_md(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (strchr("|\\*_`<>[]", *s))
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

const char *tmap_bench_cell(char *buf, size_t size, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, size, fmt, v);
    else
        snprintf(buf, size, "-");
    return buf;
}

const char *tmap_bench_unit_key(int bound_by)
{
    static const char *const key[] = {"sm_issue", "l2", "dram"};
    return bound_by >= 0 && bound_by < 3 ? key[bound_by] : "";
}

const char *tmap_bench_bound_word(const tmap_bench_kernel *k)
{
    if (!isfinite(k->issue_fraction)) /* DRAM against the threshold alone */
        return k->memory_bound == 1 ? "memory (DRAM)" : k->memory_bound == 0 ? "compute" : "unknown";
    static const char *const word[] = {"compute (SM issue, est.)", "memory (L2, est.)",
                                       "memory (DRAM)"};
    return word[k->bound_by];
}

double tmap_bench_zero_div_speedup(const tmap_bench_kernel *k)
{
    const tmap_metrics *m = &k->opt[0].m;
    return m->zero_divergence > 0 && isfinite(m->bbv_weighted_scheduled)
               ? m->bbv_weighted_scheduled / m->zero_divergence : NAN;
}

/* Writes sep, then s escaped as Markdown (a table cell's text). */
static void md_cell(FILE *f, const char *sep, const char *s)
{
    fputs(sep, f);
    tmap_bench_md(f, s);
}

#define CELL(i, fmt, v) tmap_bench_cell(c[i], sizeof c[i], fmt, v)

static void header(const tmap_bench_run *r, FILE *f)
{
    fprintf(f, "# threadmap bench: Liang et al. (TCAD 2016) section VII on %s\n\n", r->device);
    fprintf(f, "| run | |\n|---|---|\n");
    fprintf(f, "| device | %s (%s), %d SMs, SM clock %d MHz, memory clock %d MHz, %d-bit bus: "
               "peak DRAM bandwidth %.0f GB/s (clock x bus width x 2) |\n",
            r->device, r->arch, r->sms, r->sm_clock_mhz, r->mem_clock_mhz, r->bus_width_bits,
            r->peak_gbps);
    fprintf(f, "| driver | %s, CUDA %s, NVRTC %s |\n", r->driver, r->cuda, r->nvrtc);
    fprintf(f, "| date | %s |\n| command | `%s` |\n", r->date, r->command);
    fprintf(f, "| BBVs | %s; profiling seeds %s, evaluation seed %llu (different inputs, as in the paper) |\n",
            !strcmp(r->bbv_source, "measured") ? "measured by profiling the evaluation input"
                                                : "predicted by the regression (eq. 1) trained on the profiling inputs",
            r->profile_seeds, r->seed);
    if (r->launches == 1)
        fprintf(f, "| overhead | per launch: the permutation is computed before each launch (--launches 1), "
                   "as in the paper: BBV prediction and algorithm CPU time + measured apply time are added to every "
                   "regrouped launch |\n");
    else
        fprintf(f, "| overhead | amortized over %d launches on the same input (--launches %d), e.g. the "
                   "iterations of a solver: (prediction + algorithm CPU time) / %d + apply time per launch. The paper "
                   "computes the permutation before each launch (--launches 1) |\n",
                r->launches, r->launches, r->launches);
    fprintf(f, "| wall time | %.1f s for %zu kernels |\n\n", r->wall_s, r->nkernels);
}

static void outputs_section(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    fprintf(f, "## Outputs\n\nEvery regrouped launch's output arrays are compared byte for byte with "
               "the original launch's. ");
    if (!s->outputs_bad) {
        fprintf(f, "All equal on the %zu kernels that ran.\n\n", s->ok);
        return;
    }
    fprintf(f, "**FAILURE: outputs differ** on:");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        for (size_t j = 0; k->ok && j < k->noptions; j++)
            if (k->opt[j].outputs_equal == 0) {
                fputc(' ', f);
                tmap_bench_md(f, k->name);
                fprintf(f, " (%s)", k->opt[j].name);
            }
    }
    fprintf(f, ".\n\n");
}

static void table_iv(const tmap_bench_run *r, FILE *f)
{
    char c[8][48];
    fprintf(f, "## (a) Divergence of the original launches (Table IV)\n\n"
               "| kernel | threads | warps | divergent warps (%%) | divergent branches | branch "
               "executions | SIMD active threads (of 32) | DRAM (%% of peak) | bound | mechanism |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok)
            continue;
        const tmap_bench_option *o = &k->opt[0];
        md_cell(f, "| ", k->name);
        fprintf(f, " | %zu | %zu | %s | %s | %s | %s | %s | %s | %s |\n", k->threads, k->nwarps,
                CELL(0, "%.1f", o->m.divergent_warps_pct), CELL(1, "%.0f", o->m.divergent_branches),
                CELL(2, "%.0f", k->branch_executions), CELL(3, "%.2f", o->m.simd_active_threads_per_inst),
                CELL(4, "%.1f", 100 * k->bw_fraction), tmap_bench_bound_word(k),
                k->mechanism);
    }
    fprintf(f, "\nDivergent warps: percent of non-empty warps whose threads do not all run the same "
               "blocks the same number of times; divergent branches: the model's estimate from the "
               "BBVs and the CFG; both from the BBVs the plan used.\n\n");
}

static void table_v_row(FILE *f, const char *label, const double *v, const size_t *cnt)
{
    char c[8][48];
    fprintf(f, "| %s |  | %s | %s | %s | %s | %s | %s |\n", label, CELL(4, "%.1f", v[TMAP_BM_SM90]),
            CELL(5, "%.1f", v[TMAP_BM_SCHEDULED]), CELL(6, "%.1f", v[TMAP_BM_WEIGHTED]),
            CELL(7, "%.1f", v[TMAP_BM_DIV_WARPS]), CELL(0, "%.1f", v[TMAP_BM_DIV_BRANCHES]),
            CELL(1, "%.0f kernels", (double)cnt[TMAP_BM_SCHEDULED]));
}

static void table_v(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    char c[8][48];
    fprintf(f, "## (b) Estimation error (Table V)\n\n"
               "|predicted improvement - measured improvement| in percentage points, the mean over "
               "the kernel's regroupings that were applied and gave equal outputs. Predicted: "
               "1 - M(regrouped) / M(original) for the SM model and BBV-weighted(-scheduled), the "
               "relative reduction for divergent warps and branches; measured: 1 - t(regrouped) / t(original), kernel "
               "times (the metrics model the kernel, not the overhead).\n\n"
               "| kernel | bound | SM model (sm90) | BBV-weighted-scheduled | BBV-weighted | "
               "divergent warps | divergent branches | regroupings |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok)
            continue;
        md_cell(f, "| ", k->name);
        fprintf(f, " | %s | %s | %s | %s | %s | %s | %zu |\n", tmap_bench_bound_word(k),
                CELL(1, "%.1f", k->error_pp[TMAP_BM_SM90]),
                CELL(2, "%.1f", k->error_pp[TMAP_BM_SCHEDULED]), CELL(3, "%.1f", k->error_pp[TMAP_BM_WEIGHTED]),
                CELL(4, "%.1f", k->error_pp[TMAP_BM_DIV_WARPS]),
                CELL(5, "%.1f", k->error_pp[TMAP_BM_DIV_BRANCHES]), k->nerr);
    }
    table_v_row(f, "**mean, compute-bound**", s->mae_compute, s->n_compute);
    table_v_row(f, "mean, all kernels", s->mae_all, s->n_all);
    fprintf(f, "| paper (GTX480, compute-bound) |  |  | %.1f | %.1f | large | large |  |\n\n",
            TMAP_BENCH_PAPER_SCHEDULED_ERR, TMAP_BENCH_PAPER_WEIGHTED_ERR);
    fprintf(f, "Sign right (the regroupings that move the kernel by more than %.0f%%: %zu) and the "
               "best predicted option within %.0f%% of the fastest (%zu kernels): SM model %zu and "
               "%zu, BBV-weighted-scheduled %zu and %zu, BBV-weighted %zu and %zu.\n\n",
            100 * TMAP_BENCH_MOVES, s->sign_n, 100 * TMAP_BENCH_WITHIN, s->best_n,
            s->sign_right[TMAP_BM_SM90], s->best_ok[TMAP_BM_SM90],
            s->sign_right[TMAP_BM_SCHEDULED], s->best_ok[TMAP_BM_SCHEDULED],
            s->sign_right[TMAP_BM_WEIGHTED], s->best_ok[TMAP_BM_WEIGHTED]);
}

/* Predicted next to measured improvement, per kernel and regrouping (Figs. 7, 8). */
static void table_improvement(const tmap_bench_run *r, FILE *f)
{
    char c[8][48];
    fprintf(f, "### Predicted and measured improvement per regrouping (Figs. 7, 8), %%\n\n"
               "| kernel | regrouping | measured (kernel) | measured (with overhead) | "
               "SM model (sm90) | BBV-weighted-scheduled | BBV-weighted | divergent warps | "
               "divergent branches |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        for (size_t j = 1; k->ok && j < k->noptions; j++) {
            const tmap_bench_option *o = &k->opt[j];
            if (!o->available)
                continue;
            md_cell(f, "| ", k->name);
            fprintf(f, " | %s%s | %s | %s | %s | %s | %s | %s | %s |\n", o->name,
                    o->outputs_equal == 0 ? " (outputs differ)" : "",
                    CELL(6, "%.1f", 100 * o->measured_impr), CELL(7, "%.1f", 100 * o->measured_impr_total),
                    CELL(5, "%.1f", 100 * o->predicted[TMAP_BM_SM90]),
                    CELL(0, "%.1f", 100 * o->predicted[TMAP_BM_SCHEDULED]),
                    CELL(1, "%.1f", 100 * o->predicted[TMAP_BM_WEIGHTED]),
                    CELL(2, "%.1f", 100 * o->predicted[TMAP_BM_DIV_WARPS]),
                    CELL(3, "%.1f", 100 * o->predicted[TMAP_BM_DIV_BRANCHES]));
        }
    }
    fputc('\n', f);
}

static void speedup_cell(FILE *f, const tmap_bench_kernel *k, const char *algo)
{
    char a[48], b[48];
    int j = tmap_bench_find(k, algo);
    if (j < 0 || !k->opt[j].available)
        fputs(" n/a |", f);
    else if (!k->opt[j].valid)
        fprintf(f, " %s |", k->opt[j].outputs_equal == 0 ? "outputs differ"
                            : !strcmp(k->mechanism, "none") ? "unsafe, not applied" : "not measured");
    else
        fprintf(f, " %s / %s |", tmap_bench_cell(a, sizeof a, "%.2fx", k->opt[j].speedup_kernel),
                tmap_bench_cell(b, sizeof b, "%.2fx", k->opt[j].speedup_total));
}

static void table_speedup(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    char c[8][48];
    fprintf(f, "## (c) Speedup per kernel and algorithm (Fig. 9)\n\n"
               "original kernel time / regrouped time: kernel only / with overhead "
               "(kernel + apply + (prediction + algorithm) / %d).\n\n| kernel | original (ms) |", r->launches);
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++)
        fprintf(f, " %s |", tmap_bench_algos[a]);
    fprintf(f, " regroup() |\n|---|---:|");
    for (int a = 0; a <= TMAP_BENCH_NALGOS; a++)
        fputs("---:|", f);
    fputc('\n', f);
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok)
            continue;
        md_cell(f, "| ", k->name);
        fprintf(f, "%s | %s |", k->divergent ? "" : " (not divergent)", CELL(4, "%.3f", k->opt[0].kernel_ms));
        for (int a = 0; a < TMAP_BENCH_NALGOS; a++)
            speedup_cell(f, k, tmap_bench_algos[a]);
        speedup_cell(f, k, k->opt[k->chosen].name);
        fputc('\n', f);
    }
    fprintf(f, "| **geometric mean, divergent kernels** | |");
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++) {
        const tmap_bench_speedup *x = &s->speedup[a];
        fprintf(f, " %s / **%s** (%zu) |", CELL(5, "%.2fx", x->geo_kernel), CELL(6, "%.2fx", x->geo_total), x->n);
    }
    fprintf(f, " %s / **%s** (%zu) |\n| mean with overhead, divergent kernels | |",
            CELL(5, "%.2fx", s->regroup.geo_kernel), CELL(6, "%.2fx", s->regroup.geo_total), s->regroup.n);
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++)
        fprintf(f, " %s |", CELL(7, "%.2fx", s->speedup[a].mean_total));
    fprintf(f, " %s |\n", CELL(7, "%.2fx", s->regroup.mean_total));
    fprintf(f, "| paper (GTX480, average with overhead) | | %.1fx | %.1fx | %.1fx | - | - |\n\n",
            TMAP_BENCH_PAPER_SORT_SPEEDUP, TMAP_BENCH_PAPER_GREEDY_SPEEDUP, TMAP_BENCH_PAPER_GMAX_SPEEDUP);
}

static void table_zero_div(const tmap_bench_run *r, FILE *f)
{
    char c[8][48];
    fprintf(f, "## (d) Closeness to the zero-divergence time\n\n"
               "The zero-divergence time is the model's time of the original launch with every warp "
               "at its threads' mean counts (no divergence left), one per kernel. Headroom: 1 - "
               "zero-divergence / BBV-weighted-scheduled of the original; model closeness: "
               "zero-divergence / BBV-weighted-scheduled of the regrouping (1 = at it); measured "
               "closeness: (original time x zero-divergence / scheduled) / regrouped kernel time.\n\n"
               "| kernel | headroom (%%) | speedup with no divergence (model) | greedy-max: model | "
               "greedy-max: measured "
               "| best regrouping | best: measured |\n|---|---:|---:|---:|---:|---|---:|\n");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok)
            continue;
        int g = tmap_bench_find(k, "greedy-max");
        int best = -1;
        for (size_t j = 1; j < k->noptions; j++)
            if (k->opt[j].valid && (best < 0 || k->opt[j].kernel_ms < k->opt[best].kernel_ms))
                best = (int)j;
        md_cell(f, "| ", k->name);
        fprintf(f, " | %s | %s | %s | %s | %s | %s |\n", CELL(0, "%.1f", 100 * k->headroom),
                CELL(1, "%.2fx", tmap_bench_zero_div_speedup(k)),
                CELL(2, "%.2f", g >= 0 ? k->opt[g].zero_div_model : NAN),
                CELL(3, "%.2f", g >= 0 ? k->opt[g].zero_div_measured : NAN),
                best >= 0 ? k->opt[best].name : "-",
                CELL(4, "%.2f", best >= 0 ? k->opt[best].zero_div_measured : NAN));
    }
    fputc('\n', f);
}

static void table_choice(const tmap_bench_run *r, FILE *f)
{
    char c[8][48];
    fprintf(f, "## (e) regroup()'s choice against the best measured option\n\n"
               "Times with overhead; the original counts as an option. Within %.0f%%: chosen <= "
               "best x %.2f.\n\n| kernel | chosen | chosen (ms) | best | best (ms) | chosen / best | "
               "within %.0f%% | decision |\n|---|---|---:|---|---:|---:|---|---|\n",
            100 * TMAP_BENCH_WITHIN, 1 + TMAP_BENCH_WITHIN, 100 * TMAP_BENCH_WITHIN);
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok)
            continue;
        const tmap_bench_option *ch = &k->opt[k->chosen];
        md_cell(f, "| ", k->name);
        fprintf(f, " | %s | %s | %s | %s | %s | %s | ", ch->name, CELL(5, "%.3f", ch->total_ms),
                k->best >= 0 ? k->opt[k->best].name : "-",
                CELL(6, "%.3f", k->best >= 0 ? k->opt[k->best].total_ms : NAN),
                CELL(7, "%.3f", k->regroup_ratio), k->regroup_ok ? "yes" : "**no**");
        tmap_bench_md(f, k->decision);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

static void plots(FILE *f)
{
    char file[64];
    fprintf(f, "## Plots\n\nPredicted vs measured improvement, one point per kernel and "
               "regrouping; on the diagonal the prediction is exact.\n\n");
    for (int m = 0; m < TMAP_BM_COUNT; m++) {
        tmap_bench_scatter_file((tmap_bench_metric)m, file, sizeof file);
        fprintf(f, "![%s](%s) ", tmap_bench_metric_label((tmap_bench_metric)m), file);
    }
    fprintf(f, "\n\nSpeedups: ![kernel only](%s) ![with overhead](%s)\n\n",
            tmap_bench_speedup_file(0), tmap_bench_speedup_file(1));
}

static void table_training(const tmap_bench_run *r, FILE *f)
{
    char c[8][48];
    fprintf(f, "## BBV predictor (eq. 1)\n\n| kernel | predictor | threads fitted | R² min | "
               "R² mean | cross-validated RMS (counts) | features, CPU (ms) | features, GPU (ms) | "
               "eq. 1 (ms) | wall (s) | reps |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        double lo = NAN, sum = 0;
        for (size_t b = 0; k->r2 && b < k->nr2; b++) {
            sum += k->r2[b];
            if (!(k->r2[b] >= lo))
                lo = k->r2[b];
        }
        md_cell(f, "| ", k->name);
        md_cell(f, " | ", k->model);
        fprintf(f, " | %zu | %s | %s | %s%s | %s | %s | %s | %.1f | %d |\n", k->train_threads,
                CELL(0, "%.3f", lo), CELL(1, "%.3f", k->nr2 && k->r2 ? sum / (double)k->nr2 : NAN),
                CELL(2, "%.3g", k->cv_rms),
                isfinite(k->cv_rms) ? (k->cv_by_run ? " (leave one run out)" : " (k-fold)") : "",
                CELL(4, "%.2f", k->features_ms), CELL(5, "%.3f", k->gpu_features_ms),
                CELL(3, "%.2f", k->predict_ms), k->wall_s, k->reps);
    }
    fprintf(f, "\nFeatures, CPU: the manifest's expressions evaluated by threadmap's interpreter on the "
               "host, for the CPU path's eq. 1; reported, not counted in the overhead. Features, GPU: "
               "the same expressions as one kernel per new input (median), counted in the gpu-path "
               "option's overhead. Eq. 1: the prediction on the CPU, counted.\n\n");
}

static void failures(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f)
{
    if (!s->failed)
        return;
    fprintf(f, "## Kernels that failed\n\n| kernel | manifest | error |\n|---|---|---|\n");
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (k->ok)
            continue;
        md_cell(f, "| ", k->name);
        md_cell(f, " | ", k->manifest);
        md_cell(f, " | ", k->error);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

static tmap_status bench_markdown_c(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f,
                                    tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, r, s, f);
    if (absent)
        return absent;
    header(r, f);
    outputs_section(r, s, f);
    table_iv(r, f);
    table_v(r, s, f);
    table_improvement(r, f);
    table_speedup(r, s, f);
    table_zero_div(r, f);
    table_choice(r, f);
    tmap_bench_targets(r, s, f);
    plots(f);
    table_training(r, f);
    failures(r, s, f);
    fprintf(f, "Definitions: docs/bench.md. Per-kernel reports (every metric of every grouping): "
               "KERNEL/report.md next to this file.\n");
    if (ferror(f))
        return tmap_fail(err, TMAP_ERR_IO, "writing the Markdown report failed");
    return TMAP_OK;
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_bench_markdown(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f,
                                tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = bench_markdown_c(r, s, f, err);
    tmap_locale_restore(old);
    return st;
}

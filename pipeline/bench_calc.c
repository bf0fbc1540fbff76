/*
 * bench_calc.c -- the numbers of the evaluation, from plain data: per
 * option improvements, estimation errors and speedups; per kernel the
 * bound call, the mean errors and the regroup() check; over the run the
 * summaries (mean absolute errors, geometric means).  docs/bench.md says
 * why each is defined as it is.
 */
#include <math.h>
#include <string.h>

#include "threadmap/pipeline.h"

const char *const tmap_bench_algos[TMAP_BENCH_NALGOS] = {"sorting", "greedy", "greedy-max", "key"};

static const char *const metric_keys[TMAP_BM_COUNT] = {
    "bbv_weighted", "bbv_weighted_scheduled", "divergent_warps", "divergent_branches", "sm90"};
static const char *const metric_labels[TMAP_BM_COUNT] = {
    "BBV-weighted", "BBV-weighted-scheduled", "divergent warps", "divergent branches",
    "SM model (sm90)"};

const char *tmap_bench_metric_key(tmap_bench_metric m)
{
    return m < TMAP_BM_COUNT ? metric_keys[m] : "?";
}

const char *tmap_bench_metric_label(tmap_bench_metric m)
{
    return m < TMAP_BM_COUNT ? metric_labels[m] : "?";
}

double tmap_bench_improvement(double orig, double cand)
{
    if (!isfinite(orig) || !isfinite(cand) || !(orig > 0))
        return NAN;
    return 1 - cand / orig;
}

double tmap_bench_reduction(double orig, double cand)
{
    if (!isfinite(orig) || !isfinite(cand))
        return NAN;
    if (orig == 0)
        return cand == 0 ? 0 : NAN;
    return 1 - cand / orig;
}

double tmap_bench_geomean(const double *v, size_t n)
{
    if (!n)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] > 0) || !isfinite(v[i]))
            return NAN;
        s += log(v[i]);
    }
    return exp(s / (double)n);
}

int tmap_bench_within(double chosen, double best, double tol)
{
    return isfinite(chosen) && isfinite(best) && chosen <= best * (1 + tol);
}

double tmap_bench_peak_gbps(int mem_clock_khz, int bus_width_bits)
{
    if (mem_clock_khz <= 0 || bus_width_bits <= 0)
        return 0;
    return (double)mem_clock_khz * 1e3 * 2.0 * (bus_width_bits / 8.0) / 1e9;
}

int tmap_bench_find(const tmap_bench_kernel *k, const char *name)
{
    if (!k || !name)
        return -1;
    for (size_t i = 0; i < k->noptions; i++)
        if (!strcmp(k->opt[i].name, name))
            return (int)i;
    return -1;
}

static double or0(double v) { return isfinite(v) ? v : 0; }

/* Option i against the original (option 0). */
static void derive_option(tmap_bench_option *o, const tmap_bench_option *orig, int launches,
                          double predict_ms)
{
    double t0 = orig->kernel_ms;
    int measured = o->available && isfinite(o->kernel_ms) && o->kernel_ms > 0;
    o->valid = measured && o->outputs_equal == 1;
    /* the original runs as written: no prediction, algorithm or apply */
    double per_perm = o == orig ? 0 : (o->on_gpu ? 0 : or0(predict_ms)) + or0(o->algo_ms);
    o->total_ms = measured ? o->kernel_ms + (o == orig ? 0 : or0(o->apply_ms)) + per_perm / launches : NAN;
    o->speedup_kernel = measured && t0 > 0 ? t0 / o->kernel_ms : NAN;
    o->speedup_total = measured && t0 > 0 ? t0 / o->total_ms : NAN;
    int avail = o->available && !o->on_gpu;
    const tmap_metrics *m0 = &orig->m, *m = &o->m;
    o->predicted[TMAP_BM_WEIGHTED] = avail ? tmap_bench_improvement(m0->bbv_weighted, m->bbv_weighted) : NAN;
    o->predicted[TMAP_BM_SCHEDULED] =
        avail ? tmap_bench_improvement(m0->bbv_weighted_scheduled, m->bbv_weighted_scheduled) : NAN;
    o->predicted[TMAP_BM_DIV_WARPS] =
        avail ? tmap_bench_reduction(m0->divergent_warps_pct, m->divergent_warps_pct) : NAN;
    o->predicted[TMAP_BM_DIV_BRANCHES] =
        avail ? tmap_bench_reduction(m0->divergent_branches, m->divergent_branches) : NAN;
    o->predicted[TMAP_BM_SM90] = avail && m0->sm.cycles > 0 && isfinite(m->sm.cycles)
                                     ? tmap_bench_improvement(m0->sm.cycles, m->sm.cycles)
                                     : NAN;
    o->measured_impr = measured ? tmap_bench_improvement(t0, o->kernel_ms) : NAN;
    o->measured_impr_total = measured ? tmap_bench_improvement(t0, o->total_ms) : NAN;
    for (int m = 0; m < TMAP_BM_COUNT; m++)
        o->error_pp[m] = o->valid ? 100 * fabs(o->predicted[m] - o->measured_impr) : NAN;
    double s0 = m0->bbv_weighted_scheduled;
    o->zero_div_model = avail && m->bbv_weighted_scheduled > 0
                            ? m0->zero_divergence / m->bbv_weighted_scheduled : NAN;
    o->zero_div_measured = measured && s0 > 0 ? t0 * m0->zero_divergence / s0 / o->kernel_ms : NAN;
}

/* Mean estimation error per metric over the valid regroupings. */
static void kernel_errors(tmap_bench_kernel *k)
{
    k->nerr = 0;
    for (int m = 0; m < TMAP_BM_COUNT; m++) {
        double s = 0;
        size_t n = 0;
        for (size_t i = 1; i < k->noptions; i++)
            if (isfinite(k->opt[i].error_pp[m]))
                s += k->opt[i].error_pp[m], n++;
        k->error_pp[m] = n ? s / (double)n : NAN;
        if (m == TMAP_BM_SCHEDULED)
            k->nerr = n;
    }
}

/* The best valid option and whether the plan's choice is within 5% of it.
 * A choice whose outputs differ, or that was not measured, is a miss. */
static void kernel_choice(tmap_bench_kernel *k)
{
    k->best = -1;
    k->chosen = 0;
    for (size_t i = 0; i < k->noptions; i++) {
        if (k->opt[i].chosen)
            k->chosen = (int)i;
        if (k->opt[i].valid && (k->best < 0 || k->opt[i].total_ms < k->opt[k->best].total_ms))
            k->best = (int)i;
    }
    const tmap_bench_option *c = &k->opt[k->chosen];
    k->regroup_ratio = k->best >= 0 && c->valid ? c->total_ms / k->opt[k->best].total_ms : NAN;
    k->regroup_ok = k->best >= 0 && c->valid &&
                    tmap_bench_within(c->total_ms, k->opt[k->best].total_ms, TMAP_BENCH_WITHIN);
}

/* Compute or memory bound as Nsight Compute's speed of light says it: the
 * unit whose throughput is highest against its peak (SM issue and L2 from
 * the SM model's terms, DRAM from the minimum traffic, each over the
 * measured original kernel time). */
static void kernel_bound(tmap_bench_kernel *k)
{
    const tmap_bench_option *o = &k->opt[0];
    double cycles = o->kernel_ms * k->sm_clock_khz; /* ms x kHz */
    k->issue_fraction = cycles > 0 ? o->m.sm.issue / cycles : NAN;
    k->l2_fraction = cycles > 0 ? o->m.sm.memory / cycles : NAN;
    const double v[] = {[TMAP_BENCH_BY_ISSUE] = k->issue_fraction,
                        [TMAP_BENCH_BY_L2] = k->l2_fraction, [TMAP_BENCH_BY_DRAM] = k->bw_fraction};
    k->bound_by = -1;
    for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++)
        if (isfinite(v[i]) && (k->bound_by < 0 || v[i] > v[k->bound_by]))
            k->bound_by = i;
    if (isfinite(k->issue_fraction))
        k->memory_bound = k->bound_by != TMAP_BENCH_BY_ISSUE;
    else
        k->memory_bound = isfinite(k->bw_fraction) ? k->bw_fraction >= TMAP_BENCH_MEMORY_BOUND : -1;
}

void tmap_bench_derive(tmap_bench_kernel *k, int launches, double peak_gbps)
{
    if (!k)
        return;
    if (launches < 1)
        launches = 1;
    if (!k->noptions)
        return;
    for (size_t i = 0; i < k->noptions; i++)
        derive_option(&k->opt[i], &k->opt[0], launches, k->predict_ms);
    const tmap_bench_option *o = &k->opt[0];
    k->gbps = o->kernel_ms > 0 ? k->bytes / (o->kernel_ms * 1e-3) / 1e9 : NAN;
    k->bw_fraction = peak_gbps > 0 && isfinite(k->gbps) ? k->gbps / peak_gbps : NAN;
    kernel_bound(k);
    k->divergent = o->m.divergent_warps_pct > 0;
    k->headroom = tmap_bench_improvement(o->m.bbv_weighted_scheduled, o->m.zero_divergence);
    kernel_errors(k);
    kernel_choice(k);
    k->outputs_ok = 1;
    for (size_t i = 0; i < k->noptions; i++)
        if (k->opt[i].outputs_equal == 0)
            k->outputs_ok = 0;
}

static void summarize_errors(const tmap_bench_run *r, tmap_bench_summary *s)
{
    for (int m = 0; m < TMAP_BM_COUNT; m++) {
        double sc = 0, sa = 0;
        for (size_t i = 0; i < r->nkernels; i++) {
            const tmap_bench_kernel *k = &r->k[i];
            if (!k->ok || !isfinite(k->error_pp[m]))
                continue;
            sa += k->error_pp[m], s->n_all[m]++;
            if (k->memory_bound == 0)
                sc += k->error_pp[m], s->n_compute[m]++;
        }
        s->mae_all[m] = s->n_all[m] ? sa / (double)s->n_all[m] : NAN;
        s->mae_compute[m] = s->n_compute[m] ? sc / (double)s->n_compute[m] : NAN;
    }
}

/* The sign of the valid regroupings that move the kernel, and whether
 * each metric's best predicted option is among the fastest (bench_model's
 * figures, issue 16). */
static void summarize_ranking(const tmap_bench_run *r, tmap_bench_summary *s)
{
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok || !k->opt[0].valid)
            continue;
        int fastest = 0, any = 0;
        for (size_t j = 1; j < k->noptions; j++) {
            const tmap_bench_option *o = &k->opt[j];
            if (!o->valid || o->on_gpu)
                continue;
            any = 1;
            if (o->kernel_ms < k->opt[fastest].kernel_ms)
                fastest = (int)j;
            if (!(fabs(o->measured_impr) > TMAP_BENCH_MOVES))
                continue;
            s->sign_n++;
            for (int m = 0; m < TMAP_BM_COUNT; m++)
                s->sign_right[m] += isfinite(o->predicted[m]) &&
                                    (o->predicted[m] > 0) == (o->measured_impr > 0);
        }
        s->best_n += any;
        for (int m = 0; any && m < TMAP_BM_COUNT; m++) {
            int pick = 0; /* the original predicts 0 */
            double best = 0;
            for (size_t j = 1; j < k->noptions; j++)
                if (k->opt[j].valid && !k->opt[j].on_gpu && k->opt[j].predicted[m] > best)
                    best = k->opt[j].predicted[m], pick = (int)j;
            s->best_ok[m] += tmap_bench_within(k->opt[pick].kernel_ms,
                                               k->opt[fastest].kernel_ms, TMAP_BENCH_WITHIN);
        }
    }
}

/* Speedup with overhead of option j, the GPU path's per-input part taken
 * with overlap when asked and measured. */
static double speedup_total(const tmap_bench_run *r, const tmap_bench_kernel *k, int j,
                            int overlap)
{
    const tmap_bench_option *o = &k->opt[j];
    if (!overlap || !o->on_gpu || !isfinite(k->overlap_algo_ms))
        return o->speedup_total;
    return k->opt[0].kernel_ms / (o->kernel_ms + or0(o->apply_ms) + k->overlap_algo_ms / r->launches);
}

/* Speedups of one algorithm (NULL: the option regroup() chose) over the
 * divergent kernels where it is valid, with overlap where measured if
 * `overlap`. */
static void summarize_speedup(const tmap_bench_run *r, const char *algo, int overlap,
                              tmap_bench_speedup *sp)
{
    double vk[r->nkernels + 1], vt[r->nkernels + 1], sum = 0;
    memset(sp, 0, sizeof *sp);
    sp->max_total = NAN;
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_kernel *k = &r->k[i];
        if (!k->ok || !k->divergent)
            continue;
        int j = algo ? tmap_bench_find(k, algo) : k->chosen;
        if (j < 0 || !k->opt[j].valid) {
            sp->missing++;
            continue;
        }
        vk[sp->n] = k->opt[j].speedup_kernel;
        vt[sp->n] = speedup_total(r, k, j, overlap);
        sum += vt[sp->n];
        if (!(vt[sp->n] <= sp->max_total))
            sp->max_total = vt[sp->n];
        sp->n++;
    }
    sp->geo_kernel = tmap_bench_geomean(vk, sp->n);
    sp->geo_total = tmap_bench_geomean(vt, sp->n);
    sp->mean_total = sp->n ? sum / (double)sp->n : NAN;
}

void tmap_bench_summarize(tmap_bench_run *r, tmap_bench_summary *s)
{
    if (!r || !s)
        return;
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < r->nkernels; i++) {
        tmap_bench_kernel *k = &r->k[i];
        if (!k->ok) {
            s->failed++;
            continue;
        }
        tmap_bench_derive(k, r->launches, r->peak_gbps);
        s->ok++;
        s->compute += k->memory_bound == 0;
        s->memory += k->memory_bound == 1;
        s->divergent += k->divergent;
        s->regroup_n++;
        s->regroup_ok += k->regroup_ok;
        s->outputs_bad += !k->outputs_ok;
    }
    summarize_errors(r, s);
    summarize_ranking(r, s);
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++)
        summarize_speedup(r, tmap_bench_algos[a], 0, &s->speedup[a]);
    summarize_speedup(r, NULL, 0, &s->regroup);
    summarize_speedup(r, NULL, 1, &s->regroup_overlap);
    s->regroup_min = NAN, s->regroup_min_kernel = -1;
    for (size_t i = 0; i < r->nkernels; i++) {
        const tmap_bench_option *c = &r->k[i].opt[r->k[i].chosen];
        if (r->k[i].ok && c->valid && !(c->speedup_total >= s->regroup_min))
            s->regroup_min = c->speedup_total, s->regroup_min_kernel = (int)i;
    }
}

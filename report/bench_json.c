/*
 * bench_json.c -- results.json: the device and software (name, clocks,
 * driver, CUDA), date and command line, the settings, the summary against
 * the paper, and per kernel every option's numbers.  NAN is written as
 * null; keys are those of the CSV columns where they overlap, and the
 * model's metrics are written by the one metrics writer (report/metrics.c).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "threadmap/report.h"
#include "report/bench_priv.h"
#include "report/metrics.h"

static json_t *num(double v) { return tmap_report_metrics_num(v); }

static json_t *metric_object(const double *v)
{
    json_t *o = json_object();
    for (int m = 0; m < TMAP_BM_COUNT; m++)
        json_object_set_new(o, tmap_bench_metric_key((tmap_bench_metric)m), num(v[m]));
    return o;
}

static json_t *option_json(const tmap_bench_option *o)
{
    json_t *j = json_object();
    json_object_set_new(j, "name", json_string(o->name));
    json_object_set_new(j, "available", json_boolean(o->available));
    if (!o->available || o->on_gpu)
        json_object_set_new(j, "note", json_string(o->note));
    json_object_set_new(j, "on_gpu", json_boolean(o->on_gpu));
    json_object_set_new(j, "chosen", json_boolean(o->chosen));
    json_object_set_new(j, "valid", json_boolean(o->valid));
    json_object_set_new(j, "outputs_equal", o->outputs_equal < 0 ? json_null()
                                                                 : json_boolean(o->outputs_equal));
    json_object_set_new(j, "kernel_ms", num(o->kernel_ms));
    json_object_set_new(j, "apply_ms", num(o->apply_ms));
    json_object_set_new(j, "algo_ms", num(o->algo_ms));
    json_object_set_new(j, "total_ms", num(o->total_ms));
    json_object_set_new(j, "speedup_kernel", num(o->speedup_kernel));
    json_object_set_new(j, "speedup_total", num(o->speedup_total));
    json_object_set_new(j, "measured_improvement_frac", num(o->measured_impr));
    json_object_set_new(j, "measured_improvement_total_frac", num(o->measured_impr_total));
    json_object_set_new(j, "predicted_improvement_frac", metric_object(o->predicted));
    json_object_set_new(j, "error_pp", metric_object(o->error_pp));
    json_t *m = json_object();
    tmap_report_metrics_json(m, o->available && !o->on_gpu ? &o->m : NULL);
    json_object_set_new(j, "model", m);
    json_object_set_new(j, "zero_divergence_closeness_model", num(o->zero_div_model));
    json_object_set_new(j, "zero_divergence_closeness_measured", num(o->zero_div_measured));
    return j;
}

static json_t *training_json(const tmap_bench_kernel *k)
{
    json_t *t = json_object(), *r2 = json_array();
    for (size_t b = 0; k->r2 && b < k->nr2; b++)
        json_array_append_new(r2, num(k->r2[b]));
    json_object_set_new(t, "model", json_string(k->model));
    json_object_set_new(t, "threads", json_integer((json_int_t)k->train_threads));
    json_object_set_new(t, "r2_per_block", r2);
    json_object_set_new(t, "cv_rms", num(k->cv_rms));
    json_object_set_new(t, "cv", json_string(k->cv_by_run ? "leave one run out" : "k-fold over threads"));
    return t;
}

static json_t *kernel_json(const tmap_bench_kernel *k)
{
    json_t *j = json_object();
    json_object_set_new(j, "name", json_string(k->name));
    json_object_set_new(j, "manifest", json_string(k->manifest));
    json_object_set_new(j, "ok", json_boolean(k->ok));
    json_object_set_new(j, "wall_s", num(k->wall_s));
    if (!k->ok) {
        json_object_set_new(j, "error", json_string(k->error));
        return j;
    }
    json_object_set_new(j, "entry", json_string(k->entry));
    json_object_set_new(j, "threads", json_integer((json_int_t)k->threads));
    tmap_report_metrics_kernel_json(j, &k->opt[0].m);
    json_object_set_new(j, "branch_executions", num(k->branch_executions));
    json_object_set_new(j, "mechanism", json_string(k->mechanism));
    json_object_set_new(j, "bbv_origin", json_string(k->origin));
    json_object_set_new(j, "decision", json_string(k->decision));
    json_object_set_new(j, "training", training_json(k));
    json_object_set_new(j, "reps", json_integer(k->reps));
    json_object_set_new(j, "predict_ms", num(k->predict_ms));
    json_object_set_new(j, "features_ms", num(k->features_ms));
    json_object_set_new(j, "gpu_features_ms", num(k->gpu_features_ms));
    json_object_set_new(j, "gpu_overlap_algo_ms", num(k->overlap_algo_ms));
    json_object_set_new(j, "min_dram_bytes", num(k->bytes));
    json_object_set_new(j, "dram_gbps", num(k->gbps));
    json_object_set_new(j, "dram_fraction_of_peak", num(k->bw_fraction));
    json_object_set_new(j, "bound", json_string(k->memory_bound == 1 ? "memory"
                                                : k->memory_bound == 0 ? "compute" : "unknown"));
    json_object_set_new(j, "bound_by", k->bound_by >= 0 ? json_string(tmap_bench_unit_key(k->bound_by))
                                                        : json_null());
    json_object_set_new(j, "sm_issue_fraction_of_peak_est", num(k->issue_fraction));
    json_object_set_new(j, "l2_fraction_of_peak_est", num(k->l2_fraction));
    json_object_set_new(j, "divergent", json_boolean(k->divergent));
    json_object_set_new(j, "zero_divergence_headroom_frac", num(k->headroom));
    json_object_set_new(j, "error_pp", metric_object(k->error_pp));
    json_object_set_new(j, "best", k->best >= 0 ? json_string(k->opt[k->best].name) : json_null());
    json_object_set_new(j, "chosen", json_string(k->opt[k->chosen].name));
    json_object_set_new(j, "regroup_ratio", num(k->regroup_ratio));
    json_object_set_new(j, "regroup_within_5pct", json_boolean(k->regroup_ok));
    json_object_set_new(j, "outputs_ok", json_boolean(k->outputs_ok));
    json_t *opts = json_array();
    for (size_t i = 0; i < k->noptions; i++)
        json_array_append_new(opts, option_json(&k->opt[i]));
    json_object_set_new(j, "options", opts);
    return j;
}

static json_t *summary_json(const tmap_bench_summary *s)
{
    json_t *j = json_object(), *sp = json_object();
    json_object_set_new(j, "kernels_ok", json_integer((json_int_t)s->ok));
    json_object_set_new(j, "kernels_failed", json_integer((json_int_t)s->failed));
    json_object_set_new(j, "compute_bound", json_integer((json_int_t)s->compute));
    json_object_set_new(j, "memory_bound", json_integer((json_int_t)s->memory));
    json_object_set_new(j, "divergent", json_integer((json_int_t)s->divergent));
    json_object_set_new(j, "mae_pp_compute_bound", metric_object(s->mae_compute));
    json_object_set_new(j, "mae_pp_all", metric_object(s->mae_all));
    double right[TMAP_BM_COUNT], best[TMAP_BM_COUNT];
    for (int m = 0; m < TMAP_BM_COUNT; m++)
        right[m] = (double)s->sign_right[m], best[m] = (double)s->best_ok[m];
    json_object_set_new(j, "sign_right", metric_object(right));
    json_object_set_new(j, "sign_regroupings", json_integer((json_int_t)s->sign_n));
    json_object_set_new(j, "best_within", metric_object(best));
    json_object_set_new(j, "best_kernels", json_integer((json_int_t)s->best_n));
    for (int a = 0; a < TMAP_BENCH_NALGOS; a++) {
        const tmap_bench_speedup *x = &s->speedup[a];
        json_object_set_new(sp, tmap_bench_algos[a],
                            json_pack("{s:I, s:I, s:o, s:o, s:o, s:o}", "kernels", (json_int_t)x->n,
                                      "missing", (json_int_t)x->missing, "geomean_kernel",
                                      num(x->geo_kernel), "geomean_total", num(x->geo_total),
                                      "mean_total", num(x->mean_total), "max_total",
                                      num(x->max_total)));
    }
    json_object_set_new(j, "speedup_divergent", sp);
    json_object_set_new(j, "regroup_within_5pct", json_integer((json_int_t)s->regroup_ok));
    json_object_set_new(j, "regroup_kernels", json_integer((json_int_t)s->regroup_n));
    json_object_set_new(j, "kernels_outputs_differ", json_integer((json_int_t)s->outputs_bad));
    json_object_set_new(j, "paper", json_pack("{s:f, s:f, s:f, s:f, s:f}", "bbv_weighted_scheduled_err_pp",
                                              TMAP_BENCH_PAPER_SCHEDULED_ERR, "bbv_weighted_err_pp",
                                              TMAP_BENCH_PAPER_WEIGHTED_ERR, "greedy_max_speedup",
                                              TMAP_BENCH_PAPER_GMAX_SPEEDUP, "sorting_speedup",
                                              TMAP_BENCH_PAPER_SORT_SPEEDUP, "greedy_speedup",
                                              TMAP_BENCH_PAPER_GREEDY_SPEEDUP));
    return j;
}

static json_t *run_json(const tmap_bench_run *r, const tmap_bench_summary *s)
{
    json_t *j = json_object(), *ks = json_array();
    json_object_set_new(j, "format", json_string("threadmap-bench"));
    json_object_set_new(j, "version", json_integer(1));
    json_object_set_new(j, "date", json_string(r->date));
    json_object_set_new(j, "command", json_string(r->command));
    json_object_set_new(j, "device", json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:o}", "name", r->device,
                                               "arch", r->arch, "sms", r->sms, "sm_clock_mhz",
                                               r->sm_clock_mhz, "mem_clock_mhz", r->mem_clock_mhz,
                                               "bus_width_bits", r->bus_width_bits,
                                               "peak_dram_gbps", num(r->peak_gbps)));
    json_object_set_new(j, "driver", json_string(r->driver));
    json_object_set_new(j, "cuda", json_string(r->cuda));
    json_object_set_new(j, "nvrtc", json_string(r->nvrtc));
    json_object_set_new(j, "settings", json_pack("{s:s, s:s, s:I, s:i}", "bbv", r->bbv_source,
                                                 "profile_seeds", r->profile_seeds, "seed",
                                                 (json_int_t)r->seed, "launches", r->launches));
    json_object_set_new(j, "wall_s", num(r->wall_s));
    json_object_set_new(j, "summary", summary_json(s));
    for (size_t i = 0; i < r->nkernels; i++)
        json_array_append_new(ks, kernel_json(&r->k[i]));
    json_object_set_new(j, "kernels", ks);
    return j;
}

tmap_status tmap_bench_json(const tmap_bench_run *r, const tmap_bench_summary *s, FILE *f,
                            tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, r, s, f);
    if (absent)
        return absent;
    json_t *j = run_json(r, s);
    int rc = j ? json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
    json_decref(j);
    if (rc || fputc('\n', f) == EOF || ferror(f))
        return tmap_fail(err, TMAP_ERR_IO, "writing the JSON results failed");
    return TMAP_OK;
}

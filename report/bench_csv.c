/*
 * bench_csv.c -- results.csv: one row per kernel x grouping (the original
 * included), every measured and derived number of that option and the
 * kernel-level facts it needs to stand alone.  RFC 4180 quoting; empty
 * cells for NAN.  The header names the columns (docs/bench.md lists them).
 */
#include <math.h>
#include <string.h>

#include "common/base.h"
#include "threadmap/report.h"
#include "report/bench_priv.h"
#include "report/metrics.h"

static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputs("\",", f);
}

static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    fputc(',', f);
}

static void csv_int(FILE *f, long v) { fprintf(f, "%ld,", v); }

static void csv_header(FILE *f)
{
    fputs("kernel,manifest,entry,option,available,chosen,valid,outputs_equal,reps,launches,"
          "kernel_ms,apply_ms,algo_ms,predict_ms,features_ms,total_ms,speedup_kernel,speedup_total,"
          "measured_improvement_frac,measured_improvement_total_frac,", f);
    for (int m = 0; m < TMAP_BM_COUNT; m++)
        fprintf(f, "predicted_improvement_frac_%s,", tmap_bench_metric_key((tmap_bench_metric)m));
    for (int m = 0; m < TMAP_BM_COUNT; m++)
        fprintf(f, "error_pp_%s,", tmap_bench_metric_key((tmap_bench_metric)m));
    tmap_report_metrics_csv_head(f);
    fputs("zero_divergence_cycles,zero_divergence_closeness_model,"
          "zero_divergence_closeness_measured,mechanism,min_dram_bytes,dram_gbps,"
          "dram_fraction_of_peak,bound,bound_by,sm_issue_fraction_of_peak_est,"
          "l2_fraction_of_peak_est,divergent_kernel\n", f);
}

static void csv_row(FILE *f, const tmap_bench_run *r, const tmap_bench_kernel *k, size_t j)
{
    const tmap_bench_option *o = &k->opt[j];
    csv_str(f, k->name);
    csv_str(f, k->manifest);
    csv_str(f, k->entry);
    csv_str(f, o->name);
    csv_int(f, o->available);
    csv_int(f, o->chosen);
    csv_int(f, o->valid);
    csv_int(f, o->outputs_equal);
    csv_int(f, k->reps);
    csv_int(f, r->launches);
    double nums[] = {o->kernel_ms, o->apply_ms, o->algo_ms, j && !o->on_gpu ? k->predict_ms : NAN, j ? k->features_ms : NAN, o->total_ms, o->speedup_kernel,
                     o->speedup_total, o->measured_impr, o->measured_impr_total};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        csv_num(f, nums[i]);
    for (int m = 0; m < TMAP_BM_COUNT; m++)
        csv_num(f, o->predicted[m]);
    for (int m = 0; m < TMAP_BM_COUNT; m++)
        csv_num(f, o->error_pp[m]);
    tmap_report_metrics_csv(f, o->available && !o->on_gpu ? &o->m : NULL);
    csv_num(f, k->opt[0].m.zero_divergence);
    csv_num(f, o->zero_div_model);
    csv_num(f, o->zero_div_measured);
    csv_str(f, k->mechanism);
    csv_num(f, k->bytes);
    csv_num(f, k->gbps);
    csv_num(f, k->bw_fraction);
    csv_str(f, k->memory_bound == 1 ? "memory" : k->memory_bound == 0 ? "compute" : "unknown");
    csv_str(f, tmap_bench_unit_key(k->bound_by));
    csv_num(f, k->issue_fraction);
    csv_num(f, k->l2_fraction);
    fprintf(f, "%d\n", k->divergent);
}

static tmap_status bench_csv_c(const tmap_bench_run *r, FILE *f, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, r, f);
    if (absent)
        return absent;
    csv_header(f);
    for (size_t i = 0; i < r->nkernels; i++)
        for (size_t j = 0; r->k[i].ok && j < r->k[i].noptions; j++)
            csv_row(f, r, &r->k[i], j);
    if (ferror(f))
        return tmap_fail(err, TMAP_ERR_IO, "writing the CSV failed");
    return TMAP_OK;
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_bench_csv(const tmap_bench_run *r, FILE *f, tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = bench_csv_c(r, f, err);
    tmap_locale_restore(old);
    return st;
}

/*
 * metrics.c -- the one writer of tmap_metrics: the keys of one grouping's
 * metrics and of the per-kernel ones, as JSON members and as CSV cells.
 * Every output that states the model's metrics writes them here.
 */
#include "report/metrics.h"

#include <math.h>

enum { NKEYS = 11 };

/* The keys of one grouping, in output order; `count` ones are integers. */
static const struct {
    const char *key;
    int count;
} keys[NKEYS] = {
    {"bbv_weighted_cycles", 0},          {"bbv_weighted_scheduled_cycles", 0},
    {"divergent_warps_pct", 0},          {"divergent_branches", 0},
    {"branch_executions", 0},            {"branches_unestimated", 1},
    {"simd_active_threads_per_inst", 0}, {"simd_efficiency_pct", 0},
    {"thread_instructions", 0},          {"warp_instructions", 0},
    {"sm90_cycles", 0},
};

double tmap_report_metrics_simd_pct(const tmap_metrics *m)
{
    return 100.0 * m->simd_active_threads_per_inst / 32.0;
}

json_t *tmap_report_metrics_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The values of keys[] for m; NAN for every one when m is NULL. */
static void values(const tmap_metrics *m, double v[NKEYS])
{
    if (!m) {
        for (int i = 0; i < NKEYS; i++)
            v[i] = NAN;
        return;
    }
    double all[NKEYS] = {m->bbv_weighted, m->bbv_weighted_scheduled, m->divergent_warps_pct,
                         m->divergent_branches, m->branch_executions,
                         (double)m->branches_unestimated, m->simd_active_threads_per_inst,
                         tmap_report_metrics_simd_pct(m), m->thread_instructions,
                         m->warp_instructions, m->sm.cycles};
    for (int i = 0; i < NKEYS; i++)
        v[i] = all[i];
}

void tmap_report_metrics_json(json_t *o, const tmap_metrics *m)
{
    double v[NKEYS];
    values(m, v);
    for (int i = 0; i < NKEYS; i++)
        json_object_set_new(o, keys[i].key, keys[i].count && isfinite(v[i])
                                                ? json_integer((json_int_t)v[i])
                                                : tmap_report_metrics_num(v[i]));
}

void tmap_report_metrics_kernel_json(json_t *o, const tmap_metrics *m)
{
    json_object_set_new(o, "warps", json_integer((json_int_t)m->nwarps));
    json_object_set_new(o, "thread_blocks", json_integer((json_int_t)m->nthread_blocks));
    json_object_set_new(o, "zero_divergence_cycles", tmap_report_metrics_num(m->zero_divergence));
}

void tmap_report_metrics_csv_head(FILE *f)
{
    for (int i = 0; i < NKEYS; i++)
        fprintf(f, "%s,", keys[i].key);
}

void tmap_report_metrics_csv(FILE *f, const tmap_metrics *m)
{
    double v[NKEYS];
    values(m, v);
    for (int i = 0; i < NKEYS; i++) {
        if (isfinite(v[i]))
            fprintf(f, "%.9g", v[i]);
        fputc(',', f);
    }
}

/*
 * report_cells.c -- the report's table as formatted cells, shared by the
 * text, Markdown and HTML writers so that all three show the same columns
 * with the same numbers; and the small number formats and lines they use.
 */
#include <math.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "report/metrics.h"
#include "report/report_priv.h"

const tmap_report_column tmap_report_columns[TMAP_RC_COUNT] = {
    [TMAP_RC_NAME] = {"grouping", "grouping", "the original launch or a regrouping algorithm", 0},
    [TMAP_RC_WEIGHTED] = {"weighted cyc", "BBV-weighted (cycles)",
                          "eq. 5: sum of thread-block costs (eq. 2-4) divided by #SM", 0},
    [TMAP_RC_SCHEDULED] = {"scheduled cyc", "BBV-weighted-scheduled (cycles)",
                           "thread blocks placed by dynamic round robin (Fig. 5); the makespan",
                           0},
    [TMAP_RC_GAIN] = {"gain %", "predicted gain (%)",
                      "100 x (1 - t / t(original)), t the ranking model's time: the SM "
                      "model sm90 where the kernel's PTX is known, else BBV-weighted-scheduled",
                      0},
    [TMAP_RC_DIV_WARPS] = {"div.warps %", "divergent warps (%)",
                           "percent of non-empty warps whose threads' BBVs differ", 0},
    [TMAP_RC_DIV_BRANCHES] = {"div.br", "divergent branches",
                              "estimated branch executions where a warp splits (needs the CFG)",
                              0},
    [TMAP_RC_SIMD] = {"simd /32", "SIMD active threads (of 32)",
                      "SIMD efficiency as Nsight Compute states it: active threads per warp "
                      "instruction, 0-32 (needs the CFG)", 0},
    [TMAP_RC_SIMD_PCT] = {"simd %", "SIMD efficiency (%)",
                          "100 x active threads per warp instruction / 32 (needs the CFG)", 0},
    [TMAP_RC_ALGO_MS] = {"algo ms", "algorithm (ms)", "CPU time of the regrouping algorithm", 0},
    [TMAP_RC_MEASURED_MS] = {"meas. ms", "measured (ms)", "measured kernel time", 1},
    [TMAP_RC_APPLY_MS] = {"apply ms", "apply (ms)", "measured cost of applying the regrouping",
                          1},
    [TMAP_RC_EQUAL] = {"equal", "outputs equal",
                       "the regrouped launch's outputs equal the original's", 0},
};

const char *tmap_report_num(char *buf, size_t size, const char *fmt, double v)
{
    if (!isfinite(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, fmt, v);
    return buf;
}

const char *tmap_report_si(char *buf, size_t size, double v)
{
    static const char suffix[] = " kMGTP";
    double a = fabs(v);
    int k = 0;
    while (a >= 1000 && k < 5)
        a /= 1000, v /= 1000, k++;
    if (k == 0)
        snprintf(buf, size, "%.4g", v);
    else
        snprintf(buf, size, "%.3g%c", v, suffix[k]);
    return buf;
}

const char *tmap_report_equal_word(int outputs_equal)
{
    return outputs_equal < 0 ? "-" : outputs_equal ? "yes" : "no";
}

/* The value of an optional column in row i (NAN when absent). */
static double optional_value(const tmap_report_row *row, tmap_report_col c)
{
    return c == TMAP_RC_MEASURED_MS ? row->measured_ms : row->apply_ms;
}

int tmap_report_col_shown(const tmap_report *r, tmap_report_col c)
{
    if (!tmap_report_columns[c].optional)
        return 1;
    for (size_t i = 0; i < r->nrows; i++)
        if (isfinite(optional_value(&r->rows[i], c)))
            return 1;
    return 0;
}

void tmap_report_cells(const tmap_report *r, size_t i, char cell[TMAP_RC_COUNT][TMAP_REPORT_CELL])
{
    const tmap_report_row *row = &r->rows[i];
    const tmap_metrics *m = row->available ? row->m : NULL;
    const size_t n = TMAP_REPORT_CELL;
    snprintf(cell[TMAP_RC_NAME], n, "%s", row->name ? row->name : "?");
    for (int c = TMAP_RC_WEIGHTED; c <= TMAP_RC_SIMD_PCT; c++)
        snprintf(cell[c], n, "n/a");
    if (m) {
        tmap_report_num(cell[TMAP_RC_WEIGHTED], n, "%.1f", m->bbv_weighted);
        tmap_report_num(cell[TMAP_RC_SCHEDULED], n, "%.1f", m->bbv_weighted_scheduled);
        tmap_report_num(cell[TMAP_RC_GAIN], n, "%.1f", 100 * row->gain);
        tmap_report_num(cell[TMAP_RC_DIV_WARPS], n, "%.1f", m->divergent_warps_pct);
        tmap_report_num(cell[TMAP_RC_DIV_BRANCHES], n, "%.0f", m->divergent_branches);
        tmap_report_num(cell[TMAP_RC_SIMD], n, "%.2f", m->simd_active_threads_per_inst);
        tmap_report_num(cell[TMAP_RC_SIMD_PCT], n, "%.1f", tmap_report_metrics_simd_pct(m));
    }
    tmap_report_num(cell[TMAP_RC_ALGO_MS], n, "%.3f", row->algo_ms);
    tmap_report_num(cell[TMAP_RC_MEASURED_MS], n, "%.3f", row->measured_ms);
    tmap_report_num(cell[TMAP_RC_APPLY_MS], n, "%.3f", row->apply_ms);
    snprintf(cell[TMAP_RC_EQUAL], n, "%s", tmap_report_equal_word(row->outputs_equal));
}

void tmap_report_shape(const tmap_report *r, char *buf, size_t size)
{
    const tmap_metrics *m = r->rows[0].m;
    const tmap_model_params *p = r->params;
    snprintf(buf, size,
             "%zu threads, %zu basic blocks; %zu thread blocks of %zu threads, %zu warps; "
             "%zu SMs x %zu resident blocks",
             r->bbv->nthreads, r->bbv->nblocks, m->nthread_blocks, p->block_size, m->nwarps,
             p->nsms, p->blocks_per_sm);
}

void tmap_report_zero_divergence(const tmap_report *r, char *buf, size_t size)
{
    char v[TMAP_REPORT_CELL];
    snprintf(buf, size, "%s cycles (the original launch if no warp diverged: each warp at its "
             "threads' mean counts)",
             tmap_report_num(v, sizeof v, "%.1f", r->rows[0].m->zero_divergence));
}

const char *tmap_report_caveat(const tmap_report *r, char *buf, size_t size)
{
    const tmap_sm_model *s = r->params->sm;
    int ptx = s && s->nblocks && !s->issue_sass, blind = tmap_sm_model_const_blind(s);
    if (!blind && !ptx)
        return NULL;
    size_t n = ptx ? (size_t)snprintf(buf, size, "the SM model's issue cycles are PTX "
                                      "instruction counts, not SASS ones (those need ptxas and "
                                      "nvdisasm: found by the GPU pipeline, given to `threadmap "
                                      "estimate` by --sass ARCH); a block's issue is off where "
                                      "ptxas expands or removes instructions%s",
                                      blind ? "; " : "")
                   : 0;
    if (!blind || n >= size)
        return buf;
    snprintf(buf + n, size - n, "the SM model cannot see the constant cache's capacity here: %zu "
             "__constant__ load%s at addresses that vary over a warp, from %zu bytes of "
             "__constant__ data, more than the cache's %.0f (sm:const.cache_bytes). Where a "
             "grouping changes the table rows that a warp or an SM reads, the times can be "
             "off by a factor of 2 or more (docs/model.md, \"The constant cache\"); "
             "regroup() on the GPU decides by measurement",
             s->const_loads, s->const_loads == 1 ? "" : "s", s->const_bytes,
             s->params.const_cache_bytes);
    return buf;
}

const char *tmap_report_table_path(const tmap_report *r, char *buf, size_t size)
{
    char cwd[PATH_MAX];
    const char *p = r->latency_table;
    if (!p || p[0] != '/' || !getcwd(cwd, sizeof cwd))
        return p;
    size_t n = strlen(cwd);
    if (n < 2 || strncmp(p, cwd, n) || p[n] != '/')
        return p;
    snprintf(buf, size, "%s", p + n + 1);
    return buf;
}

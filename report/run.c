/*
 * run.c -- the report of an evaluation: one row per plan candidate
 * (the identity is "original"), with measured times where they were taken.
 */
#include <math.h>
#include <string.h>

#include "threadmap/report.h"

void tmap_run_report(const tmap_eval *e, tmap_report_row *rows, const char **names,
                     tmap_report *r)
{
    if (!e || !rows || !r)
        return;
    for (size_t i = 0; i < e->plan.n; i++) {
        const tmap_candidate *c = &e->plan.cand[i];
        rows[i] = (tmap_report_row){i ? tmap_algo_name(c->algo) : "original",
                                    c->available,
                                    c->note,
                                    c->available ? &c->m : NULL,
                                    c->gain,
                                    i ? c->algo_ms : NAN,
                                    e->measured_ms[i],
                                    e->measured_apply_ms[i],
                                    e->outputs_equal[i],
                                    (int)i == e->plan.chosen};
    }
    for (size_t b = 0; b < e->cfg->nblocks; b++)
        names[b] = e->cfg->blocks[b].name;
    memset(r, 0, sizeof *r);
    r->kernel = e->entry;
    r->origin = e->origin;
    r->device = e->device.name;
    r->bbv = &e->bbv;
    r->lat = e->lat;
    r->block_names = names;
    r->params = &e->params;
    r->latency_table = e->table;
    r->fallbacks = &e->fallbacks;
    r->nrows = e->plan.n;
    r->rows = rows;
    r->decision = e->plan.why;
    r->mechanism = tmap_mechanism_name(e->mechanism);
}

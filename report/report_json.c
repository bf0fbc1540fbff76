/*
 * report_json.c -- the report as one JSON object (jansson): the inputs,
 * one entry per grouping with every metric (NAN and unavailable values as
 * null, numbers with 17 significant digits so they read back exactly), the
 * decision and the latency fallbacks.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "threadmap/report.h"
#include "common/base.h"
#include "report/report_priv.h"

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }
/* A string, null for NULL; text that is not UTF-8 is replaced, not dropped. */
static json_t *str(const char *s)
{
    json_t *j = s ? json_string(s) : json_null();
    return j ? j : json_string("(text that is not UTF-8)");
}
static json_t *count(size_t n) { return json_integer((json_int_t)n); }

static json_t *row_json(const tmap_report_row *row)
{
    const tmap_metrics *m = row->available ? row->m : NULL;
    json_t *o = json_object();
    json_object_set_new(o, "name", str(row->name));
    json_object_set_new(o, "available", json_boolean(row->available));
    json_object_set_new(o, "note", str(row->note && *row->note ? row->note : NULL));
    json_object_set_new(o, "bbv_weighted", num(m ? m->bbv_weighted : NAN));
    json_object_set_new(o, "bbv_weighted_scheduled", num(m ? m->bbv_weighted_scheduled : NAN));
    json_object_set_new(o, "zero_divergence_bound", num(m ? m->zero_divergence_bound : NAN));
    json_object_set_new(o, "divergent_warp_ratio", num(m ? m->divergent_warp_ratio : NAN));
    json_object_set_new(o, "divergent_branches", num(m ? m->divergent_branches : NAN));
    json_object_set_new(o, "branch_executions", num(m ? m->branch_executions : NAN));
    json_object_set_new(o, "simd_efficiency", num(m ? m->simd_efficiency : NAN));
    json_object_set_new(o, "gain", num(m ? row->gain : NAN));
    json_object_set_new(o, "algo_ms", num(row->algo_ms));
    json_object_set_new(o, "measured_ms", num(row->measured_ms));
    json_object_set_new(o, "apply_ms", num(row->apply_ms));
    json_object_set_new(o, "outputs_equal",
                        row->outputs_equal < 0 ? json_null() : json_boolean(row->outputs_equal));
    json_object_set_new(o, "chosen", json_boolean(row->chosen));
    return o;
}

static json_t *fallbacks_json(const tmap_lat_report *fb)
{
    json_t *a = json_array();
    for (size_t i = 0; fb && i < fb->n; i++) {
        const tmap_lat_fallback *f = &fb->items[i];
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:f, s:o}", "opcode", f->opcode,
                                           "key", f->how.key, "match",
                                           tmap_lat_match_name(f->how.match), "latency",
                                           f->how.latency, "count", count(f->count)));
    }
    return a;
}

static json_t *report_json(const tmap_report *r)
{
    json_t *o = json_object(), *rows = json_array();
    const tmap_metrics *m0 = r->rows[0].m;
    json_object_set_new(o, "kernel", str(r->kernel));
    json_object_set_new(o, "origin", str(r->origin));
    json_object_set_new(o, "device", str(r->device));
    json_object_set_new(o, "threads", count(r->bbv->nthreads));
    json_object_set_new(o, "blocks", count(r->bbv->nblocks));
    json_object_set_new(o, "warps", count(m0->nwarps));
    json_object_set_new(o, "thread_blocks", count(m0->nthread_blocks));
    json_object_set_new(o, "params", json_pack("{s:o, s:o, s:o}", "block_size",
                                               count(r->params->block_size), "sms",
                                               count(r->params->nsms), "blocks_per_sm",
                                               count(r->params->blocks_per_sm)));
    for (size_t i = 0; i < r->nrows; i++)
        json_array_append_new(rows, row_json(&r->rows[i]));
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "decision", str(r->decision));
    json_object_set_new(o, "mechanism", str(r->mechanism));
    json_object_set_new(o, "latency_table", str(r->latency_table));
    json_object_set_new(o, "fallbacks", fallbacks_json(r->fallbacks));
    return o;
}

tmap_status tmap_report_json(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    if (s)
        return s;
    json_t *o = report_json(r);
    if (!o)
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory building JSON");
    int rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (rc != 0)
        return tmap_fail(err, TMAP_ERR_IO, "report: writing the JSON report failed");
    fputc('\n', f);
    return tmap_report_stream_status(f, "JSON report", err);
}

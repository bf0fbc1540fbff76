/*
 * report_json.c -- the report as one JSON object (jansson): the inputs,
 * one entry per grouping with every metric (NAN and unavailable values as
 * null, numbers with 17 significant digits so they read back exactly), the
 * decision and the latency fallbacks.  And the two smaller objects of the
 * same vocabulary: one grouping's metrics (`threadmap estimate --json`) and
 * the plan's candidates (`threadmap regroup --json`).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "threadmap/report.h"
#include "common/base.h"
#include "report/metrics.h"
#include "report/report_priv.h"

static json_t *num(double v) { return tmap_report_metrics_num(v); }
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
    tmap_report_metrics_json(o, m);
    json_object_set_new(o, "gain_frac", num(m ? row->gain : NAN));
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

/* The latency table (relative to the current folder when below it), the
 * opcodes that fell back and the model's caveat (null: none). */
static void latency_json(json_t *o, const tmap_report *r)
{
    char table[4096], caveat[1024];
    json_object_set_new(o, "latency_table", str(tmap_report_table_path(r, table, sizeof table)));
    json_object_set_new(o, "fallbacks", fallbacks_json(r->fallbacks));
    json_object_set_new(o, "model_caveat", str(tmap_report_caveat(r, caveat, sizeof caveat)));
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
    tmap_report_metrics_kernel_json(o, m0);
    json_object_set_new(o, "params", json_pack("{s:o, s:o, s:o}", "block_size",
                                               count(r->params->block_size), "sms",
                                               count(r->params->nsms), "blocks_per_sm",
                                               count(r->params->blocks_per_sm)));
    for (size_t i = 0; i < r->nrows; i++)
        json_array_append_new(rows, row_json(&r->rows[i]));
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "decision", str(r->decision));
    json_object_set_new(o, "mechanism", str(r->mechanism));
    json_object_set_new(o, "gpu_path", r->gpu_path[0] ? json_string(r->gpu_path) : json_null());
    latency_json(o, r);
    return o;
}

/* Writes o (taken) to f with 17 significant digits, then a newline. */
static tmap_status dump(json_t *o, FILE *f, const char *what, tmap_error *err)
{
    if (!o)
        return tmap_fail(err, TMAP_ERR_NOMEM, "report: out of memory building the %s", what);
    int rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (rc != 0)
        return tmap_fail(err, TMAP_ERR_IO, "report: writing the %s failed", what);
    fputc('\n', f);
    return tmap_report_stream_status(f, what, err);
}

tmap_status tmap_report_json(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    json_t *o = s ? NULL : report_json(r);
    if (o && (s = tmap_report_lines_json(r, o, err)))
        json_decref(o);
    return s ? s : dump(o, f, "JSON report", err);
}

tmap_status tmap_report_estimate_json(const tmap_report *r, FILE *f, tmap_error *err)
{
    tmap_status s = tmap_report_check(r, err);
    if (s)
        return s;
    const tmap_metrics *m = r->rows[0].m;
    json_t *o = json_object();
    tmap_report_metrics_json(o, m);
    json_object_set_new(o, "threads", count(r->bbv->nthreads));
    json_object_set_new(o, "blocks", count(r->bbv->nblocks));
    tmap_report_metrics_kernel_json(o, m);
    json_object_set_new(o, "sms", count(r->params->nsms));
    json_object_set_new(o, "blocks_per_sm", count(r->params->blocks_per_sm));
    json_object_set_new(o, "block_size", count(r->params->block_size));
    latency_json(o, r);
    return dump(o, f, "JSON estimate", err);
}

static json_t *candidate_json(const tmap_candidate *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "algo", str(tmap_algo_name(c->algo)));
    json_object_set_new(o, "available", json_boolean(c->available));
    json_object_set_new(o, "note", str(c->available ? NULL : c->note));
    tmap_report_metrics_json(o, c->available ? &c->m : NULL);
    json_object_set_new(o, "gain_frac", num(c->available ? c->gain : NAN));
    json_object_set_new(o, "algo_ms", num(c->available ? c->algo_ms : NAN));
    json_object_set_new(o, "total_ms", num(c->available ? c->total_ms : NAN));
    return o;
}

tmap_status tmap_report_plan_json(const tmap_plan *p, const char *perm_path, FILE *f,
                                  tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, p, f);
    if (absent)
        return absent;
    json_t *o = json_object(), *a = json_array();
    for (size_t i = 0; i < p->n; i++)
        json_array_append_new(a, candidate_json(&p->cand[i]));
    json_object_set_new(o, "candidates", a);
    tmap_report_metrics_kernel_json(o, &p->cand[0].m);
    json_object_set_new(o, "chosen", str(tmap_algo_name(p->cand[p->chosen].algo)));
    json_object_set_new(o, "decision", str(p->why));
    json_object_set_new(o, "perm", str(perm_path));
    return dump(o, f, "JSON plan", err);
}

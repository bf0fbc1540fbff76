/*
 * check_print.c -- a manifest check (check.c) as text for people or as
 * JSON; the format is in docs/cli.md (`threadmap check`).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/pipeline.h"
#include "common/base.h"

static const char *yes_no(int done, int ok) { return !done ? "not run" : ok ? "yes" : "no"; }

static void print_safety(const tmap_check *c, FILE *out)
{
    if (!c->safety_done) {
        fprintf(out, "safety:   not run\n");
        return;
    }
    const tmap_safety *s = &c->safety;
    fprintf(out, "safety:   regroup within %s; layout transform safe: %s; redirection safe: %s\n",
            tmap_scope_advice_name(s->scope), yes_no(1, s->layout_ok), yes_no(1, s->redirect_ok));
    for (const char *p = s->reasons; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(out, "  %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

static void print_text(const tmap_check *c, FILE *out)
{
    fprintf(out, "manifest: %s\n", c->manifest);
    if (c->loaded) {
        fprintf(out,
                "launch:   grid [%u, %u, %u] x block [%u, %u, %u] = %zu threads, %u shared bytes\n",
                c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2],
                c->threads, c->shared_bytes);
        fprintf(out, "kernel:   %s; %zu arguments match its parameters: %s\n",
                c->compiled ? c->entry : "not compiled", c->nargs, yes_no(c->compiled, 1));
        fprintf(out, "arrays:   %zu, %.0f bytes, generated (seed %llu): %s\n", c->narrays, c->bytes,
                (unsigned long long)c->seed, yes_no(1, c->generated));
        fprintf(out, "features: %zu, evaluated for every thread: %s\n", c->nfeatures,
                c->nfeatures ? yes_no(c->generated, c->features_done) : "none to evaluate");
        print_safety(c, out);
    }
    fprintf(out, "findings: %zu\n", c->nfindings);
    for (size_t i = 0; i < c->nfindings && i < TMAP_CHECK_MAX_FINDINGS; i++)
        fprintf(out, "  %s\n", c->findings[i].message);
}

static json_t *safety_json(const tmap_check *c)
{
    if (!c->safety_done)
        return json_null();
    const tmap_safety *s = &c->safety;
    return json_pack("{s:s, s:b, s:b, s:s}", "scope", tmap_scope_advice_name(s->scope),
                     "layout_ok", s->layout_ok, "redirect_ok", s->redirect_ok, "reasons",
                     s->reasons);
}

static json_t *check_json(const tmap_check *c)
{
    json_t *findings = json_array();
    for (size_t i = 0; i < c->nfindings && i < TMAP_CHECK_MAX_FINDINGS; i++)
        json_array_append_new(findings, json_string(c->findings[i].message));
    return json_pack("{s:s, s:b, s:b, s:s?, s:[I,I,I], s:[I,I,I], s:I, s:I, s:I, s:I, s:I, s:f, "
                     "s:I, s:b, s:b, s:o, s:I, s:o}",
                     "manifest", c->manifest, "ok", c->nfindings == 0, "loaded", c->loaded,
                     "entry", c->compiled ? c->entry : NULL,
                     "grid", (json_int_t)c->grid[0], (json_int_t)c->grid[1], (json_int_t)c->grid[2],
                     "block", (json_int_t)c->block[0], (json_int_t)c->block[1],
                     (json_int_t)c->block[2],
                     "shared_bytes", (json_int_t)c->shared_bytes, "threads", (json_int_t)c->threads,
                     "args", (json_int_t)c->nargs, "arrays", (json_int_t)c->narrays,
                     "features", (json_int_t)c->nfeatures, "bytes", c->bytes,
                     "seed", (json_int_t)c->seed, "generated", c->generated,
                     "features_evaluated", c->features_done, "safety", safety_json(c),
                     "nfindings", (json_int_t)c->nfindings, "findings", findings);
}

tmap_status tmap_check_print(const tmap_check *c, int json, FILE *out, tmap_error *err)
{
    if (!c || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_check_print: %s is NULL",
                         c ? "out" : "the check");
    if (json) {
        json_t *root = check_json(c);
        int rc = root ? json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
        json_decref(root);
        if (rc || fputc('\n', out) == EOF)
            return tmap_fail(err, TMAP_ERR_IO, "writing the check as JSON failed");
    } else {
        print_text(c, out);
    }
    return fflush(out) || ferror(out) ? tmap_fail(err, TMAP_ERR_IO, "writing the check failed")
                                      : TMAP_OK;
}

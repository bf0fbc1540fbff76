/*
 * check.c -- `threadmap check`: a manifest taken as far as it goes without
 * a GPU (load, compile and match the arguments to the parameters, generate
 * the arrays, evaluate the features, check the irregular references'
 * indices, the safety analysis), every problem
 * kept as a finding; and opening the GPU for a manifest's pipeline, which
 * reports the manifest's errors before a missing GPU.  Printing is in
 * check_print.c.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/pipeline.h"
#include "common/base.h"
#include "runtime/manifest.h"

/* Keeps a failed step's error as a finding; returns whether it succeeded. */
static int step(tmap_check *c, tmap_status st, const tmap_error *e)
{
    if (st == TMAP_OK)
        return 1;
    if (c->nfindings < TMAP_CHECK_MAX_FINDINGS)
        c->findings[c->nfindings] = *e;
    c->nfindings++;
    return 0;
}

static void describe(tmap_check *c, const tmap_manifest *m)
{
    memcpy(c->grid, m->grid, sizeof c->grid);
    memcpy(c->block, m->block, sizeof c->block);
    c->shared_bytes = m->shared_bytes;
    c->threads = m->threads;
    c->nargs = m->nargs;
    c->narrays = m->narrays;
    c->nfeatures = m->nfeatures;
    for (size_t i = 0; i < m->narrays; i++)
        c->bytes += (double)m->arrays[i].count * (double)tmap_elem_size(m->arrays[i].kind);
}

/* Compiles, matches the arguments and analyzes the kernel's safety. */
static void check_kernel(tmap_check *c, const tmap_manifest *m)
{
    tmap_error e = {0};
    char *ptx = NULL, *entry = NULL;
    tmap_ptx_module *mod = NULL;
    c->compiled = step(c, tmap_manifest_ptx(m, NULL, &ptx, &entry, &e), &e);
    if (c->compiled) {
        snprintf(c->entry, sizeof c->entry, "%s", entry);
        char name[4096];
        c->safety_done = step(c, tmap_ptx_parse(ptx, strlen(ptx),
                                                tmap_manifest_ptx_name(m, name, sizeof name),
                                                &mod, &e), &e) &&
                         step(c, tmap_safety_analyze(mod, entry, &c->safety, &e), &e);
    }
    tmap_ptx_free(mod);
    free(ptx);
    free(entry);
}

/* Generates the arrays, evaluates every feature for every thread and
 * checks every irregular reference's index array against its data. */
static void check_data(tmap_check *c, tmap_manifest *m)
{
    tmap_error e = {0};
    double *f = NULL;
    size_t n, q;
    c->generated = step(c, tmap_manifest_generate(m, c->seed, &e), &e);
    if (c->generated && m->nfeatures)
        c->features_done = step(c, tmap_manifest_features(m, &f, &n, &q, NULL, &e), &e);
    free(f);
    for (size_t i = 0; c->generated && i < m->nrefs; i++) {
        uint32_t *ix = NULL;
        step(c, tmap_manifest_reference_index(m, i, &ix, &n, &e), &e);
        free(ix);
    }
}

tmap_status tmap_pipeline_check(const char *manifest, uint64_t seed, tmap_check *out,
                                tmap_error *err)
{
    if (!manifest || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_pipeline_check: %s is NULL",
                         manifest ? "out" : "the manifest path");
    memset(out, 0, sizeof *out);
    snprintf(out->manifest, sizeof out->manifest, "%s", manifest);
    out->seed = seed;
    tmap_manifest *m = NULL;
    tmap_error e = {0};
    out->loaded = step(out, tmap_manifest_load(manifest, &m, &e), &e);
    if (out->loaded) {
        describe(out, m);
        check_kernel(out, m);
        check_data(out, m);
    }
    tmap_manifest_free(m);
    if (!out->nfindings)
        return TMAP_OK;
    if (err)
        *err = out->findings[0];
    return out->findings[0].status;
}

tmap_status tmap_pipeline_open(const char *manifest, uint64_t seed, int ordinal, tmap_cuda **out,
                               tmap_error *err)
{
    tmap_status st = tmap_cuda_open(ordinal, out, err);
    if (st != TMAP_ERR_NO_DEVICE || !manifest)
        return st;
    tmap_check *c = malloc(sizeof *c);
    tmap_error e = {0};
    if (c && tmap_pipeline_check(manifest, seed, c, &e) != TMAP_OK) {
        st = e.status;
        if (err)
            *err = e;
    }
    free(c);
    return st;
}

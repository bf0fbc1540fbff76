/*
 * plan_input.c -- parsing the plan flags shared by regroup and report, and
 * building the plan from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/plan_input.h"
#include "common/base.h"

const char tmap_pi_help[] =
    "  --groupsize G          threads per group, a multiple of 32 (default 32)\n"
    "  --scope grid|block     regroup across the grid (default) or within each thread\n"
    "                         block (needed with barriers or shared memory)\n"
    "  --threads N            CPU threads that find the distinct BBV rows (default 1,\n"
    "                         at most 64); the permutations do not depend on it\n"
    "  --key KEY.npy          per-thread key [threads] (a row length, a sequence length);\n"
    "                         adds the `key` candidate (sort by it, descending)\n"
    "  --threshold F          predicted gain a regrouping needs to be chosen, a fraction\n"
    "                         (default 0.05)\n"
    "  --original-ms T        measured time of the original launch; with it the\n"
    "  --apply-ms A           algorithm's time and A, the cost of applying, are weighed\n"
    "  --launches L           launches that reuse one regrouping (same input, e.g. an\n"
    "                         iterative solver): the algorithm's time is spread over them\n"
    "                         (default 1: it runs before every launch)\n";

void tmap_pi_defaults(tmap_pi_opts *o)
{
    memset(o, 0, sizeof *o);
    o->groupsize = 32;
    o->threads = 1;
    o->threshold = 0.05;
    o->scope = "grid";
}

int tmap_pi_option(tmap_pi_opts *o, tmap_args *a, int c)
{
    static const char *const scopes[] = {"grid", "block"};
    int i;
    switch (c) {
    case TMAP_OPT_KEY: o->key = tmap_args_input(a, optarg); return 1;
    case TMAP_OPT_SCOPE:
        if (tmap_args_choice(a, scopes, 2, &i))
            return -1;
        o->scope = scopes[i];
        return 1;
    case TMAP_OPT_GROUPSIZE:
        if (tmap_args_long(a, 32, 1 << 20, &o->groupsize))
            return -1;
        return o->groupsize % 32 ? tmap_args_bad(a, "--groupsize must be a multiple of 32") : 1;
    case TMAP_OPT_THREADS: return tmap_args_long(a, 1, TMAP_REGROUP_MAX_THREADS, &o->threads) ? -1 : 1;
    case TMAP_OPT_THRESHOLD: return tmap_args_double(a, 0, 0.99, &o->threshold) ? -1 : 1;
    case TMAP_OPT_ORIGINAL_MS:
        o->have_original = 1;
        return tmap_args_double(a, 0, 1e9, &o->original_ms) ? -1 : 1;
    case TMAP_OPT_APPLY_MS:
        o->have_apply = 1;
        return tmap_args_double(a, 0, 1e9, &o->apply_ms) ? -1 : 1;
    case TMAP_OPT_LAUNCHES: return tmap_args_double(a, 1, 1e12, &o->launches) ? -1 : 1;
    default: return 0;
    }
}

static tmap_status load_key(const char *path, size_t n, double **key, tmap_error *err)
{
    size_t dim[2];
    *key = NULL;
    if (!path)
        return TMAP_OK;
    tmap_status s = tmap_npy_load_f64(path, TMAP_NPY_1D, key, dim, err);
    if (!s && dim[0] != n)
        s = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu keys for %zu threads", path, dim[0], n);
    return s;
}

tmap_status tmap_pi_plan(const tmap_pi_opts *o, const tmap_mi *d, unsigned algos,
                         tmap_plan *p, tmap_error *err)
{
    double *key;
    memset(p, 0, sizeof *p);
    tmap_status s = load_key(o->key, d->bbv.nthreads, &key, err);
    if (s)
        return s;
    tmap_plan_opts po = {
        d->params,
        {(size_t)o->groupsize, strcmp(o->scope, "block") ? TMAP_REGROUP_GRID : TMAP_REGROUP_BLOCK,
         d->params.block_size, (size_t)o->threads},
        key, algos, o->threshold, o->original_ms, o->apply_ms, o->launches};
    s = tmap_plan_make(&d->bbv, d->lat, d->cfg, &po, p, err);
    free(key);
    return s;
}

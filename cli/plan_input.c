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

int tmap_pi_flag(tmap_pi_opts *o, const char *cmd, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = NULL;
    int r = tmap_cli_take(cmd, "--key", argc, argv, i, &o->key);
    if (!r) r = tmap_cli_take(cmd, "--scope", argc, argv, i, &o->scope);
    if (r)
        return r;
    if ((r = tmap_cli_take(cmd, "--groupsize", argc, argv, i, &v)) > 0)
        return tmap_cli_long(v, 32, 1 << 20, &o->groupsize) ? -1 : 1;
    if ((r = tmap_cli_take(cmd, "--threads", argc, argv, i, &v)) > 0)
        return tmap_cli_long(v, 1, TMAP_REGROUP_MAX_THREADS, &o->threads) ? -1 : 1;
    if ((r = tmap_cli_take(cmd, "--threshold", argc, argv, i, &v)) > 0)
        return tmap_cli_number(cmd, a, v, 0, 0.99, &o->threshold) ? -1 : 1;
    if ((r = tmap_cli_take(cmd, "--original-ms", argc, argv, i, &v)) > 0) {
        o->have_original = 1;
        return tmap_cli_number(cmd, a, v, 0, 1e9, &o->original_ms) ? -1 : 1;
    }
    if ((r = tmap_cli_take(cmd, "--launches", argc, argv, i, &v)) > 0)
        return tmap_cli_number(cmd, a, v, 1, 1e12, &o->launches) ? -1 : 1;
    if ((r = tmap_cli_take(cmd, "--apply-ms", argc, argv, i, &v)) > 0) {
        o->have_apply = 1;
        return tmap_cli_number(cmd, a, v, 0, 1e9, &o->apply_ms) ? -1 : 1;
    }
    return r;
}

int tmap_pi_finish(const tmap_pi_opts *o, const char *cmd)
{
    if (strcmp(o->scope, "grid") && strcmp(o->scope, "block")) {
        fprintf(stderr, "threadmap %s: --scope is grid or block\n", cmd);
        return -1;
    }
    if (o->groupsize % 32) {
        fprintf(stderr, "threadmap %s: --groupsize must be a multiple of 32\n", cmd);
        return -1;
    }
    return 0;
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

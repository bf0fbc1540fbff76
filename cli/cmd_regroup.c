/*
 * cmd_regroup.c -- `threadmap regroup`: a permutation from BBVs with one
 * algorithm, or (--algo auto) every candidate scored by the model and the
 * decision regroup() would take; prints the predicted times, writes PERM.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"
#include "cli/model_input.h"
#include "cli/plan_input.h"
#include "common/base.h"
#include "threadmap/report.h"

static const char usage_head[] =
    "usage: threadmap regroup --algo ALGO --bbv BBV.npy (--cfg FILE.ptx --kernel K |\n"
    "                         --block-latency LAT.npy) [options] -o PERM.npy\n\n"
    "Regroups threads so that threads with similar basic block vectors share warps\n"
    "(Liang et al. TCAD 2016, section V) and writes the permutation: slot i runs\n"
    "original thread PERM[i] (.npy, int32; int64 past 2^31 threads).  Prints the\n"
    "model's predicted time (BBV-weighted-scheduled, cycles) of the original and the\n"
    "regrouped launch.\n\n"
    "  -a, --algo ALGO        identity, sorting, greedy, greedy-max, key (sort by --key,\n"
    "                         descending), bin-and-deal (grid scope, full thread blocks\n"
    "                         of --block-size), or auto: score every candidate and choose as\n"
    "                         regroup() does (identity when nothing pays; --threshold,\n"
    "                         --original-ms and --apply-ms only matter then)\n"
    "  -o, --output PERM.npy  where to write the permutation (- for stdout: nothing\n"
    "                         else is printed then); it may not be an input\n"
    "  --json                 print one JSON object: the candidates with their metrics,\n"
    "                         \"chosen\", \"decision\", \"perm\" (the file written)\n"
    "  -q, --quiet            print nothing (PERM.npy is still written)\n"
    "  -h, --help             this text\n";

static const char usage_tail[] =
    "\nexample: threadmap regroup --algo auto --bbv prof/run0.bbv.npy --cfg prof/kernel.ptx\n"
    "           --kernel divergent --blocks-per-sm 8 -o perm.npy\n";

typedef struct rg_opts {
    tmap_mi_opts in;
    tmap_pi_opts plan;
    const char *algo, *out;
} rg_opts;

static void usage(FILE *f)
{
    fprintf(f, "%s%s%s%s", usage_head, tmap_pi_help, tmap_mi_help, usage_tail);
}

/* 0 run, -1 stop (exit code in a->rc). */
static int parse(tmap_args *a, rg_opts *o)
{
    memset(o, 0, sizeof *o);
    tmap_mi_defaults(&o->in);
    tmap_pi_defaults(&o->plan);
    for (int c; (c = tmap_args_next(a)) != 0;) {
        int r = c < 0 ? -1 : tmap_mi_option(&o->in, a, c);
        if (!r)
            r = tmap_pi_option(&o->plan, a, c);
        if (r < 0)
            return -1;
        if (r)
            continue;
        if (c == 'a')
            o->algo = optarg;
        else if (c == 'o')
            o->out = tmap_args_output(a, optarg);
        else
            return tmap_args_bad(a, "unexpected option %s", a->opt);
    }
    if (tmap_args_operands(a, 0, 0))
        return -1;
    if (!o->algo || !o->out)
        return tmap_args_bad(a, "--algo and -o are required");
    if (strcmp(o->algo, "auto") && tmap_algo_parse(o->algo) < 0)
        return tmap_args_bad(a, "unknown algorithm '%s'", o->algo);
    if (!strcmp(o->algo, "key") && !o->plan.key)
        return tmap_args_bad(a, "--algo key needs --key KEY.npy");
    return tmap_mi_finish(&o->in, a, 1) || tmap_args_files(a) ? -1 : 0;
}

static tmap_status save_perm(const char *path, const uint32_t *perm, size_t n, tmap_error *err)
{
    size_t dim[2] = {n, 1};
    if (n <= 0x7fffffffu)
        return tmap_npy_save_i32(path, (const int32_t *)perm, 1, dim, err);
    int64_t *w = malloc(n * sizeof *w);
    if (!w)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        w[i] = perm[i];
    tmap_status s = tmap_npy_save_i64(path, w, 1, dim, err);
    free(w);
    return s;
}

static tmap_status print(const tmap_args *a, const rg_opts *o, const tmap_plan *p,
                         tmap_error *err)
{
    if (a->json)
        return tmap_report_plan_json(p, o->out, stdout, err);
    if (a->quiet)
        return TMAP_OK;
    printf("%-11s %16s %8s %12s %10s\n", "algorithm", "scheduled cyc", "gain %", "div.warps %",
           "algo ms");
    for (size_t i = 0; i < p->n; i++) {
        const tmap_candidate *c = &p->cand[i];
        if (!c->available)
            printf("%-11s unavailable: %s\n", tmap_algo_name(c->algo), c->note);
        else
            printf("%-11s %16.0f %8.1f %12.1f %10.3f\n", tmap_algo_name(c->algo),
                   c->m.bbv_weighted_scheduled, 100 * c->gain, c->m.divergent_warps_pct,
                   c->algo_ms);
    }
    if (!strcmp(o->algo, "auto"))
        printf("decision: %s\n", p->why);
    printf("wrote %s (%s)\n", o->out, tmap_algo_name(p->cand[p->chosen].algo));
    return TMAP_OK;
}

int tmap_cmd_regroup(int argc, char **argv)
{
    static const struct option opts[] = {TMAP_MI_OPTIONS, TMAP_PI_OPTIONS, TMAP_ARGS_OUTPUT,
                                          {"algo", required_argument, NULL, 'a'},
                                          TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON, {0}};
    rg_opts o;
    tmap_args a;
    tmap_args_init(&a, "regroup", usage, argc, argv, opts, "a:o:k:hq");
    if (parse(&a, &o))
        return a.rc;
    tmap_error err = {0};
    tmap_mi d = {0};
    tmap_plan p = {0};
    tmap_status s = tmap_mi_load(&o.in, &d, &err);
    int fixed = strcmp(o.algo, "auto") ? tmap_algo_parse(o.algo) : -1;
    if (!s)
        s = tmap_pi_plan(&o.plan, &d, fixed >= 0 ? 1u << fixed : 0, &p, &err);
    /* a fixed algorithm is applied whatever the model says */
    if (!s && fixed > 0)
        p.chosen = p.n > 1 && p.cand[1].available ? 1 : 0;
    if (!s && fixed > 0 && !p.cand[p.n - 1].available)
        s = tmap_fail(&err, TMAP_ERR_UNSUPPORTED, "%s: %s", o.algo, p.cand[p.n - 1].note);
    if (!s)
        s = save_perm(o.out, p.cand[p.chosen].perm, d.bbv.nthreads, &err);
    if (!s)
        s = print(&a, &o, &p, &err);
    tmap_plan_free(&p);
    tmap_mi_free(&d);
    return s ? tmap_cli_fail("regroup", &err) : TMAP_EXIT_OK;
}

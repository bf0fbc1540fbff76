/*
 * cmd_report.c -- `threadmap report`: the performance-estimate report of a
 * kernel.  Builds the plan as `threadmap regroup --algo auto` does, puts the
 * original launch and every candidate side by side, prints one form of the
 * report and (-o DIR) writes all four.
 */
#include <jansson.h>
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
#include "threadmap/regroup.h"

static const char usage_head[] =
    "usage: threadmap report --bbv BBV.npy (--cfg FILE.ptx --kernel K |\n"
    "                        --block-latency LAT.npy) [options] [-o DIR]\n\n"
    "The performance-estimate report of a kernel: the original launch and every\n"
    "candidate regrouping side by side with the model's times (BBV-weighted, eq. 5;\n"
    "BBV-weighted-scheduled; the zero-divergence time), the older metrics (divergent\n"
    "warps, divergent branches, SIMD efficiency), measured times when given, and the\n"
    "decision `threadmap regroup --algo auto` takes.  docs/report.md explains it.\n\n"
    "  -f, --format FMT       what to print: text (default), markdown, json or html\n"
    "  --json                 the same as --format json\n"
    "  -q, --quiet            print nothing (with -o, only write the folder)\n"
    "  -o, --output DIR       also write DIR/report.{txt,md,json,html} (DIR is created;\n"
    "                         the four replace the old ones together; not -)\n"
    "  --origin TEXT          where the BBVs come from (default: the BBV file's path),\n"
    "                         e.g. \"measured on NVIDIA H200\" or \"predicted by MODEL\"\n"
    "  --device-name TEXT     the GPU the times were measured on (default: the one in\n"
    "                         the profile.json beside --cfg or --bbv)\n"
    "  --mechanism M          how the regrouping is applied: layout (the layout\n"
    "                         transform) or redirect (default: what `threadmap safety`\n"
    "                         allows for the --cfg kernel)\n"
    "  -h, --help             this text\n";

static const char usage_tail[] =
    "\nexample: threadmap report --bbv prof/run0.bbv.npy --cfg prof/kernel.ptx\n"
    "           --kernel divergent --blocks-per-sm 8 --original-ms 1.92 --apply-ms 0.05\n"
    "           --origin \"measured on NVIDIA H100\" -o report/\n";

typedef enum rp_format { RP_TEXT, RP_MARKDOWN, RP_JSON, RP_HTML } rp_format;

typedef struct rp_opts {
    tmap_mi_opts in;
    tmap_pi_opts plan;
    const char *out, *origin, *device, *mechanism;
    rp_format fmt;
} rp_opts;

enum { OPT_ORIGIN = 0x1800, OPT_DEVICE_NAME, OPT_MECHANISM };

static void usage(FILE *f)
{
    fprintf(f, "%s%s%s%s", usage_head, tmap_pi_help, tmap_mi_help, usage_tail);
}

/* One of report's own options (value in optarg): 0 taken, -1 stop. */
static int own_option(tmap_args *a, rp_opts *o, int c)
{
    static const char *const formats[] = {"text", "markdown", "json", "html"}; /* rp_format */
    static const char *const mechs[] = {"layout", "redirect"};
    int i;
    switch (c) {
    case 'o': o->out = tmap_args_output_dir(a, optarg); return 0;
    case OPT_ORIGIN: o->origin = optarg; return 0;
    case OPT_DEVICE_NAME: o->device = optarg; return 0;
    case OPT_MECHANISM:
        if (tmap_args_choice(a, mechs, 2, &i))
            return -1;
        o->mechanism = tmap_mechanism_name(i ? TMAP_MECH_REDIRECT : TMAP_MECH_LAYOUT);
        return 0;
    case 'f':
        if (tmap_args_choice(a, formats, 4, &i))
            return -1;
        o->fmt = (rp_format)i;
        return 0;
    default: return tmap_args_bad(a, "unexpected option %s", a->opt);
    }
}

/* 0 run, -1 stop (exit code in a->rc). */
static int parse(tmap_args *a, rp_opts *o)
{
    memset(o, 0, sizeof *o);
    tmap_mi_defaults(&o->in);
    tmap_pi_defaults(&o->plan);
    for (int c; (c = tmap_args_next(a)) != 0;) {
        int r = c < 0 ? -1 : tmap_mi_option(&o->in, a, c);
        if (!r)
            r = tmap_pi_option(&o->plan, a, c);
        if (!r)
            r = own_option(a, o, c);
        if (r < 0)
            return -1;
    }
    if (a->json)
        o->fmt = RP_JSON;
    if (tmap_args_operands(a, 0, 0) || tmap_mi_finish(&o->in, a, 1) || tmap_args_files(a))
        return -1;
    return 0;
}

/* The kernel's name: --kernel, else the function part of the first block
 * name ("kernel/label"), else the BBV file's path. */
static const char *kernel_name(const rp_opts *o, const tmap_mi *d, char *buf, size_t size)
{
    if (o->in.kernel)
        return o->in.kernel;
    const char *first = d->names && d->bbv.nblocks ? d->names[0] : NULL;
    const char *slash = first ? strchr(first, '/') : NULL;
    if (!slash || slash == first)
        return o->in.bbv;
    snprintf(buf, size, "%.*s", (int)(slash - first), first);
    return buf;
}

/* rows[i] describes plan candidate i; candidate 0 (identity) is "original". */
static void fill_rows(const rp_opts *o, const tmap_plan *p, tmap_report_row *rows)
{
    for (size_t i = 0; i < p->n; i++) {
        const tmap_candidate *c = &p->cand[i];
        rows[i] = (tmap_report_row){
            .name = i ? tmap_algo_name(c->algo) : "original",
            .available = c->available,
            .note = c->note,
            .m = c->available ? &c->m : NULL,
            .gain = c->gain,
            .algo_ms = i ? c->algo_ms : NAN,
            .measured_ms = !i && o->plan.have_original ? o->plan.original_ms : NAN,
            .apply_ms = i && o->plan.have_apply ? o->plan.apply_ms : NAN,
            .outputs_equal = -1,
            .chosen = (int)i == p->chosen,
        };
    }
}

/* The GPU named by the profile.json beside `path` (a file of a profile
 * folder: its kernel.ptx or a BBV), copied into buf; NULL when none. */
static const char *profile_device(const char *path, char *buf, size_t size)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    char file[4200];
    if (!path)
        return NULL;
    snprintf(file, sizeof file, "%.*sprofile.json", slash ? (int)(slash - path + 1) : 0, path);
    json_t *root = json_load_file(file, 0, NULL);
    const char *name = json_string_value(json_object_get(json_object_get(root, "device"), "name"));
    if (name)
        snprintf(buf, size, "%s", name);
    json_decref(root);
    return name ? buf : NULL;
}

/* The mechanism the safety analysis of the --cfg kernel allows (as `threadmap
 * run` picks it, the manifest's arrays assumed); NULL without --cfg or when
 * the analysis fails (the report then says "not given"). */
static const char *safe_mechanism(const rp_opts *o)
{
    tmap_error e = {0}, *err = &e;
    char *text = NULL;
    size_t len = 0;
    tmap_ptx_module *m = NULL;
    tmap_safety sa;
    if (!o->in.cfg)
        return NULL;
    tmap_status s = tmap_file_read(o->in.cfg, &text, &len, err);
    if (!s)
        s = tmap_ptx_parse(text, len, o->in.cfg, &m, err);
    if (!s)
        s = tmap_safety_analyze(m, o->in.kernel, &sa, err);
    tmap_ptx_free(m);
    free(text);
    return s ? NULL : tmap_mechanism_name(tmap_mechanism_choose(&sa, 1));
}

static tmap_status emit(const rp_opts *o, int quiet, const tmap_report *r, tmap_error *err)
{
    static tmap_status (*const writers[])(const tmap_report *, FILE *, tmap_error *) = {
        [RP_TEXT] = tmap_report_text, [RP_MARKDOWN] = tmap_report_markdown,
        [RP_JSON] = tmap_report_json, [RP_HTML] = tmap_report_html};
    tmap_status s = o->out ? tmap_report_write_dir(r, o->out, err) : TMAP_OK;
    return s || (quiet && o->fmt != RP_JSON) ? s : writers[o->fmt](r, stdout, err);
}

static tmap_status run(const rp_opts *o, int quiet, const tmap_mi *d, tmap_error *err)
{
    tmap_plan p;
    tmap_status s = tmap_pi_plan(&o->plan, d, 0, &p, err);
    if (s)
        return s;
    tmap_report_row rows[TMAP_ALGO_COUNT];
    const char **names = NULL;
    char kernel[256], origin[4200];
    fill_rows(o, &p, rows);
    if (d->cfg || d->names) {
        if (!(names = malloc(d->bbv.nblocks * sizeof *names)))
            s = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        for (size_t b = 0; names && b < d->bbv.nblocks; b++)
            names[b] = d->cfg ? d->cfg->blocks[b].name : d->names[b];
    }
    char device[256];
    snprintf(origin, sizeof origin, "BBV file %s", o->in.bbv);
    const char *dev = o->device ? o->device : profile_device(o->in.cfg, device, sizeof device);
    if (!dev)
        dev = profile_device(o->in.bbv, device, sizeof device);
    const char *mech = o->mechanism ? o->mechanism : safe_mechanism(o);
    tmap_report r = {
        .kernel = kernel_name(o, d, kernel, sizeof kernel),
        .origin = o->origin ? o->origin : origin,
        .device = dev,
        .bbv = &d->bbv,
        .lat = d->lat,
        .block_names = names,
        .params = &d->params,
        .latency_table = *d->table ? d->table : NULL,
        .fallbacks = &d->report,
        .nrows = p.n,
        .rows = rows,
        .decision = p.why,
        .mechanism = mech,
        .cfg = d->cfg,
    };
    if (!s)
        s = emit(o, quiet, &r, err);
    free(names);
    tmap_plan_free(&p);
    return s;
}

int tmap_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        TMAP_MI_OPTIONS, TMAP_PI_OPTIONS, TMAP_ARGS_OUTPUT,
        {"format", required_argument, NULL, 'f'},
        {"origin", required_argument, NULL, OPT_ORIGIN},
        {"device-name", required_argument, NULL, OPT_DEVICE_NAME},
        {"mechanism", required_argument, NULL, OPT_MECHANISM},
        TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON, {0}};
    rp_opts o;
    tmap_args a;
    tmap_args_init(&a, "report", usage, argc, argv, opts, "f:o:k:hq");
    if (parse(&a, &o))
        return a.rc;
    tmap_error err = {0};
    tmap_mi d = {0};
    tmap_status s = tmap_mi_load(&o.in, &d, &err);
    if (!s)
        s = run(&o, a.quiet, &d, &err);
    tmap_mi_free(&d);
    return s ? tmap_cli_fail("report", &err) : TMAP_EXIT_OK;
}

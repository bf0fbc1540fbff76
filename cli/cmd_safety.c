/*
 * cmd_safety.c -- `threadmap safety`: which regroupings keep a kernel's
 * results (barriers, shared memory, warp collectives, ids used as values...),
 * in words or as JSON.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/ptx_input.h"
#include "common/base.h"

static const char usage_text[] =
    "usage: threadmap safety FILE.{ptx,cu} [--kernel NAME] [--json] [-q]\n"
    "                        [--arch ARCH] [-I DIR]... [--option OPT]... [-v]\n"
    "\n"
    "Checks each kernel (or NAME) and every .func it calls against the safety\n"
    "rules of thread-data remapping (docs/safety.md) and prints, per kernel,\n"
    "the scope within which threads may be regrouped (grid, block, warps:\n"
    "whole warps only, none), whether the layout transform and the reference\n"
    "redirection keep the results, and one sentence per finding naming its\n"
    "PTX line.  A .cu file is compiled with NVRTC first; lines then refer to\n"
    "the generated PTX.  FILE - reads PTX from stdin.\n"
    "\n"
    "  -k, --kernel NAME    only this kernel (for .cu also a C++ name)\n"
    "  -j, --json           print JSON instead of text: {\"file\", \"kernels\": [{\"name\",\n"
    "                       \"scope\", \"layout_ok\", \"redirect_ok\", counts..., \"reasons\"}]}\n"
    "  -q, --quiet          print nothing: only analyze (errors still on stderr)\n"
    TMAP_CLI_SOURCE_USAGE
    "  -h, --help           this text\n"
    "\n"
    "example: threadmap safety examples/divergent/recorded/kernel.ptx --json\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

static void print_text(const tmap_safety *s, const char *kernel)
{
    printf("kernel %s: regroup within %s; layout transform %s; redirection %s\n", kernel,
           tmap_scope_advice_name(s->scope), s->layout_ok ? "safe" : "unsafe",
           s->redirect_ok ? "safe" : "unsafe");
    printf("  barriers %d, shared memory %d, warp collectives %d, hardware ids %d, "
           "atomics %d, cluster %d\n", s->barriers, s->shared_memory, s->warp_collectives,
           s->hardware_ids, s->atomics, s->cluster);
    printf("  ids as values %d, ids in control %d, unredirectable id reads %d, "
           "arrays not per-thread %d\n", s->tid_as_value, s->tid_in_control,
           s->unredirectable, s->non_thread_arrays);
    for (const char *p = s->reasons; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        printf("  - %.*s\n", n, p);
        p += n + (nl != NULL);
    }
}

static json_t *safety_json(const tmap_safety *s, const char *kernel)
{
    json_t *reasons = json_array();
    for (const char *p = s->reasons; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        json_array_append_new(reasons, json_stringn(p, n));
        p += n + (nl != NULL);
    }
    return json_pack("{s:s, s:s, s:b, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
                     "s:o}",
                     "name", kernel, "scope", tmap_scope_advice_name(s->scope), "layout_ok",
                     s->layout_ok, "redirect_ok", s->redirect_ok, "barriers", s->barriers,
                     "shared_memory", s->shared_memory, "warp_collectives",
                     s->warp_collectives, "hardware_ids", s->hardware_ids, "tid_as_value",
                     s->tid_as_value, "tid_in_control", s->tid_in_control, "atomics",
                     s->atomics, "cluster", s->cluster, "unredirectable", s->unredirectable,
                     "non_thread_arrays", s->non_thread_arrays, "reasons", reasons);
}

/* One kernel's findings, in words or (into kernels) as JSON. */
static tmap_status one_kernel(tmap_ptx_module *m, const char *name, json_t *kernels, void *ctx,
                              tmap_error *err)
{
    (void)ctx;
    tmap_safety s;
    tmap_status st = tmap_safety_analyze(m, name, &s, err);
    if (st != TMAP_OK)
        return st;
    if (kernels)
        json_array_append_new(kernels, safety_json(&s, name));
    else
        print_text(&s, name);
    return TMAP_OK;
}

/* safety has no options of its own beyond -j (the shared --json). */
static int no_option(tmap_args *a, int c, void *ctx)
{
    (void)ctx;
    if (c == 'j')
        return a->json = 1, 0;
    return tmap_args_bad(a, "unexpected option %s", a->opt);
}

int tmap_cmd_safety(int argc, char **argv)
{
    static const struct option opts[] = {{"kernel", required_argument, NULL, 'k'},
                                          TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON,
                                          TMAP_CLI_SOURCE_OPTIONS,
                                          {NULL, 0, NULL, 0}};
    tmap_cli_input in;
    tmap_args a;
    tmap_args_init(&a, "safety", usage, argc, argv, opts, "k:jI:vhq");
    if (tmap_cli_input_args(&a, no_option, NULL, &in))
        return a.rc;
    return tmap_cli_each_kernel(&a, &in, one_kernel, NULL);
}

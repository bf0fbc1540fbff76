/*
 * ptx_input.c -- reading the PTX or CUDA file given on the command line into
 * a module (CUDA through NVRTC, kernel names through name expressions).
 */
#include "cli/ptx_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"
#include "common/base.h"

/* Takes getopt code c (value optarg) if it is a shared option: 1 taken, 0
 * not one of them, -1 too many. */
static int source_option(tmap_args *a, tmap_cli_input *in, int c)
{
    tmap_cli_source *s = &in->src;
    size_t cap = sizeof s->include / sizeof s->include[0];
    switch (c) {
    case TMAP_OPT_ARCH: s->arch = optarg; return 1;
    case 'k': in->kernel = optarg; return 1;
    case 'v': in->verbose = 1; return 1;
    case 'I':
        if (s->ninclude == cap)
            break;
        s->include[s->ninclude++] = optarg;
        return 1;
    case TMAP_OPT_OPTION:
        if (s->noption == cap)
            break;
        s->option[s->noption++] = optarg;
        return 1;
    default:
        return 0;
    }
    return tmap_args_bad(a, "more than %zu %s values", cap, a->opt);
}

int tmap_cli_input_args(tmap_args *a, tmap_cli_opt_fn own, void *ctx, tmap_cli_input *in)
{
    memset(in, 0, sizeof *in);
    for (int c; (c = tmap_args_next(a)) != 0;) {
        int shared = c < 0 ? -1 : source_option(a, in, c);
        if (shared < 0 || (!shared && own(a, c, ctx) < 0))
            return -1;
    }
    if (tmap_args_operands(a, 1, 1))
        return -1;
    in->path = tmap_args_input(a, a->argv[optind]);
    return tmap_args_files(a);
}

static int is_cuda(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && !strcmp(path + n - 3, ".cu");
}

static tmap_status load_cuda(const char *path, const char *text, const tmap_cli_source *s,
                             const char *kernel, tmap_ptx_module **m, char **entry,
                             tmap_error *err)
{
    tmap_compile_opts o = {0};
    o.arch = s ? s->arch : NULL;
    o.options = s ? s->option : NULL;
    o.noptions = s ? s->noption : 0;
    o.include_dirs = s ? s->include : NULL;
    o.ninclude_dirs = s ? s->ninclude : 0;
    o.names = kernel ? &kernel : NULL;
    o.nnames = kernel ? 1 : 0;
    tmap_compiled c;
    tmap_status st = tmap_compile(text, path, &o, &c, err);
    if (st != TMAP_OK)
        return st;
    char name[4096];
    tmap_ptx_describe(name, sizeof name, "PTX compiled by NVRTC from %s", path);
    st = tmap_ptx_parse(c.ptx, strlen(c.ptx), name, m, err);
    const char *lowered = kernel ? tmap_compiled_lowered(&c, kernel) : NULL;
    if (st == TMAP_OK && kernel && !lowered)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: NVRTC did not resolve kernel '%s'", path,
                       kernel);
    if (st == TMAP_OK && kernel && !(*entry = strdup(lowered)))
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (st != TMAP_OK) {
        tmap_ptx_free(*m);
        *m = NULL;
    }
    tmap_compiled_free(&c);
    return st;
}

tmap_status tmap_cli_load_source(const char *path, const tmap_cli_source *s,
                                 const char *kernel, tmap_ptx_module **m, char **entry,
                                 tmap_error *err)
{
    *m = NULL;
    if (entry)
        *entry = NULL;
    char *text = NULL;
    size_t len = 0;
    tmap_status st = tmap_file_read(path, &text, &len, err);
    if (st != TMAP_OK)
        return st;
    if (is_cuda(path)) {
        st = load_cuda(path, text, s, entry ? kernel : NULL, m, entry, err);
    } else {
        st = tmap_ptx_parse(text, len, path, m, err);
        if (st == TMAP_OK && kernel && entry && !(*entry = strdup(kernel)))
            st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    free(text);
    if (st == TMAP_OK && tmap_ptx_num_kernels(*m) == 0) {
        tmap_ptx_free(*m);
        *m = NULL;
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: no kernel (.entry / __global__) in it", path);
    }
    return st;
}

int tmap_cli_each_kernel(const tmap_args *a, const tmap_cli_input *in, tmap_cli_kernel_fn fn,
                         void *ctx)
{
    tmap_error err;
    tmap_ptx_module *m = NULL;
    char *only = NULL;
    const char *path = in->path;
    if (tmap_cli_load_source(path, &in->src, in->kernel, &m, &only, &err) != TMAP_OK)
        return tmap_cli_fail_v(a->cmd, &err, in->verbose);
    /* quiet: the work is done (and checked), the JSON left unprinted */
    json_t *kernels = a->json || a->quiet ? json_array() : NULL;
    tmap_status st = TMAP_OK;
    int found = 0;
    for (size_t k = 0; k < tmap_ptx_num_kernels(m) && st == TMAP_OK; k++) {
        const char *name = tmap_ptx_kernel_name(m, k);
        if (only && strcmp(only, name))
            continue;
        found = 1;
        st = fn(m, name, kernels, ctx, &err);
    }
    if (st == TMAP_OK && only && !found)
        st = tmap_fail(&err, TMAP_ERR_INVALID, "%s: no kernel named '%s'", path, only);
    int rc = st == TMAP_OK ? TMAP_EXIT_OK : tmap_cli_fail(a->cmd, &err);
    if (st == TMAP_OK && a->json)
        rc = tmap_cli_print_json(a->cmd, json_pack("{s:s, s:O}", "file", path, "kernels",
                                                   kernels));
    json_decref(kernels);
    tmap_ptx_free(m);
    free(only);
    return rc;
}

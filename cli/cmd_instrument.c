/*
 * cmd_instrument.c -- `threadmap instrument`: writes PTX with per-thread
 * basic-block counters and the table of counted blocks.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"
#include "cli/ptx_input.h"
#include "common/base.h"

static const char usage_text[] =
    "usage: threadmap instrument IN.{ptx,cu} -o OUT.ptx [--kernel NAME]\n"
    "                            [--blocks FILE.json | --redirect] [--json] [-q]\n"
    "                            [--arch ARCH] [-I DIR]... [--option OPT]... [-v]\n"
    "\n"
    "Adds per-thread basic-block counters to each kernel (or to NAME) and to\n"
    "every .func it calls.  At run time set the module globals __tmap_bbv_base\n"
    "(.u64 device pointer to nblocks * nslots u32 counters, zeroed) and\n"
    "__tmap_bbv_sample (.u32, count thread blocks whose linear id % sample == 0;\n"
    "default 1); thread slot t counts block b at counter[b * nslots + t];\n"
    "nslots must be below 2^32.\n"
    "The kernels' parameters are unchanged.  A .func called by two kernels can\n"
    "be counted for one of them only: use --kernel then.\n"
    "\n"
    "Prints the block table (kernel, index, name, PTX line) to stdout (TSV), or\n"
    "as JSON with --json, and with --blocks writes the JSON to a file.\n"
    "\n"
    "With --redirect, writes the redirected PTX instead (no counters): each\n"
    "kernel (or NAME) reads the permutation D from the module global\n"
    "__tmap_perm (.u64 device pointer to one u32 per thread; 0: the identity)\n"
    "and thread slot i then sees the %tid/%ctaid of thread D[i].  Running\n"
    "`instrument` on that output adds counters per hardware slot.\n"
    "A .cu file is compiled with NVRTC first.  IN - reads PTX from stdin;\n"
    "-o - writes the PTX to stdout (the table is then not printed).  OUT may\n"
    "not be IN.\n"
    "\n"
    "  -o, --output FILE    where to write the PTX (required; - for stdout)\n"
    "  -k, --kernel NAME    only this kernel (for .cu also a C++ name)\n"
    "  -b, --blocks FILE    write the block table as JSON to FILE\n"
    "  -r, --redirect       apply the reference redirection, not the counters\n"
    "  --json               print the block table as JSON: {\"input\", \"output\",\n"
    "                       \"kernels\": [{\"name\", \"nblocks\", \"blocks\": [{\"index\",\n"
    "                       \"name\", \"function\", \"line\"}]}]}\n"
    "  -q, --quiet          print nothing (the files are still written)\n"
    TMAP_CLI_SOURCE_USAGE
    "  -h, --help           this text\n"
    "\n"
    "example: threadmap instrument examples/divergent/recorded/kernel.ptx -o counted.ptx\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

static json_t *blocks_json(const tmap_cfg *cfg, const char *kernel)
{
    json_t *blocks = json_array();
    for (size_t i = 0; i < cfg->nblocks; i++) {
        const tmap_cfg_block *b = &cfg->blocks[i];
        json_array_append_new(blocks, json_pack("{s:I, s:s, s:s, s:I}", "index", (json_int_t)i,
                                                "name", b->name, "function",
                                                cfg->funcs[b->func].name, "line",
                                                (json_int_t)b->line));
    }
    return json_pack("{s:s, s:I, s:o}", "name", kernel, "nblocks", (json_int_t)cfg->nblocks,
                     "blocks", blocks);
}

static void print_blocks(const tmap_cfg *cfg, const char *kernel)
{
    for (size_t i = 0; i < cfg->nblocks; i++)
        printf("%s\t%zu\t%s\t%u\n", kernel, i, cfg->blocks[i].name, cfg->blocks[i].line);
}

/* Instruments the selected kernels, appending their tables to `table`. */
static tmap_status instrument_all(tmap_ptx_module *m, const char *path, const char *only,
                                  int redirect, json_t *table, int to_stdout, tmap_error *err)
{
    size_t nk = tmap_ptx_num_kernels(m);
    char **names = calloc(nk ? nk : 1, sizeof *names);
    if (!names)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    /* kernel names first: instrumenting does not add kernels, but keep the
     * loop independent of the module it changes */
    for (size_t k = 0; k < nk; k++)
        names[k] = (char *)tmap_ptx_kernel_name(m, k);
    tmap_status st = TMAP_OK;
    int found = 0;
    for (size_t k = 0; k < nk && st == TMAP_OK; k++) {
        if (only && strcmp(only, names[k]))
            continue;
        found = 1;
        if (redirect) {
            st = tmap_redirect_instrument(m, names[k], err);
            continue;
        }
        tmap_cfg *cfg = NULL;
        st = tmap_bbv_instrument(m, names[k], &cfg, err);
        if (st != TMAP_OK)
            break;
        if (to_stdout)
            print_blocks(cfg, names[k]);
        json_array_append_new(table, blocks_json(cfg, names[k]));
        tmap_cfg_free(cfg);
    }
    free(names);
    if (st == TMAP_OK && only && !found)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: no kernel named '%s'", path, only);
    return st;
}

typedef struct job {
    tmap_cli_input in;
    const char *out, *blocks_path;
    int redirect;
} job;

/* The block table as JSON: into the --blocks file, and printed with --json. */
static tmap_status write_table(const tmap_args *a, const job *j, json_t *table, tmap_error *err)
{
    json_t *doc = json_pack("{s:s, s:s, s:O}", "input", j->in.path, "output", j->out, "kernels",
                            table);
    char *s = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
    json_decref(doc);
    tmap_status st = s ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory writing JSON");
    if (!st && j->blocks_path)
        st = tmap_file_write(j->blocks_path, s, strlen(s), err);
    if (!st && a->json && printf("%s\n", s) < 0)
        st = tmap_fail(err, TMAP_ERR_IO, "writing to stdout failed");
    free(s);
    return st;
}

static int run(const tmap_args *a, const job *j)
{
    tmap_error err;
    tmap_ptx_module *m = NULL;
    char *only = NULL;
    const char *in = j->in.path, *out = j->out, *blocks_path = j->blocks_path;
    if (tmap_cli_load_source(in, &j->in.src, j->in.kernel, &m, &only, &err) != TMAP_OK)
        return tmap_cli_fail_v("instrument", &err, j->in.verbose);
    json_t *table = json_array();
    char *text = NULL;
    tmap_status st = instrument_all(m, in, only, j->redirect, table,
                                    !a->quiet && !a->json && !j->redirect, &err);
    if (st == TMAP_OK)
        st = tmap_ptx_print(m, &text, &err);
    if (st == TMAP_OK)
        st = tmap_file_write(out, text, strlen(text), &err);
    if (st == TMAP_OK && !j->redirect && (blocks_path || a->json))
        st = write_table(a, j, table, &err);
    free(text);
    free(only);
    json_decref(table);
    tmap_ptx_free(m);
    return st == TMAP_OK ? TMAP_EXIT_OK : tmap_cli_fail("instrument", &err);
}

/* instrument's own options, into *(job *)ctx. */
static int job_option(tmap_args *a, int c, void *ctx)
{
    job *j = ctx;
    switch (c) {
    case 'o': j->out = tmap_args_output(a, optarg); return 0;
    case 'b': j->blocks_path = tmap_args_output(a, optarg); return 0;
    case 'r': j->redirect = 1; return 0;
    default: return tmap_args_bad(a, "unexpected option %s", a->opt);
    }
}

int tmap_cmd_instrument(int argc, char **argv)
{
    static const struct option opts[] = {TMAP_ARGS_OUTPUT,
                                          {"kernel", required_argument, NULL, 'k'},
                                          {"blocks", required_argument, NULL, 'b'},
                                          {"redirect", no_argument, NULL, 'r'},
                                          TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON,
                                          TMAP_CLI_SOURCE_OPTIONS,
                                          {NULL, 0, NULL, 0}};
    job j = {0};
    tmap_args a;
    tmap_args_init(&a, "instrument", usage, argc, argv, opts, "o:k:b:rI:vhq");
    if (tmap_cli_input_args(&a, job_option, &j, &j.in))
        return a.rc;
    if (!j.out)
        return tmap_args_bad(&a, "give -o OUT.ptx (- for stdout)"), a.rc;
    if (j.redirect && (j.blocks_path || a.json))
        return tmap_args_bad(&a, "--redirect writes no block table: no --blocks or --json"), a.rc;
    return run(&a, &j);
}

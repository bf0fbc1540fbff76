/*
 * cmd_cfg.c -- `threadmap cfg`: prints the basic blocks, edges and
 * post-dominators of kernels as text, Graphviz dot or JSON.
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
    "usage: threadmap cfg FILE.{ptx,cu} [--kernel NAME] [--format text|dot|json] [--json]\n"
    "                     [-q] [--arch ARCH] [-I DIR]... [--option OPT]... [-v]\n"
    "\n"
    "Prints the control-flow graph of each kernel (or of NAME) and of every\n"
    ".func it calls: blocks (index, name, PTX line, the source line when the\n"
    "PTX has .loc lines (nvcc -lineinfo), instruction count, and in text mode\n"
    "the opcodes), successor edges and immediate post-dominators (-1: the\n"
    "virtual exit).  Block indices are the BBV columns.\n"
    "\n"
    "A .cu file is compiled with NVRTC first; PTX lines then refer to the\n"
    "generated PTX.  FILE - reads PTX from stdin.\n"
    "\n"
    "  -k, --kernel NAME    only this kernel (its .entry name; for .cu also a\n"
    "                       C++ name such as ns::k<int>)\n"
    "  -f, --format FMT     text (default), dot (Graphviz) or json\n"
    "  --json               the same as --format json: {\"file\", \"kernels\": [{\"name\",\n"
    "                       \"functions\", \"blocks\"}]}\n"
    "  -q, --quiet          print nothing: only check that the CFGs build\n"
    TMAP_CLI_SOURCE_USAGE
    "  -h, --help           this text\n"
    "\n"
    "example: threadmap cfg examples/divergent/recorded/kernel.ptx --format dot | dot -Tsvg\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

static const char *term_name(tmap_term t)
{
    switch (t) {
    case TMAP_TERM_FALL: return "fall";
    case TMAP_TERM_BRA: return "bra";
    case TMAP_TERM_CBRA: return "cbra";
    case TMAP_TERM_BRX: return "brx";
    case TMAP_TERM_RET: return "ret";
    case TMAP_TERM_EXIT: return "exit";
    case TMAP_TERM_TRAP: return "trap";
    }
    return "?";
}

static void print_text(const tmap_cfg *cfg, const char *kernel)
{
    printf("kernel %s: %zu blocks in %zu functions\n", kernel, cfg->nblocks, cfg->nfuncs);
    for (size_t i = 0; i < cfg->nblocks; i++) {
        const tmap_cfg_block *b = &cfg->blocks[i];
        char src[256];
        tmap_ptx_loc_format(b->src_file, b->src_line, src, sizeof src);
        printf("  %zu %s line %u%s%s%s, %u instr, %s%s ->", i, b->name, b->line,
               *src ? " (" : "", src, *src ? ")" : "", b->ninstr,
               b->predicated_term ? "guarded " : "", term_name(b->term));
        for (uint32_t k = 0; k < b->nsucc; k++)
            printf(" %u", b->succ[k]);
        printf("; ipdom %d\n     ", b->ipdom);
        for (uint32_t k = 0; k < b->ninstr; k++)
            printf(" %s", b->opcodes[k]);
        printf("\n");
    }
}

static void print_dot(const tmap_cfg *cfg, const char *kernel)
{
    printf("digraph \"%s\" {\n  node [shape=box];\n", kernel);
    for (size_t i = 0; i < cfg->nblocks; i++) {
        const tmap_cfg_block *b = &cfg->blocks[i];
        char src[256];
        tmap_ptx_loc_format(b->src_file, b->src_line, src, sizeof src);
        printf("  b%zu [label=\"%zu %s\\nline %u%s%s, %u instr\"];\n", i, i, b->name, b->line,
               *src ? ", " : "", src, b->ninstr);
        for (uint32_t k = 0; k < b->nsucc; k++)
            printf("  b%zu -> b%u;\n", i, b->succ[k]);
        if (b->ipdom >= 0)
            printf("  b%zu -> b%d [style=dotted, color=gray, constraint=false];\n", i,
                   b->ipdom);
    }
    printf("}\n");
}

/* {"file": as .file gives it, "line"}, or null without a source line. */
static json_t *source_json(const tmap_cfg_block *b)
{
    if (!b->src_file || !b->src_line)
        return json_null();
    return json_pack("{s:s, s:I}", "file", b->src_file, "line", (json_int_t)b->src_line);
}

static json_t *cfg_json(const tmap_cfg *cfg, const char *kernel)
{
    json_t *funcs = json_array(), *blocks = json_array();
    for (size_t i = 0; i < cfg->nfuncs; i++) {
        const tmap_cfg_func *f = &cfg->funcs[i];
        json_array_append_new(funcs, json_pack("{s:s, s:b, s:I, s:I}", "name", f->name,
                                               "is_entry", f->is_entry, "first_block",
                                               (json_int_t)f->first_block, "nblocks",
                                               (json_int_t)f->nblocks));
    }
    for (size_t i = 0; i < cfg->nblocks; i++) {
        const tmap_cfg_block *b = &cfg->blocks[i];
        json_t *ops = json_array(), *succ = json_array();
        for (uint32_t k = 0; k < b->ninstr; k++)
            json_array_append_new(ops, json_string(b->opcodes[k]));
        for (uint32_t k = 0; k < b->nsucc; k++)
            json_array_append_new(succ, json_integer(b->succ[k]));
        json_array_append_new(
            blocks, json_pack("{s:I, s:s, s:I, s:I, s:I, s:o, s:s, s:b, s:o, s:I, s:o}", "index",
                              (json_int_t)i, "name", b->name, "func", (json_int_t)b->func,
                              "line", (json_int_t)b->line, "ninstr", (json_int_t)b->ninstr,
                              "opcodes", ops, "term", term_name(b->term), "predicated",
                              b->predicated_term, "succ", succ, "ipdom",
                              (json_int_t)b->ipdom, "source", source_json(b)));
    }
    return json_pack("{s:s, s:o, s:o}", "name", kernel, "functions", funcs, "blocks", blocks);
}

typedef enum { FMT_TEXT, FMT_DOT, FMT_JSON } cfg_format;

/* One kernel's CFG, printed in the chosen format (JSON: into kernels). */
static tmap_status one_kernel(tmap_ptx_module *m, const char *name, json_t *kernels, void *ctx,
                              tmap_error *err)
{
    cfg_format fmt = kernels ? FMT_JSON : *(const cfg_format *)ctx;
    tmap_cfg *cfg = NULL;
    tmap_status st = tmap_cfg_build(m, name, &cfg, err);
    if (st != TMAP_OK)
        return st;
    if (fmt == FMT_TEXT)
        print_text(cfg, name);
    else if (fmt == FMT_DOT)
        print_dot(cfg, name);
    else
        json_array_append_new(kernels, cfg_json(cfg, name));
    tmap_cfg_free(cfg);
    return TMAP_OK;
}

/* cfg's own option: -f FMT into *(cfg_format *)fmt. */
static int format_option(tmap_args *a, int c, void *fmt)
{
    static const char *const names[] = {"text", "dot", "json"}; /* cfg_format order */
    int i;
    if (c != 'f')
        return tmap_args_bad(a, "unexpected option %s", a->opt);
    if (tmap_args_choice(a, names, 3, &i))
        return -1;
    *(cfg_format *)fmt = (cfg_format)i;
    return 0;
}

int tmap_cmd_cfg(int argc, char **argv)
{
    static const struct option opts[] = {{"kernel", required_argument, NULL, 'k'},
                                          {"format", required_argument, NULL, 'f'},
                                          TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON,
                                          TMAP_CLI_SOURCE_OPTIONS,
                                          {NULL, 0, NULL, 0}};
    cfg_format fmt = FMT_TEXT;
    tmap_cli_input in;
    tmap_args a;
    tmap_args_init(&a, "cfg", usage, argc, argv, opts, "k:f:I:vhq");
    if (tmap_cli_input_args(&a, format_option, &fmt, &in))
        return a.rc;
    a.json |= fmt == FMT_JSON;
    return tmap_cli_each_kernel(&a, &in, one_kernel, &fmt);
}

/*
 * cmd_latency.c -- `threadmap latency`: measures the per-opcode latency
 * table on the present GPU (--measure), prints one generated microbenchmark
 * (--print-ptx, no GPU needed) or lists the opcodes measured (--list, as
 * TSV or JSON).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cliutil.h"
#include "cli/commands.h"
#include "threadmap/latency_tables.h"
#include "threadmap/model.h"
#include "common/base.h"

typedef enum { MODE_NONE, MODE_MEASURE, MODE_PRINT_PTX, MODE_LIST } mode;

typedef struct latency_args {
    mode mode;
    const char *output;     /* -o FILE; NULL: stdout */
    int reps;               /* 0: the library's default */
    int device;
    const char *opcode;     /* --print-ptx */
    unsigned steps;         /* --n */
    const char *arch;       /* --arch */
    char *only;             /* --only a,b,c (copy, split in place) */
    const char *base;       /* --base FILE or "none"; NULL: the default table */
} latency_args;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: threadmap latency --measure [-o FILE] [--reps N] [--device N] [--only OPS]\n"
            "                         [--base FILE|none] [-q]\n"
            "       threadmap latency --print-ptx OPCODE [--n N] [--arch sm_XY]\n"
            "       threadmap latency --list [--json]\n\n"
            "Measures the latency (cycles) of each PTX opcode on a GPU with dependent-chain\n"
            "microbenchmarks: one thread, %d and %d dependent steps between two %%clock64\n"
            "reads, latency = difference / %d, median over launches.  Suspect results\n"
            "(no growth with the chain, or not linear) are left out of the table with a\n"
            "warning, so those opcodes fall back to their class.  For register chains the\n"
            "issue interval too: the same kernels as one block of 1024 threads (8 warps per\n"
            "sub-partition), written where that made the issue the bottleneck.  Then the\n"
            "memory parameters of the SM model, as sm: lines: L2 and DRAM load latency\n"
            "(random pointer chases), L2 and DRAM bytes per SM cycle (all SMs streaming)\n"
            "and gathered L2 sectors per cycle, the L2's two rates for one SM alone, and\n"
            "the constant cache's size and cycles per address under load, within it and\n"
            "past it, and the L1's room for local rows.\n"
            "docs/latency.md explains.\n\n"
            "  --measure        measure on the GPU; progress on stderr, the table (TSV) on\n"
            "                   stdout or in FILE\n"
            "  -o, --output F   write the table to F (- or none: stdout)\n"
            "  --reps N         launches per chain length (median; default 5)\n"
            "  -d, --device N   GPU ordinal (default 0)\n"
            "  --only OPS       measure only these comma-separated opcodes and memory keys\n"
            "                   (sm:l2.latency, sm:dram.latency, sm:l2.bytes_per_cycle,\n"
            "                   sm:dram.bytes_per_cycle, sm:l2.gather_sectors_per_cycle,\n"
            "                   sm:l2.one_sm.bytes_per_cycle,\n"
            "                   sm:l2.one_sm.gather_sectors_per_cycle, sm:const.cache_bytes,\n"
            "                   sm:const.idc_cycles, sm:const.idc_fill_cycles,\n"
            "                   sm:l1.local_bytes)\n"
            "  --base FILE      keep FILE's lines for opcodes and classes not measured (-: stdin)\n"
            "                   (default: the installed table of the GPU's arch, if any;\n"
            "                   'none': keep nothing)\n"
            "  -q, --quiet      no progress on stderr, only the warnings about suspect\n"
            "                   results (with --list or --print-ptx: print nothing)\n"
            "  --print-ptx OP   print the microbenchmark kernel of opcode OP (no GPU needed)\n"
            "  --n N            its chain length in steps (default %d)\n"
            "  --arch sm_XY     its target (default sm_90)\n"
            "  --list           list the opcodes measured, their class and chain (TSV)\n"
            "  --json           with --list: a JSON array of {opcode, class, chain,\n"
            "                   min_arch} instead\n"
            "  -h, --help       this text\n\n"
            "exit codes: 0 ok, 1 failed, 2 bad usage, 3 no GPU/driver (--measure)\n"
            "example: threadmap latency --measure -o latency_tables/sm_90.tsv\n",
            TMAP_LATENCY_SHORT, TMAP_LATENCY_LONG, TMAP_LATENCY_LONG - TMAP_LATENCY_SHORT,
            TMAP_LATENCY_SHORT);
}

enum { OPT_MEASURE = 0x1800, OPT_LIST, OPT_PRINT_PTX, OPT_BASE, OPT_ARCH, OPT_ONLY, OPT_REPS,
       OPT_N };

static int set_mode(tmap_args *t, latency_args *a, mode m)
{
    if (a->mode != MODE_NONE && a->mode != m)
        return tmap_args_bad(t, "%s cannot be combined with another mode", t->opt);
    a->mode = m;
    return 0;
}

/* One option (value in optarg): 0 taken, -1 stop. */
static int parse_one(tmap_args *t, latency_args *a, int c)
{
    long n = 0;
    switch (c) {
    case OPT_MEASURE: return set_mode(t, a, MODE_MEASURE);
    case OPT_LIST: return set_mode(t, a, MODE_LIST);
    case OPT_PRINT_PTX: a->opcode = optarg; return set_mode(t, a, MODE_PRINT_PTX);
    case 'o': a->output = tmap_args_output(t, optarg); return 0;
    case OPT_BASE: a->base = strcmp(optarg, "none") ? tmap_args_input(t, optarg) : optarg; return 0;
    case OPT_ARCH: a->arch = optarg; return 0;
    case OPT_ONLY:
        if (!*optarg)
            return tmap_args_bad(t, "--only needs opcodes");
        free(a->only);
        return (a->only = strdup(optarg)) ? 0 : tmap_args_bad(t, "out of memory");
    case OPT_REPS: if (tmap_args_long(t, 1, 65536, &n)) return -1; a->reps = (int)n; return 0;
    case OPT_N: if (tmap_args_long(t, 1, 65536, &n)) return -1; a->steps = (unsigned)n; return 0;
    case 'd': if (tmap_args_long(t, 0, 1024, &n)) return -1; a->device = (int)n; return 0;
    default: return tmap_args_bad(t, "unexpected option %s", t->opt);
    }
}

/* Splits a->only at commas into ops (at most max); returns the count. */
static size_t split_only(char *only, const char **ops, size_t max)
{
    size_t n = 0;
    for (char *tok = strtok(only, ","); tok && n < max; tok = strtok(NULL, ","))
        ops[n++] = tok;
    return n;
}

/* user: the int -q flag; quiet still prints the warnings. */
static void progress_to_stderr(void *user, size_t i, size_t total, const char *line)
{
    if (!*(const int *)user || !strncmp(line, "warning: ", 9))
        fprintf(stderr, "threadmap latency: [%zu/%zu] %s\n", i + 1, total, line);
}

/* The base table: --base FILE, nothing for "none", else the default table
 * of the GPU's architecture when one is installed. */
static tmap_status load_base(tmap_cuda *c, const char *flag, int quiet, tmap_lat_table **out,
                             tmap_error *err)
{
    char path[4096], arch[16];
    tmap_device_info d;
    *out = NULL;
    if (flag && !strcmp(flag, "none"))
        return TMAP_OK;
    if (flag)
        return tmap_lat_load(flag, out, err);
    tmap_status st = tmap_cuda_info(c, &d, err);
    if (st != TMAP_OK)
        return st;
    snprintf(arch, sizeof arch, "sm_%d%d", d.cc_major, d.cc_minor);
    if (tmap_lat_default_path(arch, path, sizeof path, NULL) != TMAP_OK)
        return TMAP_OK; /* no table for this GPU yet: nothing to keep */
    if (!quiet)
        fprintf(stderr, "threadmap latency: keeping unmeasured entries of %s\n", path);
    return tmap_lat_load(path, out, err);
}

static int do_measure(const tmap_args *t, const latency_args *a)
{
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    const char *ops[256];
    tmap_latency_measure_opts o = {0};
    o.reps = a->reps;
    o.progress = progress_to_stderr;
    o.user = (void *)&t->quiet;
    if (a->only) {
        o.only = ops;
        o.nonly = split_only(a->only, ops, sizeof ops / sizeof ops[0]);
    }
    char *table = NULL;
    tmap_status st = tmap_cuda_open(a->device, &c, &err);
    if (st == TMAP_ERR_NO_DEVICE)
        tmap_error_prefix(&err, "--measure needs a GPU");
    tmap_lat_table *base = NULL;
    if (st == TMAP_OK)
        st = load_base(c, a->base, t->quiet, &base, &err);
    o.base = base;
    if (st == TMAP_OK)
        st = tmap_latency_measure(c, &o, &table, &err);
    tmap_lat_free(base);
    if (st == TMAP_OK && a->output)
        st = tmap_file_write(a->output, table, strlen(table), &err);
    else if (st == TMAP_OK && (fputs(table, stdout) == EOF || fflush(stdout) != 0))
        st = tmap_fail(&err, TMAP_ERR_IO, "writing the table to stdout failed");
    free(table);
    tmap_cuda_close(c);
    if (st != TMAP_OK)
        return tmap_cli_fail("latency", &err);
    if (a->output && !t->quiet)
        fprintf(stderr, "threadmap latency: table written to %s\n", a->output);
    return TMAP_EXIT_OK;
}

static int do_print_ptx(const tmap_args *t, const latency_args *a)
{
    tmap_error err = {0};
    char *ptx = NULL;
    tmap_status st = tmap_latency_ptx(a->opcode, a->steps ? a->steps : TMAP_LATENCY_SHORT,
                                      a->arch ? a->arch : "sm_90", &ptx, &err);
    if (st != TMAP_OK)
        return st == TMAP_ERR_INVALID ? (fprintf(stderr, "threadmap latency: %s (see threadmap "
                                                  "latency --help)\n", err.message),
                                          TMAP_EXIT_USAGE)
                                      : tmap_cli_fail("latency", &err);
    if (!t->quiet)
        fputs(ptx, stdout);
    free(ptx);
    return TMAP_EXIT_OK;
}

/* --list --json: [{"opcode", "class", "chain", "min_arch"}, ...] */
static int list_json(const tmap_latency_probe *list, size_t n)
{
    json_t *arr = json_array();
    char arch[16];
    for (size_t i = 0; arr && i < n; i++)
        for (int j = 0; j < 2 && list[i].opcodes[j]; j++) {
            snprintf(arch, sizeof arch, "sm_%u", list[i].min_sm);
            json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s}", "opcode",
                                                 list[i].opcodes[j], "class", list[i].cls,
                                                 "chain", list[i].chain, "min_arch", arch));
        }
    return tmap_cli_print_json("latency", arr);
}

static int do_list(const tmap_args *t)
{
    size_t n = 0;
    const tmap_latency_probe *list = tmap_latency_probes(&n);
    if (t->json)
        return list_json(list, n);
    if (t->quiet)
        return TMAP_EXIT_OK;
    printf("# opcode\tclass\tchain\n");
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 2 && list[i].opcodes[j]; j++) {
            printf("%s\t%s\t%s", list[i].opcodes[j], list[i].cls, list[i].chain);
            if (list[i].min_sm > 75)
                printf(" (needs sm_%u)", list[i].min_sm);
            printf("\n");
        }
    return TMAP_EXIT_OK;
}

/* The flags that go with one mode only. */
static int check_modes(tmap_args *t, const latency_args *a)
{
    if (a->mode == MODE_NONE)
        return tmap_args_bad(t, "say --measure, --print-ptx OPCODE or --list");
    if (a->mode != MODE_MEASURE && (a->output || a->reps || a->only || a->base))
        return tmap_args_bad(t, "-o, --reps, --only and --base go with --measure");
    if (a->mode != MODE_LIST && t->json)
        return tmap_args_bad(t, "--json goes with --list");
    if (a->mode != MODE_PRINT_PTX && (a->steps || a->arch))
        return tmap_args_bad(t, "--n and --arch go with --print-ptx");
    return tmap_args_operands(t, 0, 0) || tmap_args_files(t);
}

int tmap_cmd_latency(int argc, char **argv)
{
    static const struct option opts[] = {
        {"measure", 0, 0, OPT_MEASURE}, {"list", 0, 0, OPT_LIST},
        {"print-ptx", 1, 0, OPT_PRINT_PTX}, {"base", 1, 0, OPT_BASE},
        {"arch", 1, 0, OPT_ARCH}, {"only", 1, 0, OPT_ONLY}, {"reps", 1, 0, OPT_REPS},
        {"n", 1, 0, OPT_N}, {"device", 1, 0, 'd'}, TMAP_ARGS_OUTPUT, TMAP_ARGS_QUIET,
        TMAP_ARGS_JSON, TMAP_ARGS_HELP, {0}};
    latency_args a = {0};
    tmap_args t;
    tmap_args_init(&t, "latency", usage, argc, argv, opts, "o:d:qh");
    int c;
    while ((c = tmap_args_next(&t)) > 0 && parse_one(&t, &a, c) == 0)
        ;
    int rc = c != 0 || check_modes(&t, &a) ? t.rc
           : a.mode == MODE_MEASURE        ? do_measure(&t, &a)
           : a.mode == MODE_PRINT_PTX      ? do_print_ptx(&t, &a)
                                           : do_list(&t);
    free(a.only);
    return rc;
}

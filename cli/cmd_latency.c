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
    int quiet;              /* -q: only warnings on stderr (--measure) */
    int json;               /* --json (--list) */
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
            "warning, so those opcodes fall back to their class.  docs/latency.md explains.\n\n"
            "  --measure        measure on the GPU; progress on stderr, the table (TSV) on\n"
            "                   stdout or in FILE\n"
            "  -o, --output F   write the table to F\n"
            "  --reps N         launches per chain length (median; default 5)\n"
            "  --device N       GPU ordinal (default 0)\n"
            "  --only OPS       measure only these comma-separated opcodes\n"
            "  --base FILE      keep FILE's lines for opcodes and classes not measured\n"
            "                   (default: the installed table of the GPU's arch, if any;\n"
            "                   'none': keep nothing)\n"
            "  -q, --quiet      no progress on stderr, only the warnings about suspect\n"
            "                   results\n"
            "  --print-ptx OP   print the microbenchmark kernel of opcode OP (no GPU needed)\n"
            "  --n N            its chain length in steps (default %d)\n"
            "  --arch sm_XY     its target (default sm_90)\n"
            "  --list           list the opcodes measured, their class and chain (TSV)\n"
            "  --json           with --list: a JSON array of {opcode, class, chain,\n"
            "                   min_arch} instead\n\n"
            "exit codes: 0 ok, 1 failed, 2 bad usage, 3 no GPU/driver (--measure)\n",
            TMAP_LATENCY_SHORT, TMAP_LATENCY_LONG, TMAP_LATENCY_LONG - TMAP_LATENCY_SHORT,
            TMAP_LATENCY_SHORT);
}

static int bad_usage(const char *fmt, const char *what)
{
    fprintf(stderr, "threadmap latency: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, " (see threadmap latency --help)\n");
    return TMAP_EXIT_USAGE;
}

/* Parses a whole non-negative decimal number no greater than max. */
static int parse_count(const char *s, long max, long *v)
{
    char *end = NULL;
    if (!s || !*s)
        return 0;
    *v = strtol(s, &end, 10);
    return *end == '\0' && *v >= 0 && *v <= max;
}

static int set_mode(latency_args *a, mode m, const char *flag)
{
    if (a->mode != MODE_NONE && a->mode != m)
        return bad_usage("%s cannot be combined with another mode", flag);
    a->mode = m;
    return TMAP_EXIT_OK;
}

static int set_flag(int *flag)
{
    *flag = 1;
    return TMAP_EXIT_OK;
}

/* Takes the value of flag argv[*i] (advancing *i). */
static const char *value(int argc, char **argv, int *i)
{
    return *i + 1 < argc ? argv[++*i] : NULL;
}

static int parse_one(latency_args *a, int argc, char **argv, int *i)
{
    const char *f = argv[*i], *v = NULL;
    long n = 0;
    if (!strcmp(f, "--measure"))
        return set_mode(a, MODE_MEASURE, f);
    if (!strcmp(f, "--list"))
        return set_mode(a, MODE_LIST, f);
    if (!strcmp(f, "-q") || !strcmp(f, "--quiet"))
        return set_flag(&a->quiet);
    if (!strcmp(f, "--json"))
        return set_flag(&a->json);
    if (!strcmp(f, "--print-ptx")) {
        if (!(a->opcode = value(argc, argv, i)))
            return bad_usage("%s needs an opcode", f);
        return set_mode(a, MODE_PRINT_PTX, f);
    }
    if (!strcmp(f, "-o") || !strcmp(f, "--output"))
        return (a->output = value(argc, argv, i)) ? 0 : bad_usage("%s needs a file name", f);
    if (!strcmp(f, "--base"))
        return (a->base = value(argc, argv, i)) ? 0 : bad_usage("%s needs a file or none", f);
    if (!strcmp(f, "--arch"))
        return (a->arch = value(argc, argv, i)) ? 0 : bad_usage("%s needs sm_XY", f);
    if (!strcmp(f, "--only")) {
        if (!(v = value(argc, argv, i)) || !*v)
            return bad_usage("%s needs opcodes", f);
        free(a->only);
        a->only = strdup(v);
        return a->only ? 0 : bad_usage("%s", "out of memory");
    }
    if (!strcmp(f, "--reps") || !strcmp(f, "--device") || !strcmp(f, "--n")) {
        v = value(argc, argv, i);
        if (!parse_count(v, 65536, &n))
            return bad_usage("%s needs a whole number in range", f);
        if (!strcmp(f, "--reps"))
            a->reps = (int)n;
        else if (!strcmp(f, "--device"))
            a->device = (int)n;
        else
            a->steps = (unsigned)n;
        return (!strcmp(f, "--device") || n > 0) ? 0 : bad_usage("%s must be positive", f);
    }
    return bad_usage("unknown argument '%s'", f);
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

static int do_measure(const latency_args *a)
{
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    const char *ops[256];
    tmap_latency_measure_opts o = {0};
    o.reps = a->reps;
    o.progress = progress_to_stderr;
    o.user = (void *)&a->quiet;
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
        st = load_base(c, a->base, a->quiet, &base, &err);
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
    if (a->output && !a->quiet)
        fprintf(stderr, "threadmap latency: table written to %s\n", a->output);
    return TMAP_EXIT_OK;
}

static int do_print_ptx(const latency_args *a)
{
    tmap_error err = {0};
    char *ptx = NULL;
    tmap_status st = tmap_latency_ptx(a->opcode, a->steps ? a->steps : TMAP_LATENCY_SHORT,
                                      a->arch ? a->arch : "sm_90", &ptx, &err);
    if (st != TMAP_OK)
        return st == TMAP_ERR_INVALID ? (fprintf(stderr, "threadmap latency: %s\n", err.message),
                                          TMAP_EXIT_USAGE)
                                      : tmap_cli_fail("latency", &err);
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

static int do_list(const latency_args *a)
{
    size_t n = 0;
    const tmap_latency_probe *list = tmap_latency_probes(&n);
    if (a->json)
        return list_json(list, n);
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

int tmap_cmd_latency(int argc, char **argv)
{
    latency_args a = {0};
    int rc = TMAP_EXIT_OK;
    for (int i = 1; i < argc && rc == TMAP_EXIT_OK; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(a.only);
            return TMAP_EXIT_OK;
        }
        rc = parse_one(&a, argc, argv, &i);
    }
    if (rc == TMAP_EXIT_OK && a.mode == MODE_NONE)
        rc = bad_usage("%s", "say --measure, --print-ptx OPCODE or --list");
    if (rc == TMAP_EXIT_OK && a.mode != MODE_MEASURE &&
        (a.output || a.reps || a.only || a.base || a.quiet))
        rc = bad_usage("%s", "-o, --reps, --only, --base and -q go with --measure");
    if (rc == TMAP_EXIT_OK && a.mode != MODE_LIST && a.json)
        rc = bad_usage("%s", "--json goes with --list");
    if (rc == TMAP_EXIT_OK && a.mode != MODE_PRINT_PTX && (a.steps || a.arch))
        rc = bad_usage("%s", "--n and --arch go with --print-ptx");
    if (rc == TMAP_EXIT_OK)
        rc = a.mode == MODE_MEASURE     ? do_measure(&a)
             : a.mode == MODE_PRINT_PTX ? do_print_ptx(&a)
                                        : do_list(&a);
    free(a.only);
    return rc;
}

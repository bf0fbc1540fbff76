/*
 * main.c -- the `threadmap` command: dispatches to one subcommand, and
 * fails (exit 1) when what it printed on stdout could not be written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const tmap_command commands[] = {
    {"bench", tmap_cmd_bench, "reproduce the paper's evaluation: tables, speedups, plots"},
    {"check", tmap_cmd_check, "check a manifest without a GPU: kernel, arguments, arrays, features"},
    {"cfg", tmap_cmd_cfg, "print the basic blocks, edges and post-dominators of kernels"},
    {"device", tmap_cmd_device, "the GPU threadmap uses (exit 3 without one)"},
    {"estimate", tmap_cmd_estimate, "estimate kernel time and divergence metrics from a BBV"},
    {"instrument", tmap_cmd_instrument,
     "add per-thread basic-block counters (or the redirection) to PTX"},
    {"latency", tmap_cmd_latency, "measure the per-opcode latency table on the GPU"},
    {"predict", tmap_cmd_predict, "predict BBVs for new per-thread features"},
    {"profile", tmap_cmd_profile, "per-thread BBVs of a manifest's kernel, or an app's (-- ./app)"},
    {"regroup", tmap_cmd_regroup, "choose a regrouping of threads from BBVs and write it"},
    {"report", tmap_cmd_report,
     "compare the regroupings in a report (text, Markdown, JSON, HTML)"},
    {"run", tmap_cmd_run, "the whole pipeline on a new input; or regroup inside an app (-- ./app)"},
    {"safety", tmap_cmd_safety, "which regroupings keep a kernel's results, and why"},
    {"train", tmap_cmd_train, "fit the BBV regression (eq. 1) on profiling runs"},
    {"version", tmap_cmd_version, "print the version"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out,
            "usage: threadmap COMMAND [ARGS...]\n"
            "       threadmap COMMAND --help    (or threadmap help COMMAND)\n"
            "       threadmap --version         (or -V, or threadmap version)\n\n"
            "Measures, models and removes control-flow divergence in CUDA kernels\n"
            "by regrouping threads.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nexit codes: 0 ok, 1 failed, 2 bad usage, 3 no GPU/driver\n"
                 "example: threadmap cfg examples/divergent/recorded/kernel.ptx\n");
}

static const tmap_command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return &commands[i];
    return NULL;
}

/* `threadmap help [CMD]`: CMD's --help, or the list of commands. */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        usage(stdout);
        return TMAP_EXIT_OK;
    }
    const tmap_command *c = find(argv[2]);
    if (!c || argc > 3) {
        fprintf(stderr, "threadmap help: %s '%s' (see threadmap --help)\n",
                c ? "unexpected argument" : "unknown command", argv[c ? 3 : 2]);
        return TMAP_EXIT_USAGE;
    }
    char *args[] = {argv[2], "--help", NULL};
    return c->run(2, args);
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "threadmap: give a command (see threadmap --help)\n");
        return TMAP_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help"))
        return help(argc, argv);
    if (!strcmp(a, "--version") || !strcmp(a, "-V"))
        return tmap_cmd_version(argc - 1, argv + 1);
    const tmap_command *c = find(a);
    if (c)
        return c->run(argc - 1, argv + 1);
    fprintf(stderr, "threadmap: unknown command '%s' (see threadmap --help)\n", a);
    return TMAP_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    /* every write to stdout is checked here, once: a full disk or a closed
     * pipe fails the command even when the output was buffered */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == TMAP_EXIT_OK) {
        fprintf(stderr, "threadmap%s%s: writing to stdout failed: %s\n", argc > 1 ? " " : "",
                argc > 1 ? argv[1] : "", errno ? strerror(errno) : "I/O error");
        return TMAP_EXIT_FAIL;
    }
    return rc;
}

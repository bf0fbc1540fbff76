/*
 * main.c -- the `threadmap` command: dispatches to one subcommand.
 */
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
    {"profile", tmap_cmd_profile, "per-thread BBVs of a manifest's kernel on the GPU"},
    {"regroup", tmap_cmd_regroup, "choose a regrouping of threads from BBVs and write it"},
    {"report", tmap_cmd_report,
     "compare the regroupings in a report (text, Markdown, JSON, HTML)"},
    {"run", tmap_cmd_run, "the whole pipeline on a new input: predict, choose, apply, measure"},
    {"safety", tmap_cmd_safety, "which regroupings keep a kernel's results, and why"},
    {"train", tmap_cmd_train, "fit the BBV regression (eq. 1) on profiling runs"},
    {"version", tmap_cmd_version, "print the version"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out,
            "usage: threadmap COMMAND [ARGS...]\n"
            "       threadmap COMMAND --help\n\n"
            "Measures, models and removes control-flow divergence in CUDA kernels\n"
            "by regrouping threads.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nexit codes: 0 ok, 1 failed, 2 bad usage, 3 no GPU/driver\n");
}

int tmap_cli_fail(const char *cmd, const tmap_error *err)
{
    fprintf(stderr, "threadmap %s: %s\n", cmd, err->message);
    return err->status == TMAP_ERR_NO_DEVICE ? TMAP_EXIT_NO_GPU : TMAP_EXIT_FAIL;
}

int tmap_cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("threadmap %d.%d.%d\n", TMAP_VERSION_MAJOR, TMAP_VERSION_MINOR,
           TMAP_VERSION_PATCH);
    return TMAP_EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TMAP_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return TMAP_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version"))
        return tmap_cmd_version(argc - 1, argv + 1);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "threadmap: unknown command '%s' (see threadmap --help)\n", argv[1]);
    return TMAP_EXIT_USAGE;
}

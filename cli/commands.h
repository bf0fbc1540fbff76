/*
 * commands.h -- the subcommands of `threadmap`.  Each is a function
 * `int tmap_cmd_NAME(int argc, char **argv)` in cli/cmd_NAME.c, where argv[0]
 * is the subcommand's name.  Exit codes (documented in docs/cli.md):
 *   0 success, 1 the work failed (bad input, CUDA error...), 2 bad usage,
 *   3 no GPU or CUDA driver where one is needed.
 */
#ifndef TMAP_CLI_COMMANDS_H
#define TMAP_CLI_COMMANDS_H

#include "threadmap.h"

enum { TMAP_EXIT_OK = 0, TMAP_EXIT_FAIL = 1, TMAP_EXIT_USAGE = 2, TMAP_EXIT_NO_GPU = 3 };

typedef struct tmap_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} tmap_command;

/* Prints "threadmap NAME: message" to stderr as one line and returns the
 * exit code that matches err->status.  A message of several lines (NVRTC's
 * log) is shortened to its first line and first error, saying how many
 * lines -v would print; _v with verbose prints them all. */
int tmap_cli_fail(const char *cmd, const tmap_error *err);
int tmap_cli_fail_v(const char *cmd, const tmap_error *err, int verbose);

/* One line per subcommand; keep alphabetical.  Add yours here and in main.c. */
int tmap_cmd_bench(int argc, char **argv);
int tmap_cmd_check(int argc, char **argv);
int tmap_cmd_cfg(int argc, char **argv);
int tmap_cmd_device(int argc, char **argv);
int tmap_cmd_estimate(int argc, char **argv);
int tmap_cmd_instrument(int argc, char **argv);
int tmap_cmd_latency(int argc, char **argv);
int tmap_cmd_predict(int argc, char **argv);
int tmap_cmd_profile(int argc, char **argv);
int tmap_cmd_regroup(int argc, char **argv);
int tmap_cmd_report(int argc, char **argv);
int tmap_cmd_run(int argc, char **argv);
int tmap_cmd_safety(int argc, char **argv);
int tmap_cmd_train(int argc, char **argv);
int tmap_cmd_version(int argc, char **argv);

#endif

/*
 * cliutil.h -- what the subcommands share: number parsing with range
 * checks, usage errors, the device description every output carries, and
 * printing JSON.
 */
#ifndef TMAP_CLI_CLIUTIL_H
#define TMAP_CLI_CLIUTIL_H

#include <jansson.h>

#include "threadmap.h"

/* Parses a whole decimal integer in [lo, hi]; prints an error and returns
 * -1 otherwise. */
int tmap_cli_long(const char *s, long lo, long hi, long *out);
/* Parses a number; -1 and a message on bad input. */
int tmap_cli_double(const char *s, double *out);
/* If argv[*i] is `flag`, takes the next argument into *v and advances *i:
 * 1 taken, 0 another flag, -1 the value is missing (message printed). */
int tmap_cli_take(const char *cmd, const char *flag, int argc, char **argv, int *i,
                  const char **v);
/* Parses `flag`'s value v as a number in [lo, hi]; -1 and a message if not. */
int tmap_cli_number(const char *cmd, const char *flag, const char *v, double lo, double hi,
                    double *out);
/* Prints the usage text to stderr; returns TMAP_EXIT_USAGE. */
int tmap_cli_usage(const char *usage);
/* {"name", "cc", "sms", "sm_clock_mhz", "mem_clock_mhz", "driver"} */
json_t *tmap_cli_device_json(const tmap_device_info *d);
/* A number as JSON: null where it is NaN or infinite (JSON has neither). */
json_t *tmap_cli_json_num(double v);
/* A string as JSON: null where it is NULL or empty. */
json_t *tmap_cli_json_str(const char *s);
/* Prints root (an object or array; taken, NULL when building it failed) to
 * stdout, indented, reals round-tripping; returns TMAP_EXIT_OK, or
 * TMAP_EXIT_FAIL with one line on stderr. */
int tmap_cli_print_json(const char *cmd, json_t *root);

#endif

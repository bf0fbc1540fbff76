/*
 * cliutil.h -- what the subcommands share besides option parsing (args.h):
 * the device description every output carries, and printing JSON.
 */
#ifndef TMAP_CLI_CLIUTIL_H
#define TMAP_CLI_CLIUTIL_H

#include <jansson.h>

#include "threadmap.h"

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

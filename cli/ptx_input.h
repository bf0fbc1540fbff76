/*
 * ptx_input.h -- reading the PTX or CUDA file given on the command line into
 * a module; CUDA (.cu) goes through NVRTC with the shared front-end options.
 */
#ifndef TMAP_CLI_PTX_INPUT_H
#define TMAP_CLI_PTX_INPUT_H

#include <getopt.h>
#include <jansson.h>

#include "threadmap.h"

/* The NVRTC options a subcommand accepts: --arch A, -I DIR, --option OPT. */
typedef struct tmap_cli_source {
    const char *arch;
    const char *include[64];
    size_t ninclude;
    const char *option[64];
    size_t noption;
} tmap_cli_source;

/* getopt_long codes of the shared options, and their entries (add
 * TMAP_CLI_SOURCE_OPTIONS to a subcommand's option table, "I:" to its short
 * options) and usage lines. */
enum { TMAP_OPT_ARCH = 0x1000, TMAP_OPT_OPTION };
#define TMAP_CLI_SOURCE_OPTIONS                                   \
    {"arch", required_argument, NULL, TMAP_OPT_ARCH},             \
    {"include", required_argument, NULL, 'I'},                    \
    {"option", required_argument, NULL, TMAP_OPT_OPTION}
#define TMAP_CLI_SOURCE_USAGE                                                       \
    "  --arch ARCH          .cu input: NVRTC architecture (default compute_90)\n"   \
    "  -I, --include DIR    .cu input: include directory (repeatable)\n"            \
    "  --option OPT         .cu input: one more NVRTC option, e.g. -lineinfo\n"

/* Takes getopt code c with argument arg if it is a shared option: 1 taken,
 * 0 not one of them, -1 too many (a message is printed). */
int tmap_cli_source_option(tmap_cli_source *s, int c, const char *arg);

/*
 * Reads and parses path: PTX as is, or .cu compiled by NVRTC (then PTX line
 * numbers in messages refer to the generated PTX, named "PATH.ptx").  When
 * kernel is not NULL, *entry receives its .entry name (malloc'ed): for .cu
 * resolved through NVRTC name expressions, so C++ names ("ns::k<int>") work.
 */
tmap_status tmap_cli_load_source(const char *path, const tmap_cli_source *s,
                                 const char *kernel, tmap_ptx_module **m, char **entry,
                                 tmap_error *err);

/* What a subcommand does with one kernel: print it, or (when kernels is not
 * NULL) append one JSON object for it to kernels. */
typedef tmap_status (*tmap_cli_kernel_fn)(tmap_ptx_module *m, const char *name,
                                          json_t *kernels, void *ctx, tmap_error *err);

/* Loads path (tmap_cli_load_source) and runs fn on each kernel, or on
 * `kernel` only (an error if there is no such kernel); with json, prints
 * {"file": path, "kernels": [...]}.  Returns the exit code; failures are
 * reported as `threadmap CMD: message`. */
int tmap_cli_each_kernel(const char *cmd, const char *path, const tmap_cli_source *src,
                         const char *kernel, int json, tmap_cli_kernel_fn fn, void *ctx);

/* PTX only (no kernel name resolution): tmap_cli_load_source with defaults. */
tmap_status tmap_cli_load_ptx(const char *path, tmap_ptx_module **m, tmap_error *err);

#endif

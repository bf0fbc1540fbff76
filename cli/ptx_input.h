/*
 * ptx_input.h -- reading the PTX or CUDA file given on the command line into
 * a module; CUDA (.cu) goes through NVRTC with the shared front-end options.
 */
#ifndef TMAP_CLI_PTX_INPUT_H
#define TMAP_CLI_PTX_INPUT_H

#include <getopt.h>
#include <jansson.h>

#include "cli/args.h"
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
 * TMAP_CLI_SOURCE_OPTIONS to a subcommand's option table, "I:v" to its short
 * options) and usage lines. */
enum { TMAP_OPT_ARCH = TMAP_OPT_JSON + 1, TMAP_OPT_OPTION };
#define TMAP_CLI_SOURCE_OPTIONS                                   \
    {"arch", required_argument, NULL, TMAP_OPT_ARCH},             \
    {"include", required_argument, NULL, 'I'},                    \
    {"option", required_argument, NULL, TMAP_OPT_OPTION},         \
    {"verbose", no_argument, NULL, 'v'}
#define TMAP_CLI_SOURCE_USAGE                                                       \
    "  --arch ARCH          .cu input: NVRTC architecture (default compute_90)\n"   \
    "  -I, --include DIR    .cu input: include directory (repeatable)\n"            \
    "  --option OPT         .cu input: one more NVRTC option, e.g. -lineinfo\n"     \
    "  -v, --verbose        on a failed compilation print NVRTC's whole log, not\n" \
    "                       one line\n"

/* The operand and shared options of a subcommand on one FILE.{ptx,cu}
 * ("-": PTX on stdin). */
typedef struct tmap_cli_input {
    const char *path;
    const char *kernel; /* --kernel NAME; NULL: every kernel */
    int verbose;        /* -v */
    tmap_cli_source src;
} tmap_cli_input;

/* Takes a subcommand's own getopt code c (value in optarg): 0 taken, -1
 * stop (a->rc set; tmap_args_bad). */
typedef int (*tmap_cli_opt_fn)(tmap_args *a, int c, void *ctx);

/* Parses a's argv (initialised with every option, the shared ones
 * included): the one operand, -k/--kernel, -v and the source options into
 * *in, the rest through own.  0 run, -1 stop (exit code in a->rc). */
int tmap_cli_input_args(tmap_args *a, tmap_cli_opt_fn own, void *ctx, tmap_cli_input *in);

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

/* Loads in->path (tmap_cli_load_source) and runs fn on each kernel, or on
 * in->kernel only (an error if there is no such kernel); with a->json,
 * prints {"file": path, "kernels": [...]}; with a->quiet only checks.
 * Returns the exit code; failures are reported as `threadmap CMD: message`. */
int tmap_cli_each_kernel(const tmap_args *a, const tmap_cli_input *in, tmap_cli_kernel_fn fn,
                         void *ctx);

#endif

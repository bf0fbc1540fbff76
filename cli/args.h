/*
 * args.h -- the one option parser of every subcommand: getopt_long with the
 * shared conventions.  Bad usage is one line "threadmap CMD: what (see
 * threadmap CMD --help)" and exit 2; -h/--help prints the help; -q/--quiet
 * and --json set flags; "-" is stdin for an input file and stdout for an
 * output file; an output that is an input is refused.
 *
 * Every tmap_args_* function returns 0 to go on or -1 to stop, with the
 * exit code in a->rc (0 after --help, 2 on bad usage).
 */
#ifndef TMAP_CLI_ARGS_H
#define TMAP_CLI_ARGS_H

#include <getopt.h>
#include <stdio.h>

/* getopt codes of the shared flags; long-only codes of the option groups
 * (ptx_input.h, model_input.h, plan_input.h) start above TMAP_OPT_JSON. */
enum { TMAP_OPT_HELP = 'h', TMAP_OPT_QUIET = 'q', TMAP_OPT_JSON = 0x1000 };

#define TMAP_ARGS_HELP {"help", no_argument, NULL, TMAP_OPT_HELP}
#define TMAP_ARGS_QUIET {"quiet", no_argument, NULL, TMAP_OPT_QUIET}
#define TMAP_ARGS_JSON {"json", no_argument, NULL, TMAP_OPT_JSON}
#define TMAP_ARGS_OUTPUT                          \
    {"output", required_argument, NULL, 'o'},     \
    {"out", required_argument, NULL, 'o'}

#define TMAP_ARGS_MAXFILES 1024

typedef struct tmap_args {
    const char *cmd;           /* "estimate" */
    void (*usage)(FILE *);     /* the --help text */
    int argc;
    char **argv;
    const struct option *opts; /* ends with {0} */
    const char *shorts;        /* getopt's short options, without the leading ':' */
    char opt[64];              /* the option being parsed, as "--name" or "-c" */
    int rc;                    /* the exit code once a call returned -1 */
    int quiet, json;           /* -q/--quiet, --json */
    const char *in[TMAP_ARGS_MAXFILES];
    size_t nin;
    const char *out[8];        /* output files and folders, as given */
    int out_dir[8];
    size_t nout;
} tmap_args;

void tmap_args_init(tmap_args *a, const char *cmd, void (*usage)(FILE *), int argc,
                    char **argv, const struct option *opts, const char *shorts);
/* The next option's code (its value in optarg), 0 when only operands are
 * left (argv[optind..argc)), -1 to stop.  Handles -h, -q and --json. */
int tmap_args_next(tmap_args *a);
/* Prints "threadmap CMD: <fmt...> (see threadmap CMD --help)"; returns -1
 * with a->rc = 2. */
int tmap_args_bad(tmap_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* optarg as a whole number in [lo, hi], or as a number in [lo, hi]. */
int tmap_args_long(tmap_args *a, long lo, long hi, long *out);
int tmap_args_double(tmap_args *a, double lo, double hi, double *out);
/* One of names[0..n) (the value's index into *out), or bad usage. */
int tmap_args_choice(tmap_args *a, const char *const *names, int n, int *out);
/* The operands: between lo and hi of them (argv[optind..]). */
int tmap_args_operands(tmap_args *a, int lo, int hi);
/* Registers a file read (returns the path to open: "-" becomes
 * /dev/stdin), a file written ("-": stdout) or a folder written. */
const char *tmap_args_input(tmap_args *a, const char *path);
const char *tmap_args_output(tmap_args *a, const char *path);
/* Bad usage if path is "-": for a file (`what`) that names files beside it. */
int tmap_args_no_stdin(tmap_args *a, const char *path, const char *what);
const char *tmap_args_output_dir(tmap_args *a, const char *path);
/* Checks the files registered: stdin read at most once, no folder "-",
 * no output that is an input (same device and inode), and an output on
 * stdout only without --json (it then implies --quiet). */
int tmap_args_files(tmap_args *a);

#endif

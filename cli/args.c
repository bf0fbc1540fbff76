/*
 * args.c -- the shared option parser of the subcommands (see args.h).
 */
#include "cli/args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"

void tmap_args_init(tmap_args *a, const char *cmd, void (*usage)(FILE *), int argc,
                    char **argv, const struct option *opts, const char *shorts)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->usage = usage;
    a->argc = argc;
    a->argv = argv;
    a->opts = opts;
    a->shorts = shorts;
    optind = 0; /* glibc: start afresh at argv[1] */
    opterr = 0; /* our messages, not getopt's */
}

int tmap_args_bad(tmap_args *a, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "threadmap %s: ", a->cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see threadmap %s --help)\n", a->cmd);
    a->rc = TMAP_EXIT_USAGE;
    return -1;
}

/* An option getopt rejects: glibc sets optopt to 0 for an unknown long
 * option, to the character for an unknown short one, and to the option's
 * code for a missing value or a value given to an option that takes none;
 * argv[optind - 1] is then the long option as written. */
static int rejected(tmap_args *a, int c)
{
    const char *arg = optind > 0 && optind <= a->argc ? a->argv[optind - 1] : "?";
    int name = (int)strcspn(arg, "=");
    int is_short = optopt > 0 && optopt < 128 && !strchr(a->shorts, optopt);
    if (c == ':' && !strncmp(arg, "--", 2))
        return tmap_args_bad(a, "%.*s needs a value", name, arg);
    if (c == ':')
        return tmap_args_bad(a, "-%c needs a value", optopt);
    if (is_short)
        return tmap_args_bad(a, "unknown option '-%c'", optopt);
    if (optopt == 0)
        return tmap_args_bad(a, "unknown option '%.*s'", name, arg);
    return tmap_args_bad(a, "%.*s takes no value", name, arg);
}

int tmap_args_next(tmap_args *a)
{
    char shorts[128];
    snprintf(shorts, sizeof shorts, ":%s", a->shorts);
    for (;;) {
        int li = -1, c = getopt_long(a->argc, a->argv, shorts, a->opts, &li);
        if (c == -1)
            return 0;
        if (c == '?' || c == ':')
            return rejected(a, c);
        if (li >= 0)
            snprintf(a->opt, sizeof a->opt, "--%s", a->opts[li].name);
        else
            snprintf(a->opt, sizeof a->opt, "-%c", c);
        if (c == TMAP_OPT_HELP) {
            a->usage(stdout);
            a->rc = TMAP_EXIT_OK;
            return -1;
        }
        if (c == TMAP_OPT_QUIET)
            a->quiet = 1;
        else if (c == TMAP_OPT_JSON)
            a->json = 1;
        else
            return c;
    }
}

int tmap_args_long(tmap_args *a, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(optarg, &end, 10);
    if (errno || end == optarg || *end || v < lo || v > hi)
        return tmap_args_bad(a, "%s: '%s' is not a whole number in [%ld, %ld]", a->opt, optarg,
                             lo, hi);
    *out = v;
    return 0;
}

int tmap_args_double(tmap_args *a, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(optarg, &end);
    if (errno || end == optarg || *end || !(v >= lo && v <= hi))
        return tmap_args_bad(a, "%s: '%s' is not a number in [%g, %g]", a->opt, optarg, lo, hi);
    *out = v;
    return 0;
}

int tmap_args_choice(tmap_args *a, const char *const *names, int n, int *out)
{
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        if (!strcmp(optarg, names[i]))
            return *out = i, 0;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                 i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
    }
    return tmap_args_bad(a, "%s is %s, not '%s'", a->opt, list, optarg);
}

int tmap_args_operands(tmap_args *a, int lo, int hi)
{
    int n = a->argc - optind;
    if (n > hi)
        return tmap_args_bad(a, "unexpected argument '%s'", a->argv[optind + hi]);
    if (n < lo)
        return tmap_args_bad(a, "missing %s", lo - n > 1 ? "operands" : "an operand");
    return 0;
}

const char *tmap_args_input(tmap_args *a, const char *path)
{
    if (a->nin < TMAP_ARGS_MAXFILES)
        a->in[a->nin++] = path;
    return strcmp(path, "-") ? path : "/dev/stdin";
}

int tmap_args_no_stdin(tmap_args *a, const char *path, const char *what)
{
    if (strcmp(path, "-"))
        return 0;
    return tmap_args_bad(a, "%s cannot be - (stdin): the paths in it are relative to its folder",
                         what);
}

static const char *add_output(tmap_args *a, const char *path, int dir)
{
    if (a->nout < sizeof a->out / sizeof a->out[0]) {
        a->out_dir[a->nout] = dir;
        a->out[a->nout++] = path;
    }
    return path;
}

const char *tmap_args_output(tmap_args *a, const char *path)
{
    return add_output(a, path, 0);
}

const char *tmap_args_output_dir(tmap_args *a, const char *path)
{
    return add_output(a, path, 1);
}

/* Whether output o names input i (the same file, however spelled). */
static int same_file(const char *o, const char *i)
{
    struct stat so, si;
    return strcmp(o, "-") && strcmp(i, "-") && stat(o, &so) == 0 && stat(i, &si) == 0 &&
           so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}

int tmap_args_files(tmap_args *a)
{
    size_t stdin_uses = 0, stdout_uses = 0;
    if (a->nin == TMAP_ARGS_MAXFILES)
        return tmap_args_bad(a, "more than %d input files", TMAP_ARGS_MAXFILES - 1);
    for (size_t i = 0; i < a->nin; i++)
        stdin_uses += !strcmp(a->in[i], "-");
    if (stdin_uses > 1)
        return tmap_args_bad(a, "only one input can be - (stdin)");
    for (size_t k = 0; k < a->nout; k++) {
        const char *o = a->out[k];
        if (a->out_dir[k] && !strcmp(o, "-"))
            return tmap_args_bad(a, "the output is a folder of several files: it cannot be - "
                                    "(stdout)");
        if (!strcmp(o, "-") && a->json)
            return tmap_args_bad(a, "--json prints on stdout: an output file cannot be - too");
        a->quiet |= !strcmp(o, "-");
        if ((stdout_uses += !strcmp(o, "-")) > 1)
            return tmap_args_bad(a, "only one output can be - (stdout)");
        for (size_t i = 0; i < a->nin; i++)
            if (same_file(o, a->in[i]))
                return tmap_args_bad(a, "the output %s is the input %s: it would be overwritten",
                                     o, a->in[i]);
    }
    return 0;
}

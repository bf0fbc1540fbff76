/*
 * plan_input.h -- the flags that shape a regrouping plan (group size,
 * scope, key, threshold, measured times), shared by `threadmap regroup` and
 * `threadmap report`, and building the plan from them and the model inputs
 * exactly as regroup() does.
 */
#ifndef TMAP_CLI_PLAN_INPUT_H
#define TMAP_CLI_PLAN_INPUT_H

#include "cli/model_input.h"
#include "threadmap/regroup.h"

typedef struct tmap_pi_opts {
    const char *key, *scope;
    long groupsize, threads;
    double launches;
    double threshold, original_ms, apply_ms;
    int have_original, have_apply; /* the times were given */
} tmap_pi_opts;

/* getopt codes and option-table entries of the plan flags. */
enum { TMAP_OPT_KEY = TMAP_OPT_JSON + 0x20, TMAP_OPT_SCOPE, TMAP_OPT_GROUPSIZE,
       TMAP_OPT_THREADS, TMAP_OPT_THRESHOLD, TMAP_OPT_ORIGINAL_MS, TMAP_OPT_APPLY_MS,
       TMAP_OPT_LAUNCHES };
#define TMAP_PI_OPTIONS                                              \
    {"key", required_argument, NULL, TMAP_OPT_KEY},                  \
    {"scope", required_argument, NULL, TMAP_OPT_SCOPE},              \
    {"groupsize", required_argument, NULL, TMAP_OPT_GROUPSIZE},      \
    {"threads", required_argument, NULL, TMAP_OPT_THREADS},          \
    {"threshold", required_argument, NULL, TMAP_OPT_THRESHOLD},      \
    {"original-ms", required_argument, NULL, TMAP_OPT_ORIGINAL_MS},  \
    {"apply-ms", required_argument, NULL, TMAP_OPT_APPLY_MS},        \
    {"launches", required_argument, NULL, TMAP_OPT_LAUNCHES}

/* The flags' help lines, for the subcommands' usage texts. */
extern const char tmap_pi_help[];

void tmap_pi_defaults(tmap_pi_opts *o);
/* Takes getopt code c (value optarg) if it is one of the plan flags: 1
 * taken, 0 not ours, -1 bad value (a->rc set). */
int tmap_pi_option(tmap_pi_opts *o, tmap_args *a, int c);

/* Loads --key (if given) and runs tmap_plan_make on d's BBV and latencies
 * with the candidates `algos` (0: all). */
tmap_status tmap_pi_plan(const tmap_pi_opts *o, const tmap_mi *d, unsigned algos,
                         tmap_plan *p, tmap_error *err);

#endif

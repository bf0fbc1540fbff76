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

/* The flags' help lines, for the subcommands' usage texts. */
extern const char tmap_pi_help[];

void tmap_pi_defaults(tmap_pi_opts *o);
/* Takes argv[*i] if it is one of the plan flags (advancing *i past its
 * value): 1 taken, 0 not ours, -1 bad value (message printed). */
int tmap_pi_flag(tmap_pi_opts *o, const char *cmd, int argc, char **argv, int *i);
/* Checks the values that depend on each other; -1 and a message if wrong. */
int tmap_pi_finish(const tmap_pi_opts *o, const char *cmd);

/* Loads --key (if given) and runs tmap_plan_make on d's BBV and latencies
 * with the candidates `algos` (0: all). */
tmap_status tmap_pi_plan(const tmap_pi_opts *o, const tmap_mi *d, unsigned algos,
                         tmap_plan *p, tmap_error *err);

#endif

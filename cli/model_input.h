/*
 * model_input.h -- the inputs every model-side subcommand (estimate,
 * regroup, report) takes: a BBV, block latencies (from a PTX CFG and a
 * latency table, or given), an optional permutation, and the launch shape
 * the scheduling model needs.  One parser and one loader for all of them.
 */
#ifndef TMAP_CLI_MODEL_INPUT_H
#define TMAP_CLI_MODEL_INPUT_H

#include "threadmap/model.h"
#include "threadmap.h"

typedef struct tmap_mi_opts {
    const char *bbv, *cfg, *kernel, *lat, *table, *perm, *sass;
    long sms, block_size, blocks_per_sm;
} tmap_mi_opts;

/* The flags' help lines, for the subcommands' usage texts. */
extern const char tmap_mi_help[];

void tmap_mi_defaults(tmap_mi_opts *o);
/* Takes argv[*i] if it is one of the shared flags (advancing *i past its
 * value): 1 taken, 0 not ours, -1 bad value (message printed). */
int tmap_mi_flag(tmap_mi_opts *o, const char *cmd, int argc, char **argv, int *i);
/* Checks the combination and fills defaults; -1 and a message if wrong.
 * need_bbv: the subcommand requires --bbv. */
int tmap_mi_finish(tmap_mi_opts *o, const char *cmd, int need_bbv);

/* Everything loaded; freed by tmap_mi_free. */
typedef struct tmap_mi {
    tmap_bbv bbv;
    char **names;          /* BBV sidecar's block names, or NULL */
    double *lat;           /* [bbv.nblocks] */
    uint32_t *perm;        /* [bbv.nthreads], or NULL */
    tmap_cfg *cfg;         /* with --cfg, else NULL */
    double *sass;          /* with --sass: SASS instructions per block */
    tmap_sass_splits splits; /* with --sass: those issued per group of threads */
    tmap_lat_report report;
    char table[4096];      /* the latency table used ("" without --cfg) */
    tmap_model_params params;
} tmap_mi;

tmap_status tmap_mi_load(const tmap_mi_opts *o, tmap_mi *d, tmap_error *err);
void tmap_mi_free(tmap_mi *d);

#endif

/*
 * model_input.h -- the inputs every model-side subcommand (estimate,
 * regroup, report) takes: a BBV, block latencies (from a PTX CFG and a
 * latency table, or given), an optional permutation, and the launch shape
 * the scheduling model needs.  One parser and one loader for all of them.
 */
#ifndef TMAP_CLI_MODEL_INPUT_H
#define TMAP_CLI_MODEL_INPUT_H

#include "cli/args.h"
#include "threadmap/model.h"
#include "threadmap.h"

typedef struct tmap_mi_opts {
    const char *bbv, *cfg, *kernel, *lat, *table, *perm, *sass;
    const char *model, *features; /* the BBV was predicted by MODEL from F.npy */
    long sms, block_size, blocks_per_sm;
    int paper_metric;      /* --metric scheduled: no SM model */
} tmap_mi_opts;

/* getopt codes and option-table entries of the shared flags (--kernel is
 * 'k'); --perm is estimate's only (TMAP_MI_PERM_OPTION). */
enum { TMAP_OPT_BBV = TMAP_OPT_JSON + 0x10, TMAP_OPT_CFG, TMAP_OPT_LAT, TMAP_OPT_TABLE,
       TMAP_OPT_PERM, TMAP_OPT_SASS, TMAP_OPT_SMS, TMAP_OPT_BLOCK_SIZE, TMAP_OPT_BPS,
       TMAP_OPT_METRIC, TMAP_OPT_MODEL, TMAP_OPT_FEATURES };
#define TMAP_MI_OPTIONS                                            \
    {"bbv", required_argument, NULL, TMAP_OPT_BBV},                \
    {"cfg", required_argument, NULL, TMAP_OPT_CFG},                \
    {"kernel", required_argument, NULL, 'k'},                      \
    {"block-latency", required_argument, NULL, TMAP_OPT_LAT},      \
    {"table", required_argument, NULL, TMAP_OPT_TABLE},            \
    {"sass", required_argument, NULL, TMAP_OPT_SASS},              \
    {"sms", required_argument, NULL, TMAP_OPT_SMS},                \
    {"block-size", required_argument, NULL, TMAP_OPT_BLOCK_SIZE},  \
    {"blocks-per-sm", required_argument, NULL, TMAP_OPT_BPS},      \
    {"metric", required_argument, NULL, TMAP_OPT_METRIC},          \
    {"model", required_argument, NULL, TMAP_OPT_MODEL},            \
    {"features", required_argument, NULL, TMAP_OPT_FEATURES}
#define TMAP_MI_PERM_OPTION {"perm", required_argument, NULL, TMAP_OPT_PERM}

/* The flags' help lines, for the subcommands' usage texts. */
extern const char tmap_mi_help[];

void tmap_mi_defaults(tmap_mi_opts *o);
/* Takes getopt code c (value optarg) if it is one of the shared flags: 1
 * taken, 0 not ours, -1 bad value (a->rc set). */
int tmap_mi_option(tmap_mi_opts *o, tmap_args *a, int c);
/* Checks the combination and fills defaults; -1 (a->rc set) if wrong.
 * need_bbv: the subcommand requires --bbv. */
int tmap_mi_finish(tmap_mi_opts *o, tmap_args *a, int need_bbv);

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
    tmap_sm_model sm;      /* with --cfg, unless --metric scheduled: the SM model */
    tmap_bbv_noise noise;  /* with --model: its residuals (sm.noise) */
    tmap_model_params params;
} tmap_mi;

tmap_status tmap_mi_load(const tmap_mi_opts *o, tmap_mi *d, tmap_error *err);
void tmap_mi_free(tmap_mi *d);

#endif

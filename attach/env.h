/*
 * env.h (attach) -- how the command hands its options to the injected
 * library: environment variables, written by options.c's tmap_attach_env_set
 * and read back by tmap_attach_env_get, and the files in the output folder
 * through which the library reports back.  Private to attach/.
 */
#ifndef TMAP_ATTACH_ENV_H
#define TMAP_ATTACH_ENV_H

#include "threadmap/attach.h"

#define TMAP_ATTACH_ENV_OUT "THREADMAP_ATTACH_OUT"
#define TMAP_ATTACH_ENV_KERNEL "THREADMAP_ATTACH_KERNEL"
#define TMAP_ATTACH_ENV_SKIP "THREADMAP_ATTACH_SKIP"
#define TMAP_ATTACH_ENV_COUNT "THREADMAP_ATTACH_COUNT"
#define TMAP_ATTACH_ENV_FEATURES "THREADMAP_ATTACH_FEATURES" /* specs, ';'-separated */
#define TMAP_ATTACH_ENV_QUIET "THREADMAP_ATTACH_QUIET"
#define TMAP_ATTACH_ENV_TRACE "THREADMAP_ATTACH_TRACE" /* 1: log intercepted calls */
#define TMAP_ATTACH_ENV_RUN "THREADMAP_ATTACH_RUN"     /* 1: run mode */
#define TMAP_ATTACH_ENV_KEY "THREADMAP_ATTACH_KEY"
#define TMAP_ATTACH_ENV_PREDICTOR "THREADMAP_ATTACH_PREDICTOR"
#define TMAP_ATTACH_ENV_TRIAL "THREADMAP_ATTACH_TRIAL"
#define TMAP_ATTACH_ENV_THRESHOLD "THREADMAP_ATTACH_THRESHOLD"

/* In the output folder: one line per profiled launch, one per failure. */
#define TMAP_ATTACH_LAUNCHES "launches.tsv"
#define TMAP_ATTACH_ERRORS "errors.txt"
#define TMAP_ATTACH_SUMMARY "summary.txt" /* run mode: written at exit */

/* The options as parsed once from the environment.  feature_specs points into
 * the owned copy `specs`. */
typedef struct tmap_attach_env {
    tmap_attach_opts opts;
    tmap_attach_feature features[TMAP_ATTACH_MAX_FEATURES];
    char *specs;
    int trace;
} tmap_attach_env;

tmap_status tmap_attach_env_set(const tmap_attach_opts *o, tmap_error *err);
/* *e is zeroed and filled; TMAP_ERR_INVALID when THREADMAP_ATTACH_OUT is unset. */
tmap_status tmap_attach_env_get(tmap_attach_env *e, tmap_error *err);
void tmap_attach_env_free(tmap_attach_env *e);

#endif

/*
 * part.h -- one regrouping problem (the grid, or one thread block) and the
 * scope wrapper that validates arguments and cuts the grid into problems.
 */
#ifndef TMAP_REGROUP_PART_H
#define TMAP_REGROUP_PART_H

#include "threadmap/regroup.h"

/* The threads [first, first + n) of the launch, seen with local indices
 * 0..n-1: local thread i has the row rows[i * nblocks ..] and key[i]. */
typedef struct tmap_regroup_part {
    const uint32_t *rows;  /* NULL for key sorting                   */
    size_t nblocks;
    const double *lat;     /* NULL where the algorithm needs none    */
    const double *key;     /* key sorting only                       */
    int descending;        /* key sorting only                       */
    size_t n;              /* >= 1                                   */
    size_t groupsize;      /* multiple of 32                         */
    size_t threads;        /* CPU threads for the classes pass       */
    size_t nclasses;       /* LAM's value classes R                  */
} tmap_regroup_part;

/* Writes a permutation of the local indices 0..n-1 into out[0..n). */
typedef tmap_status (*tmap_regroup_fn)(const tmap_regroup_part *p,
                                       uint32_t *out, tmap_error *err);

/* What an algorithm reads, so that the wrapper validates just that. */
typedef struct tmap_regroup_input {
    const tmap_bbv *bbv;   /* required when need_bbv                 */
    const double *lat;     /* required when need_lat                 */
    const double *key;     /* required when need_key                 */
    size_t nthreads;       /* used when !need_bbv                    */
    int descending;
    size_t nclasses;       /* LAM only                               */
    int need_bbv, need_lat, need_key;
    const char *name;      /* for messages: "greedy", ...            */
} tmap_regroup_input;

/* Validates, then runs fn on each problem of the scope and writes global
 * thread indices into perm. */
tmap_status tmap_regroup_run(tmap_regroup_fn fn, const tmap_regroup_input *in,
                             const tmap_regroup_opts *opts, uint32_t *perm,
                             tmap_error *err);

#endif

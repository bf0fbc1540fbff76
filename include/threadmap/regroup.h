/*
 * regroup.h -- thread regrouping algorithms (Liang et al., TCAD 2016, sec. V)
 * and the sort-by-key baselines.  Part of the public API (included by threadmap.h).  docs/regroup.md explains the choices made where the
 * paper's pseudo-code is ambiguous.
 *
 * A regrouping is a permutation D of the N threads: slot i runs original
 * thread D[i].  Slots are cut into groups of `groupsize` consecutive slots
 * (K = ceil(N / groupsize) groups; the last may be partial).
 *
 * Common arguments and rules of every tmap_regroup_* function below:
 *   - bbv: the per-thread basic block vectors, N = bbv->nthreads rows of
 *     bbv->nblocks u32 counts; 1 <= N <= UINT32_MAX, nblocks >= 1.
 *   - lat: bbv->nblocks block latencies in cycles, each finite and in
 *     [0, 1e15] (the gain is a signed sum of lat * count; the bound keeps it
 *     finite).
 *   - perm: caller-allocated, N entries; on success a permutation of 0..N-1.
 *     On failure its content is unspecified.
 *   - opts: groupsize is a positive multiple of 32.  With
 *     TMAP_REGROUP_BLOCK, block_size (threads per CUDA thread block) must be
 *     a positive multiple of groupsize: the algorithm then runs separately
 *     on each run of block_size consecutive threads (the last thread block
 *     may be partial), slots of a thread block only receive threads of the
 *     same thread block, and groups never straddle thread blocks.
 *   - Results are deterministic: every tie is broken by thread index.
 */
#ifndef TMAP_REGROUP_H
#define TMAP_REGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "threadmap/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tmap_regroup_scope {
    TMAP_REGROUP_GRID = 0,  /* one problem over all N threads            */
    TMAP_REGROUP_BLOCK = 1  /* one problem per thread block of block_size */
} tmap_regroup_scope;

typedef struct tmap_regroup_opts {
    size_t groupsize;          /* threads per group, a multiple of 32     */
    tmap_regroup_scope scope;
    size_t block_size;         /* TMAP_REGROUP_BLOCK only: threads per
                                  thread block, a multiple of groupsize   */
    size_t threads;            /* CPU threads that find the distinct rows
                                  (0 or 1: the caller's alone; at most
                                  TMAP_REGROUP_MAX_THREADS); results do not
                                  depend on it */
} tmap_regroup_opts;
#define TMAP_REGROUP_MAX_THREADS 64

/* D[i] = i. */
tmap_status tmap_regroup_identity(size_t nthreads, uint32_t *perm,
                                  tmap_error *err);

/* Sorting (sec. V-A): threads in ascending lexicographic order of their
 * BBV rows; threads with equal rows keep their thread order (stable). */
tmap_status tmap_regroup_sort(const tmap_bbv *bbv,
                              const tmap_regroup_opts *opts, uint32_t *perm,
                              tmap_error *err);

/* Sort by a user key (key[t], one finite double per thread), ascending or
 * (descending != 0) descending, stable: what CUB segment binning, JDS SpMV
 * and CUDASW++ length partitions do with a row or sequence length. */
tmap_status tmap_regroup_sort_key(const double *key, size_t nthreads,
                                  int descending,
                                  const tmap_regroup_opts *opts,
                                  uint32_t *perm, tmap_error *err);

/* Greedy (Algorithm 1, eq. 6-10): repeatedly merge the pair of groups of
 * maximal Gain = Benefit - Cost; a merge reaching groupsize emits its first
 * groupsize threads as a finished group.  Fast exact version: works on
 * distinct (min, max) vector pairs; fails with TMAP_ERR_UNSUPPORTED when a
 * problem (the grid, or one thread block) needs more than
 * TMAP_REGROUP_GREEDY_MAX_TYPES of them (all-distinct rows at large N). */
#define TMAP_REGROUP_GREEDY_MAX_TYPES 4096
tmap_status tmap_regroup_greedy(const tmap_bbv *bbv, const double *lat,
                                const tmap_regroup_opts *opts, uint32_t *perm,
                                tmap_error *err);

/* Greedy-Max's cost grows with the square of the distinct BBV rows of a
 * problem (the grid, or one thread block); past this many it fails with
 * TMAP_ERR_UNSUPPORTED rather than run for minutes (measured on an H200
 * host: about 8 s for 2^17 threads with a few thousand distinct rows). */
#define TMAP_REGROUP_GREEDY_MAX_CLASSES 8192

/* Greedy-Max (Algorithm 2, eq. 11): groups are built one after the other,
 * each started from the remaining thread of maximal Lat_t and filled with a
 * thread identical to a member if one remains, else with the thread of
 * maximal Gain(g, t).  Groups come out in non-increasing Lat of their
 * first thread. */
tmap_status tmap_regroup_greedy_max(const tmap_bbv *bbv, const double *lat,
                                    const tmap_regroup_opts *opts,
                                    uint32_t *perm, tmap_error *err);

/* Literal transcriptions of Algorithms 1 and 2, cubic in the problem size:
 * references for tests (problems of a few hundred threads).  They return
 * exactly the permutation of the fast versions. */
tmap_status tmap_regroup_greedy_literal(const tmap_bbv *bbv, const double *lat,
                                        const tmap_regroup_opts *opts,
                                        uint32_t *perm, tmap_error *err);
tmap_status tmap_regroup_greedy_max_literal(const tmap_bbv *bbv,
                                            const double *lat,
                                            const tmap_regroup_opts *opts,
                                            uint32_t *perm, tmap_error *err);

/* Checks that perm (nthreads entries) is a permutation of 0..nthreads-1 that
 * respects opts->scope; TMAP_ERR_INVALID naming the first fault otherwise. */
tmap_status tmap_regroup_check(const uint32_t *perm, size_t nthreads,
                               const tmap_regroup_opts *opts,
                               tmap_error *err);

#ifdef __cplusplus
}
#endif

#endif

/*
 * literal.h -- literal transcriptions of Algorithms 1 and 2 of Liang et al.
 * (greedy_literal.c, greedy_max_literal.c), cubic in the problem size:
 * references for the tests (problems of a few hundred threads).  They
 * return exactly the permutation of the library's fast versions.
 */
#ifndef TMAP_TESTS_LITERAL_H
#define TMAP_TESTS_LITERAL_H

#include "threadmap/regroup.h"

tmap_status tmap_regroup_greedy_literal(const tmap_bbv *bbv, const double *lat,
                                        const tmap_regroup_opts *opts, uint32_t *perm,
                                        tmap_error *err);
tmap_status tmap_regroup_greedy_max_literal(const tmap_bbv *bbv, const double *lat,
                                            const tmap_regroup_opts *opts, uint32_t *perm,
                                            tmap_error *err);

#endif

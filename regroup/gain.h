/*
 * gain.h -- the model quantities the regrouping algorithms compare: the
 * merge gain of eq. 8-10 and the thread latency of eq. 11.  Every algorithm
 * (fast and literal) computes them through these functions, term by term in
 * block order, so that equal unions give bitwise equal doubles and ties
 * compare exactly.
 */
#ifndef TMAP_REGROUP_GAIN_H
#define TMAP_REGROUP_GAIN_H

#include <stddef.h>
#include <stdint.h>

/* Gain(g1, g2) = Benefit - Cost = sum_b lat[b] * (2 Min_b - Max_b) over the
 * union, where g1 has per-block minima mn1 / maxima mx1 and g2 mn2 / mx2
 * (a single row r is passed as mn = mx = r). */
double tmap_regroup_gain(const uint32_t *mn1, const uint32_t *mx1,
                         const uint32_t *mn2, const uint32_t *mx2,
                         const double *lat, size_t nblocks);

/* Lat_t = sum_b lat[b] * row[b] (eq. 11). */
double tmap_regroup_latency(const uint32_t *row, const double *lat,
                            size_t nblocks);

/* Lexicographic comparison of two rows: <0, 0, >0. */
int tmap_regroup_row_cmp(const uint32_t *a, const uint32_t *b, size_t nblocks);

#endif

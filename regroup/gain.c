/*
 * gain.c -- merge gain (eq. 8-10), thread latency (eq. 11), row order.
 */
#include "regroup/gain.h"

double tmap_regroup_gain(const uint32_t *mn1, const uint32_t *mx1,
                         const uint32_t *mn2, const uint32_t *mx2,
                         const double *lat, size_t nblocks)
{
    double g = 0;
    for (size_t b = 0; b < nblocks; b++) {
        int64_t lo = mn1[b] < mn2[b] ? mn1[b] : mn2[b];
        int64_t hi = mx1[b] > mx2[b] ? mx1[b] : mx2[b];
        /* lat*Min - lat*(Max - Min): exact in int64 before the product */
        g += lat[b] * (double)(2 * lo - hi);
    }
    return g;
}

double tmap_regroup_latency(const uint32_t *row, const double *lat,
                            size_t nblocks)
{
    double s = 0;
    for (size_t b = 0; b < nblocks; b++)
        s += lat[b] * (double)row[b];
    return s;
}

int tmap_regroup_row_cmp(const uint32_t *a, const uint32_t *b, size_t nblocks)
{
    for (size_t i = 0; i < nblocks; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

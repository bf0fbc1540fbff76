/*
 * sort_key.c -- regrouping by a user key per thread (row length, sequence
 * length, material id...), the baseline of CUB binning, JDS SpMV and
 * CUDASW++.  The key's bits are mapped so that unsigned order is the
 * requested double order, then sorted stably (keysort.c: radix, O(N)).
 */
#include "threadmap/regroup.h"

#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/keysort.h"
#include "regroup/part.h"

/* Unsigned image of x, increasing with x; -0.0 and +0.0 map alike. */
static uint64_t order_bits(double x, int descending)
{
    uint64_t u;
    if (x == 0)
        x = 0.0;
    memcpy(&u, &x, sizeof u);
    u = (u >> 63) ? ~u : u ^ (1ULL << 63);
    return descending ? ~u : u;
}

static tmap_status key_part(const tmap_regroup_part *p, uint32_t *out,
                            tmap_error *err)
{
    uint64_t *k = malloc(p->n * sizeof *k);
    if (!k)
        return tmap_fail(err, TMAP_ERR_NOMEM, "sort_key: %zu threads", p->n);
    for (size_t i = 0; i < p->n; i++) {
        k[i] = order_bits(p->key[i], p->descending);
        out[i] = (uint32_t)i;
    }
    /* stable, and out[] starts in thread order: ties by thread index */
    int bad = tmap_regroup_keysort(k, out, p->n);
    free(k);
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "sort_key: %zu threads", p->n)
               : TMAP_OK;
}

tmap_status tmap_regroup_sort_key(const double *key, size_t nthreads,
                                  int descending,
                                  const tmap_regroup_opts *opts,
                                  uint32_t *perm, tmap_error *err)
{
    tmap_regroup_input in = {.key = key, .nthreads = nthreads,
                             .descending = descending, .need_key = 1,
                             .name = "sort_key"};
    return tmap_regroup_run(key_part, &in, opts, perm, err);
}

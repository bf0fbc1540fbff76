/*
 * identity.c -- the regrouping that changes nothing (D[i] = i): the
 * baseline every candidate is scored against.
 */
#include "threadmap/regroup.h"

#include "common/base.h"

tmap_status tmap_regroup_identity(size_t nthreads, uint32_t *perm,
                                  tmap_error *err)
{
    if (!perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "identity: perm is NULL");
    if (nthreads == 0 || nthreads > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "identity: %zu threads (need 1 .. 2^32-1)", nthreads);
    for (size_t i = 0; i < nthreads; i++)
        perm[i] = (uint32_t)i;
    return TMAP_OK;
}

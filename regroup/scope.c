/*
 * scope.c -- argument validation, the grid / thread-block scope wrapper and
 * the permutation checker shared by every regrouping algorithm.
 */
#include "regroup/part.h"

#include <math.h>
#include <stdlib.h>

#include "threadmap/regroup.h"
#include "common/base.h"

static tmap_status check_opts(const tmap_regroup_opts *o, const char *name,
                              tmap_error *err)
{
    if (!o)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: opts is NULL", name);
    if (o->groupsize == 0 || o->groupsize % 32 != 0)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: groupsize %zu is not a positive multiple of 32",
                         name, o->groupsize);
    if (o->threads > TMAP_REGROUP_MAX_THREADS)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu threads (at most %d)",
                         name, o->threads, TMAP_REGROUP_MAX_THREADS);
    if (o->scope == TMAP_REGROUP_GRID)
        return TMAP_OK;
    if (o->scope != TMAP_REGROUP_BLOCK)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: unknown scope %d", name,
                         (int)o->scope);
    if (o->block_size == 0 || o->block_size % o->groupsize != 0)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: block_size %zu is not a positive multiple of "
                         "groupsize %zu", name, o->block_size, o->groupsize);
    return TMAP_OK;
}

static tmap_status check_input(const tmap_regroup_input *in, size_t *n,
                               tmap_error *err)
{
    const char *name = in->name;
    if (in->need_bbv) {
        if (!in->bbv || !in->bbv->counts)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: BBV matrix is NULL",
                             name);
        if (in->bbv->nblocks == 0)
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "%s: BBV matrix has no basic blocks", name);
        *n = in->bbv->nthreads;
    } else {
        *n = in->nthreads;
    }
    if (*n == 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no threads", name);
    if (*n > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "%s: %zu threads do not fit a u32 permutation", name,
                         *n);
    if (in->need_lat) {
        if (!in->lat)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: lat is NULL", name);
        tmap_status s = tmap_lat_check(in->lat, in->bbv->nblocks, name, err);
        if (s)
            return s;
    }
    if (in->need_key) {
        if (!in->key)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: key is NULL", name);
        for (size_t t = 0; t < *n; t++)
            if (!isfinite(in->key[t]))
                return tmap_fail(err, TMAP_ERR_INVALID,
                                 "%s: key[%zu] is not finite", name, t);
    }
    return TMAP_OK;
}

tmap_status tmap_regroup_run(tmap_regroup_fn fn, const tmap_regroup_input *in,
                             const tmap_regroup_opts *opts, uint32_t *perm,
                             tmap_error *err)
{
    size_t n = 0;
    tmap_status st = check_opts(opts, in->name, err);
    if (st == TMAP_OK)
        st = check_input(in, &n, err);
    if (st != TMAP_OK)
        return st;
    if (!perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: perm is NULL", in->name);
    size_t span = opts->scope == TMAP_REGROUP_BLOCK ? opts->block_size : n;
    size_t nb = in->need_bbv ? in->bbv->nblocks : 0;
    for (size_t first = 0; first < n; first += span) {
        tmap_regroup_part p = {
            .rows = in->need_bbv ? in->bbv->counts + first * nb : NULL,
            .nblocks = nb,
            .lat = in->lat,
            .key = in->need_key ? in->key + first : NULL,
            .descending = in->descending,
            .n = n - first < span ? n - first : span,
            .groupsize = opts->groupsize,
            .threads = opts->threads,
            .nclasses = in->nclasses,
        };
        st = fn(&p, perm + first, err);
        if (st != TMAP_OK) {
            if (opts->scope == TMAP_REGROUP_BLOCK)
                tmap_error_prefix(err, "thread block %zu", first / span);
            return st;
        }
        if (first) /* local indices to global ones */
            for (size_t i = 0; i < p.n; i++)
                perm[first + i] += (uint32_t)first;
    }
    return TMAP_OK;
}

tmap_status tmap_regroup_check(const uint32_t *perm, size_t nthreads,
                               const tmap_regroup_opts *opts, tmap_error *err)
{
    tmap_status st = check_opts(opts, "check", err);
    if (st != TMAP_OK)
        return st;
    if (!perm || nthreads == 0)
        return tmap_fail(err, TMAP_ERR_INVALID, "check: empty permutation");
    unsigned char *seen = calloc(nthreads, 1);
    if (!seen)
        return tmap_fail(err, TMAP_ERR_NOMEM, "check: %zu bytes", nthreads);
    size_t span = opts->scope == TMAP_REGROUP_BLOCK ? opts->block_size
                                                    : nthreads;
    for (size_t i = 0; i < nthreads && st == TMAP_OK; i++) {
        size_t t = perm[i];
        if (t >= nthreads)
            st = tmap_fail(err, TMAP_ERR_INVALID,
                           "check: slot %zu holds thread %zu >= %zu", i, t,
                           nthreads);
        else if (seen[t])
            st = tmap_fail(err, TMAP_ERR_INVALID,
                           "check: thread %zu appears twice (slot %zu)", t, i);
        else if (t / span != i / span)
            st = tmap_fail(err, TMAP_ERR_INVALID,
                           "check: slot %zu of thread block %zu holds thread "
                           "%zu of thread block %zu", i, i / span, t,
                           t / span);
        else
            seen[t] = 1;
    }
    free(seen);
    return st;
}

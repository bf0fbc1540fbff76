/*
 * manifest_launch.c -- launching a manifest's kernel again and again on the
 * same input: before each launch every array is put back as bound (a
 * device-to-device copy from a pristine copy saved once), so a kernel that
 * updates its input (a BFS frontier, a counter) does the same work in every
 * warm-up and timed launch.  The copies run before the timed region.
 */
#include <stdlib.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/manifest.h"

tmap_status tmap_manifest_restore(tmap_manifest *m, tmap_error *err)
{
    if (!m || !m->bound)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: restore before bind",
                         m ? m->path : "tmap_manifest_restore: the manifest");
    for (size_t i = 0; i < m->narrays; i++) {
        tmap_marray *a = &m->arrays[i];
        size_t bytes = a->count * tmap_elem_size(a->kind);
        tmap_status st =
            a->pristine ? TMAP_OK : tmap_cuda_alloc(m->bound, bytes, &a->pristine, err);
        if (st == TMAP_OK)
            st = m->saved ? tmap_cuda_copy(m->bound, a->device, a->pristine, bytes, err)
                          : tmap_cuda_copy(m->bound, a->pristine, a->device, bytes, err);
        if (st != TMAP_OK) {
            tmap_error_prefix(err, "%s: restoring arrays.%s", m->path, a->name);
            return st;
        }
    }
    m->saved = 1;
    return TMAP_OK;
}

tmap_status tmap_manifest_time(tmap_manifest *m, tmap_kernel *k, const tmap_launch *l,
                               int warmup, int reps, float *ms, tmap_error *err)
{
    tmap_status st = TMAP_OK;
    for (int i = 0; st == TMAP_OK && i < warmup + reps; i++) {
        st = tmap_manifest_restore(m, err);
        if (st == TMAP_OK)
            st = i < warmup ? tmap_kernel_run(k, l, err)
                            : tmap_kernel_time(k, l, 0, 1, &ms[i - warmup], err);
    }
    return st;
}

/*
 * manifest_refs.c -- a manifest's irregular references (the "references"
 * field, parsed in manifest.c): their description, and their index arrays
 * checked against the data they index.
 */
#include <stdlib.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/manifest.h"

size_t tmap_manifest_num_references(const tmap_manifest *m) { return m ? m->nrefs : 0; }

tmap_status tmap_manifest_reference(const tmap_manifest *m, size_t i, tmap_reference_view *v)
{
    if (!m || !v || i >= m->nrefs)
        return TMAP_ERR_INVALID;
    const tmap_mref *r = &m->refs[i];
    *v = (tmap_reference_view){m->arrays[r->data].name, m->arrays[r->index].name, r->per_thread,
                               r->elem_bytes, r->nelems, r->read, r->write};
    return TMAP_OK;
}

tmap_status tmap_manifest_reference_index(const tmap_manifest *m, size_t i, uint32_t **index,
                                          size_t *n, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m, index, n);
    if (absent)
        return absent;
    *index = NULL;
    *n = 0;
    if (i >= m->nrefs)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no reference %zu (the manifest has %zu)",
                         m->path, i, m->nrefs);
    const tmap_mref *r = &m->refs[i];
    const tmap_marray *ix = &m->arrays[r->index];
    if (!ix->host)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: references[%zu]: the arrays are not "
                         "generated yet (tmap_manifest_generate)", m->path, i);
    size_t count = r->per_thread * m->threads; /* <= ix->count: checked at load */
    uint32_t *out = malloc((count ? count : 1) * sizeof *out);
    if (!out)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t e = 0; e < count; e++) {
        double v = tmap_elem_get(ix->kind, ix->host, e); /* integers below 2^53 are exact */
        if (!(v >= 0 && v < (double)r->nelems)) {
            free(out);
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: field 'references[%zu].index': "
                             "%s[%zu] = %.0f is not an element of %s (%zu elements of %zu bytes)",
                             m->path, i, ix->name, e, v, m->arrays[r->data].name, r->nelems,
                             r->elem_bytes);
        }
        out[e] = (uint32_t)v;
    }
    *index = out;
    *n = count;
    return TMAP_OK;
}

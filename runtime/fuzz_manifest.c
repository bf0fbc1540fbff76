/*
 * fuzz_manifest.c -- libFuzzer target: a manifest (JSON) loaded from a
 * file, which parses its feature expressions and irregular references;
 * when its launch and arrays are small and it reads no file, its arrays
 * generated, its features evaluated for every thread and its references'
 * index arrays checked against their data.  Never compiles nor launches.  Seed corpus:
 * tests/manifests, benchmarks/manifests, benchmarks/suite and examples.
 */
#include <stdlib.h>

#include "common/fuzz_util.h"
#include "runtime/manifest.h"

enum { SMALL = 1 << 16 }; /* threads, and elements of any array */

static int is_small(const tmap_manifest *m)
{
    if (m->threads > SMALL)
        return 0;
    for (size_t i = 0; i < m->narrays; i++)
        if (m->arrays[i].count > SMALL || m->arrays[i].file)
            return 0; /* a file named by the input could be /dev/zero */
    return 1;
}

static void evaluate(tmap_manifest *m)
{
    tmap_error err;
    double *f = NULL;
    size_t n = 0, p = 0;
    const char *const *names = NULL;
    if (tmap_manifest_generate(m, 1, &err) != TMAP_OK)
        return;
    if (tmap_manifest_features(m, &f, &n, &p, &names, &err) == TMAP_OK) {
        if (n != m->threads || p != m->nfeatures)
            abort();
        free(f);
    }
    for (size_t i = 0; i < m->nrefs; i++) {
        uint32_t *ix = NULL;
        size_t n = 0;
        if (tmap_manifest_reference_index(m, i, &ix, &n, &err) != TMAP_OK)
            continue;
        if (n != m->refs[i].per_thread * m->threads)
            abort();
        for (size_t e = 0; e < n; e++)
            if (ix[e] >= m->refs[i].nelems)
                abort();
        free(ix);
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char path[128];
    tmap_manifest *m = NULL;
    tmap_error err;
    if (fuzz_to_file(data, size, "json", path, sizeof path) &&
        tmap_manifest_load(path, &m, &err) == TMAP_OK) {
        if (is_small(m))
            evaluate(m);
        tmap_manifest_free(m);
    }
    unlink(path);
    return 0;
}

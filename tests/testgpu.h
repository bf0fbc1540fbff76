/*
 * testgpu.h -- what the GPU tests of regrouped launches share: a manifest
 * bound to the GPU with its inputs generated (seed 42), copies of its
 * arrays after a launch, and comparing two such sets of copies.  Included
 * after testutil.h by test programs only.
 */
#ifndef TMAP_TESTS_TESTGPU_H
#define TMAP_TESTS_TESTGPU_H

#include "runtime/manifest.h"
#include "tests/testutil.h"

typedef struct test_bound {
    tmap_manifest *m;
    char *ptx, *entry; /* the manifest's module and kernel */
    tmap_launch l;     /* its launch, arguments bound to fresh inputs */
} test_bound;

static inline void test_bound_open(tmap_cuda *c, const char *rel, test_bound *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", TMAP_SOURCE_DIR, rel);
    TMAP_CHECK(tmap_manifest_load(path, &b->m, err));
    TMAP_CHECK(tmap_manifest_ptx(b->m, NULL, &b->ptx, &b->entry, err));
    TMAP_CHECK(tmap_manifest_generate(b->m, 42, err));
    TMAP_CHECK(tmap_manifest_bind(b->m, c, &b->l, err));
}

/* Copies of every array of the manifest as the GPU has them now: each is
 * its byte size (a size_t) followed by the bytes; NULL-terminated. */
static inline void **test_bound_outputs(test_bound *b)
{
    void **outs = calloc(b->m->narrays + 1, sizeof *outs);
    for (size_t i = 0; i < b->m->narrays; i++) {
        tmap_array_view v;
        TMAP_CHECK(tmap_manifest_fetch(b->m, b->m->arrays[i].name, err));
        TMAP_CHECK(tmap_manifest_array(b->m, i, &v));
        size_t bytes = v.count * v.elem_size;
        outs[i] = malloc(bytes + sizeof(size_t));
        *(size_t *)outs[i] = bytes;
        memcpy((char *)outs[i] + sizeof(size_t), v.host, bytes);
    }
    return outs;
}

static inline void test_bound_close(test_bound *b)
{
    tmap_manifest_free(b->m);
    free(b->ptx);
    free(b->entry);
}

static inline void test_outputs_free(void **outs)
{
    for (size_t i = 0; outs[i]; i++)
        free(outs[i]);
    free(outs);
}

/* Fails unless every array of got equals want's; frees got. */
static inline void test_outputs_equal(void **want, void **got)
{
    for (size_t i = 0; want[i]; i++) {
        size_t bytes = *(size_t *)want[i];
        assert_int_equal(bytes, *(size_t *)got[i]);
        assert_memory_equal((char *)want[i] + sizeof(size_t), (char *)got[i] + sizeof(size_t),
                            bytes);
    }
    test_outputs_free(got);
}

/* perm[0..n) copied to a new device buffer. */
static inline uint64_t test_upload_perm(tmap_cuda *c, const uint32_t *perm, size_t n)
{
    uint64_t d = 0;
    TMAP_CHECK(tmap_cuda_alloc(c, n * 4, &d, err));
    TMAP_CHECK(tmap_cuda_upload(c, d, perm, n * 4, err));
    return d;
}

#endif

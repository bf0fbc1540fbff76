/*
 * fuzz_npy.c -- libFuzzer target: the .npy parser on the bytes, then the
 * same bytes as a file through the typed loads (range-checked conversions
 * to u32, i64, f64) and as a BBV file without a sidecar.  What parses must
 * hold the data its shape says.  Seed corpus: tests/fuzz/npy/.
 */
#include <stdlib.h>

#include "common/fuzz_util.h"
#include "threadmap/common.h"

static void check_parsed(const tmap_npy_array *a, size_t size)
{
    static const size_t item[] = {1, 4, 4, 8, 4, 8}; /* by tmap_npy_dtype */
    if (a->ndim < 1 || a->ndim > 2 || (a->ndim == 1 && a->dim[1] != 1))
        abort();
    if ((size_t)a->dtype >= sizeof item / sizeof item[0])
        abort();
    if (a->dim[1] && a->dim[0] > size / item[a->dtype] / a->dim[1])
        abort(); /* more elements than the bytes can hold */
}

static void typed_loads(const char *path)
{
    tmap_error err;
    size_t dim[2];
    uint32_t *u = NULL;
    int64_t *i = NULL;
    double *d = NULL;
    if (tmap_npy_load_u32(path, TMAP_NPY_ANY, &u, dim, &err) == TMAP_OK)
        free(u);
    if (tmap_npy_load_i64(path, TMAP_NPY_2D, &i, dim, &err) == TMAP_OK)
        free(i);
    if (tmap_npy_load_f64(path, TMAP_NPY_1D, &d, dim, &err) == TMAP_OK)
        free(d);
    tmap_bbv bbv = {0};
    char **names = NULL;
    if (tmap_bbv_load(path, &bbv, &names, &err) == TMAP_OK) {
        if (names)
            abort(); /* there is no sidecar */
        tmap_bbv_free(&bbv);
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    tmap_npy_array a;
    tmap_error err;
    if (tmap_npy_parse(data, size, "fuzz.npy", &a, &err) == TMAP_OK) {
        check_parsed(&a, size);
        tmap_npy_array_free(&a);
    }
    char path[128];
    if (fuzz_to_file(data, size, "npy", path, sizeof path))
        typed_loads(path);
    unlink(path);
    return 0;
}

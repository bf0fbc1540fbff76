/*
 * fuzz_predictor.c -- libFuzzer target: the predictor file.  Unless the
 * input holds a checksum line of its own, the right checksum is appended,
 * so that the fuzzer reaches the parser behind it.  What loads predicts
 * the BBVs of three threads (features 0, 1 and -1e300..1e300).
 * Seed corpus: the model.txt files of benchmarks/results, checksum line cut.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "common/fuzz_util.h"
#include "threadmap/model.h"

/* The input, with "checksum HEX16\n" of FNV-1a 64 appended (malloc'ed). */
static char *with_checksum(const unsigned char *data, size_t size, size_t *len)
{
    char *t = malloc(size + 32);
    if (!t)
        return NULL;
    memcpy(t, data, size);
    if (!size || t[size - 1] != '\n')
        t[size++] = '\n';
    uint64_t h = tmap_fnv1a(t, size);
    *len = size + (size_t)snprintf(t + size, 32, "checksum %016" PRIx64 "\n", h);
    return t;
}

/* Whether some line of the input starts with "checksum ". */
static int has_checksum_line(const unsigned char *data, size_t size)
{
    for (size_t i = 0; i + 9 <= size; i++)
        if ((i == 0 || data[i - 1] == '\n') && !memcmp(data + i, "checksum ", 9))
            return 1;
    return 0;
}

static void predict(const tmap_predictor *p)
{
    size_t n = 3, np = p->nfeatures;
    double *x = calloc(n * (np ? np : 1), sizeof *x);
    tmap_bbv bbv = {0};
    tmap_error err;
    for (size_t j = 0; x && j < np; j++) {
        x[np + j] = 1;
        x[2 * np + j] = j % 2 ? 1e300 : -1e300;
    }
    if (x && tmap_predict(p, x, n, &bbv, &err) == TMAP_OK) {
        if (bbv.nthreads != n || bbv.nblocks != p->nblocks)
            abort();
        tmap_bbv_free(&bbv);
    }
    free(x);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    size_t len = size;
    char *text = has_checksum_line(data, size) ? NULL : with_checksum(data, size, &len);
    char path[128];
    tmap_predictor p;
    tmap_error err;
    if (fuzz_to_file(text ? text : (const char *)data, len, "txt", path, sizeof path) &&
        tmap_predictor_load(path, NULL, 0, NULL, &p, &err) == TMAP_OK) {
        predict(&p);
        tmap_predictor_free(&p);
    }
    unlink(path);
    free(text);
    return 0;
}

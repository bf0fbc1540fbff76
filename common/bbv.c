/*
 * bbv.c -- the BBV matrix: created zeroed, freed; and BBV files: a uint32 [threads, blocks] .npy plus a JSON sidecar
 * (PATH.json) that names the blocks, so a BBV can be opened from Python and
 * still be tied to the CFG it was counted on.
 */
#include "threadmap/common.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"

#define BBV_FORMAT "threadmap-bbv"
#define BBV_VERSION 1

tmap_status tmap_bbv_create(tmap_bbv *bbv, size_t nthreads, size_t nblocks,
                            tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, bbv);
    if (absent)
        return absent;
    memset(bbv, 0, sizeof *bbv);
    if (nblocks && nthreads > ((size_t)-1) / sizeof(uint32_t) / nblocks)
        return tmap_fail(err, TMAP_ERR_INVALID, "BBV matrix %zu x %zu is too large",
                         nthreads, nblocks);
    size_t n = nthreads * nblocks;
    bbv->counts = calloc(n ? n : 1, sizeof(uint32_t));
    if (!bbv->counts)
        return tmap_fail(err, TMAP_ERR_NOMEM, "cannot allocate a %zu x %zu BBV matrix",
                         nthreads, nblocks);
    bbv->nthreads = nthreads;
    bbv->nblocks = nblocks;
    return TMAP_OK;
}

void tmap_bbv_free(tmap_bbv *bbv)
{
    if (!bbv)
        return;
    free(bbv->counts);
    memset(bbv, 0, sizeof *bbv);
}

void tmap_names_free(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

char *tmap_bbv_sidecar_path(const char *path)
{
    if (!path)
        return NULL;
    size_t n = strlen(path);
    char *p = malloc(n + 6);
    if (p)
        snprintf(p, n + 6, "%s.json", path);
    return p;
}

/* Builds the sidecar JSON text (malloc'ed) or NULL when out of memory. */
static char *bbv_sidecar_text(const tmap_bbv *bbv, const char *const *names)
{
    json_t *root = json_object(), *blocks = names ? json_array() : json_null();
    if (!root || !blocks) {
        json_decref(root);
        json_decref(blocks);
        return NULL;
    }
    int bad = json_object_set_new(root, "format", json_string(BBV_FORMAT)) ||
              json_object_set_new(root, "version", json_integer(BBV_VERSION)) ||
              json_object_set_new(root, "nthreads", json_integer((json_int_t)bbv->nthreads)) ||
              json_object_set_new(root, "nblocks", json_integer((json_int_t)bbv->nblocks));
    for (size_t b = 0; names && !bad && b < bbv->nblocks; b++)
        bad = json_array_append_new(blocks, json_string(names[b] ? names[b] : ""));
    bad = json_object_set_new(root, "blocks", blocks) || bad;
    char *text = bad ? NULL : json_dumps(root, JSON_INDENT(1));
    json_decref(root);
    return text;
}

tmap_status tmap_bbv_save(const char *path, const tmap_bbv *bbv,
                          const char *const *names, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, bbv);
    if (absent)
        return absent;
    size_t dim[2] = {bbv->nthreads, bbv->nblocks};
    tmap_buf npy = {0};
    tmap_file_set set = {0};
    tmap_status s = tmap_npy_encode(path, TMAP_NPY_U4, bbv->counts, 2, dim, &npy, err);
    char *side = tmap_bbv_sidecar_path(path), *text = bbv_sidecar_text(bbv, names);
    if (!s && (!side || !text))
        s = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory writing the sidecar", path);
    /* the matrix and its sidecar are replaced together or not at all */
    if (!s)
        s = tmap_file_set_add(&set, path, npy.data, npy.len, err);
    if (!s)
        s = tmap_file_set_add(&set, side, text, strlen(text), err);
    if (!s)
        s = tmap_file_set_commit(&set, err);
    tmap_file_set_abort(&set);
    tmap_buf_free(&npy);
    free(side);
    free(text);
    return s;
}

/* Reads the block names from a parsed sidecar; checks it fits the matrix. */
static tmap_status bbv_sidecar_names(json_t *root, const char *side, const tmap_bbv *bbv,
                                     char ***names, tmap_error *err)
{
    json_t *fmt = json_object_get(root, "format"), *ver = json_object_get(root, "version");
    json_t *nt = json_object_get(root, "nthreads"), *nb = json_object_get(root, "nblocks");
    json_t *blocks = json_object_get(root, "blocks");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), BBV_FORMAT))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: field 'format' is not \"" BBV_FORMAT "\"",
                         side);
    if (!json_is_integer(ver) || json_integer_value(ver) != BBV_VERSION)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: field 'version' is not %d", side, BBV_VERSION);
    if (!json_is_integer(nt) || (size_t)json_integer_value(nt) != bbv->nthreads)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: field 'nthreads' does not match the matrix (%zu rows)", side,
                         bbv->nthreads);
    if (!json_is_integer(nb) || (size_t)json_integer_value(nb) != bbv->nblocks)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: field 'nblocks' does not match the matrix (%zu columns)", side,
                         bbv->nblocks);
    if (json_is_null(blocks) || !blocks)
        return TMAP_OK;
    if (!json_is_array(blocks) || json_array_size(blocks) != bbv->nblocks)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s: field 'blocks' is not an array of %zu names", side, bbv->nblocks);
    char **v = calloc(bbv->nblocks ? bbv->nblocks : 1, sizeof *v);
    if (!v)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", side);
    for (size_t b = 0; b < bbv->nblocks; b++) {
        json_t *e = json_array_get(blocks, b);
        if (!json_is_string(e) || !(v[b] = strdup(json_string_value(e)))) {
            tmap_names_free(v, bbv->nblocks);
            return tmap_fail(err, TMAP_ERR_FORMAT, "%s: blocks[%zu] is not a string", side, b);
        }
    }
    *names = v;
    return TMAP_OK;
}

tmap_status tmap_bbv_load(const char *path, tmap_bbv *bbv, char ***names,
                          tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, bbv);
    if (absent)
        return absent;
    size_t dim[2];
    uint32_t *counts;
    memset(bbv, 0, sizeof *bbv);
    if (names)
        *names = NULL;
    tmap_status s = tmap_npy_load_u32(path, TMAP_NPY_2D, &counts, dim, err);
    if (s)
        return s;
    bbv->counts = counts;
    bbv->nthreads = dim[0];
    bbv->nblocks = dim[1];
    char *side = tmap_bbv_sidecar_path(path);
    if (!side) {
        tmap_bbv_free(bbv);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    }
    FILE *f = fopen(side, "rb");
    if (!f) { /* no sidecar: the names are unknown */
        free(side);
        return TMAP_OK;
    }
    fclose(f);
    json_error_t jerr;
    json_t *root = json_load_file(side, 0, &jerr);
    char **v = NULL;
    if (!root)
        s = tmap_fail(err, TMAP_ERR_FORMAT, "%s:%d: %s", side, jerr.line, jerr.text);
    else if (!json_is_object(root))
        s = tmap_fail(err, TMAP_ERR_FORMAT, "%s: not a JSON object", side);
    else
        s = bbv_sidecar_names(root, side, bbv, &v, err);
    json_decref(root);
    free(side);
    if (s) {
        tmap_bbv_free(bbv);
        return s;
    }
    if (names)
        *names = v;
    else
        tmap_names_free(v, bbv->nblocks);
    return TMAP_OK;
}

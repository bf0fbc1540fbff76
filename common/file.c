/*
 * file.c -- whole files: read into memory, written through a temporary
 * renamed into place; folders made with their parents.
 */
#include "common/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

tmap_status tmap_file_read(const char *path, char **data, size_t *len,
                           tmap_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot open: %s", path,
                         strerror(errno));
    tmap_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        tmap_buf_put(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_IO, "%s: read error", path);
    }
    if (b.oom) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory reading file", path);
    }
    if (!b.data)
        tmap_buf_put(&b, "", 0);
    *data = b.data;
    if (len)
        *len = b.len;
    return TMAP_OK;
}

tmap_status tmap_file_write(const char *path, const void *data, size_t n,
                            tmap_error *err)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    snprintf(tmp, plen + 16, "%s.tmp~", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        tmap_status s = tmap_fail(err, TMAP_ERR_IO, "%s: cannot create: %s", path,
                                  strerror(errno));
        free(tmp);
        return s;
    }
    int ok = fwrite(data, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        free(tmp);
        return tmap_fail(err, TMAP_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    free(tmp);
    return TMAP_OK;
}

tmap_status tmap_dir_make(const char *dir, tmap_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: path too long", dir);
    /* each prefix ending at a '/' (and the whole path) is created in turn */
    for (char *p = path + 1;; p++) {
        int end = *p == '\0';
        if (*p != '/' && !end)
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return tmap_fail(err, TMAP_ERR_IO, "%s: cannot create folder: %s", path,
                             strerror(errno));
        if (end)
            return TMAP_OK;
        *p = '/';
    }
}

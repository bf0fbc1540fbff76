/*
 * file.c -- whole files: read into memory, written through a temporary
 * renamed into place; folders made with their parents.
 */
#include "common/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The input bound: $THREADMAP_MAX_INPUT_MB when set to a positive number,
 * else TMAP_FILE_MAX. */
size_t tmap_file_max(void)
{
    const char *env = getenv("THREADMAP_MAX_INPUT_MB");
    char *end;
    unsigned long long mb = env ? strtoull(env, &end, 10) : 0;
    if (!env || !*env || *end || mb == 0 || mb > ((size_t)-1 >> 20))
        return TMAP_FILE_MAX;
    return (size_t)mb << 20;
}

tmap_status tmap_file_read_max(const char *path, size_t max, char **data, size_t *len,
                               tmap_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot open: %s", path,
                         strerror(errno));
    tmap_buf b = {0};
    char chunk[65536];
    size_t n;
    while (!b.oom && b.len <= max && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        tmap_buf_put(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    tmap_status s = TMAP_OK;
    if (bad)
        s = tmap_fail(err, TMAP_ERR_IO, "%s: read error", path);
    else if (b.oom)
        s = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory reading file", path);
    else if (b.len > max)
        s = tmap_fail(err, TMAP_ERR_IO,
                      "%s: larger than the %zu MiB an input may have "
                      "(THREADMAP_MAX_INPUT_MB raises it)", path, max >> 20);
    else if (!b.data)
        tmap_buf_put(&b, "", 0);
    if (s || b.oom) {
        tmap_buf_free(&b);
        return s ? s : tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    }
    *data = b.data;
    if (len)
        *len = b.len;
    return TMAP_OK;
}

tmap_status tmap_file_read(const char *path, char **data, size_t *len, tmap_error *err)
{
    return tmap_file_read_max(path, tmap_file_max(), data, len, err);
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

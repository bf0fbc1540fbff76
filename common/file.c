/*
 * file.c -- whole files: read into memory; written through unique
 * temporaries renamed into place only once every file of a set is written
 * (a replaced file keeps its mode); "-" writes stdout; folders made with
 * their parents.
 */
#include "common/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Writes all n bytes to fd; 0 or -1 (errno set). */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Creates a new file "PATH.tmpXXXXXXXX" (random, O_EXCL, mode 0666 less
 * the umask); returns its fd and its name in *tmp (malloc'ed), or -1. */
static int temp_create(const char *path, char **tmp)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
    size_t plen = strlen(path);
    if (!(*tmp = malloc(plen + 16)))
        return errno = ENOMEM, -1;
    for (int tries = 0; tries < 100; tries++) {
        unsigned char r[8];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            break;
        memcpy(*tmp, path, plen);
        memcpy(*tmp + plen, ".tmp", 4);
        for (int i = 0; i < 8; i++)
            (*tmp)[plen + 4 + i] = digits[r[i] & 31];
        (*tmp)[plen + 12] = '\0';
        int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
    }
    int saved = errno;
    free(*tmp);
    *tmp = NULL;
    errno = saved;
    return -1;
}

/* "-" (stdout) and what exists but is not a regular file (/dev/null, a
 * FIFO) are written in place: they cannot be renamed over. */
static tmap_status write_in_place(const char *path, const void *data, size_t n,
                                  tmap_error *err)
{
    if (!strcmp(path, "-")) {
        if (fwrite(data, 1, n, stdout) != n || fflush(stdout) != 0)
            return tmap_fail(err, TMAP_ERR_IO, "writing to stdout failed: %s", strerror(errno));
        return TMAP_OK;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    int bad = fd < 0 || write_all(fd, data, n) != 0;
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && !bad)
        bad = 1, saved = errno;
    return bad ? tmap_fail(err, TMAP_ERR_IO, "%s: write failed: %s", path, strerror(saved))
               : TMAP_OK;
}

tmap_status tmap_file_set_add(tmap_file_set *set, const char *path, const void *data,
                              size_t n, tmap_error *err)
{
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (!strcmp(path, "-") || (exists && !S_ISREG(st.st_mode)))
        return write_in_place(path, data, n, err);
    if (set->n == TMAP_FILE_SET_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: more than %d files in one set", path,
                         TMAP_FILE_SET_MAX);
    char *tmp = NULL;
    int fd = temp_create(path, &tmp);
    if (fd < 0)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot create a temporary beside it: %s",
                         path, strerror(errno));
    int bad = write_all(fd, data, n) != 0 || (exists && fchmod(fd, st.st_mode & 07777) != 0);
    int saved = errno;
    if (close(fd) != 0 && !bad)
        bad = 1, saved = errno;
    char *dup = bad ? NULL : strdup(path);
    if (bad || !dup) {
        remove(tmp);
        free(tmp);
        return tmap_fail(err, TMAP_ERR_IO, "%s: write failed: %s", path,
                         strerror(bad ? saved : ENOMEM));
    }
    set->tmp[set->n] = tmp;
    set->path[set->n++] = dup;
    return TMAP_OK;
}

void tmap_file_set_abort(tmap_file_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        remove(set->tmp[i]);
        free(set->tmp[i]);
        free(set->path[i]);
    }
    set->n = 0;
}

tmap_status tmap_file_set_commit(tmap_file_set *set, tmap_error *err)
{
    tmap_status s = TMAP_OK;
    for (size_t i = 0; i < set->n && !s; i++)
        if (rename(set->tmp[i], set->path[i]) != 0)
            s = tmap_fail(err, TMAP_ERR_IO, "%s: cannot rename %s into place: %s",
                          set->path[i], set->tmp[i], strerror(errno));
        else
            *set->tmp[i] = '\0'; /* renamed: nothing to remove */
    for (size_t i = 0; i < set->n; i++)
        if (*set->tmp[i])
            remove(set->tmp[i]);
    tmap_file_set_abort(set);
    return s;
}

tmap_status tmap_file_write(const char *path, const void *data, size_t n,
                            tmap_error *err)
{
    tmap_file_set set = {0};
    tmap_status s = tmap_file_set_add(&set, path, data, n, err);
    return s ? s : tmap_file_set_commit(&set, err);
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

/*
 * fuzz_util.h -- what the libFuzzer targets (the fuzz_*.c files) share: the input
 * written to a file of this process's own, for the parsers that read a
 * path.  Included by fuzz targets only.
 */
#ifndef TMAP_COMMON_FUZZ_UTIL_H
#define TMAP_COMMON_FUZZ_UTIL_H

#include <stdio.h>
#include <unistd.h>

/* Writes data to /tmp/tmap_fuzz_PID.SUFFIX, its name in path (cap >= 64);
 * 0 when it cannot.  The caller unlinks it. */
static inline int fuzz_to_file(const void *data, size_t size, const char *suffix, char *path,
                               size_t cap)
{
    snprintf(path, cap, "/tmp/tmap_fuzz_%ld.%s", (long)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

#endif

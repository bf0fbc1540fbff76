/*
 * cuobjdump.c (attach) -- the PTX modules of a binary as the toolkit's
 * `cuobjdump -ptx` prints them: each after a "Fatbin ptx code:" banner and
 * its "arch = sm_XY" and "ptxasOptions" lines.  The fallback for fatbin
 * entries that image.c cannot inflate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/image.h"
#include "attach/process.h"
#include "common/base.h"

static const char BANNER[] = "Fatbin ptx code:";

/* One module: [s, end) from a banner; its text follows "ptxasOptions". */
static tmap_status add_module(tmap_image *img, const char *s, const char *end,
                              tmap_error *err)
{
    unsigned arch = 0;
    const char *a = strstr(s, "arch = sm_");
    if (a && a < end)
        arch = (unsigned)strtoul(a + 10, NULL, 10);
    const char *opt = strstr(s, "ptxasOptions");
    const char *text = opt && opt < end ? strchr(opt, '\n') : NULL;
    if (!text || text >= end)
        return tmap_fail(err, TMAP_ERR_INVALID, "cuobjdump: a PTX module without its header");
    size_t n = (size_t)(end - text - 1);
    char *copy = malloc(n + 1);
    if (!copy)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    memcpy(copy, text + 1, n);
    copy[n] = '\0';
    tmap_status st = tmap_image_scan(img, copy, n + 1, err);
    if (st == TMAP_OK)
        img->ptx[img->nptx - 1].arch = arch;
    free(copy);
    return st;
}

static tmap_status split(tmap_image *img, const char *out, tmap_error *err)
{
    tmap_status st = TMAP_OK;
    for (const char *s = strstr(out, BANNER); st == TMAP_OK && s;) {
        const char *next = strstr(s + 1, "Fatbin ");
        const char *end = next ? next : s + strlen(s);
        st = add_module(img, s, end, err);
        s = next ? strstr(next, BANNER) : NULL;
    }
    return st;
}

tmap_status tmap_cuobjdump_scan(tmap_image *img, const char *cuobjdump, const char *path,
                                tmap_error *err)
{
    char *argv[] = {(char *)cuobjdump, "-ptx", (char *)path, NULL};
    char *out = NULL;
    tmap_status st = tmap_process_capture(argv, &out, err);
    if (st == TMAP_OK)
        st = split(img, out, err);
    free(out);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "%s -ptx %s", cuobjdump, path);
    return st;
}

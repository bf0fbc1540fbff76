/*
 * ptx_input.c -- reading a PTX file given on the command line into a module.
 */
#include "cli/ptx_input.h"

#include <stdlib.h>
#include <string.h>

#include "instrument/base.h"

tmap_status tmap_cli_load_ptx(const char *path, tmap_ptx_module **m, tmap_error *err)
{
    size_t n = strlen(path);
    if (n > 3 && !strcmp(path + n - 3, ".cu"))
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "%s: CUDA input needs the NVRTC front end (tmap_compile), which "
                         "this build lacks; give PTX", path);
    char *text = NULL;
    size_t len = 0;
    tmap_status st = tmap_file_read(path, &text, &len, err);
    if (st != TMAP_OK)
        return st;
    st = tmap_ptx_parse(text, len, path, m, err);
    free(text);
    return st;
}

/*
 * dl.c -- a table of function pointers filled from a library loaded with
 * dlopen (dl.h).
 */
#include "common/dl.h"

#include <dlfcn.h>
#include <string.h>

const char *tmap_dl_resolve(void *lib, const tmap_dl_sym *table, size_t n, void *api)
{
    for (size_t i = 0; i < n; i++) {
        void *f = NULL;
        for (int j = 0; j < 2 && !f && table[i].names[j]; j++)
            f = dlsym(lib, table[i].names[j]);
        if (!f)
            return table[i].names[0];
        memcpy((char *)api + table[i].offset, &f, sizeof f);
    }
    return NULL;
}

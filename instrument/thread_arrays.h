/*
 * thread_arrays.h -- arrays (pointer parameters) that are not per-thread
 * (private to instrument/; the safety analysis reports them): indexed by
 * the thread id and by data, at two elements of the thread id (`row[t]`,
 * `row[t+1]`), or written at a data-dependent index.
 */
#ifndef TMAP_INSTRUMENT_THREAD_ARRAYS_H
#define TMAP_INSTRUMENT_THREAD_ARRAYS_H

#include "instrument/ptx.h"

typedef enum tmap_array_misuse {
    TMAP_ARRAY_TID_AND_DATA, /* x[t] and x[col[i]]              */
    TMAP_ARRAY_NEIGHBOUR,    /* row[t] and row[t+1]             */
    TMAP_ARRAY_DATA_WRITE    /* next[id] = ... for a loaded id, never
                                indexed by the thread: right unless moved */
} tmap_array_misuse;

typedef struct tmap_array_finding {
    const char *param;     /* the .param the pointer was loaded from (module text) */
    tmap_array_misuse what;
    uint32_t line;         /* the access that shows it */
    const char *opcode;
    int breaks_layout;     /* wrong under the layout transform, moved or not */
} tmap_array_finding;

/* Appends f's findings to *out (*n of them, capacity *cap; realloc'ed),
 * at most one per parameter. */
tmap_status tmap_thread_arrays_find(const tmap_ptx_module *m, const tmap_ptx_func *f,
                                    tmap_array_finding **out, size_t *n, size_t *cap,
                                    tmap_error *err);

#endif

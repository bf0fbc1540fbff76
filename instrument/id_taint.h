/*
 * id_taint.h -- where the values of thread/block ids go in one function
 * (private to instrument/; the safety analysis uses it).
 */
#ifndef TMAP_INSTRUMENT_ID_TAINT_H
#define TMAP_INSTRUMENT_ID_TAINT_H

#include "instrument/ptx.h"

/* How a register computed from %tid/%ctaid is used, beyond addressing. */
typedef enum tmap_id_use {
    TMAP_USE_STORE,         /* stored as a value (st, atom, red, sust)        */
    TMAP_USE_CALL,          /* passed to or returned from a call (st.param,
                               a register argument of call)                  */
    TMAP_USE_FLOAT,         /* converted to floating point                    */
    TMAP_USE_COMPARE_VALUE, /* compared (setp/set/brx) but never an index     */
    TMAP_USE_OTHER,         /* any other instruction (shfl, float math...)    */
    TMAP_USE_INDEX_COMPARE, /* compared, and also used as an index: a bounds
                               check; the only use that is control, not value */
    TMAP_NUSES
} tmap_id_use;

typedef struct tmap_id_uses {
    int count[TMAP_NUSES];
    uint32_t line[TMAP_NUSES];     /* PTX line of the first of each */
    const char *opcode[TMAP_NUSES]; /* its opcode (module text) */
} tmap_id_uses;

/* Adds the uses of id-derived registers in funcs[0..n) (a kernel and the
 * .funcs it reaches) to *uses (zero it first); ids passed to or returned
 * from direct calls among them are followed (call_links.h). */
tmap_status tmap_id_taint(const tmap_ptx_module *m, const tmap_ptx_func *const *funcs, size_t n,
                          tmap_id_uses *uses, tmap_error *err);

#endif

/*
 * values.h -- value numbering of one function's registers (private to
 * instrument/; the safety analysis uses it): which registers hold the same
 * value, and each value as an affine form `base + a * atom + b` over a
 * pointer parameter (base) and an opaque value (atom).
 */
#ifndef TMAP_INSTRUMENT_VALUES_H
#define TMAP_INSTRUMENT_VALUES_H

#include "instrument/ptx.h"

enum {
    TMAP_V_TID = 1,      /* depends on %tid / %ctaid                          */
    TMAP_V_DATA = 2,     /* depends on a value loaded from memory (not .param) */
    TMAP_V_UNFIXED = 4,  /* not computed from immediates, .param values and
                            %ntid / %nctaid alone (a loop variable, data, ids) */
    TMAP_V_VARYING = 8,  /* written more than once (or under a guard) with
                            different forms: an atom of its own               */
    TMAP_V_STEPS = 16    /* written more than once with one form but several
                            constants (a loop index `k = t; k += 1`, a pointer
                            bumped by 4): the form plus an unknown offset     */
};

#define TMAP_V_NONE UINT32_MAX /* no atom (a constant) or no base             */
#define TMAP_V_MANY (UINT32_MAX - 1) /* bases of several parameters          */

typedef struct tmap_value {
    uint32_t cls;    /* value class: registers of one class hold one value    */
    uint32_t atom;   /* the index part is a * atom + b; atom is a class       */
    int64_t a, b;    /* (a == 0: a constant index part)                       */
    uint32_t base;   /* the .param it points into (index in params), or
                        TMAP_V_NONE, or TMAP_V_MANY                           */
    uint8_t flags;   /* TMAP_V_*                                              */
    uint8_t known;   /* 0: never written (bottom)                             */
} tmap_value;

typedef struct tmap_values {
    const char **reg;   /* register names (module text), one per register    */
    tmap_value *val;    /* one per register                                  */
    size_t nregs;
    const char **param; /* .param names a pointer was loaded from            */
    size_t nparams;
    /* private */
    struct tmap_strmap *names; /* register name -> index */
    size_t capregs, capparams;
} tmap_values;

/* Numbers the values of f's registers (a fixed point over its body). */
tmap_status tmap_values_compute(const tmap_ptx_module *m, const tmap_ptx_func *f,
                                tmap_values *out, tmap_error *err);
/* The value of register `name`, or NULL (not a register of f, or a special
 * register). */
const tmap_value *tmap_values_of(const tmap_values *v, const char *name);
void tmap_values_free(tmap_values *v);

/* The memory access of instruction s (ld, st, atom, red...): the value of
 * its address plus the immediate offset, in *addr; 0 when s has no
 * register address. */
int tmap_values_address(const tmap_values *v, const tmap_ptx_stmt *s, tmap_value *addr);

#endif

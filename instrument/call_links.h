/*
 * call_links.h -- where values cross direct calls between the functions a
 * kernel reaches (private to instrument/; the id taint uses it): an
 * argument register of a call and the registers the callee loads the
 * parameter into, a callee's returned register and the caller's register
 * that receives it.
 */
#ifndef TMAP_INSTRUMENT_CALL_LINKS_H
#define TMAP_INSTRUMENT_CALL_LINKS_H

#include "instrument/ptx.h"

/* The value of register from_reg of funcs[from] reaches to_reg of funcs[to]. */
typedef struct tmap_call_link {
    size_t from, to;
    const char *from_reg, *to_reg;
} tmap_call_link;

typedef struct tmap_call_links {
    tmap_call_link *link;
    size_t n, cap;
    const tmap_ptx_stmt **passes; /* the st.param statements the links stand for */
    size_t npasses, cappasses;
} tmap_call_links;

/* The links of the direct calls among funcs[0..n). */
tmap_status tmap_call_links_find(const tmap_ptx_module *m, const tmap_ptx_func *const *funcs,
                                 size_t n, tmap_call_links *out, tmap_error *err);
/* 1 if statement s passes a value along a link (an argument or a return). */
int tmap_call_links_passes(const tmap_call_links *l, const tmap_ptx_stmt *s);
void tmap_call_links_free(tmap_call_links *l);

#endif

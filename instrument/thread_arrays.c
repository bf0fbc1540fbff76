/*
 * thread_arrays.c -- which pointer parameters of a function are not
 * per-thread arrays, from the addresses of its global/generic loads and
 * stores (values.c gives each address as `param + a * atom + b`).
 *
 * An access is by the thread when its index depends on the thread id and
 * not on loaded data and is one value (a * atom + b); by data when it
 * depends on loaded data.  A parameter is not per-thread when it is
 * accessed by the thread and by data, by the thread at two elements
 * (|b - b'| >= |a| for one atom and scale: row[t], row[t+1]), or stored at
 * a data-dependent index.  Accesses in loops whose index varies are
 * neither (a grid-stride loop is not judged).
 */
#include "instrument/thread_arrays.h"
#include "instrument/values.h"

#include <stdlib.h>
#include <string.h>

/* What one parameter's accesses showed so far. */
typedef struct param_uses {
    int by_thread, by_data, found;
    uint32_t atom;
    int64_t a, b;
} param_uses;

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

/* A load or store of global or generic memory. */
static int is_access(const char *op)
{
    if (strstr(op, ".param") || strstr(op, ".shared") || strstr(op, ".local") ||
        strstr(op, ".const"))
        return 0;
    return opcode_is(op, "ld") || opcode_is(op, "ldu") || opcode_is(op, "st") ||
           opcode_is(op, "atom") || opcode_is(op, "red");
}

/* The misuse that access `addr` adds to u, or -1. */
static int misuse(param_uses *u, const tmap_value *addr, int store)
{
    int data = (addr->flags & TMAP_V_DATA) != 0;
    int thread = !data && (addr->flags & TMAP_V_TID) && !(addr->flags & TMAP_V_VARYING) &&
                 addr->a != 0;
    if (data && store)
        return TMAP_ARRAY_DATA_WRITE;
    if ((data && u->by_thread) || (thread && u->by_data))
        return TMAP_ARRAY_TID_AND_DATA;
    if (thread && u->by_thread && u->atom == addr->atom && u->a == addr->a) {
        int64_t d = addr->b - u->b;
        if ((d < 0 ? -d : d) >= (addr->a < 0 ? -addr->a : addr->a))
            return TMAP_ARRAY_NEIGHBOUR;
    }
    u->by_data |= data;
    if (thread && !u->by_thread) {
        u->by_thread = 1;
        u->atom = addr->atom;
        u->a = addr->a;
        u->b = addr->b;
    }
    return -1;
}

static int add_finding(tmap_array_finding **out, size_t *n, size_t *cap,
                       const tmap_array_finding *f)
{
    if (tmap_grow(out, cap, *n + 1, sizeof **out))
        return -1;
    (*out)[(*n)++] = *f;
    return 0;
}

tmap_status tmap_thread_arrays_find(const tmap_ptx_module *m, const tmap_ptx_func *f,
                                    tmap_array_finding **out, size_t *n, size_t *cap,
                                    tmap_error *err)
{
    tmap_values v;
    tmap_status st = tmap_values_compute(m, f, &v, err);
    if (st != TMAP_OK)
        return st;
    param_uses *uses = calloc(v.nparams + 1, sizeof *uses);
    int bad = !uses;
    for (size_t i = 0; !bad && i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        tmap_value addr;
        if (s->kind != TMAP_ST_INSTR || !is_access(s->text) || !tmap_values_address(&v, s, &addr) ||
            addr.base >= v.nparams || uses[addr.base].found)
            continue;
        int what = misuse(&uses[addr.base], &addr, opcode_is(s->text, "st"));
        if (what < 0)
            continue;
        uses[addr.base].found = 1;
        tmap_array_finding fd = {v.param[addr.base], (tmap_array_misuse)what, s->line, s->text};
        bad = add_finding(out, n, cap, &fd);
    }
    free(uses);
    tmap_values_free(&v);
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory analyzing %s", m->file,
                           f->name)
               : TMAP_OK;
}

/*
 * thread_arrays.c -- which pointer parameters of a function are not
 * per-thread arrays, from the addresses of its global/generic loads and
 * stores (values.c gives each address as `param + a * atom + b`).
 *
 * An access is by the thread when its index depends on the thread id and
 * not on loaded data and is one value (a * atom + b); by data when it
 * depends on loaded data.  A parameter is not per-thread, and breaks the
 * layout transform whether it is moved or not, when it is accessed by the
 * thread and by data, or by the thread at two elements (|b - b'| >= |a| for
 * one atom and scale: row[t], row[t+1]).  One stored at a data-dependent
 * index and never accessed by the thread is not per-thread either, but is
 * right as long as it is not moved (declared per-thread).  An index by the
 * thread plus a loop step (`a[t + k]`, a pointer bumped in a loop: STEPS)
 * reads other threads' elements when the thread's scale is at most the
 * access size (one element per thread); `a[K*t + k]` (K elements per
 * thread) is not judged.  An index that varies otherwise (a grid-stride
 * loop by blockDim * gridDim) is neither.
 */
#include "instrument/thread_arrays.h"
#include "instrument/values.h"

#include <stdlib.h>
#include <string.h>

/* What one parameter's accesses showed: the line and opcode of the first
 * access of each kind (line 0: none). */
typedef struct param_uses {
    uint32_t atom;       /* of the first access by the thread */
    int64_t a, b;
    uint32_t line[4];    /* by the thread, by data, at a neighbour, data store */
    const char *op[4];
} param_uses;

enum { BY_THREAD, BY_DATA, NEIGHBOUR, DATA_STORE };

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

static void saw(param_uses *u, int kind, const tmap_ptx_stmt *s)
{
    if (!u->line[kind]) {
        u->line[kind] = s->line;
        u->op[kind] = s->text;
    }
}

/* The bytes an access moves (its type times its vector length). */
static uint64_t access_bytes(const char *op)
{
    uint32_t size = 0, vec = 1;
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
        tmap_ptx_type_part(p, &size, &vec);
    return (uint64_t)size * vec;
}

static uint64_t magnitude(int64_t a)
{
    return a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
}

/* Adds access s at address `addr` to u. */
static void classify(param_uses *u, const tmap_value *addr, const tmap_ptx_stmt *s)
{
    int data = (addr->flags & TMAP_V_DATA) != 0;
    int thread = !data && (addr->flags & TMAP_V_TID) && !(addr->flags & TMAP_V_VARYING) &&
                 addr->a != 0;
    if (data)
        saw(u, opcode_is(s->text, "st") ? DATA_STORE : BY_DATA, s);
    if (data && opcode_is(s->text, "st"))
        saw(u, BY_DATA, s);
    if (!thread)
        return;
    if (addr->flags & TMAP_V_STEPS) { /* t + k in a loop: one element per thread */
        saw(u, BY_THREAD, s);
        if (magnitude(addr->a) <= access_bytes(s->text))
            saw(u, NEIGHBOUR, s);
        return;
    }
    if (!u->line[BY_THREAD]) {
        u->atom = addr->atom;
        u->a = addr->a;
        u->b = addr->b;
    }
    saw(u, BY_THREAD, s);
    /* |b - b'| >= |a|, in unsigned arithmetic (hostile offsets) */
    uint64_t d = addr->b > u->b ? (uint64_t)addr->b - (uint64_t)u->b
                                : (uint64_t)u->b - (uint64_t)addr->b;
    if (u->atom == addr->atom && u->a == addr->a && d >= magnitude(addr->a))
        saw(u, NEIGHBOUR, s);
}

/* The finding of parameter p's uses, if any (what < 0: none). */
static tmap_array_finding conclude(const param_uses *u, const char *param)
{
    tmap_array_finding f = {param, (tmap_array_misuse)-1, 0, NULL, 1};
    int k = u->line[NEIGHBOUR] ? NEIGHBOUR
            : u->line[BY_THREAD] && u->line[BY_DATA] ? BY_DATA
            : u->line[DATA_STORE] ? DATA_STORE : -1;
    if (k < 0)
        return f;
    f.what = k == NEIGHBOUR ? TMAP_ARRAY_NEIGHBOUR
             : k == BY_DATA ? TMAP_ARRAY_TID_AND_DATA : TMAP_ARRAY_DATA_WRITE;
    f.line = u->line[k];
    f.opcode = u->op[k];
    f.breaks_layout = k != DATA_STORE;
    return f;
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
        if (s->kind == TMAP_ST_INSTR && is_access(s->text) && tmap_values_address(&v, s, &addr) &&
            addr.base < v.nparams)
            classify(&uses[addr.base], &addr, s);
    }
    for (size_t p = 0; !bad && p < v.nparams; p++) {
        tmap_array_finding fd = conclude(&uses[p], v.param[p]);
        if ((int)fd.what >= 0)
            bad = add_finding(out, n, cap, &fd);
    }
    free(uses);
    tmap_values_free(&v);
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory analyzing %s", m->file,
                           f->name)
               : TMAP_OK;
}

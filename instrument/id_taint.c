/*
 * id_taint.c -- a flow-insensitive taint analysis of thread/block ids in one
 * function.
 *
 * Registers are identified by name.  Taint starts at %tid.* / %ctaid.* and
 * flows from the non-address source operands of a propagating instruction
 * (integer arithmetic, moves, integer cvt) to its destination operand.
 * Operands inside [ ] are addresses: they never taint a result, so a load's
 * result is clean.  A register is an index when it reaches an address:
 * it appears inside [ ] or is a source of a propagating instruction whose
 * destination is an index (a backward fixed point).  Every other use of a
 * tainted register is classified by tmap_id_use.
 */
#include "instrument/id_taint.h"

#include <stdlib.h>
#include <string.h>

enum { REG_TAINT = 1, REG_INDEX = 2 };

/* Open-addressing set of register names (module text) with flags. */
typedef struct regset {
    const char **name;
    uint8_t *flags;
    size_t cap, n;
} regset;

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int regset_grow(regset *r)
{
    size_t cap = r->cap ? 2 * r->cap : 64;
    const char **name = calloc(cap, sizeof *name);
    uint8_t *flags = calloc(cap, 1);
    if (!name || !flags) {
        free(name);
        free(flags);
        return -1;
    }
    for (size_t i = 0; i < r->cap; i++) {
        if (!r->name[i])
            continue;
        size_t j = hash(r->name[i]) & (cap - 1);
        while (name[j])
            j = (j + 1) & (cap - 1);
        name[j] = r->name[i];
        flags[j] = r->flags[i];
    }
    free(r->name);
    free(r->flags);
    r->name = name;
    r->flags = flags;
    r->cap = cap;
    return 0;
}

/* The flags slot of register `s`, added if new; NULL when out of memory. */
static uint8_t *regset_at(regset *r, const char *s)
{
    if (2 * (r->n + 1) > r->cap && regset_grow(r))
        return NULL;
    size_t j = hash(s) & (r->cap - 1);
    while (r->name[j] && strcmp(r->name[j], s))
        j = (j + 1) & (r->cap - 1);
    if (!r->name[j]) {
        r->name[j] = s;
        r->n++;
    }
    return &r->flags[j];
}

static void regset_free(regset *r)
{
    free(r->name);
    free(r->flags);
}

/* ------------------------------------------------------- opcode classes */

typedef enum op_class {
    OP_PROPAGATE, /* dest = operand 0, written from the sources            */
    OP_CVT,       /* like OP_PROPAGATE, but a float destination is a use    */
    OP_STORE,     /* no dest; every non-address operand is stored          */
    OP_ATOMIC,    /* dest from memory; the other operands are stored       */
    OP_COMPARE,   /* the result is a predicate: control                    */
    OP_SWITCH,    /* brx.idx: the index operand picks a branch: control    */
    OP_CALL,      /* register operands are arguments                       */
    OP_IGNORE,    /* operands are labels, barrier ids, ...                 */
    OP_OTHER      /* dest = operand 0 stays clean; a tainted source is a use */
} op_class;

static const struct {
    const char *base;
    op_class cls;
} classes[] = {
    {"mov", OP_PROPAGATE},  {"cvta", OP_PROPAGATE}, {"add", OP_PROPAGATE},
    {"sub", OP_PROPAGATE},  {"mul", OP_PROPAGATE},  {"mad", OP_PROPAGATE},
    {"mul24", OP_PROPAGATE}, {"mad24", OP_PROPAGATE}, {"div", OP_PROPAGATE},
    {"rem", OP_PROPAGATE},  {"shl", OP_PROPAGATE},  {"shr", OP_PROPAGATE},
    {"shf", OP_PROPAGATE},  {"and", OP_PROPAGATE},  {"or", OP_PROPAGATE},
    {"xor", OP_PROPAGATE},  {"not", OP_PROPAGATE},  {"cnot", OP_PROPAGATE},
    {"lop3", OP_PROPAGATE}, {"neg", OP_PROPAGATE},  {"abs", OP_PROPAGATE},
    {"min", OP_PROPAGATE},  {"max", OP_PROPAGATE},  {"selp", OP_PROPAGATE},
    {"slct", OP_PROPAGATE}, {"bfe", OP_PROPAGATE},  {"bfi", OP_PROPAGATE},
    {"prmt", OP_PROPAGATE}, {"popc", OP_PROPAGATE}, {"clz", OP_PROPAGATE},
    {"brev", OP_PROPAGATE}, {"bfind", OP_PROPAGATE}, {"sad", OP_PROPAGATE},
    {"addc", OP_PROPAGATE}, {"subc", OP_PROPAGATE}, {"madc", OP_PROPAGATE},
    {"szext", OP_PROPAGATE}, {"bmsk", OP_PROPAGATE}, {"cvt", OP_CVT},
    {"st", OP_STORE},       {"stu", OP_STORE},      {"red", OP_STORE},
    {"sust", OP_STORE},     {"sured", OP_STORE},    {"atom", OP_ATOMIC},
    {"setp", OP_COMPARE},   {"set", OP_COMPARE},    {"brx", OP_SWITCH},
    {"call", OP_CALL},      {"bra", OP_IGNORE},     {"ret", OP_IGNORE},
    {"exit", OP_IGNORE},    {"trap", OP_IGNORE},    {"bar", OP_IGNORE},
    {"barrier", OP_IGNORE}, {"membar", OP_IGNORE},  {"fence", OP_IGNORE},
    {"prefetch", OP_IGNORE}, {"prefetchu", OP_IGNORE},
};

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

static op_class class_of(const char *op)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (opcode_is(op, classes[i].base))
            return classes[i].cls;
    return OP_OTHER;
}

/* cvt's destination type is its first suffix that is not a modifier. */
static int cvt_to_float(const char *op)
{
    static const char *const mods[] = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi",
                                       "rna", "rs", "sat", "ftz", "relu", "satfinite", NULL};
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.')) {
        size_t n = strcspn(p + 1, ".");
        int mod = 0;
        for (size_t i = 0; mods[i]; i++)
            mod |= strlen(mods[i]) == n && !strncmp(p + 1, mods[i], n);
        if (!mod)
            return p[1] == 'f' || p[1] == 'e' || !strncmp(p + 1, "bf", 2) ||
                   !strncmp(p + 1, "tf", 2);
    }
    return 0;
}

static int is_id_sreg(const char *t)
{
    return !strncmp(t, "%tid", 4) || !strncmp(t, "%ctaid", 6);
}

/* --------------------------------------------------------- the analysis */

/* Per token of an instruction: its operand and whether it is inside [ ]. */
typedef struct tokpos {
    uint32_t opnd;
    int addr;
} tokpos;

static void token_positions(const tmap_ptx_stmt *s, tokpos *pos)
{
    int depth = 0;
    uint32_t op = 0;
    for (uint32_t k = 0; k < s->ntoks; k++) {
        while (op + 1 < s->nopnd && s->opnd[op + 1] <= k)
            op++;
        const tmap_ptx_tok *t = &s->toks[k];
        if (t->kind == TMAP_TOK_PUNCT && t->text[0] == '[')
            depth++;
        pos[k].opnd = op;
        pos[k].addr = depth > 0;
        if (t->kind == TMAP_TOK_PUNCT && t->text[0] == ']' && depth > 0)
            depth--;
    }
}

typedef struct analysis {
    const tmap_ptx_func *f;
    regset regs;
    tokpos *pos;      /* scratch, one per token of the longest instruction */
    size_t cappos;
} analysis;

static int has_dest(op_class c)
{
    return c == OP_PROPAGATE || c == OP_CVT || c == OP_ATOMIC || c == OP_COMPARE ||
           c == OP_OTHER;
}

/* Flags of a source token (an id register counts as tainted, not index). */
static int flags_of(analysis *a, const char *t, uint8_t *out)
{
    if (is_id_sreg(t)) {
        *out = REG_TAINT;
        return 0;
    }
    uint8_t *f = regset_at(&a->regs, t);
    if (!f)
        return -1;
    *out = *f;
    return 0;
}

static int positions(analysis *a, const tmap_ptx_stmt *s)
{
    if (tmap_grow(&a->pos, &a->cappos, s->ntoks + 1, sizeof *a->pos))
        return -1;
    token_positions(s, a->pos);
    return 0;
}

/* One pass of the forward taint (dest <- sources) or the backward index
 * propagation (sources <- dest); *changed is set when a flag was added. */
static int propagate(analysis *a, int backward, int *changed)
{
    for (size_t i = 0; i < a->f->nbody; i++) {
        const tmap_ptx_stmt *s = &a->f->body[i];
        if (s->kind != TMAP_ST_INSTR)
            continue;
        op_class c = class_of(s->text);
        if ((c != OP_PROPAGATE && c != OP_CVT) || (c == OP_CVT && cvt_to_float(s->text)))
            continue;
        if (positions(a, s))
            return -1;
        uint8_t any = 0;
        for (uint32_t k = 0; k < s->ntoks; k++) {
            const tmap_ptx_tok *t = &s->toks[k];
            if (t->kind != TMAP_TOK_REG || a->pos[k].addr || (a->pos[k].opnd == 0) != backward)
                continue; /* forward reads the sources, backward the dest */
            uint8_t fl;
            if (flags_of(a, t->text, &fl))
                return -1;
            any |= fl;
        }
        uint8_t want = backward ? REG_INDEX : REG_TAINT;
        if (!(any & want))
            continue;
        for (uint32_t k = 0; k < s->ntoks; k++) {
            const tmap_ptx_tok *t = &s->toks[k];
            if (t->kind != TMAP_TOK_REG || a->pos[k].addr || is_id_sreg(t->text) ||
                (a->pos[k].opnd == 0) == backward)
                continue; /* forward writes the dest, backward the sources */
            uint8_t *fl = regset_at(&a->regs, t->text);
            if (!fl)
                return -1;
            if (!(*fl & want)) {
                *fl |= want;
                *changed = 1;
            }
        }
    }
    return 0;
}

/* Marks every register written inside [ ] as an index. */
static int seed_indices(analysis *a)
{
    for (size_t i = 0; i < a->f->nbody; i++) {
        const tmap_ptx_stmt *s = &a->f->body[i];
        if (s->kind != TMAP_ST_INSTR)
            continue;
        if (positions(a, s))
            return -1;
        for (uint32_t k = 0; k < s->ntoks; k++) {
            if (s->toks[k].kind != TMAP_TOK_REG || !a->pos[k].addr)
                continue;
            uint8_t *fl = regset_at(&a->regs, s->toks[k].text);
            if (!fl)
                return -1;
            *fl |= REG_INDEX;
        }
    }
    return 0;
}

/* The use a tainted source of s with flags fl is, or -1 (none). */
static int use_of(const tmap_ptx_stmt *s, op_class c, uint8_t fl)
{
    switch (c) {
    case OP_PROPAGATE:
    case OP_IGNORE:
        return -1;
    case OP_CVT:
        return cvt_to_float(s->text) ? TMAP_USE_FLOAT : -1;
    case OP_STORE:
        return opcode_is(s->text, "st") && strstr(s->text, ".param") ? TMAP_USE_CALL
                                                                      : TMAP_USE_STORE;
    case OP_ATOMIC:
        return TMAP_USE_STORE;
    case OP_CALL:
        return TMAP_USE_CALL;
    case OP_COMPARE:
    case OP_SWITCH:
        return (fl & REG_INDEX) ? TMAP_USE_INDEX_COMPARE : TMAP_USE_COMPARE_VALUE;
    case OP_OTHER:
        return TMAP_USE_OTHER;
    }
    return -1;
}

static void record(tmap_id_uses *u, int use, const tmap_ptx_stmt *s)
{
    if (u->count[use]++ == 0) {
        u->line[use] = s->line;
        u->opcode[use] = s->text;
    }
}

/* Classifies each instruction's tainted non-address sources. */
static int collect_uses(analysis *a, tmap_id_uses *u)
{
    for (size_t i = 0; i < a->f->nbody; i++) {
        const tmap_ptx_stmt *s = &a->f->body[i];
        if (s->kind != TMAP_ST_INSTR)
            continue;
        op_class c = class_of(s->text);
        if (positions(a, s))
            return -1;
        int seen[TMAP_NUSES] = {0};
        for (uint32_t k = 0; k < s->ntoks; k++) {
            const tmap_ptx_tok *t = &s->toks[k];
            if (t->kind != TMAP_TOK_REG || a->pos[k].addr || (has_dest(c) && a->pos[k].opnd == 0))
                continue;
            uint8_t fl;
            if (flags_of(a, t->text, &fl))
                return -1;
            int use = (fl & REG_TAINT) ? use_of(s, c, fl) : -1;
            if (use >= 0 && !seen[use]++)
                record(u, use, s);
        }
    }
    return 0;
}

tmap_status tmap_id_taint(const tmap_ptx_module *m, const tmap_ptx_func *f, tmap_id_uses *uses,
                          tmap_error *err)
{
    analysis a = {0};
    a.f = f;
    int bad = seed_indices(&a);
    for (int changed = 1; !bad && changed;) {
        changed = 0;
        bad = propagate(&a, 0, &changed);
    }
    for (int changed = 1; !bad && changed;) {
        changed = 0;
        bad = propagate(&a, 1, &changed);
    }
    if (!bad)
        bad = collect_uses(&a, uses);
    regset_free(&a.regs);
    free(a.pos);
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory analyzing %s", m->file,
                           f->name)
               : TMAP_OK;
}

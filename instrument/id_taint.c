/*
 * id_taint.c -- a flow-insensitive taint analysis of thread/block ids in one
 * function.
 *
 * Flags belong to values, not register names (values.c): registers holding
 * the same value (a re-read of %tid.x, a recomputed `ctaid * ntid + tid`)
 * share them.  Taint starts at %tid.* / %ctaid.* and flows from the
 * non-address source operands of a propagating instruction (integer
 * arithmetic, moves, integer cvt) to its destination operand.  Operands
 * inside [ ] are addresses: they never taint a result, so a load's result
 * is clean.  A value is an index when it reaches an address: it appears
 * inside [ ] or is a source of a propagating instruction whose destination
 * is an index (a backward fixed point).  A compare is a bounds check when
 * it compares an index, or an affine form of one (`i + 3`), with a fixed
 * value (an immediate, or computed from .param values, %ntid and %nctaid
 * alone); any other compare of a tainted value is a position.  Every other
 * use of a tainted register is classified by tmap_id_use.
 */
#include "instrument/id_taint.h"
#include "instrument/call_links.h"
#include "instrument/values.h"

#include <stdlib.h>
#include <string.h>

enum { REG_TAINT = 1, REG_INDEX = 2 };

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
    const tmap_call_links *links;
    tmap_values vals;  /* registers of one class share their flags */
    uint8_t *flags;    /* per class (a register index) */
    tokpos *pos;      /* scratch, one per token of the longest instruction */
    size_t cappos;
} analysis;

static int has_dest(op_class c)
{
    return c == OP_PROPAGATE || c == OP_CVT || c == OP_ATOMIC || c == OP_COMPARE ||
           c == OP_OTHER;
}

/* The flags of the value in register t; NULL for a special register. */
static uint8_t *flags_at(analysis *a, const char *t)
{
    const tmap_value *v = tmap_values_of(&a->vals, t);
    return v && v->cls < a->vals.nregs ? &a->flags[v->cls] : NULL;
}

/* Flags of a source token (an id register counts as tainted, not index). */
static uint8_t flags_of(analysis *a, const char *t)
{
    uint8_t *f = flags_at(a, t);
    return is_id_sreg(t) ? REG_TAINT : f ? *f : 0;
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
            any |= flags_of(a, t->text);
        }
        uint8_t want = backward ? REG_INDEX : REG_TAINT;
        if (!(any & want))
            continue;
        for (uint32_t k = 0; k < s->ntoks; k++) {
            const tmap_ptx_tok *t = &s->toks[k];
            if (t->kind != TMAP_TOK_REG || a->pos[k].addr || is_id_sreg(t->text) ||
                (a->pos[k].opnd == 0) == backward)
                continue; /* forward writes the dest, backward the sources */
            uint8_t *fl = flags_at(a, t->text);
            if (fl && !(*fl & want)) {
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
            uint8_t *fl = flags_at(a, s->toks[k].text);
            if (fl)
                *fl |= REG_INDEX;
        }
    }
    return 0;
}

/* An index, or an affine form of one (`i + 3`), in register t. */
static int is_index(analysis *a, const char *t)
{
    const tmap_value *v = tmap_values_of(&a->vals, t);
    uint8_t *fl = flags_at(a, t);
    return (fl && (*fl & REG_INDEX)) ||
           (v && v->atom < a->vals.nregs && (a->flags[v->atom] & REG_INDEX));
}

/* A value that is the same in every thread and iteration: an immediate, or
 * computed from .param values, %ntid and %nctaid alone. */
static int is_fixed(analysis *a, const tmap_ptx_tok *t)
{
    const tmap_value *v = tmap_values_of(&a->vals, t->text);
    return t->kind == TMAP_TOK_NUMBER ||
           (t->kind == TMAP_TOK_REG && v && !(v->flags & TMAP_V_UNFIXED) &&
            !(flags_of(a, t->text) & REG_TAINT)); /* a .param that carries an id */
}

/* A bounds check: setp/set comparing an index with a fixed value
 * (`i >= n`, `i + 3 < n`); brx.idx on an index. */
static int is_bounds_check(analysis *a, const tmap_ptx_stmt *s, op_class c)
{
    if (c == OP_SWITCH)
        return s->ntoks && is_index(a, s->toks[0].text);
    if (s->nopnd < 3 || s->opnd[2] >= s->ntoks)
        return 0;
    const tmap_ptx_tok *x = &s->toks[s->opnd[1]], *y = &s->toks[s->opnd[2]];
    return (is_index(a, x->text) && is_fixed(a, y)) || (is_index(a, y->text) && is_fixed(a, x));
}

/* The use a tainted source of s is, or -1 (none). */
static int use_of(analysis *a, const tmap_ptx_stmt *s, op_class c)
{
    switch (c) {
    case OP_PROPAGATE:
    case OP_IGNORE:
        return -1;
    case OP_CVT:
        return cvt_to_float(s->text) ? TMAP_USE_FLOAT : -1;
    case OP_STORE:
        if (tmap_call_links_passes(a->links, s))
            return -1; /* followed into the callee or back to the caller */
        return opcode_is(s->text, "st") && strstr(s->text, ".param") ? TMAP_USE_CALL
                                                                      : TMAP_USE_STORE;
    case OP_ATOMIC:
        return TMAP_USE_STORE;
    case OP_CALL:
        return TMAP_USE_CALL;
    case OP_COMPARE:
    case OP_SWITCH:
        return is_bounds_check(a, s, c) ? TMAP_USE_INDEX_COMPARE : TMAP_USE_COMPARE_VALUE;
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
            int use = (flags_of(a, t->text) & REG_TAINT) ? use_of(a, s, c) : -1;
            if (use >= 0 && !seen[use]++)
                record(u, use, s);
        }
    }
    return 0;
}

/* Applies the call links in the forward (taint: from -> to) or backward
 * (index: to -> from) direction; *changed is set when a flag was added. */
static void cross_calls(analysis *as, const tmap_call_links *l, int backward, int *changed)
{
    uint8_t want = backward ? REG_INDEX : REG_TAINT;
    for (size_t i = 0; i < l->n; i++) {
        const tmap_call_link *k = &l->link[i];
        analysis *src = &as[backward ? k->to : k->from], *dst = &as[backward ? k->from : k->to];
        uint8_t *fl = flags_at(dst, backward ? k->from_reg : k->to_reg);
        if (fl && !(*fl & want) && (flags_of(src, backward ? k->to_reg : k->from_reg) & want)) {
            *fl |= want;
            *changed = 1;
        }
    }
}

/* The forward taint, then the backward index propagation, each to a fixed
 * point over all functions and the links between them. */
static int settle(analysis *as, size_t n, const tmap_call_links *l)
{
    for (int backward = 0; backward < 2; backward++)
        for (int changed = 1; changed;) {
            changed = 0;
            for (size_t i = 0; i < n; i++)
                if (propagate(&as[i], backward, &changed))
                    return -1;
            cross_calls(as, l, backward, &changed);
        }
    return 0;
}

tmap_status tmap_id_taint(const tmap_ptx_module *m, const tmap_ptx_func *const *funcs, size_t n,
                          tmap_id_uses *uses, tmap_error *err)
{
    tmap_call_links links;
    tmap_status st = tmap_call_links_find(m, funcs, n, &links, err);
    if (st != TMAP_OK)
        return st;
    analysis *as = calloc(n + 1, sizeof *as);
    int bad = !as;
    for (size_t i = 0; !bad && i < n && st == TMAP_OK; i++) {
        as[i].f = funcs[i];
        as[i].links = &links;
        st = tmap_values_compute(m, funcs[i], &as[i].vals, err);
        if (st == TMAP_OK)
            bad = !(as[i].flags = calloc(as[i].vals.nregs + 1, 1)) || seed_indices(&as[i]);
    }
    if (!bad && st == TMAP_OK)
        bad = settle(as, n, &links);
    for (size_t i = 0; !bad && st == TMAP_OK && i < n; i++)
        bad = collect_uses(&as[i], uses);
    for (size_t i = 0; as && i < n; i++) {
        tmap_values_free(&as[i].vals);
        free(as[i].flags);
        free(as[i].pos);
    }
    free(as);
    tmap_call_links_free(&links);
    if (st != TMAP_OK)
        return st;
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory analyzing %s", m->file,
                           funcs[0]->name)
               : TMAP_OK;
}

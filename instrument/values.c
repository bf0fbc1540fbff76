/*
 * values.c -- value numbering of one function's registers, so that the
 * safety analysis follows values, not register names: a register that
 * re-reads %tid.x, or recomputes `ctaid * ntid + tid` (as -G code does at
 * every use), holds the same value as the first one.
 *
 * Every register written once, without a guard, gets the value its
 * instruction computes: integer add/sub/mul/shl/mad with constants, moves
 * and integer cvt stay affine forms `base + a * atom + b` (widths and
 * signedness ignored); any other pure instruction is a new atom numbered by
 * (opcode, operand classes); a load is a new atom of its own.  A register
 * written more than once or under a guard is a class of its own: when its
 * definitions share one form but for the constant (`k = t` and `k = k + 1`,
 * through -G's phi copies too) it keeps the form, STEPS (plus an unknown
 * offset); otherwise it is its own atom, VARYING, with the union of its
 * definitions' flags and bases.  A fixed point over the body settles loops;
 * the pass count is bounded.
 */
#include "instrument/values.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PASSES 64

/* ------------------------------------------------- string -> index map */

typedef struct tmap_strmap {
    const char **key;
    uint32_t *val;
    size_t cap, n;
} tmap_strmap;

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int strmap_grow(tmap_strmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    const char **key = calloc(cap, sizeof *key);
    uint32_t *val = calloc(cap, sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        size_t j = m->key[i] ? hash(m->key[i]) & (cap - 1) : 0;
        while (m->key[i] && key[j])
            j = (j + 1) & (cap - 1);
        if (m->key[i]) {
            key[j] = m->key[i];
            val[j] = m->val[i];
        }
    }
    free(m->key);
    free(m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    return 0;
}

/* The slot of key s (found: *found = 1), or NULL when out of memory. */
static uint32_t *strmap_at(tmap_strmap *m, const char *s, int *found)
{
    if (2 * (m->n + 1) > m->cap && strmap_grow(m))
        return NULL;
    size_t j = hash(s) & (m->cap - 1);
    while (m->key[j] && strcmp(m->key[j], s))
        j = (j + 1) & (m->cap - 1);
    *found = m->key[j] != NULL;
    if (!*found) {
        m->key[j] = s;
        m->n++;
    }
    return &m->val[j];
}

static const uint32_t *strmap_get(const tmap_strmap *m, const char *s)
{
    if (!m || !m->cap)
        return NULL;
    size_t j = hash(s) & (m->cap - 1);
    while (m->key[j] && strcmp(m->key[j], s))
        j = (j + 1) & (m->cap - 1);
    return m->key[j] ? &m->val[j] : NULL;
}

/* ------------------------------------------------------- instructions */

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

static int sreg_is(const char *t, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(t, name, n) && (t[n] == '\0' || t[n] == '.');
}

/* A floating-point type among the opcode's suffixes. */
static int is_float_op(const char *op)
{
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
        if ((p[1] == 'f' && p[2] >= '0' && p[2] <= '9') || !strncmp(p + 1, "bf16", 4) ||
            !strncmp(p + 1, "tf32", 4) || !strncmp(p + 1, "e4m3", 4) || !strncmp(p + 1, "e5m2", 4))
            return 1;
    return 0;
}

static int reads_memory(const char *op)
{
    static const char *const ops[] = {"ld", "ldu", "atom", "tex", "tld4", "suld", "ldmatrix",
                                      "shfl", "vote", "match", "redux", "activemask", NULL};
    for (size_t i = 0; ops[i]; i++)
        if (opcode_is(op, ops[i]))
            return 1;
    return 0;
}

/* Operand 0 is read (an address, a branch index), not written. */
static int writes_nothing(const char *op)
{
    static const char *const ops[] = {"st", "stu", "red", "sust", "sured", "bra", "brx", "bar",
                                      "barrier", "prefetch", "prefetchu", "ret", "exit", NULL};
    for (size_t i = 0; ops[i]; i++)
        if (opcode_is(op, ops[i]))
            return 1;
    return 0;
}

/* ---------------------------------------------------------- the state */

typedef struct numbering {
    tmap_values *v;
    tmap_strmap keys;  /* value-numbering key -> class (keys malloc'ed) */
    uint32_t *ndefs;   /* per register; a guarded definition counts 2 */
    tmap_buf key;      /* scratch */
    int oom, changed;
} numbering;

/* The index of register `name`, added if new; UINT32_MAX when out of memory. */
static uint32_t reg_index(tmap_values *v, const char *name)
{
    int found;
    uint32_t *slot = strmap_at(v->names, name, &found);
    if (!slot)
        return UINT32_MAX;
    if (found)
        return *slot;
    if (tmap_grow(&v->reg, &v->capregs, v->nregs + 1, sizeof *v->reg))
        return UINT32_MAX;
    size_t cap = v->capregs;
    void *val = realloc(v->val, cap * sizeof *v->val);
    if (!val)
        return UINT32_MAX;
    v->val = val;
    memset(&v->val[v->nregs], 0, sizeof *v->val);
    v->reg[v->nregs] = name;
    *slot = (uint32_t)v->nregs;
    return (uint32_t)v->nregs++;
}

/* The class numbered by the key in n->key, `fresh` when the key is new. */
static uint32_t number(numbering *n, uint32_t fresh)
{
    if (n->key.oom || !n->key.data) {
        n->oom = 1;
        return fresh;
    }
    const uint32_t *old = strmap_get(&n->keys, n->key.data);
    if (old)
        return *old;
    char *k = strdup(n->key.data);
    int found;
    uint32_t *slot = k ? strmap_at(&n->keys, k, &found) : NULL;
    if (!slot) {
        free(k);
        n->oom = 1;
        return fresh;
    }
    *slot = fresh;
    return fresh;
}

static void key_start(numbering *n, const char *what)
{
    n->key.len = 0;
    tmap_buf_puts(&n->key, what);
}

static tmap_value constant(int64_t b)
{
    tmap_value c = {TMAP_V_NONE, TMAP_V_NONE, 0, b, TMAP_V_NONE, 0, 1};
    return c;
}

static tmap_value atom_of(uint32_t cls, uint8_t flags, uint32_t base)
{
    tmap_value c = {cls, cls, 1, 0, base, flags, 1};
    return c;
}

static uint32_t param_index(numbering *n, const char *name)
{
    tmap_values *v = n->v;
    for (size_t i = 0; i < v->nparams; i++)
        if (!strcmp(v->param[i], name))
            return (uint32_t)i;
    if (tmap_grow(&v->param, &v->capparams, v->nparams + 1, sizeof *v->param)) {
        n->oom = 1;
        return TMAP_V_NONE;
    }
    v->param[v->nparams] = name;
    return (uint32_t)v->nparams++;
}

/* The class of an affine value (one class per form). */
static tmap_value affine(numbering *n, tmap_value x, uint32_t fresh)
{
    if (x.a == 0)
        x.atom = TMAP_V_NONE;
    x.known = 1;
    if (x.flags & TMAP_V_STEPS) { /* differs from any other value */
        x.cls = fresh;
        return x;
    }
    key_start(n, "aff");
    tmap_buf_printf(&n->key, "|%u|%u|%lld|%lld", x.base, x.atom, (long long)x.a, (long long)x.b);
    x.cls = number(n, fresh);
    x.known = 1;
    return x;
}

/* Value of a one-token operand; known == 0 when it is not yet known. */
static tmap_value operand_value(numbering *n, const tmap_ptx_tok *t, uint32_t fresh)
{
    if (t->kind == TMAP_TOK_NUMBER && strncmp(t->text, "0f", 2) && strncmp(t->text, "0d", 2))
        return constant(strtoll(t->text, NULL, 0));
    if (t->kind == TMAP_TOK_REG && (sreg_is(t->text, "%tid") || sreg_is(t->text, "%ctaid") ||
                                    sreg_is(t->text, "%ntid") || sreg_is(t->text, "%nctaid"))) {
        key_start(n, t->text);
        uint8_t fl = t->text[1] == 'n' ? 0 : TMAP_V_TID | TMAP_V_UNFIXED;
        return atom_of(number(n, fresh), fl, TMAP_V_NONE);
    }
    if (t->kind == TMAP_TOK_REG) {
        const uint32_t *r = strmap_get(n->v->names, t->text);
        tmap_value none = {0};
        return r ? n->v->val[*r] : none;
    }
    key_start(n, t->text); /* a symbol or a float immediate: a fixed value */
    return atom_of(number(n, fresh), 0, TMAP_V_NONE);
}

/* Operand i of s as one value; known == 0 when unknown or not one token. */
static tmap_value operand(numbering *n, const tmap_ptx_stmt *s, uint32_t i, uint32_t fresh)
{
    uint32_t first, cnt;
    tmap_value none = {0};
    if (i >= s->nopnd)
        return none;
    tmap_ptx_operand(s, i, &first, &cnt);
    return cnt == 1 ? operand_value(n, &s->toks[first], fresh) : none;
}

/* x + y and x * y, wrapping (hostile immediates must not overflow) */
static int64_t wrap_add(int64_t x, int64_t y)
{
    return (int64_t)((uint64_t)x + (uint64_t)y);
}

static int64_t wrap_mul(int64_t x, int64_t y)
{
    return (int64_t)((uint64_t)x * (uint64_t)y);
}

static uint32_t join_base(uint32_t x, uint32_t y)
{
    return x == TMAP_V_NONE ? y : y == TMAP_V_NONE || x == y ? x : TMAP_V_MANY;
}

/* x + sign * y. */
static tmap_value add(numbering *n, tmap_value x, tmap_value y, int sign, uint32_t fresh)
{
    tmap_value r = x;
    r.flags = x.flags | y.flags;
    r.base = y.base == TMAP_V_NONE ? x.base
             : x.base == TMAP_V_NONE && sign > 0 ? y.base : TMAP_V_MANY;
    r.b = wrap_add(x.b, wrap_mul(sign, y.b));
    if (y.a == 0)
        return affine(n, r, fresh);
    if (x.a == 0 || x.atom == y.atom) {
        r.atom = y.atom;
        r.a = wrap_add(x.a, wrap_mul(sign, y.a));
        return affine(n, r, fresh);
    }
    key_start(n, "sum");
    tmap_buf_printf(&n->key, "|%u|%lld|%u|%lld", x.atom, (long long)x.a, y.atom,
                    (long long)wrap_mul(sign, y.a));
    r.atom = number(n, fresh);
    r.a = 1;
    return affine(n, r, fresh);
}

/* x * y: affine when one side is a constant, else a product atom. */
static tmap_value mul(numbering *n, tmap_value x, tmap_value y, uint32_t fresh)
{
    if (x.a == 0 && x.base == TMAP_V_NONE) {
        tmap_value t = x;
        x = y;
        y = t;
    }
    tmap_value r = x;
    r.flags = x.flags | y.flags;
    if (y.a == 0 && y.base == TMAP_V_NONE && x.base == TMAP_V_NONE &&
        !__builtin_mul_overflow(x.a, y.b, &r.a) && !__builtin_mul_overflow(x.b, y.b, &r.b))
        return affine(n, r, fresh);
    key_start(n, "prod");
    tmap_buf_printf(&n->key, "|%u|%u", x.cls < y.cls ? x.cls : y.cls,
                    x.cls < y.cls ? y.cls : x.cls);
    return affine(n, atom_of(number(n, fresh), r.flags & ~TMAP_V_STEPS,
                             join_base(x.base, y.base) == TMAP_V_NONE ? TMAP_V_NONE : TMAP_V_MANY),
                  fresh);
}

/* Any other pure instruction: an atom numbered by opcode and operands
 * (a memory read: an atom of its own). */
static tmap_value opaque(numbering *n, const tmap_ptx_stmt *s, uint32_t fresh)
{
    uint8_t flags = reads_memory(s->text) ? TMAP_V_DATA | TMAP_V_UNFIXED : 0;
    uint32_t base = TMAP_V_NONE;
    uint32_t first = s->nopnd > 1 ? s->opnd[1] : s->ntoks;
    for (uint32_t k = first; !flags && k < s->ntoks; k++) { /* a load: data alone */
        if (s->toks[k].kind != TMAP_TOK_REG)
            continue;
        tmap_value x = operand_value(n, &s->toks[k], fresh);
        flags |= x.known ? x.flags : TMAP_V_UNFIXED;
        base = x.base == TMAP_V_NONE || !x.known ? base : TMAP_V_MANY;
    }
    key_start(n, s->text); /* after operand_value, which uses the key */
    for (uint32_t k = first; k < s->ntoks; k++) {
        const tmap_ptx_tok *t = &s->toks[k];
        const uint32_t *r = t->kind == TMAP_TOK_REG ? strmap_get(n->v->names, t->text) : NULL;
        if (r)
            tmap_buf_printf(&n->key, "|c%u", n->v->val[*r].cls);
        else
            tmap_buf_printf(&n->key, "|%s", t->text);
    }
    uint32_t cls = reads_memory(s->text) ? fresh : number(n, fresh);
    return affine(n, atom_of(cls, flags & ~TMAP_V_STEPS, base), fresh);
}

/* ld.param from a named parameter: a pointer base for 64-bit types. */
static tmap_value load_param(numbering *n, const tmap_ptx_stmt *s, uint32_t fresh)
{
    uint32_t first, cnt;
    if (s->nopnd < 2) /* malformed: no address operand */
        return opaque(n, s, fresh);
    tmap_ptx_operand(s, 1, &first, &cnt);
    const tmap_ptx_tok *t = &s->toks[first];
    if (cnt < 3 || t[1].kind != TMAP_TOK_IDENT)
        return opaque(n, s, fresh);
    int64_t off = cnt >= 5 && t[3].kind == TMAP_TOK_NUMBER ? strtoll(t[3].text, NULL, 0) : 0;
    const char *type = strrchr(s->text, '.');
    if (off == 0 && (!strcmp(type, ".u64") || !strcmp(type, ".b64") || !strcmp(type, ".s64")))
        return affine(n, (tmap_value){0, TMAP_V_NONE, 0, 0, param_index(n, t[1].text), 0, 1},
                      fresh);
    key_start(n, s->text);
    tmap_buf_printf(&n->key, "|%s|%lld", t[1].text, (long long)off);
    return atom_of(number(n, fresh), 0, TMAP_V_NONE);
}

/* The value instruction s writes into its one destination register. */
static tmap_value compute(numbering *n, const tmap_ptx_stmt *s, uint32_t fresh)
{
    const char *op = s->text;
    if (opcode_is(op, "ld") && strstr(op, ".param"))
        return load_param(n, s, fresh);
    if (is_float_op(op) || s->nopnd < 2 || reads_memory(op))
        return opaque(n, s, fresh);
    tmap_value x = operand(n, s, 1, fresh), y = operand(n, s, 2, fresh),
               z = operand(n, s, 3, fresh);
    int two = s->nopnd == 3 && x.known && y.known, three = s->nopnd == 4 && two && z.known;
    if ((opcode_is(op, "mov") || opcode_is(op, "cvta") || opcode_is(op, "cvt")) &&
        s->nopnd == 2 && x.known)
        return x;
    if ((opcode_is(op, "add") || opcode_is(op, "sub")) && two && !strstr(op, ".cc"))
        return add(n, x, y, opcode_is(op, "add") ? 1 : -1, fresh);
    if ((!strncmp(op, "mul.lo", 6) || !strncmp(op, "mul.wide", 8)) && two)
        return mul(n, x, y, fresh);
    if (opcode_is(op, "shl") && two && y.a == 0 && y.base == TMAP_V_NONE && y.b >= 0 && y.b < 62)
        return mul(n, x, constant((int64_t)1 << y.b), fresh);
    if ((!strncmp(op, "mad.lo", 6) || !strncmp(op, "mad.wide", 8)) && three &&
        !strstr(op, ".cc"))
        return add(n, mul(n, x, y, fresh), z, 1, fresh);
    return opaque(n, s, fresh);
}

/* --------------------------------------------------------- the passes */

/* Calls fn(n, s, reg index) for each register s writes. */
static int each_dest(numbering *n, const tmap_ptx_stmt *s,
                     int (*fn)(numbering *, const tmap_ptx_stmt *, uint32_t, uint32_t))
{
    if (s->kind != TMAP_ST_INSTR || !s->nopnd || writes_nothing(s->text))
        return 0;
    uint32_t first, cnt;
    tmap_ptx_operand(s, 0, &first, &cnt);
    int depth = 0;
    for (uint32_t k = first; k < first + cnt; k++) {
        const tmap_ptx_tok *t = &s->toks[k];
        depth += t->kind == TMAP_TOK_PUNCT && t->text[0] == '[';
        depth -= t->kind == TMAP_TOK_PUNCT && t->text[0] == ']';
        if (t->kind != TMAP_TOK_REG || depth || sreg_is(t->text, "%tid") ||
            sreg_is(t->text, "%ctaid"))
            continue;
        uint32_t r = reg_index(n->v, t->text);
        if (r == UINT32_MAX || fn(n, s, r, cnt == 1))
            return -1;
    }
    return 0;
}

static int count_def(numbering *n, const tmap_ptx_stmt *s, uint32_t r, uint32_t single)
{
    (void)single;
    n->ndefs[r] += s->guard ? 2 : 1;
    return 0;
}

static int same(const tmap_value *x, const tmap_value *y)
{
    return x->cls == y->cls && x->atom == y->atom && x->a == y->a && x->b == y->b &&
           x->base == y->base && x->flags == y->flags && x->known == y->known;
}

/* The value of register r written more than once, old joined with one
 * more definition c: one form (STEPS when the constants differ), or an atom
 * of its own (VARYING).  Monotone: bottom, form, steps, varying. */
static tmap_value join(tmap_value old, tmap_value c, uint32_t r)
{
    c.cls = r;
    c.flags |= TMAP_V_UNFIXED;
    if (!old.known)
        return c;
    uint8_t flags = old.flags | c.flags;
    if (!(flags & TMAP_V_VARYING) && old.atom == c.atom && old.a == c.a && old.base == c.base) {
        old.flags = flags | (old.b != c.b ? TMAP_V_STEPS : 0);
        return old;
    }
    return atom_of(r, (flags & ~TMAP_V_STEPS) | TMAP_V_VARYING, join_base(old.base, c.base));
}

/* Joins what s writes into register r (single: r is all of operand 0). */
static int define(numbering *n, const tmap_ptx_stmt *s, uint32_t r, uint32_t single)
{
    tmap_value old = n->v->val[r], v;
    if (single && n->ndefs[r] == 1) {
        v = compute(n, s, r);
        if (!v.known)
            return 0;
    } else {
        tmap_value c = single ? compute(n, s, r) : opaque(n, s, r);
        if (!c.known)
            return 0;
        v = join(old, c, r);
    }
    if (!same(&old, &v)) {
        n->v->val[r] = v;
        n->changed = 1;
    }
    return 0;
}

/* Gives every register of f an index, then counts definitions. */
static int index_registers(numbering *n, const tmap_ptx_func *f)
{
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        for (uint32_t k = 0; s->kind == TMAP_ST_INSTR && k < s->ntoks; k++)
            if (s->toks[k].kind == TMAP_TOK_REG && reg_index(n->v, s->toks[k].text) == UINT32_MAX)
                return -1;
    }
    n->ndefs = calloc(n->v->nregs + 1, sizeof *n->ndefs);
    if (!n->ndefs)
        return -1;
    for (size_t i = 0; i < f->nbody; i++)
        if (each_dest(n, &f->body[i], count_def))
            return -1;
    return 0;
}

/* Passes over the body until no value changes; then every register never
 * written is an atom of its own. */
static int settle(numbering *n, const tmap_ptx_func *f)
{
    n->changed = 1;
    for (int pass = 0; n->changed && pass < MAX_PASSES && !n->oom; pass++) {
        n->changed = 0;
        for (size_t i = 0; i < f->nbody; i++)
            if (each_dest(n, &f->body[i], define))
                return -1;
    }
    for (size_t r = 0; r < n->v->nregs; r++)
        if (!n->v->val[r].known)
            n->v->val[r] = atom_of((uint32_t)r, TMAP_V_UNFIXED, TMAP_V_NONE);
    return n->oom ? -1 : 0;
}

/* 1 when the last pass changed nothing. */
static int settled(const numbering *n)
{
    return !n->changed;
}

tmap_status tmap_values_compute(const tmap_ptx_module *m, const tmap_ptx_func *f,
                                tmap_values *out, tmap_error *err)
{
    memset(out, 0, sizeof *out);
    numbering n = {0};
    n.v = out;
    out->names = calloc(1, sizeof *out->names);
    int bad = !out->names || index_registers(&n, f) || settle(&n, f);
    int unsettled = !bad && !settled(&n);
    for (size_t i = 0; i < n.keys.cap; i++)
        free((char *)n.keys.key[i]);
    free(n.keys.key);
    free(n.keys.val);
    free(n.ndefs);
    tmap_buf_free(&n.key);
    if (!bad && !unsettled)
        return TMAP_OK;
    tmap_values_free(out);
    if (unsettled) /* no verdict rather than one from half-settled values */
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "%s:%u: the values of %s's registers did not settle in %d passes",
                         m->file, f->line, f->name, MAX_PASSES);
    return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory numbering the values of %s",
                     m->file, f->name);
}

const tmap_value *tmap_values_of(const tmap_values *v, const char *name)
{
    const uint32_t *r = strmap_get(v->names, name);
    return r ? &v->val[*r] : NULL;
}

int tmap_values_address(const tmap_values *v, const tmap_ptx_stmt *s, tmap_value *addr)
{
    for (uint32_t k = 0; s->kind == TMAP_ST_INSTR && k + 2 < s->ntoks; k++) {
        if (s->toks[k].kind != TMAP_TOK_PUNCT || s->toks[k].text[0] != '[')
            continue;
        const tmap_value *r = tmap_values_of(v, s->toks[k + 1].text);
        if (s->toks[k + 1].kind != TMAP_TOK_REG || !r)
            return 0;
        *addr = *r;
        if (k + 3 < s->ntoks && s->toks[k + 2].text[0] == '+' &&
            s->toks[k + 3].kind == TMAP_TOK_NUMBER)
            addr->b = wrap_add(addr->b, strtoll(s->toks[k + 3].text, NULL, 0));
        return 1;
    }
    return 0;
}

void tmap_values_free(tmap_values *v)
{
    if (!v)
        return;
    if (v->names) {
        free(v->names->key);
        free(v->names->val);
    }
    free(v->names);
    free(v->reg);
    free(v->val);
    free(v->param);
    memset(v, 0, sizeof *v);
}

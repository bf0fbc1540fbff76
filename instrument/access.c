/*
 * access.c -- the memory accesses of a kernel's CFG blocks and how their
 * addresses vary across a warp (the memory term of the SM model): by the
 * value numbering of values.c, an address computed from the thread id
 * without loaded data is thread-affine (neighbouring threads, neighbouring
 * words), one computed from loaded data is data-dependent, and one from
 * neither (parameters, loop counters, constants) is the same for every
 * thread of the warp.  And the size of the module's __constant__ data,
 * which the reads at varying addresses draw from.
 */
#include "threadmap/instrument.h"

#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "instrument/values.h"

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

static int has_mod(const char *op, const char *mod)
{
    for (const char *p = strstr(op, mod); p; p = strstr(p + 1, mod)) {
        char end = p[strlen(mod)];
        if (end == '\0' || end == '.' || end == ':')
            return 1;
    }
    return 0;
}

/* The space of a memory opcode, or -1 for what is not a memory access the
 * model costs (ld.param, prefetch, fences...). */
static int access_space(const char *op)
{
    if (!(opcode_is(op, "ld") || opcode_is(op, "ldu") || opcode_is(op, "st") ||
          opcode_is(op, "atom") || opcode_is(op, "red")))
        return -1;
    if (has_mod(op, ".param"))
        return -1;
    if (has_mod(op, ".shared"))
        return TMAP_SPACE_SHARED;
    if (has_mod(op, ".local"))
        return TMAP_SPACE_LOCAL;
    if (has_mod(op, ".const"))
        return TMAP_SPACE_CONST;
    return TMAP_SPACE_GLOBAL; /* .global and generic addressing */
}

/* Bytes per thread: the type's width times the vector width. */
static uint32_t access_bytes(const char *op)
{
    uint32_t width = 4, vec = 1;
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
        tmap_ptx_type_part(p, &width, &vec);
    return width * vec;
}

/* ------------------------------------------------- levels of indirection */

/* A register's level: 0 computed without loaded data (ld.param aside), 1
 * loaded from an address of level 0 (or computed from such values), 2 and
 * more: loaded through a loaded value. */
enum { LEVEL_MAX = 2 };

static int reg_level(const tmap_values *v, const uint8_t *level, const char *name)
{
    const tmap_value *x = tmap_values_of(v, name);
    return x ? level[x - v->val] : 0;
}

/* The highest level among the register tokens of s in [from, to). */
static int tokens_level(const tmap_values *v, const uint8_t *level, const tmap_ptx_stmt *s,
                        uint32_t from, uint32_t to)
{
    int l = 0;
    for (uint32_t k = from; k < to && k < s->ntoks; k++)
        if (s->toks[k].kind == TMAP_TOK_REG) {
            int r = reg_level(v, level, s->toks[k].text);
            l = r > l ? r : l;
        }
    return l;
}

/* The token range of s's address operand ([...]), or 0. */
static int address_tokens(const tmap_ptx_stmt *s, uint32_t *from, uint32_t *to)
{
    for (uint32_t k = 0; k < s->ntoks; k++)
        if (s->toks[k].kind == TMAP_TOK_PUNCT && !strcmp(s->toks[k].text, "[")) {
            uint32_t e = k + 1;
            while (e < s->ntoks && strcmp(s->toks[e].text, "]"))
                e++;
            *from = k + 1, *to = e;
            return 1;
        }
    return 0;
}

static int writes_nothing(const char *op)
{
    static const char *const none[] = {"st", "red", "bra", "bar", "barrier", "ret", "exit",
                                       "call", "membar", "fence", "prefetch", "trap", "brx"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (opcode_is(op, none[i]))
            return 1;
    return 0;
}

static int is_load(const char *op)
{
    return opcode_is(op, "ld") || opcode_is(op, "ldu") || opcode_is(op, "atom") ||
           opcode_is(op, "tex") || opcode_is(op, "suld");
}

/* One pass over f's body; returns whether a level rose. */
static int levels_pass(const tmap_values *v, const tmap_ptx_func *f, uint8_t *level)
{
    int rose = 0;
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        if (s->kind != TMAP_ST_INSTR || s->nopnd < 2 || writes_nothing(s->text))
            continue;
        uint32_t from = s->opnd[1], to = s->ntoks;
        int l = tokens_level(v, level, s, from, to);
        if (is_load(s->text) && !has_mod(s->text, ".param") && address_tokens(s, &from, &to))
            l = tokens_level(v, level, s, from, to) + 1;
        l = l > LEVEL_MAX ? LEVEL_MAX : l;
        for (uint32_t k = 0; k < s->opnd[1]; k++) {
            const tmap_value *x = s->toks[k].kind == TMAP_TOK_REG
                                      ? tmap_values_of(v, s->toks[k].text) : NULL;
            if (x && level[x - v->val] < l)
                level[x - v->val] = (uint8_t)l, rose = 1;
        }
    }
    return rose;
}

static tmap_access_class address_class(const tmap_values *v, const uint8_t *level,
                                       const tmap_ptx_stmt *s)
{
    tmap_value addr;
    uint32_t from, to;
    if (!tmap_values_address(v, s, &addr))
        return TMAP_ACCESS_UNIFORM; /* a symbol or an immediate */
    if (addr.flags & TMAP_V_TID) /* the thread's own element or record */
        return TMAP_ACCESS_AFFINE;
    if (addr.flags & TMAP_V_DATA)
        return address_tokens(s, &from, &to) && tokens_level(v, level, s, from, to) >= LEVEL_MAX
                   ? TMAP_ACCESS_GATHER : TMAP_ACCESS_DATA;
    return TMAP_ACCESS_UNIFORM;
}

/* Whether s's address is not one fixed value per thread (its value has a
 * loop variable, loaded data or several forms in it). */
static int address_moves(const tmap_values *v, const tmap_ptx_stmt *s)
{
    tmap_value addr;
    if (!tmap_values_address(v, s, &addr))
        return 0; /* a symbol or an immediate */
    return (addr.flags & (TMAP_V_DATA | TMAP_V_VARYING | TMAP_V_STEPS)) ||
           ((addr.flags & TMAP_V_UNFIXED) && !(addr.flags & TMAP_V_TID) && addr.a != 0);
}

/* The CFG block of function f holding PTX line `line`. */
static uint32_t block_at(const tmap_cfg *cfg, size_t f, uint32_t line)
{
    const tmap_cfg_func *fn = &cfg->funcs[f];
    uint32_t b = fn->first_block;
    for (uint32_t i = fn->first_block + 1; i < fn->first_block + fn->nblocks; i++)
        if (cfg->blocks[i].line <= line)
            b = i;
    return b;
}

static tmap_status func_accesses(const tmap_ptx_module *m, const tmap_cfg *cfg, size_t f,
                                 tmap_access **out, size_t *n, size_t *cap, tmap_error *err)
{
    const tmap_ptx_func *fn = tmap_ptx_find_func(m, cfg->funcs[f].name);
    if (!fn || !fn->has_body)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no body for %s of the CFG", m->file,
                         cfg->funcs[f].name);
    tmap_values v;
    tmap_status st = tmap_values_compute(m, fn, &v, err);
    if (st)
        return st;
    uint8_t *level = calloc(v.nregs + 1, 1);
    if (!level)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", m->file);
    for (int pass = 0; !st && pass < 4 * LEVEL_MAX && levels_pass(&v, fn, level); pass++)
        ;
    for (size_t i = 0; !st && i < fn->nbody; i++) {
        const tmap_ptx_stmt *s = &fn->body[i];
        int space = s->kind == TMAP_ST_INSTR ? access_space(s->text) : -1;
        if (space < 0)
            continue;
        if (tmap_grow(out, cap, *n + 1, sizeof **out)) {
            st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", m->file);
            break;
        }
        tmap_access *a = &(*out)[(*n)++];
        a->block = block_at(cfg, f, s->line);
        a->line = s->line;
        a->space = (tmap_access_space)space;
        a->cls = address_class(&v, level, s);
        a->bytes = access_bytes(s->text);
        a->store = !opcode_is(s->text, "ld") && !opcode_is(s->text, "ldu");
        a->moves = address_moves(&v, s);
    }
    free(level);
    tmap_values_free(&v);
    return st;
}

tmap_status tmap_access_list(const tmap_ptx_module *m, const tmap_cfg *cfg, tmap_access **out,
                             size_t *n, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, m, cfg, out, n);
    if (absent)
        return absent;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    tmap_status st = TMAP_OK;
    for (size_t f = 0; !st && f < cfg->nfuncs; f++)
        st = func_accesses(m, cfg, f, out, n, &cap, err);
    if (st) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return st;
}

/* ------------------------------------------------------ __constant__ data */

static int tok_is(const tmap_ptx_tok *t, tmap_ptx_tok_kind kind, const char *text)
{
    return t->kind == kind && !strcmp(t->text, text);
}

/* The bytes of .const declaration it (its tokens from k, the .const). */
static tmap_status const_decl_bytes(const tmap_ptx_module *m, const tmap_ptx_item *it, uint32_t k,
                                    size_t *bytes, tmap_error *err)
{
    uint32_t width = 0, vec = 1;
    size_t count = 1, values = 0;
    int unsized = 0, init = 0;
    for (k++; k < it->ntoks; k++) {
        const tmap_ptx_tok *t = &it->toks[k];
        if (init) {
            values += t->kind == TMAP_TOK_NUMBER;
        } else if (t->kind == TMAP_TOK_DIRECTIVE && !width) {
            tmap_ptx_type_part(t->text, &width, &vec);
        } else if (tok_is(t, TMAP_TOK_PUNCT, "[") && k + 1 < it->ntoks) {
            const tmap_ptx_tok *d = &it->toks[k + 1];
            if (tok_is(d, TMAP_TOK_PUNCT, "]"))
                unsized = 1;
            else if (d->kind != TMAP_TOK_NUMBER || strtoull(d->text, NULL, 0) == 0 ||
                     __builtin_mul_overflow(count, (size_t)strtoull(d->text, NULL, 0), &count))
                break;
        } else if (tok_is(t, TMAP_TOK_PUNCT, "=")) {
            init = 1;
        }
    }
    if (!width || (unsized && !values) || (k < it->ntoks && !init))
        return tmap_fail(err, TMAP_ERR_PARSE, "%s:%u: cannot size this .const declaration",
                         m->file, it->line);
    size_t n = unsized ? values : count;
    if (__builtin_mul_overflow((size_t)width * vec, n, &n) || __builtin_add_overflow(*bytes, n, bytes))
        return tmap_fail(err, TMAP_ERR_PARSE, "%s:%u: this .const declaration's size overflows",
                         m->file, it->line);
    return TMAP_OK;
}

tmap_status tmap_access_const_bytes(const tmap_ptx_module *m, size_t *bytes, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, m, bytes);
    if (st)
        return st;
    *bytes = 0;
    for (size_t i = 0; !st && i < m->nitems; i++) {
        const tmap_ptx_item *it = &m->items[i];
        int ext = 0; /* .extern: the data lives in another module */
        for (uint32_t k = 0; it->kind == TMAP_IT_DECL && k < it->ntoks; k++) {
            ext |= tok_is(&it->toks[k], TMAP_TOK_DIRECTIVE, ".extern");
            if (tok_is(&it->toks[k], TMAP_TOK_DIRECTIVE, ".const")) {
                st = ext ? TMAP_OK : const_decl_bytes(m, it, k, bytes, err);
                break;
            }
        }
    }
    return st;
}

/*
 * manifest_params.c -- a manifest's arguments against its kernel's PTX
 * `.param` list: as many arguments as parameters, each of the parameter's
 * size, arrays (device pointers) for 8-byte integer parameters only, floats
 * for float parameters and integers for integer ones.  A parameter is known
 * to be a pointer when it has `.ptr` or its value is converted to a global
 * address (cvta.to.global); a scalar for it is an error.  Errors name the
 * manifest, the argument and the parameter.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "instrument/ptx.h"
#include "runtime/manifest.h"

typedef enum pclass { P_INT, P_FLOAT, P_BITS, P_BYTES } pclass;

typedef struct param {
    const char *name;
    const char *type;   /* ".u64", ".f32", ".b8"... */
    size_t size;        /* bytes (element size x count for name[N]) */
    pclass cls;         /* .u/.s, .f, .b, or .b8 name[N] (a struct) */
    int pointer;        /* .ptr, or used as a global address */
} param;

/* A .param type directive: its size in bytes and class, or 0. */
static size_t type_size(const char *t, pclass *cls)
{
    static const char *const names[] = {".u8", ".s8", ".b8", ".u16", ".s16", ".b16", ".f16",
                                        ".u32", ".s32", ".b32", ".f32", ".u64", ".s64", ".b64",
                                        ".f64"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(t, names[i])) {
            *cls = t[1] == 'f' ? P_FLOAT : t[1] == 'b' ? P_BITS : P_INT;
            return (size_t)atoi(t + 2) / 8;
        }
    return 0;
}

/* tok is one of the punctuation characters of `chars`. */
static int is_punct(const tmap_ptx_tok *tok, const char *chars)
{
    return tok->kind == TMAP_TOK_PUNCT && tok->text[0] && strchr(chars, tok->text[0]);
}

/* One `.param [attrs] .type [attrs] name [N]` from toks[*i]; *i moves past it. */
static void param_at(const tmap_ptx_tok *toks, uint32_t n, uint32_t *i, param *p)
{
    memset(p, 0, sizeof *p);
    for (; *i < n && !is_punct(&toks[*i], ",)"); (*i)++) {
        const tmap_ptx_tok *t = &toks[*i];
        pclass cls;
        size_t size = t->kind == TMAP_TOK_DIRECTIVE ? type_size(t->text, &cls) : 0;
        if (size) {
            p->type = t->text, p->size = size, p->cls = cls;
        } else if (t->kind == TMAP_TOK_DIRECTIVE && !strcmp(t->text, ".ptr")) {
            p->pointer = 1;
        } else if ((t->kind == TMAP_TOK_IDENT || t->kind == TMAP_TOK_REG) && !p->name) {
            p->name = t->text;
        } else if (t->kind == TMAP_TOK_NUMBER && p->name && is_punct(&toks[*i - 1], "[")) {
            p->size *= (size_t)strtoull(t->text, NULL, 0);
            p->cls = P_BYTES;
        }
    }
}

/* The entry's parameters from its header, into *out (malloc'ed). */
static tmap_status param_list(const tmap_ptx_func *f, param **out, size_t *n, tmap_error *err)
{
    uint32_t i = 0;
    while (i < f->nhead &&
           !(f->head[i].kind == TMAP_TOK_IDENT && !strcmp(f->head[i].text, f->name)))
        i++;
    *n = 0;
    *out = calloc(f->nhead + 1, sizeof **out);
    if (!*out)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (i + 1 >= f->nhead || !is_punct(&f->head[i + 1], "("))
        return TMAP_OK; /* no parameter list */
    for (i += 2; i < f->nhead && !is_punct(&f->head[i], ")");) {
        param_at(f->head, f->nhead, &i, &(*out)[(*n)++]);
        if (i < f->nhead && is_punct(&f->head[i], ","))
            i++;
    }
    return TMAP_OK;
}

/* The register an instruction's operand k is, or NULL. */
static const char *reg_operand(const tmap_ptx_stmt *s, uint32_t k)
{
    uint32_t first, n;
    if (k >= s->nopnd)
        return NULL;
    tmap_ptx_operand(s, k, &first, &n);
    return n == 1 && s->toks[first].kind == TMAP_TOK_REG ? s->toks[first].text : NULL;
}

/* Marks parameters loaded (ld.param) into a register that a later
 * cvta.to.global converts: the kernel uses them as global addresses.
 * reg[k]: the register parameter k was last loaded into. */
static void mark_pointers(const tmap_ptx_func *f, param *p, size_t np, const char **reg)
{
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        const char *r = s->kind == TMAP_ST_INSTR ? reg_operand(s, 0) : NULL;
        uint32_t first, n = 0;
        if (r && !strncmp(s->text, "ld.param", 8) && s->nopnd == 2)
            tmap_ptx_operand(s, 1, &first, &n);
        for (size_t k = 0; n >= 2 && k < np; k++)
            if (!strcmp(s->toks[first + 1].text, p[k].name))
                reg[k] = r;
        const char *src = r && !strncmp(s->text, "cvta.to.global", 14) ? reg_operand(s, 1) : NULL;
        for (size_t k = 0; src && k < np; k++)
            p[k].pointer |= reg[k] && !strcmp(reg[k], src);
    }
}

/* Why argument g cannot be passed in parameter p, or NULL. */
static const char *mismatch(const tmap_marg *g, const param *p)
{
    if (g->array >= 0)
        return p->size != 8 || p->cls == P_FLOAT || p->cls == P_BYTES
                   ? "an array is a device pointer (8 bytes) for a 64-bit integer parameter"
                   : NULL;
    if (p->pointer)
        return "the parameter is a pointer: give the name of an array";
    if (tmap_elem_size(g->kind) != p->size)
        return "the sizes differ";
    int fl = g->kind == TMAP_F32 || g->kind == TMAP_F64;
    if ((p->cls == P_FLOAT && !fl) || (p->cls == P_INT && fl))
        return fl ? "a float for an integer parameter" : "an integer for a float parameter";
    return NULL;
}

static tmap_status match(const tmap_manifest *m, const tmap_ptx_func *f, const param *p,
                         size_t np, tmap_error *err)
{
    for (size_t i = 0; i < m->nargs || i < np; i++) {
        if (i >= np)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: field 'args[%zu]': kernel %s has %zu "
                             "parameters, 'args' gives %zu", m->path, i, f->name, np, m->nargs);
        if (i >= m->nargs)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: field 'args': %zu arguments for the %zu "
                             "parameters of kernel %s: parameter %zu (%s %s) has none", m->path,
                             m->nargs, np, f->name, i, p[i].type ? p[i].type : "?", p[i].name);
        const tmap_marg *g = &m->args[i];
        const char *why = mismatch(g, &p[i]);
        if (why)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: field 'args[%zu]': %s %s (%zu bytes) for "
                             "parameter %zu %s (%s%s, %zu bytes) of kernel %s: %s", m->path, i,
                             g->array >= 0 ? "array" : "scalar",
                             g->array >= 0 ? m->arrays[g->array].name : tmap_elem_name(g->kind),
                             g->array >= 0 ? (size_t)8 : tmap_elem_size(g->kind), i, p[i].name,
                             p[i].type ? p[i].type : "?", p[i].cls == P_BYTES ? "[]" : "",
                             p[i].size, f->name, why);
    }
    return TMAP_OK;
}

tmap_status tmap_manifest_params(const tmap_manifest *m, const char *ptx, const char *entry,
                                 tmap_error *err)
{
    tmap_ptx_module *mod = NULL;
    param *p = NULL;
    size_t np = 0;
    char name[4096];
    tmap_status st = tmap_ptx_parse(ptx, strlen(ptx), tmap_manifest_ptx_name(m, name, sizeof name),
                                    &mod, err);
    const tmap_ptx_func *f = st ? NULL : tmap_ptx_find_func(mod, entry);
    if (!st && (!f || !f->is_entry))
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: field 'kernel': the PTX has no kernel (.entry) "
                       "named %s", m->path, entry);
    if (!st) st = param_list(f, &p, &np, err);
    const char **reg = st ? NULL : calloc(np + 1, sizeof *reg);
    if (!st && !reg)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (!st) {
        mark_pointers(f, p, np, reg);
        st = match(m, f, p, np, err);
    }
    free(reg);
    free(p);
    tmap_ptx_free(mod);
    return st;
}

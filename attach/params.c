/*
 * params.c (attach) -- a kernel's parameter layout from its PTX `.entry`
 * head: each `.param` in order, its size (type size times the array count),
 * its alignment (`.align N` before the type, else the type's size) and its
 * offset in the packed buffer cuLaunchKernel's `extra` form carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/image.h"
#include "attach/launch.h"
#include "instrument/ptx.h"

/* Bytes of a PTX scalar type (.u64, .f32, .b8, .f16x2 ...); 0 if none. */
static size_t type_size(const char *t)
{
    if (!strcmp(t, ".f16x2") || !strcmp(t, ".bf16x2"))
        return 4;
    const char *d = t + strcspn(t, "0123456789");
    long bits = *d ? strtol(d, NULL, 10) : 0;
    return bits % 8 || strchr(d, 'x') ? 0 : (size_t)bits / 8;
}

static int tok_is(const tmap_ptx_tok *t, const char *text)
{
    return !strcmp(t->text, text);
}

/* One `.param ...` from toks[*i]; advances past it. */
static tmap_status one_param(const tmap_ptx_tok *t, size_t n, size_t *i, tmap_param *p,
                             const char *entry, tmap_error *err)
{
    size_t elem = 0, count = 1, align = 0;
    for ((*i)++; *i < n && !tok_is(&t[*i], ",") && !tok_is(&t[*i], ")"); (*i)++) {
        const tmap_ptx_tok *k = &t[*i];
        if (tok_is(k, ".align") && !elem && *i + 1 < n)
            align = (size_t)strtoul(t[++*i].text, NULL, 0);
        else if (tok_is(k, ".align"))
            (*i)++; /* .ptr .space .align N: the pointee's alignment */
        else if (k->kind == TMAP_TOK_DIRECTIVE && !elem && type_size(k->text))
            elem = type_size(k->text);
        else if (k->kind == TMAP_TOK_IDENT)
            snprintf(p->name, sizeof p->name, "%s", k->text);
        else if (tok_is(k, "[") && *i + 1 < n)
            count = (size_t)strtoul(t[++*i].text, NULL, 0);
    }
    if (!elem || !count || (align & (align - 1)))
        return tmap_fail(err, TMAP_ERR_INVALID, "kernel '%s': PTX line %u: a .param without "
                         "a type, size or valid alignment", entry, t[*i < n ? *i : n - 1].line);
    p->size = elem * count;
    p->align = align ? align : elem;
    return TMAP_OK;
}

static tmap_status layout(const tmap_ptx_func *f, const char *entry, tmap_param **out,
                          size_t *np, tmap_error *err)
{
    tmap_param *ps = NULL;
    size_t n = 0, cap = 0, off = 0, i = 0;
    while (i < f->nhead && !tok_is(&f->head[i], "("))
        i++;
    tmap_status st = TMAP_OK;
    while (st == TMAP_OK && i < f->nhead && !tok_is(&f->head[i], ")")) {
        if (!tok_is(&f->head[i], ".param")) {
            i++;
            continue;
        }
        if (tmap_grow(&ps, &cap, n + 1, sizeof *ps)) {
            st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
            break;
        }
        tmap_param *p = &ps[n];
        memset(p, 0, sizeof *p);
        st = one_param(f->head, f->nhead, &i, p, entry, err);
        off = (off + p->align - 1) / p->align * p->align;
        p->offset = off;
        off += p->size;
        n += st == TMAP_OK;
    }
    if (st != TMAP_OK) {
        free(ps);
        return st;
    }
    *out = ps;
    *np = n;
    return TMAP_OK;
}

const char *tmap_attach_params_label(const char *entry, char *buf, size_t size)
{
    return tmap_ptx_describe(buf, size, "PTX of %s from the application's module image", entry);
}

tmap_status tmap_attach_params(const char *ptx, const char *entry, tmap_param **out,
                               size_t *n, tmap_error *err)
{
    char label[256];
    tmap_status st = TMAP_NEED(err, ptx, entry, out, n);
    if (st)
        return st;
    *out = NULL;
    *n = 0;
    tmap_ptx_module *m = NULL;
    st = tmap_ptx_parse(ptx, strlen(ptx), tmap_attach_params_label(entry, label, sizeof label),
                        &m, err);
    const tmap_ptx_func *f = st == TMAP_OK ? tmap_ptx_find_func(m, entry) : NULL;
    if (st == TMAP_OK && (!f || !f->is_entry))
        st = tmap_fail(err, TMAP_ERR_INVALID, "no .entry '%s' in the PTX", entry);
    if (st == TMAP_OK)
        st = layout(f, entry, out, n, err);
    tmap_ptx_free(m);
    return st;
}

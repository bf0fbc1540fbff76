/*
 * ptx_print.c -- prints the PTX IR back as text that ptxas accepts.
 *
 * Whitespace is normalized: tokens keep the adjacency they had in the source
 * (a single space where the source had any), so printing what was parsed
 * from printed text gives the same text again.  Debug sections are verbatim.
 */
#include "instrument/ptx.h"

#include <stdlib.h>
#include <string.h>

void tmap_ptx_print_toks(tmap_buf *b, const tmap_ptx_tok *toks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i && toks[i].space_before)
            tmap_buf_put(b, " ", 1);
        tmap_buf_puts(b, toks[i].text);
    }
}

static int tok_is(const tmap_ptx_tok *t, tmap_ptx_tok_kind kind, const char *text)
{
    return t->kind == kind && !strcmp(t->text, text);
}

/* A function header: one parameter per line, performance directives on
 * their own lines. */
static void print_head(tmap_buf *b, const tmap_ptx_func *f)
{
    int depth = 0, params = 0;
    for (uint32_t i = 0; i < f->nhead; i++) {
        const tmap_ptx_tok *t = &f->head[i];
        int param = depth == 1 && (tok_is(t, TMAP_TOK_DIRECTIVE, ".param") ||
                                   tok_is(t, TMAP_TOK_DIRECTIVE, ".reg"));
        int perf = depth == 0 && i > 0 && t->kind == TMAP_TOK_DIRECTIVE &&
                   strcmp(t->text, ".entry") && strcmp(t->text, ".func") &&
                   strcmp(t->text, ".visible") && strcmp(t->text, ".extern") &&
                   strcmp(t->text, ".weak") && strcmp(t->text, ".common");
        if (t->kind == TMAP_TOK_PUNCT && t->text[0] == ')' && depth == 1 && params) {
            tmap_buf_puts(b, "\n");
            params = 0;
        } else if (param) {
            tmap_buf_puts(b, "\n\t");
            params = 1;
        } else if (perf) {
            tmap_buf_puts(b, "\n");
        } else if (i && t->space_before) {
            tmap_buf_puts(b, " ");
        }
        tmap_buf_puts(b, t->text);
        if (t->kind == TMAP_TOK_PUNCT && t->text[0] == '(')
            depth++;
        if (t->kind == TMAP_TOK_PUNCT && t->text[0] == ')')
            depth--;
    }
}

/* Tabs stop at TMAP_PTX_INDENT_MAX levels, so that output stays linear in
 * the input however deep its braces nest. */
#define TMAP_PTX_INDENT_MAX 8

static void indent(tmap_buf *b, int depth)
{
    static const char tabs[TMAP_PTX_INDENT_MAX] = "\t\t\t\t\t\t\t\t";
    int n = depth + 1 < 1 ? 1 : depth + 1 > TMAP_PTX_INDENT_MAX ? TMAP_PTX_INDENT_MAX : depth + 1;
    tmap_buf_put(b, tabs, (size_t)n);
}

static void print_stmt(tmap_buf *b, const tmap_ptx_stmt *s, int *depth)
{
    switch (s->kind) {
    case TMAP_ST_LABEL:
        tmap_buf_printf(b, "%s:\n", s->text);
        return;
    case TMAP_ST_INSTR:
        indent(b, *depth);
        if (s->guard)
            tmap_buf_printf(b, "@%s%s ", s->guard_neg ? "!" : "", s->guard);
        tmap_buf_puts(b, s->text);
        if (s->ntoks)
            tmap_buf_puts(b, " ");
        tmap_ptx_print_toks(b, s->toks, s->ntoks);
        tmap_buf_puts(b, ";\n");
        return;
    case TMAP_ST_DIRECTIVE:
    case TMAP_ST_LINE:
        indent(b, *depth);
        tmap_ptx_print_toks(b, s->toks, s->ntoks);
        tmap_buf_puts(b, "\n");
        return;
    case TMAP_ST_OPEN:
        indent(b, *depth);
        tmap_buf_puts(b, "{\n");
        ++*depth;
        return;
    case TMAP_ST_CLOSE:
        --*depth;
        indent(b, *depth);
        tmap_buf_puts(b, "}\n");
        return;
    case TMAP_ST_RAW: /* lines, each indented like the statements around */
        for (const char *p = s->text; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            indent(b, *depth);
            tmap_buf_put(b, p, n);
            tmap_buf_put(b, "\n", 1);
            p += n + (nl != NULL);
        }
        return;
    }
}

static void print_func(tmap_buf *b, const tmap_ptx_func *f)
{
    print_head(b, f);
    if (!f->has_body) {
        tmap_buf_puts(b, ";\n");
        return;
    }
    tmap_buf_puts(b, "\n{\n");
    int depth = 0;
    for (size_t i = 0; i < f->nbody; i++)
        print_stmt(b, &f->body[i], &depth);
    tmap_buf_puts(b, "}\n");
}

static void print_item(tmap_buf *b, const tmap_ptx_module *m, const tmap_ptx_item *it)
{
    switch (it->kind) {
    case TMAP_IT_VERSION:
        tmap_buf_printf(b, ".version %d.%d\n", m->version_major, m->version_minor);
        return;
    case TMAP_IT_LINE:
    case TMAP_IT_DECL:
        tmap_ptx_print_toks(b, it->toks, it->ntoks);
        tmap_buf_puts(b, "\n");
        return;
    case TMAP_IT_SECTION:
        tmap_buf_printf(b, "\n%s\n", it->text);
        return;
    case TMAP_IT_FUNC:
        tmap_buf_puts(b, "\n");
        print_func(b, &m->funcs[it->index]);
        return;
    case TMAP_IT_RAW:
        tmap_buf_puts(b, it->text);
        return;
    }
}

tmap_status tmap_ptx_print(const tmap_ptx_module *m, char **text, tmap_error *err)
{
    if (!m || !text)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_ptx_print: NULL argument");
    tmap_buf b = {0};
    tmap_buf_puts(&b, "//\n// Printed by threadmap\n//\n\n");
    for (size_t i = 0; i < m->nitems; i++)
        print_item(&b, m, &m->items[i]);
    if (b.oom) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory printing PTX");
    }
    *text = b.data;
    return TMAP_OK;
}

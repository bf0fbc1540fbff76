/*
 * ptx_parse.c -- the PTX grammar: module directives, function headers and
 * bodies, instructions with their operands, into the IR of ptx.h.
 *
 * Every rule consumes at least one token or fails, so the parser always
 * terminates; anything unexpected is TMAP_ERR_PARSE naming the PTX line.
 */
#include "instrument/ptx.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const tmap_ptx_tok *t;
    size_t n, pos;
    const char *file;
    tmap_error *err;
    tmap_ptx_module *m;
    int depth; /* nesting of operand groups, bounded to bound recursion */
} parser;

/* ------------------------------------------------------------- helpers */

static const tmap_ptx_tok *peek(const parser *p, size_t k)
{
    size_t i = p->pos + k;
    return i < p->n ? &p->t[i] : &p->t[p->n - 1]; /* the last token is EOF */
}

static int is_punct(const tmap_ptx_tok *t, char c)
{
    return t->kind == TMAP_TOK_PUNCT && t->text[0] == c;
}

static int is_dir(const tmap_ptx_tok *t, const char *name)
{
    return t->kind == TMAP_TOK_DIRECTIVE && !strcmp(t->text, name);
}

static int dir_in(const tmap_ptx_tok *t, const char *const *names)
{
    for (; *names; names++)
        if (is_dir(t, *names))
            return 1;
    return 0;
}

static const char *describe(const tmap_ptx_tok *t)
{
    return t->kind == TMAP_TOK_EOF ? "end of file" : t->text;
}

static tmap_status expected(parser *p, const tmap_ptx_tok *t, const char *what)
{
    return tmap_fail(p->err, TMAP_ERR_PARSE, "%s:%u: expected %s, found '%s'", p->file,
                     t->line, what, describe(t));
}

static tmap_status nomem(parser *p)
{
    return tmap_fail(p->err, TMAP_ERR_NOMEM, "%s: out of memory", p->file);
}

/* Copies tokens [a, b) into the arena. */
static tmap_ptx_tok *copy_toks(parser *p, size_t a, size_t b)
{
    if (b == a)
        return tmap_arena_alloc(&p->m->arena, 1);
    tmap_ptx_tok *v = tmap_arena_alloc(&p->m->arena, (b - a) * sizeof *v);
    if (v)
        memcpy(v, p->t + a, (b - a) * sizeof *v);
    return v;
}

static tmap_ptx_item *new_item(parser *p, tmap_ptx_item_kind kind, uint32_t line)
{
    tmap_ptx_module *m = p->m;
    if (tmap_grow(&m->items, &m->capitems, m->nitems + 1, sizeof *m->items))
        return NULL;
    tmap_ptx_item *it = &m->items[m->nitems++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->line = line;
    return it;
}

static tmap_ptx_stmt *new_stmt(parser *p, tmap_ptx_func *f, tmap_ptx_stmt_kind kind,
                               uint32_t line)
{
    if (tmap_grow(&f->body, &f->capbody, f->nbody + 1, sizeof *f->body))
        return NULL;
    tmap_ptx_stmt *s = &f->body[f->nbody++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->line = line;
    return s;
}

/* Skips a statement up to and including its ';', with balanced brackets.
 * Fails on EOF or on an unbalanced closer (a missing ';'). */
static tmap_status skip_statement(parser *p, const char *what)
{
    const tmap_ptx_tok *start = peek(p, 0);
    char stack[64];
    size_t depth = 0;
    for (;;) {
        const tmap_ptx_tok *t = peek(p, 0);
        if (t->kind == TMAP_TOK_EOF)
            return tmap_fail(p->err, TMAP_ERR_PARSE,
                             "%s:%u: %s is not terminated by ';' (end of file)", p->file,
                             start->line, what);
        p->pos++;
        if (t->kind != TMAP_TOK_PUNCT)
            continue;
        char c = t->text[0];
        if (c == ';' && depth == 0)
            return TMAP_OK;
        if (c == '{' || c == '(' || c == '[') {
            if (depth == sizeof stack)
                return tmap_fail(p->err, TMAP_ERR_PARSE, "%s:%u: brackets nested too deeply",
                                 p->file, t->line);
            stack[depth++] = c == '{' ? '}' : c == '(' ? ')' : ']';
        } else if (c == '}' || c == ')' || c == ']') {
            if (depth == 0 || stack[depth - 1] != c)
                return tmap_fail(p->err, TMAP_ERR_PARSE,
                                 "%s:%u: missing ';' at the end of %s (found '%c' on line %u)",
                                 p->file, start->line, what, c, t->line);
            depth--;
        }
    }
}

/* Consumes the tokens on the line of the current token (a no-';' directive). */
static void skip_line(parser *p)
{
    uint32_t line = peek(p, 0)->line;
    do
        p->pos++;
    while (peek(p, 0)->kind != TMAP_TOK_EOF && peek(p, 0)->line == line);
}

/* --------------------------------------------------------- module scope */

static tmap_status parse_version(parser *p)
{
    const tmap_ptx_tok *d = peek(p, 0), *v = peek(p, 1);
    if (v->kind != TMAP_TOK_NUMBER || v->line != d->line)
        return expected(p, v, "a version number after .version");
    char *dot;
    long major = strtol(v->text, &dot, 10), minor = 0;
    if (*dot == '.')
        minor = strtol(dot + 1, &dot, 10);
    if (*dot || major < 1 || major > 99 || minor < 0 || minor > 99)
        return expected(p, v, "a version MAJOR.MINOR");
    p->m->version_major = (int)major;
    p->m->version_minor = (int)minor;
    if (!new_item(p, TMAP_IT_VERSION, d->line))
        return nomem(p);
    p->pos += 2;
    return TMAP_OK;
}

/* .target / .address_size / .file: checked shapes, stored as one line. */
static tmap_status parse_line_directive(parser *p)
{
    size_t a = p->pos;
    const tmap_ptx_tok *d = peek(p, 0), *x = peek(p, 1);
    if (is_dir(d, ".target")) {
        for (size_t k = 1;; k += 2) {
            x = peek(p, k);
            if (x->kind != TMAP_TOK_IDENT || x->line != d->line)
                return expected(p, x, "a target name");
            if (!is_punct(peek(p, k + 1), ',') || peek(p, k + 1)->line != d->line)
                break;
        }
    } else if (is_dir(d, ".address_size")) {
        if (x->kind != TMAP_TOK_NUMBER || x->line != d->line)
            return expected(p, x, "32 or 64 after .address_size");
    } else { /* .file N "name" [, timestamp, size] */
        if (x->kind != TMAP_TOK_NUMBER || x->line != d->line)
            return expected(p, x, "a file number after .file");
        if (peek(p, 2)->kind != TMAP_TOK_STRING)
            return expected(p, peek(p, 2), "a file name string");
    }
    skip_line(p);
    tmap_ptx_item *it = new_item(p, TMAP_IT_LINE, d->line);
    if (!it || !(it->toks = copy_toks(p, a, p->pos)))
        return nomem(p);
    it->ntoks = (uint32_t)(p->pos - a);
    return TMAP_OK;
}

/* .section NAME { ... }: kept as the raw source text. */
static tmap_status parse_section(parser *p, const char *src)
{
    const tmap_ptx_tok *d = peek(p, 0);
    if (peek(p, 1)->kind != TMAP_TOK_DIRECTIVE)
        return expected(p, peek(p, 1), "a section name after .section");
    if (!is_punct(peek(p, 2), '{'))
        return expected(p, peek(p, 2), "'{' after the section name");
    p->pos += 3;
    size_t depth = 1;
    while (depth) {
        const tmap_ptx_tok *t = peek(p, 0);
        if (t->kind == TMAP_TOK_EOF)
            return tmap_fail(p->err, TMAP_ERR_PARSE, "%s:%u: unterminated '{' of .section",
                             p->file, d->line);
        depth += is_punct(t, '{');
        depth -= is_punct(t, '}');
        p->pos++;
    }
    const tmap_ptx_tok *close = &p->t[p->pos - 1];
    if (memchr(src + d->off, '\0', close->off + 1 - d->off)) /* it is kept as a C string */
        return tmap_fail(p->err, TMAP_ERR_PARSE, "%s:%u: NUL byte in .section", p->file,
                         d->line);
    tmap_ptx_item *it = new_item(p, TMAP_IT_SECTION, d->line);
    if (!it || !(it->text = tmap_arena_strndup(&p->m->arena, src + d->off,
                                               close->off + 1 - d->off)))
        return nomem(p);
    return TMAP_OK;
}

static tmap_status parse_decl_item(parser *p, size_t a, const char *what)
{
    uint32_t line = p->t[a].line;
    tmap_status st = skip_statement(p, what);
    if (st != TMAP_OK)
        return st;
    tmap_ptx_item *it = new_item(p, TMAP_IT_DECL, line);
    if (!it || !(it->toks = copy_toks(p, a, p->pos)))
        return nomem(p);
    it->ntoks = (uint32_t)(p->pos - a);
    return TMAP_OK;
}

/* ( .param .type [attrs] name[N]? , ... ): at least a name per entry. */
static tmap_status parse_param_list(parser *p)
{
    if (!is_punct(peek(p, 0), '('))
        return expected(p, peek(p, 0), "'('");
    p->pos++;
    if (is_punct(peek(p, 0), ')')) {
        p->pos++;
        return TMAP_OK;
    }
    for (;;) {
        const tmap_ptx_tok *t = peek(p, 0);
        if (!is_dir(t, ".param") && !is_dir(t, ".reg"))
            return expected(p, t, "'.param' or '.reg' in a parameter list");
        p->pos++;
        int named = 0;
        for (;;) {
            t = peek(p, 0);
            if (t->kind == TMAP_TOK_DIRECTIVE || (t->kind == TMAP_TOK_NUMBER && !named)) {
                p->pos++;
            } else if ((t->kind == TMAP_TOK_IDENT || t->kind == TMAP_TOK_REG) && !named) {
                named = 1;
                p->pos++;
            } else if (is_punct(t, '[') && named) {
                p->pos++;
                if (peek(p, 0)->kind == TMAP_TOK_NUMBER)
                    p->pos++;
                if (!is_punct(peek(p, 0), ']'))
                    return expected(p, peek(p, 0), "']'");
                p->pos++;
            } else {
                break;
            }
        }
        if (!named)
            return expected(p, t, "a parameter name");
        if (is_punct(t, ')')) {
            p->pos++;
            return TMAP_OK;
        }
        if (!is_punct(t, ','))
            return expected(p, t, "',' or ')' in a parameter list");
        p->pos++;
    }
}

/* Numbers separated by commas, at least one (after .maxntid etc.). */
static tmap_status parse_number_list(parser *p)
{
    for (;;) {
        if (peek(p, 0)->kind != TMAP_TOK_NUMBER)
            return expected(p, peek(p, 0), "a number");
        p->pos++;
        if (!is_punct(peek(p, 0), ','))
            return TMAP_OK;
        p->pos++;
    }
}

static tmap_status parse_perf_directives(parser *p)
{
    static const char *const with_numbers[] = {
        ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg",
        ".reqnctapercluster", ".maxclusterrank", NULL};
    static const char *const bare[] = {".noreturn", ".explicitcluster",
                                       ".blocksareclusters", NULL};
    for (;;) {
        const tmap_ptx_tok *t = peek(p, 0);
        tmap_status st = TMAP_OK;
        if (dir_in(t, with_numbers)) {
            p->pos++;
            st = parse_number_list(p);
        } else if (dir_in(t, bare)) {
            p->pos++;
        } else if (is_dir(t, ".pragma")) {
            p->pos++;
            if (peek(p, 0)->kind != TMAP_TOK_STRING)
                return expected(p, peek(p, 0), "a string after .pragma");
            p->pos++;
            if (!is_punct(peek(p, 0), ';'))
                return expected(p, peek(p, 0), "';' after .pragma");
            p->pos++;
        } else {
            return TMAP_OK;
        }
        if (st != TMAP_OK)
            return st;
    }
}

static tmap_status parse_body(parser *p, tmap_ptx_func *f);

static tmap_status parse_function(parser *p, size_t a)
{
    const tmap_ptx_tok *kw = peek(p, 0);
    int is_entry = is_dir(kw, ".entry");
    p->pos++;
    tmap_status st;
    if (!is_entry && is_punct(peek(p, 0), '(') && (st = parse_param_list(p)) != TMAP_OK)
        return st;
    const tmap_ptx_tok *name = peek(p, 0);
    if (name->kind != TMAP_TOK_IDENT)
        return expected(p, name, "a function name");
    p->pos++;
    if (is_punct(peek(p, 0), '(') && (st = parse_param_list(p)) != TMAP_OK)
        return st;
    if ((st = parse_perf_directives(p)) != TMAP_OK)
        return st;
    const tmap_ptx_tok *end = peek(p, 0);
    if (!is_punct(end, '{') && !is_punct(end, ';'))
        return expected(p, end, "'{' or ';' after the function header");

    tmap_ptx_module *m = p->m;
    tmap_ptx_item *it = new_item(p, TMAP_IT_FUNC, p->t[a].line);
    if (!it || tmap_grow(&m->funcs, &m->capfuncs, m->nfuncs + 1, sizeof *m->funcs))
        return nomem(p);
    it->index = m->nfuncs;
    tmap_ptx_func *f = &m->funcs[m->nfuncs++];
    memset(f, 0, sizeof *f);
    f->name = name->text;
    f->is_entry = is_entry;
    f->line = p->t[a].line;
    f->nhead = (uint32_t)(p->pos - a);
    if (!(f->head = copy_toks(p, a, p->pos)))
        return nomem(p);
    p->pos++;
    if (is_punct(end, ';'))
        return TMAP_OK;
    f->has_body = 1;
    return parse_body(p, f);
}

static tmap_status parse_module_directive(parser *p, const char *src)
{
    static const char *const linkage[] = {".visible", ".extern", ".weak", ".common", NULL};
    static const char *const decls[] = {".global", ".const", ".shared", ".local", ".tex",
                                        ".texref", ".surfref", ".samplerref", ".alias",
                                        ".pragma", NULL};
    const tmap_ptx_tok *t = peek(p, 0);
    if (is_dir(t, ".version"))
        return parse_version(p);
    if (is_dir(t, ".target") || is_dir(t, ".address_size") || is_dir(t, ".file"))
        return parse_line_directive(p);
    if (is_dir(t, ".section"))
        return parse_section(p, src);
    size_t a = p->pos;
    while (dir_in(peek(p, 0), linkage))
        p->pos++;
    t = peek(p, 0);
    if (is_dir(t, ".entry") || is_dir(t, ".func"))
        return parse_function(p, a);
    if (dir_in(t, decls))
        return parse_decl_item(p, a, "the declaration");
    return expected(p, t, "a module directive (.version, .entry, .func, .global...)");
}

/* ------------------------------------------------------ function bodies */

static tmap_status parse_operand(parser *p);

/* A bracketed group: { operands } , ( operands ) or [ anything ]. */
static tmap_status parse_group(parser *p)
{
    const tmap_ptx_tok *open = peek(p, 0);
    char close = open->text[0] == '{' ? '}' : open->text[0] == '(' ? ')' : ']';
    if (++p->depth > 32)
        return tmap_fail(p->err, TMAP_ERR_PARSE, "%s:%u: operands nested too deeply",
                         p->file, open->line);
    p->pos++;
    if (close == ']') {
        while (!is_punct(peek(p, 0), ']')) {
            const tmap_ptx_tok *t = peek(p, 0);
            if (t->kind == TMAP_TOK_EOF || is_punct(t, ';') || is_punct(t, '['))
                return tmap_fail(p->err, TMAP_ERR_PARSE, "%s:%u: unterminated '['",
                                 p->file, open->line);
            if (is_punct(t, '{')) {
                tmap_status st = parse_group(p);
                if (st != TMAP_OK)
                    return st;
                continue;
            }
            p->pos++;
        }
        p->pos++;
        p->depth--;
        return TMAP_OK;
    }
    if (is_punct(peek(p, 0), close)) {
        p->pos++;
        p->depth--;
        return TMAP_OK;
    }
    for (;;) {
        tmap_status st = parse_operand(p);
        if (st != TMAP_OK)
            return st;
        const tmap_ptx_tok *t = peek(p, 0);
        if (is_punct(t, close)) {
            p->pos++;
            p->depth--;
            return TMAP_OK;
        }
        if (!is_punct(t, ','))
            return tmap_fail(p->err, TMAP_ERR_PARSE,
                             "%s:%u: expected ',' or '%c' in a list opened on line %u, "
                             "found '%s'", p->file, t->line, close, open->line, describe(t));
        p->pos++;
    }
}

static tmap_status parse_primary(parser *p)
{
    const tmap_ptx_tok *t = peek(p, 0);
    if (is_punct(t, '{') || is_punct(t, '(') || is_punct(t, '['))
        return parse_group(p);
    if (t->kind == TMAP_TOK_REG || t->kind == TMAP_TOK_NUMBER || t->kind == TMAP_TOK_STRING) {
        p->pos++;
        return TMAP_OK;
    }
    if (t->kind == TMAP_TOK_IDENT) {
        p->pos++;
        if (is_punct(peek(p, 0), '(')) /* generic(name) */
            return parse_group(p);
        return TMAP_OK;
    }
    return expected(p, t, "an operand");
}

/* operand: ['!'|'-'] primary (('+'|'-'|'|') primary)* */
static tmap_status parse_operand(parser *p)
{
    if (is_punct(peek(p, 0), '!') || is_punct(peek(p, 0), '-'))
        p->pos++;
    for (;;) {
        tmap_status st = parse_primary(p);
        if (st != TMAP_OK)
            return st;
        const tmap_ptx_tok *t = peek(p, 0);
        if (!is_punct(t, '+') && !is_punct(t, '-') && !is_punct(t, '|'))
            return TMAP_OK;
        p->pos++;
    }
}

static tmap_status parse_instruction(parser *p, tmap_ptx_func *f, const tmap_ptx_tok *guard,
                                     int neg, uint32_t line)
{
    const tmap_ptx_tok *op = peek(p, 0);
    if (op->kind != TMAP_TOK_IDENT)
        return expected(p, op, "an instruction opcode");
    p->pos++;
    size_t a = p->pos;
    uint32_t starts[256];
    uint32_t nops = 0;
    if (!is_punct(peek(p, 0), ';')) {
        for (;;) {
            if (nops == sizeof starts / sizeof starts[0])
                return tmap_fail(p->err, TMAP_ERR_PARSE, "%s:%u: too many operands",
                                 p->file, line);
            starts[nops++] = (uint32_t)(p->pos - a);
            tmap_status st = parse_operand(p);
            if (st != TMAP_OK)
                return st;
            const tmap_ptx_tok *t = peek(p, 0);
            if (is_punct(t, ';'))
                break;
            if (!is_punct(t, ',')) {
                const tmap_ptx_tok *last = &p->t[p->pos - 1];
                if (t->line != last->line)
                    return tmap_fail(p->err, TMAP_ERR_PARSE,
                                     "%s:%u: missing ';' after '%s' (found '%s' on line %u)",
                                     p->file, last->line, op->text, describe(t), t->line);
                return tmap_fail(p->err, TMAP_ERR_PARSE,
                                 "%s:%u: expected ',' or ';' after an operand of '%s', "
                                 "found '%s'", p->file, t->line, op->text, describe(t));
            }
            p->pos++;
        }
    }
    tmap_ptx_stmt *s = new_stmt(p, f, TMAP_ST_INSTR, line);
    if (!s)
        return nomem(p);
    s->text = op->text;
    s->guard = guard ? guard->text : NULL;
    s->guard_neg = neg;
    s->ntoks = (uint32_t)(p->pos - a);
    s->nopnd = nops;
    s->toks = copy_toks(p, a, p->pos);
    s->opnd = tmap_arena_alloc(&p->m->arena, (nops ? nops : 1) * sizeof *s->opnd);
    if (!s->toks || !s->opnd)
        return nomem(p);
    memcpy(s->opnd, starts, nops * sizeof *starts);
    p->pos++; /* ';' */
    return TMAP_OK;
}

static tmap_status parse_body_directive(parser *p, tmap_ptx_func *f)
{
    static const char *const stmts[] = {
        ".reg", ".local", ".shared", ".param", ".const", ".global", ".pragma",
        ".callprototype", ".branchtargets", ".calltargets", ".tex", ".surfref",
        ".texref", ".samplerref", NULL};
    const tmap_ptx_tok *t = peek(p, 0);
    size_t a = p->pos;
    tmap_ptx_stmt_kind kind;
    if (is_dir(t, ".loc") || is_dir(t, ".file")) {
        if (peek(p, 1)->kind != TMAP_TOK_NUMBER || peek(p, 1)->line != t->line)
            return expected(p, peek(p, 1), "a file number after .loc");
        skip_line(p);
        kind = TMAP_ST_LINE;
    } else if (dir_in(t, stmts)) {
        tmap_status st = skip_statement(p, t->text);
        if (st != TMAP_OK)
            return st;
        kind = TMAP_ST_DIRECTIVE;
    } else {
        return expected(p, t, "a statement (.reg, .loc, a label or an instruction)");
    }
    tmap_ptx_stmt *s = new_stmt(p, f, kind, t->line);
    if (!s || !(s->toks = copy_toks(p, a, p->pos)))
        return nomem(p);
    s->ntoks = (uint32_t)(p->pos - a);
    return TMAP_OK;
}

/* Parses statements after the function's '{' up to the matching '}'. */
static tmap_status parse_body(parser *p, tmap_ptx_func *f)
{
    size_t depth = 0;
    for (;;) {
        const tmap_ptx_tok *t = peek(p, 0);
        tmap_status st = TMAP_OK;
        if (t->kind == TMAP_TOK_EOF) {
            return tmap_fail(p->err, TMAP_ERR_PARSE,
                             "%s:%u: unterminated '{' of function %s (end of file)", p->file,
                             f->line, f->name);
        } else if (is_punct(t, '}')) {
            p->pos++;
            if (depth == 0)
                return TMAP_OK;
            depth--;
            if (!new_stmt(p, f, TMAP_ST_CLOSE, t->line))
                return nomem(p);
        } else if (is_punct(t, '{')) {
            p->pos++;
            depth++;
            if (!new_stmt(p, f, TMAP_ST_OPEN, t->line))
                return nomem(p);
        } else if (t->kind == TMAP_TOK_IDENT && is_punct(peek(p, 1), ':')) {
            tmap_ptx_stmt *s = new_stmt(p, f, TMAP_ST_LABEL, t->line);
            if (!s)
                return nomem(p);
            s->text = t->text;
            p->pos += 2;
        } else if (is_punct(t, '@')) {
            int neg = is_punct(peek(p, 1), '!');
            const tmap_ptx_tok *g = peek(p, 1 + neg);
            if (g->kind != TMAP_TOK_REG && g->kind != TMAP_TOK_IDENT) /* %p, or p of inline asm */
                return expected(p, g, "a predicate register after '@'");
            p->pos += 2 + neg;
            st = parse_instruction(p, f, g, neg, t->line);
        } else if (t->kind == TMAP_TOK_DIRECTIVE) {
            st = parse_body_directive(p, f);
        } else if (t->kind == TMAP_TOK_IDENT) {
            st = parse_instruction(p, f, NULL, 0, t->line);
        } else {
            return expected(p, t, "a label, an instruction or a directive");
        }
        if (st != TMAP_OK)
            return st;
    }
}

/* ------------------------------------------------------------ interface */

void tmap_ptx_free(tmap_ptx_module *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nfuncs; i++)
        free(m->funcs[i].body);
    free(m->funcs);
    free(m->items);
    tmap_arena_free(&m->arena);
    free(m);
}

tmap_status tmap_ptx_parse(const char *text, size_t len, const char *filename,
                           tmap_ptx_module **out, tmap_error *err)
{
    if (!out || (!text && len))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_ptx_parse: NULL argument");
    *out = NULL;
    const char *file = filename ? filename : "<PTX>";
    tmap_ptx_module *m = calloc(1, sizeof *m);
    if (!m)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", file);
    m->file = tmap_arena_strndup(&m->arena, file, strlen(file));
    if (!m->file) {
        free(m);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", file);
    }
    tmap_ptx_tok *toks = NULL;
    size_t ntoks = 0;
    tmap_status st = tmap_ptx_lex(text ? text : "", len, file, &m->arena, &toks, &ntoks, err);
    parser p = {toks, ntoks, 0, file, err, m, 0};
    if (st == TMAP_OK && ntoks == 1)
        st = tmap_fail(err, TMAP_ERR_PARSE, "%s:%u: empty PTX (no .version or function)",
                       file, toks[0].line);
    while (st == TMAP_OK && peek(&p, 0)->kind != TMAP_TOK_EOF) {
        if (peek(&p, 0)->kind == TMAP_TOK_DIRECTIVE)
            st = parse_module_directive(&p, text);
        else
            st = expected(&p, peek(&p, 0), "a directive at module scope");
    }
    free(toks);
    if (st != TMAP_OK) {
        tmap_ptx_free(m);
        return st;
    }
    *out = m;
    return TMAP_OK;
}

const char *tmap_ptx_describe(char *buf, size_t size, const char *fmt, ...)
{
    if (!buf || size < 3 || !fmt)
        return buf && size ? (buf[0] = '\0', buf) : "";
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + 1, size - 2, fmt, ap);
    va_end(ap);
    size_t end = n < 0 ? 1 : 1 + ((size_t)n < size - 3 ? (size_t)n : size - 3); /* the '>' */
    assert(end + 1 < size);
    buf[0] = '<';
    buf[end] = '>';
    buf[end + 1] = '\0';
    return buf;
}

tmap_ptx_func *tmap_ptx_find_func(const tmap_ptx_module *m, const char *name)
{
    tmap_ptx_func *decl = NULL;
    for (size_t i = 0; i < m->nfuncs; i++) {
        if (strcmp(m->funcs[i].name, name))
            continue;
        if (m->funcs[i].has_body)
            return &m->funcs[i];
        decl = &m->funcs[i];
    }
    return decl;
}

void tmap_ptx_operand(const tmap_ptx_stmt *s, uint32_t i, uint32_t *first, uint32_t *n)
{
    *first = s->opnd[i];
    uint32_t end = i + 1 < s->nopnd ? s->opnd[i + 1] - 1 : s->ntoks; /* minus the ',' */
    *n = end - *first;
}

size_t tmap_ptx_num_kernels(const tmap_ptx_module *m)
{
    size_t k = 0;
    for (size_t i = 0; m && i < m->nfuncs; i++)
        k += m->funcs[i].is_entry && m->funcs[i].has_body;
    return k;
}

const char *tmap_ptx_kernel_name(const tmap_ptx_module *m, size_t i)
{
    for (size_t j = 0; m && j < m->nfuncs; j++)
        if (m->funcs[j].is_entry && m->funcs[j].has_body && i-- == 0)
            return m->funcs[j].name;
    return NULL;
}

void tmap_ptx_version(const tmap_ptx_module *m, int *major, int *minor)
{
    if (major)
        *major = m ? m->version_major : 0;
    if (minor)
        *minor = m ? m->version_minor : 0;
}

void tmap_ptx_set_version(tmap_ptx_module *m, int major, int minor)
{
    if (!m)
        return;
    m->version_major = major;
    m->version_minor = minor;
}

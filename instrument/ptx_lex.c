/*
 * ptx_lex.c -- the PTX tokenizer (and the string arena the IR lives in).
 *
 * Produces identifiers (dotted opcodes included), directives, registers,
 * numbers (decimal, hex, 0f/0d float bits, negative), strings and one-char
 * punctuation, with line numbers; comments become whitespace.  And the
 * width a type part of a dotted opcode or directive gives (".v4", ".u32").
 */
#include "instrument/ptx.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- arena */

struct tmap_arena_chunk {
    tmap_arena_chunk *next;
    size_t used, cap;
    max_align_t align[]; /* cap bytes follow */
};

void *tmap_arena_alloc(tmap_arena *a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    tmap_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = (char *)c->align + c->used;
    c->used += n;
    return p;
}

char *tmap_arena_strndup(tmap_arena *a, const char *s, size_t n)
{
    char *p = tmap_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

void tmap_arena_free(tmap_arena *a)
{
    tmap_arena_chunk *c = a->head;
    while (c) {
        tmap_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

/* ---------------------------------------------------------------- lexer */

typedef struct lexer {
    const char *s;
    size_t len, pos;
    uint32_t line;
    const char *file;
    tmap_error *err;
} lexer;

static int is_ident_start(int c) { return isalpha(c) || c == '_' || c == '$'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_' || c == '$'; }
static int is_punct(int c) { return c && strchr("{}[](),;:@!+-<>=|*/&~^", c) != NULL; }

/* Skips whitespace and comments; sets *spaced if any was skipped. */
static tmap_status skip_space(lexer *lx, int *spaced)
{
    while (lx->pos < lx->len) {
        char c = lx->s[lx->pos];
        if (c == '\n') {
            lx->line++;
            lx->pos++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            lx->pos++;
        } else if (c == '/' && lx->pos + 1 < lx->len && lx->s[lx->pos + 1] == '/') {
            while (lx->pos < lx->len && lx->s[lx->pos] != '\n')
                lx->pos++;
        } else if (c == '/' && lx->pos + 1 < lx->len && lx->s[lx->pos + 1] == '*') {
            uint32_t start = lx->line;
            lx->pos += 2;
            for (;;) {
                if (lx->pos + 1 >= lx->len)
                    return tmap_fail(lx->err, TMAP_ERR_PARSE,
                                     "%s:%u: unterminated /* comment", lx->file, start);
                if (lx->s[lx->pos] == '*' && lx->s[lx->pos + 1] == '/')
                    break;
                if (lx->s[lx->pos] == '\n')
                    lx->line++;
                lx->pos++;
            }
            lx->pos += 2;
        } else {
            break;
        }
        *spaced = 1;
    }
    return TMAP_OK;
}

static int all_of(const char *s, size_t n, int (*pred)(int))
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!pred((unsigned char)s[i]))
            return 0;
    return 1;
}

static int is_bin(int c) { return c == '0' || c == '1'; }
static int is_oct(int c) { return c >= '0' && c <= '7'; }

/* Whether s[0..n) (no sign) is a PTX integer or float literal. */
static int number_valid(const char *s, size_t n)
{
    if (n && (s[n - 1] == 'U' || s[n - 1] == 'u') && n > 1 && s[0] != '.')
        if (!(n > 2 && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')))
            n--; /* unsigned suffix */
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return all_of(s + 2, n - 2, isxdigit);
    if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        return all_of(s + 2, n - 2, is_bin);
    if (n == 10 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F'))
        return all_of(s + 2, 8, isxdigit);
    if (n == 18 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D'))
        return all_of(s + 2, 16, isxdigit);
    size_t i = 0, digits = 0;
    while (i < n && isdigit((unsigned char)s[i]))
        i++, digits++;
    if (i == n)
        return s[0] != '0' || n == 1 || all_of(s, n, is_oct);
    if (s[i] == '.') {
        i++;
        while (i < n && isdigit((unsigned char)s[i]))
            i++, digits++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!all_of(s + i, n - i, isdigit))
            return 0;
        i = n;
    }
    return digits > 0 && i == n;
}

/* Length of the number starting at p (digits, letters, '.', exponent sign). */
static size_t number_len(const char *p, size_t left)
{
    size_t i = 0;
    while (i < left) {
        char c = p[i];
        if (isalnum((unsigned char)c) || c == '.') {
            i++;
        } else if ((c == '+' || c == '-') && i > 0 && (p[i - 1] == 'e' || p[i - 1] == 'E') &&
                   !(i > 1 && p[0] == '0' && strchr("xXfFdDbB", p[1]))) {
            i++;
        } else {
            break;
        }
    }
    return i;
}

/* A '-' starts a negative number unless the previous token ends an operand. */
static int minus_is_sign(const tmap_ptx_tok *prev)
{
    if (!prev)
        return 1;
    if (prev->kind == TMAP_TOK_IDENT || prev->kind == TMAP_TOK_REG ||
        prev->kind == TMAP_TOK_NUMBER || prev->kind == TMAP_TOK_STRING)
        return 0;
    return !(prev->kind == TMAP_TOK_PUNCT && strchr(")]}>", prev->text[0]));
}

/* Scans one token at lx->pos into *t (text not yet copied: off/len). */
static tmap_status scan_token(lexer *lx, const tmap_ptx_tok *prev, tmap_ptx_tok *t,
                              size_t *tlen)
{
    const char *p = lx->s + lx->pos;
    size_t left = lx->len - lx->pos;
    unsigned char c = (unsigned char)p[0];
    size_t n = 1;
    if (is_ident_start(c)) {
        t->kind = TMAP_TOK_IDENT;
        while (n < left && (is_ident_char((unsigned char)p[n]) ||
                            (p[n] == '.' && n + 1 < left && is_ident_char((unsigned char)p[n + 1]))))
            n++;
    } else if (c == '.' && left > 1 && is_ident_start((unsigned char)p[1])) {
        t->kind = TMAP_TOK_DIRECTIVE;
        while (n < left && is_ident_char((unsigned char)p[n]))
            n++;
    } else if (c == '%' && left > 1 && is_ident_start((unsigned char)p[1])) {
        t->kind = TMAP_TOK_REG;
        while (n < left && (is_ident_char((unsigned char)p[n]) ||
                            (p[n] == '.' && n + 1 < left && is_ident_char((unsigned char)p[n + 1]))))
            n++;
    } else if (isdigit(c) || (c == '-' && left > 1 && isdigit((unsigned char)p[1]) &&
                              minus_is_sign(prev))) {
        size_t sign = c == '-';
        t->kind = TMAP_TOK_NUMBER;
        n = sign + number_len(p + sign, left - sign);
        if (!number_valid(p + sign, n - sign))
            return tmap_fail(lx->err, TMAP_ERR_PARSE, "%s:%u: malformed number '%.*s'",
                             lx->file, lx->line, (int)(n > 40 ? 40 : n), p);
    } else if (c == '"') {
        t->kind = TMAP_TOK_STRING;
        /* printable bytes and tabs only: the text is kept NUL-terminated */
        while (n < left && p[n] != '"' && (isprint((unsigned char)p[n]) || p[n] == '\t'))
            n += (p[n] == '\\' && n + 1 < left && isprint((unsigned char)p[n + 1])) ? 2 : 1;
        if (n >= left || p[n] != '"')
            return tmap_fail(lx->err, TMAP_ERR_PARSE, "%s:%u: unterminated string",
                             lx->file, lx->line);
        n++;
    } else if (is_punct(c)) {
        t->kind = TMAP_TOK_PUNCT;
    } else if (isprint(c)) {
        return tmap_fail(lx->err, TMAP_ERR_PARSE, "%s:%u: unexpected character '%c'",
                         lx->file, lx->line, c);
    } else {
        return tmap_fail(lx->err, TMAP_ERR_PARSE, "%s:%u: unexpected byte 0x%02x",
                         lx->file, lx->line, c);
    }
    *tlen = n;
    return TMAP_OK;
}

tmap_status tmap_ptx_lex(const char *text, size_t len, const char *filename,
                         tmap_arena *arena, tmap_ptx_tok **toks, size_t *ntoks,
                         tmap_error *err)
{
    lexer lx = {text, len, 0, 1, filename ? filename : "<PTX>", err};
    tmap_ptx_tok *v = NULL;
    size_t n = 0, cap = 0;
    tmap_status st = TMAP_OK;
    for (;;) {
        int spaced = 0;
        if ((st = skip_space(&lx, &spaced)) != TMAP_OK)
            break;
        if (tmap_grow(&v, &cap, n + 1, sizeof *v)) {
            st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", lx.file);
            break;
        }
        tmap_ptx_tok *t = &v[n];
        memset(t, 0, sizeof *t);
        t->space_before = (uint8_t)spaced;
        t->line = lx.line;
        t->off = lx.pos;
        if (lx.pos >= lx.len) {
            t->kind = TMAP_TOK_EOF;
            t->text = "";
            n++;
            break;
        }
        size_t tl = 0;
        if ((st = scan_token(&lx, n ? &v[n - 1] : NULL, t, &tl)) != TMAP_OK)
            break;
        t->text = tmap_arena_strndup(arena, text + lx.pos, tl);
        if (!t->text) {
            st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", lx.file);
            break;
        }
        lx.pos += tl;
        n++;
    }
    if (st != TMAP_OK) {
        free(v);
        return st;
    }
    *toks = v;
    *ntoks = n;
    return TMAP_OK;
}

int tmap_ptx_type_part(const char *p, uint32_t *width, uint32_t *vec)
{
    if (p[1] == 'v' && p[2] && strchr("248", p[2])) {
        *vec = (uint32_t)(p[2] - '0');
        return 1;
    }
    int bits = p[1] && strchr("busf", p[1]) && p[2] >= '0' && p[2] <= '9' ? atoi(p + 2) : 0;
    if (bits < 8 || bits > 128 || bits % 8)
        return 0;
    *width = (uint32_t)bits / 8;
    return 1;
}

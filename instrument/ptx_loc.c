/*
 * ptx_loc.c -- source lines of PTX compiled with -lineinfo (or -G): the
 * module's `.file N "path"[, mtime, size]` table and the `.loc FILE LINE
 * COLUMN[, function_name ..., inlined_at ...]` statements of function
 * bodies.  A basic block's source line is the `.loc` in effect at its
 * first instruction (the last `.loc` before it in its function; nvcc puts
 * one right after each label), or, when that one says line 0 (nvcc's mark
 * for code of no line), the first `.loc` of the block with a line.  Every number is read within bounds and a
 * malformed directive, or a `.loc` naming an undeclared file, is an error
 * that names the PTX line.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instrument/ptx.h"

enum { LOC_MAX_NUMBER = 1u << 30, LOC_MAX_PATH = 4096 };

/* A decimal number token within [0, LOC_MAX_NUMBER]; 0 on success. */
static int loc_number(const tmap_ptx_tok *t, uint32_t *v)
{
    if (t->kind != TMAP_TOK_NUMBER || !t->text[0] || strlen(t->text) > 10)
        return -1;
    unsigned long long x = 0;
    for (const char *p = t->text; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        x = x * 10 + (unsigned)(*p - '0');
    }
    if (x > LOC_MAX_NUMBER)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* The path of `.file N "path"` in tokens toks[0..n) of PTX line `line`
 * (NULL when they are no .file); *index its number.  A malformed one fails. */
static tmap_status file_toks(const tmap_ptx_module *m, const tmap_ptx_tok *toks, uint32_t n,
                             uint32_t line, uint32_t *index, const char **path, size_t *len,
                             tmap_error *err)
{
    *path = NULL;
    if (!n || strcmp(toks[0].text, ".file"))
        return TMAP_OK;
    const tmap_ptx_tok *s = n >= 3 ? &toks[2] : NULL;
    size_t k = s ? strlen(s->text) : 0;
    if (!s || loc_number(&toks[1], index) || s->kind != TMAP_TOK_STRING || k < 2 ||
        k - 2 > LOC_MAX_PATH || (n > 3 && strcmp(toks[3].text, ",")))
        return tmap_fail(err, TMAP_ERR_PARSE, "%s:%u: .file: expected `.file N \"path\"` "
                         "(a number up to %u, a path up to %d bytes)", m->file, line,
                         (unsigned)LOC_MAX_NUMBER, LOC_MAX_PATH);
    *path = s->text + 1;
    *len = k - 2;
    return TMAP_OK;
}

/* The path of file `index`: *len bytes of its token (not NUL-terminated),
 * from a .file at module scope or in a function body; or an error naming
 * the .loc's `line`. */
static tmap_status file_path(const tmap_ptx_module *m, uint32_t index, uint32_t line,
                             const char **path, size_t *len, tmap_error *err)
{
    uint32_t k = 0;
    tmap_status st = TMAP_OK;
    for (size_t i = 0; i < m->nitems && st == TMAP_OK; i++) {
        const tmap_ptx_item *it = &m->items[i];
        if (it->kind == TMAP_IT_LINE)
            st = file_toks(m, it->toks, it->ntoks, it->line, &k, path, len, err);
        if (st == TMAP_OK && *path && k == index)
            return TMAP_OK;
    }
    for (size_t f = 0; f < m->nfuncs && st == TMAP_OK; f++)
        for (size_t i = 0; i < m->funcs[f].nbody && st == TMAP_OK; i++) {
            const tmap_ptx_stmt *s = &m->funcs[f].body[i];
            if (s->kind == TMAP_ST_LINE)
                st = file_toks(m, s->toks, s->ntoks, s->line, &k, path, len, err);
            if (st == TMAP_OK && *path && k == index)
                return TMAP_OK;
        }
    return st != TMAP_OK ? st : tmap_fail(err, TMAP_ERR_PARSE, "%s:%u: .loc names file %u, "
                                          "which no .file declares", m->file, line, index);
}

/* File and line of a `.loc` statement; fails when malformed. */
static tmap_status loc_of(const tmap_ptx_module *m, const tmap_ptx_stmt *s, uint32_t *file,
                          uint32_t *line, tmap_error *err)
{
    uint32_t col = 0;
    if (s->ntoks < 4 || loc_number(&s->toks[1], file) || loc_number(&s->toks[2], line) ||
        loc_number(&s->toks[3], &col) || (s->ntoks > 4 && strcmp(s->toks[4].text, ",")))
        return tmap_fail(err, TMAP_ERR_PARSE, "%s:%u: .loc: expected `.loc FILE LINE COLUMN` "
                         "(numbers up to %u)", m->file, s->line, (unsigned)LOC_MAX_NUMBER);
    return TMAP_OK;
}

/* The line of a well-formed .loc, else 0. */
static uint32_t loc_line(const tmap_ptx_stmt *s)
{
    uint32_t line = 0;
    return s->ntoks >= 3 && !loc_number(&s->toks[2], &line) ? line : 0;
}

static int is_loc(const tmap_ptx_stmt *s)
{
    return s->kind == TMAP_ST_LINE && s->ntoks && !strcmp(s->toks[0].text, ".loc");
}

/* The source of block b: its file (strdup'ed) and line, from the .loc
 * statement `loc` (NULL: none). */
static tmap_status set_source(const tmap_ptx_module *m, const tmap_ptx_stmt *loc,
                              tmap_cfg_block *b, tmap_error *err)
{
    uint32_t file = 0, line = 0;
    const char *path = NULL;
    size_t len = 0;
    if (!loc)
        return TMAP_OK;
    tmap_status st = loc_of(m, loc, &file, &line, err);
    if (st == TMAP_OK)
        st = file_path(m, file, loc->line, &path, &len, err);
    if (st != TMAP_OK)
        return st;
    assert(path && len <= LOC_MAX_PATH);
    if (!(b->src_file = malloc(len + 1)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory for source lines", m->file);
    memcpy(b->src_file, path, len);
    b->src_file[len] = '\0';
    b->src_line = line;
    return TMAP_OK;
}

/* The blocks [first, end) of function f start at body statements at[b]
 * (ascending): each gets the .loc in effect at its first instruction. */
static tmap_status func_sources(const tmap_ptx_module *m, const tmap_ptx_func *f, tmap_cfg *cfg,
                                const uint32_t *at, size_t first, size_t end, tmap_error *err)
{
    const tmap_ptx_stmt *loc = NULL;
    size_t i = 0;
    tmap_status st = TMAP_OK;
    for (size_t b = first; b < end && st == TMAP_OK; b++) {
        size_t stop = b + 1 < end ? at[b + 1] : f->nbody;
        assert(b == first || i <= at[b]);
        for (; i < f->nbody && (i < at[b] || f->body[i].kind != TMAP_ST_INSTR) && i < stop; i++)
            if (is_loc(&f->body[i]))
                loc = &f->body[i];
        const tmap_ptx_stmt *own = loc;  /* line 0 (generated code): the block's next line */
        for (size_t k = i; k < stop && k < f->nbody && own && !loc_line(own); k++)
            if (is_loc(&f->body[k]))
                own = &f->body[k];
        st = set_source(m, own, &cfg->blocks[b], err);
    }
    return st;
}

tmap_status tmap_ptx_loc_blocks(const tmap_ptx_module *m, tmap_cfg *cfg, const uint32_t *at,
                                tmap_error *err)
{
    tmap_status st = TMAP_OK;
    for (size_t k = 0; k < cfg->nfuncs && st == TMAP_OK; k++) {
        const tmap_cfg_func *cf = &cfg->funcs[k];
        const tmap_ptx_func *f = tmap_ptx_find_func(m, cf->name);
        assert(f && f->has_body);
        st = func_sources(m, f, cfg, at, cf->first_block, cf->first_block + cf->nblocks, err);
    }
    return st;
}

tmap_status tmap_ptx_loc_of_line(const tmap_ptx_module *m, uint32_t ptx_line, char *buf,
                                 size_t size, tmap_error *err)
{
    if (!m || !buf || !size)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_ptx_loc_of_line: NULL argument");
    buf[0] = '\0';
    for (size_t k = 0; k < m->nfuncs; k++) {
        const tmap_ptx_func *f = &m->funcs[k];
        const tmap_ptx_stmt *loc = NULL;
        size_t i = 0;
        for (; i < f->nbody && f->body[i].line <= ptx_line; i++)
            if (is_loc(&f->body[i]))
                loc = &f->body[i];
        if (!i || !f->nbody || f->body[f->nbody - 1].line < ptx_line || !loc)
            continue;
        tmap_cfg_block b = {0};
        tmap_status st = set_source(m, loc, &b, err);
        if (st == TMAP_OK)
            tmap_ptx_loc_format(b.src_file, b.src_line, buf, size);
        free(b.src_file);
        return st;
    }
    return TMAP_OK;
}

const char *tmap_ptx_loc_where(const tmap_ptx_module *m, uint32_t line, char *buf, size_t size)
{
    char src[256];
    assert(m && buf && size);
    if (tmap_ptx_loc_of_line(m, line, src, sizeof src, NULL) != TMAP_OK)
        src[0] = '\0'; /* a malformed .loc: the PTX line alone */
    snprintf(buf, size, "%s:%u%s%s%s", m->file, line, *src ? " (" : "", src, *src ? ")" : "");
    return buf;
}

const char *tmap_ptx_loc_format(const char *file, uint32_t line, char *buf, size_t size)
{
    if (!buf || !size)
        return "";
    buf[0] = '\0';
    if (!file || !line)
        return buf;
    const char *slash = strrchr(file, '/');
    snprintf(buf, size, "%s:%u", slash ? slash + 1 : file, line);
    return buf;
}

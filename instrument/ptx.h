/*
 * ptx.h -- the PTX intermediate representation shared by the lexer, parser,
 * printer, CFG builder and counter pass (private to instrument/).
 *
 * A module is a list of items (directives, raw debug sections, functions);
 * a function body is a flat list of statements (labels, instructions,
 * directives, `.loc` lines, scope braces).  All token and statement text
 * lives in the module's arena, so statements may be copied by value.
 */
#ifndef TMAP_INSTRUMENT_PTX_H
#define TMAP_INSTRUMENT_PTX_H

#include <stddef.h>
#include <stdint.h>

#include "threadmap/instrument.h"
#include "common/base.h"

/* ---------------------------------------------------------------- arena */

typedef struct tmap_arena_chunk tmap_arena_chunk;
typedef struct tmap_arena {
    tmap_arena_chunk *head;
} tmap_arena;

/* Copies n bytes and a NUL into the arena; NULL when out of memory. */
char *tmap_arena_strndup(tmap_arena *a, const char *s, size_t n);
void *tmap_arena_alloc(tmap_arena *a, size_t n);
void tmap_arena_free(tmap_arena *a);

/* ---------------------------------------------------------------- lexer */

typedef enum tmap_ptx_tok_kind {
    TMAP_TOK_EOF,
    TMAP_TOK_IDENT,     /* opcode or name: ld.global.nc.f32, $L__BB0_3, _Z3fooPi */
    TMAP_TOK_DIRECTIVE, /* .reg, .u32, .debug_info */
    TMAP_TOK_REG,       /* %r1, %tid.x, %r (of %r<10>) */
    TMAP_TOK_NUMBER,    /* 12, -3, 0x1F, 0f3F800000, 0d..., 9.0 */
    TMAP_TOK_STRING,    /* "text", quotes included */
    TMAP_TOK_PUNCT      /* one character of { } [ ] ( ) , ; : @ ! + - < > = | ... */
} tmap_ptx_tok_kind;

typedef struct tmap_ptx_tok {
    tmap_ptx_tok_kind kind;
    uint8_t space_before; /* whitespace or a comment preceded it in the source */
    uint32_t line;
    size_t off;           /* byte offset of the token in the source */
    const char *text;     /* NUL-terminated, in the arena */
} tmap_ptx_tok;

/* Tokenizes text into *toks (malloc'ed, ends with one TMAP_TOK_EOF). */
tmap_status tmap_ptx_lex(const char *text, size_t len, const char *filename,
                         tmap_arena *arena, tmap_ptx_tok **toks, size_t *ntoks,
                         tmap_error *err);

/* One dotted part of a type at p (".v4", ".u32"... of an opcode or a
 * declaration): a vector's width into *vec, or a scalar of 8 to 128 bits
 * (whole bytes) into *width, in bytes; 1 when it was either, 0 (nothing
 * set) otherwise. */
int tmap_ptx_type_part(const char *p, uint32_t *width, uint32_t *vec);

/* ------------------------------------------------------------------- IR */

typedef enum tmap_ptx_stmt_kind {
    TMAP_ST_LABEL,     /* label: */
    TMAP_ST_INSTR,     /* [@[!]%p] opcode operands ; */
    TMAP_ST_DIRECTIVE, /* .reg/.param/.pragma/.callprototype/...  ; (toks incl. ';') */
    TMAP_ST_LINE,      /* .loc ... (one source line, no ';') */
    TMAP_ST_OPEN,      /* { */
    TMAP_ST_CLOSE,     /* } */
    TMAP_ST_RAW        /* lines inserted by a pass, each printed indented */
} tmap_ptx_stmt_kind;

typedef struct tmap_ptx_stmt {
    tmap_ptx_stmt_kind kind;
    uint32_t line;
    const char *text;      /* LABEL: the name; INSTR: the opcode; RAW: the text */
    const char *guard;     /* INSTR: guard predicate register or NULL */
    int guard_neg;         /* INSTR: @!%p */
    tmap_ptx_tok *toks;    /* INSTR: operand tokens without ';'; DIRECTIVE, LINE: all */
    uint32_t ntoks;
    uint32_t *opnd;        /* INSTR: index in toks where each operand starts */
    uint32_t nopnd;
} tmap_ptx_stmt;

typedef struct tmap_ptx_func {
    const char *name;
    int is_entry;          /* .entry rather than .func */
    int has_body;          /* 0: a declaration ending in ';' */
    int instrumented;      /* the counter pass already rewrote it */
    uint32_t line;
    tmap_ptx_tok *head;    /* from the first linkage directive up to '{' or ';' */
    uint32_t nhead;
    tmap_ptx_stmt *body;
    size_t nbody, capbody;
} tmap_ptx_func;

typedef enum tmap_ptx_item_kind {
    TMAP_IT_VERSION,   /* .version M.N (kept as numbers in the module) */
    TMAP_IT_LINE,      /* .target / .address_size / .file: one line, no ';' */
    TMAP_IT_DECL,      /* a module-scope statement ending in ';' */
    TMAP_IT_SECTION,   /* .section ... { ... }: raw source text */
    TMAP_IT_FUNC,      /* funcs[index] */
    TMAP_IT_RAW        /* text inserted by a pass */
} tmap_ptx_item_kind;

typedef struct tmap_ptx_item {
    tmap_ptx_item_kind kind;
    uint32_t line;
    tmap_ptx_tok *toks;
    uint32_t ntoks;
    const char *text;  /* SECTION, RAW */
    size_t index;      /* FUNC */
} tmap_ptx_item;

struct tmap_ptx_module {
    tmap_arena arena;
    const char *file;  /* the name given to tmap_ptx_parse, for messages */
    int version_major, version_minor;
    tmap_ptx_item *items;
    size_t nitems, capitems;
    tmap_ptx_func *funcs;
    size_t nfuncs, capfuncs;
};

/* The function with a body or declaration named `name`, or NULL;
 * a definition is preferred over a declaration. */
tmap_ptx_func *tmap_ptx_find_func(const tmap_ptx_module *m, const char *name);

/* Tokens of operand i of an instruction: [*first, *first + *n). */
void tmap_ptx_operand(const tmap_ptx_stmt *s, uint32_t i, uint32_t *first,
                      uint32_t *n);

/* tmap_cfg_build that also returns, in *at (malloc'ed, one per block), the
 * index in its function's body of the statement before which the block's
 * code starts: just after its label, or at its first instruction. */
tmap_status tmap_cfg_build_at(const tmap_ptx_module *m, const char *kernel,
                              tmap_cfg **out, uint32_t **at, tmap_error *err);

/* ptx_loc.c: gives every block of cfg (built from m, its code starting
 * at body statements at[]) its source file and line from the `.loc` in
 * effect at its first instruction; fails on a malformed `.loc`/`.file`. */
tmap_status tmap_ptx_loc_blocks(const tmap_ptx_module *m, tmap_cfg *cfg, const uint32_t *at,
                                tmap_error *err);

/* ptx_loc.c: where PTX line `line` of m is, for messages: "NAME:LINE" (NAME
 * as given to tmap_ptx_parse: a path or a "<description>"), then the source
 * line when a .loc is in effect there ("k.ptx:40 (divergent.cu:12)").
 * Returns buf. */
const char *tmap_ptx_loc_where(const tmap_ptx_module *m, uint32_t line, char *buf, size_t size);

/* Appends tokens toks[0..n) to b with the source's spacing (normalized). */
void tmap_ptx_print_toks(tmap_buf *b, const tmap_ptx_tok *toks, size_t n);

/* redirect.c: NULL when statement s reads no thread/block id or reads them
 * in a form the redirection rewrites (mov/cvt of a 32-bit type from
 * %tid.{x,y,z} / %ctaid.{x,y,z}); else why it cannot be redirected. */
const char *tmap_redirect_check(const tmap_ptx_stmt *s);

/* Adds decl (module-scope declarations, as text) after the module header
 * (.version, .target, .address_size), unless the module already declares
 * symbol (ptx_global.c). */
tmap_status tmap_ptx_add_global(tmap_ptx_module *m, const char *symbol, const char *decl,
                                tmap_error *err);

#endif

/*
 * expr.h (runtime) -- per-thread expressions: the one grammar of a
 * manifest's features and of run mode's key (attach/key.c), parsed once
 * into a tree that a back end binds and walks: the host evaluator here
 * (over a manifest's arrays) and the CUDA emitter (expr_cuda.c), used by
 * a manifest's features on the GPU (manifest_features.c) and by run mode's
 * key (attach/key.c).
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := primary (('*' | '/') primary)*
 *   primary := NUMBER | ref | '(' expr ')' | '-' primary
 *   ref     := NAME [':' TYPE] [ '[' 't' [('+' | '-') DIGITS] ']' ]
 *
 * Whitespace may separate tokens, except around a ref's ':'.  Numbers are
 * finite (strtod syntax, "C" locale); offsets at most 2^40; names at most
 * 127 characters; parentheses and unary minuses nested at most 256 deep.
 * Which names and types a ref may take is the back end's.
 */
#ifndef TMAP_RUNTIME_EXPR_H
#define TMAP_RUNTIME_EXPR_H

#include <stddef.h>

#include "threadmap/runtime.h"
#include "runtime/manifest.h"

enum { TMAP_EXPR_MAX_DEPTH = 256, TMAP_EXPR_MAX_NAME = 127 };
#define TMAP_EXPR_MAX_OFFSET (1L << 40)
#define TMAP_EXPR_NONE ((size_t)-1)

typedef enum tmap_expr_kind {
    TMAP_EXPR_NUM,     /* num */
    TMAP_EXPR_REF,     /* name, type, index */
    TMAP_EXPR_NEG,     /* - kid */
    TMAP_EXPR_PAREN,   /* ( kid ) */
    TMAP_EXPR_SUM,     /* kid, then its `next`s, each joined by its `join` '+' or '-' */
    TMAP_EXPR_PRODUCT, /* likewise with '*' or '/' */
} tmap_expr_kind;

/* Positions are offsets into the source (column - 1). */
typedef struct tmap_expr_node {
    tmap_expr_kind kind;
    char join;         /* an operand after a chain's first: the operator before it; else 0 */
    size_t kid;        /* NEG, PAREN: the operand; SUM, PRODUCT: the first operand */
    size_t next;       /* the chain's next operand, or TMAP_EXPR_NONE */
    size_t pos, end;   /* the node's first character, the one after it */
    double num;        /* NUM */
    size_t name_len;   /* REF: the name is at pos */
    int typed;         /* REF: ":TYPE" given, TYPE (maybe empty) at type */
    size_t type, type_len;
    int indexed;       /* REF: [t...] given, at index (else where it would be) */
    size_t index;
    long offset;       /* REF: k of [t+k] */
    long id;           /* REF: what the back end bound it to */
} tmap_expr_node;

typedef struct tmap_expr {
    const char *src;
    tmap_expr_node *node;
    size_t n, cap;
    size_t root;
} tmap_expr;

/* Parses src (kept, not copied) into x; on failure x holds nothing to free
 * and err says "expression 'SRC' at column N: what". */
tmap_status tmap_expr_parse(const char *src, tmap_expr *x, tmap_error *err);
void tmap_expr_free(tmap_expr *x);
/* The one error style: fails with "expression 'SRC' at column pos+1: what". */
tmap_status tmap_expr_fail(const char *src, size_t pos, tmap_error *err, const char *what);

/* The host back end, over a manifest's arrays (a REF names an array, no
 * type; unindexed means [t]).  tmap_expr_bind checks every name and sets
 * each REF's id to its array. */
tmap_status tmap_expr_bind(const tmap_manifest *m, tmap_expr *x, tmap_error *err);
/* The value for thread t (x bound, arrays generated); an index outside its
 * array and a division by zero are errors naming their column. */
tmap_status tmap_expr_value(const tmap_manifest *m, const tmap_expr *x, size_t t, double *out,
                            tmap_error *err);
/* Parses and binds: the expression is a valid feature of m. */
tmap_status tmap_expr_check(const tmap_manifest *m, const char *src, tmap_error *err);

/* The CUDA back end (expr_cuda.c).  x[0..nexprs) with every REF bound to a
 * slot (id < nslots, offset: its element's distance from t), slot i an
 * array of type slot[i], as the CUDA C of one kernel
 *   extern "C" __global__ void NAME(double *out, unsigned long long n,
 *       then per slot i: const void *p<i>, long long lo<i>, long long hi<i>)
 * that stores expression j of thread t < n at out[t * nexprs + j].  Every
 * operand is a double and the tree keeps its shape, so C's precedence and
 * left-to-right + - * / give the host evaluator's values bit for bit when
 * compiled without contraction (tmap_expr_cuda_load); an element outside
 * [lo, hi) of its slot reads as 0.  Launched with blocks of at most
 * TMAP_EXPR_CUDA_BLOCK threads; up to TMAP_EXPR_CUDA_STAGED expressions a
 * block's rows are written out coalesced through shared memory.  *source
 * malloc'ed. */
enum { TMAP_EXPR_CUDA_MAX_SLOTS = 64 };
#define TMAP_EXPR_CUDA_BLOCK 256
#define TMAP_EXPR_CUDA_STAGED 23 /* 256 rows of 23 (odd) doubles: 46 KiB, under 48 */
tmap_status tmap_expr_cuda_source(const tmap_expr *x, size_t nexprs, const tmap_elem *slot,
                                  size_t nslots, const char *name, char **source,
                                  tmap_error *err);
/* Compiles that source to PTX (NVRTC, --fmad=false, C++17, compute_75;
 * `what` names it in messages); _load also loads kernel NAME. */
tmap_status tmap_expr_cuda_compile(const char *source, const char *what, tmap_compiled *out,
                                   tmap_error *err);
tmap_status tmap_expr_cuda_load(tmap_cuda *c, const char *source, const char *name,
                                const char *what, tmap_kernel **out, tmap_error *err);

/* That kernel's arguments: out, n, and per slot p, lo, hi (nslots of
 * them).  tmap_expr_cuda_launch enqueues kernel k with a's values over
 * a->n threads in blocks of TMAP_EXPR_CUDA_BLOCK (nothing when n is 0). */
typedef struct tmap_expr_cuda_args {
    uint64_t out, n;
    size_t nslots;
    uint64_t p[TMAP_EXPR_CUDA_MAX_SLOTS];
    long long lo[TMAP_EXPR_CUDA_MAX_SLOTS], hi[TMAP_EXPR_CUDA_MAX_SLOTS];
    void *argv[2 + 3 * TMAP_EXPR_CUDA_MAX_SLOTS];
} tmap_expr_cuda_args;
tmap_status tmap_expr_cuda_launch(tmap_kernel *k, tmap_expr_cuda_args *a, void *stream,
                                  tmap_error *err);

#endif

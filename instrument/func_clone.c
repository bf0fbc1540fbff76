/*
 * func_clone.c -- gives a kernel its own copy of each .func it shares with
 * another kernel (common under -G: __umul24, sqrtf, cooperative-groups
 * constructors), so that the counter pass and the redirection, which
 * rewrite every function a kernel reaches, leave the other kernels as they
 * were.
 *
 * The clone of F for kernel K is F_tmap_K: a copy of F's header and body
 * whose labels get the suffix _tmap_K (the -G debug sections name F's
 * labels, so the clone must not define them again).  Its declaration goes
 * before the first function of the module, its definition after F's.  The
 * direct calls of every function K reaches then name the clones.  A
 * function pointer cannot be redirected that way: a kernel that calls
 * through one and shares a .func is refused before anything changes.
 */
#include "instrument/func_clone.h"

#include <stdlib.h>
#include <string.h>

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

/* A call through a register (a function pointer). */
static int calls_indirectly(const tmap_ptx_func *f)
{
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        if (s->kind != TMAP_ST_INSTR || !opcode_is(s->text, "call") || !s->nopnd)
            continue;
        uint32_t k = s->opnd[0];
        if (k < s->ntoks && s->toks[k].kind == TMAP_TOK_PUNCT && s->toks[k].text[0] == '(')
            k = s->nopnd > 1 ? s->opnd[1] : k;
        if (k < s->ntoks && s->toks[k].kind == TMAP_TOK_REG)
            return 1;
    }
    return 0;
}

typedef struct cloner {
    tmap_ptx_module *m;
    const char *suffix;     /* "_tmap_<kernel>" */
    const char **shared;    /* names of the shared functions */
    size_t nshared;
    const char **labels;    /* of the function being cloned, sorted */
    size_t nlabels, caplabels;
} cloner;

static char *suffixed(cloner *c, const char *name)
{
    size_t a = strlen(name), b = strlen(c->suffix);
    char *s = tmap_arena_alloc(&c->m->arena, a + b + 1);
    if (s) {
        memcpy(s, name, a);
        memcpy(s + a, c->suffix, b + 1);
    }
    return s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_label(const cloner *c, const char *name)
{
    return c->nlabels && bsearch(&name, c->labels, c->nlabels, sizeof *c->labels, cmp_str);
}

static int is_shared(const cloner *c, const char *name)
{
    for (size_t i = 0; i < c->nshared; i++)
        if (!strcmp(c->shared[i], name))
            return 1;
    return 0;
}

static tmap_ptx_tok *copy_toks(tmap_ptx_module *m, const tmap_ptx_tok *t, size_t n)
{
    tmap_ptx_tok *c = tmap_arena_alloc(&m->arena, n * sizeof *c);
    if (c)
        memcpy(c, t, n * sizeof *c);
    return c;
}

/* Renames, in a copy of s's tokens, the labels of the function being
 * cloned and (in calls) the shared functions; -1 when out of memory. */
static int rename_stmt(cloner *c, tmap_ptx_stmt *s)
{
    if (s->kind == TMAP_ST_LABEL && is_label(c, s->text))
        return (s->text = suffixed(c, s->text)) ? 0 : -1;
    if (s->kind != TMAP_ST_INSTR && s->kind != TMAP_ST_DIRECTIVE)
        return 0;
    int call = s->kind == TMAP_ST_INSTR && opcode_is(s->text, "call");
    tmap_ptx_tok *toks = NULL;
    for (uint32_t k = 0; k < s->ntoks; k++) {
        const char *t = s->toks[k].text;
        if (s->toks[k].kind != TMAP_TOK_IDENT || !(is_label(c, t) || (call && is_shared(c, t))))
            continue;
        if (!toks && !(toks = s->toks = copy_toks(c->m, s->toks, s->ntoks)))
            return -1;
        if (!(toks[k].text = suffixed(c, t)))
            return -1;
    }
    return 0;
}

/* Renames in every statement of f (labels only when c->labels is set). */
static int rename_body(cloner *c, tmap_ptx_func *f)
{
    for (size_t i = 0; i < f->nbody; i++)
        if (rename_stmt(c, &f->body[i]))
            return -1;
    return 0;
}

static int collect_labels(cloner *c, const tmap_ptx_func *f)
{
    c->nlabels = 0;
    for (size_t i = 0; i < f->nbody; i++) {
        if (f->body[i].kind != TMAP_ST_LABEL)
            continue;
        if (tmap_grow(&c->labels, &c->caplabels, c->nlabels + 1, sizeof *c->labels))
            return -1;
        c->labels[c->nlabels++] = f->body[i].text;
    }
    if (c->nlabels)
        qsort(c->labels, c->nlabels, sizeof *c->labels, cmp_str);
    return 0;
}

/* Inserts a FUNC item for funcs[fi] at position pos of the items. */
static int insert_item(tmap_ptx_module *m, size_t pos, size_t fi, uint32_t line)
{
    if (tmap_grow(&m->items, &m->capitems, m->nitems + 1, sizeof *m->items))
        return -1;
    memmove(&m->items[pos + 1], &m->items[pos], (m->nitems - pos) * sizeof *m->items);
    memset(&m->items[pos], 0, sizeof *m->items);
    m->items[pos].kind = TMAP_IT_FUNC;
    m->items[pos].index = fi;
    m->items[pos].line = line;
    m->nitems++;
    return 0;
}

static size_t item_of_func(const tmap_ptx_module *m, size_t fi)
{
    size_t i = 0;
    while (i < m->nitems && !(m->items[i].kind == TMAP_IT_FUNC && m->items[i].index == fi))
        i++;
    return i;
}

/* Adds the declaration and the definition of the clone of funcs[fi]. */
static int add_clone(cloner *c, size_t fi)
{
    tmap_ptx_module *m = c->m;
    if (tmap_grow(&m->funcs, &m->capfuncs, m->nfuncs + 2, sizeof *m->funcs))
        return -1;
    tmap_ptx_func f = m->funcs[fi], decl;
    const char *name = f.name;
    tmap_ptx_tok *head = tmap_arena_alloc(&m->arena, (f.nhead + 1) * sizeof *head);
    tmap_ptx_stmt *body = malloc((f.nbody + 1) * sizeof *body);
    if (!head || !body || !(f.name = suffixed(c, name)) || collect_labels(c, &f)) {
        free(body);
        return -1;
    }
    memcpy(head, f.head, f.nhead * sizeof *head);
    for (uint32_t k = 0; k < f.nhead; k++)
        if (head[k].kind == TMAP_TOK_IDENT && !strcmp(head[k].text, name)) {
            head[k].text = f.name;
            break;
        }
    memcpy(body, f.body, f.nbody * sizeof *body);
    for (size_t i = 0; i < f.nbody; i++) /* passes rewrite tokens in place */
        if (body[i].ntoks && !(body[i].toks = copy_toks(m, body[i].toks, body[i].ntoks))) {
            free(body);
            return -1;
        }
    f.head = head;
    f.body = body;
    f.capbody = f.nbody + 1;
    decl = f;
    decl.has_body = 0;
    decl.body = NULL;
    decl.nbody = decl.capbody = 0;
    m->funcs[m->nfuncs] = decl;
    m->funcs[m->nfuncs + 1] = f;
    m->nfuncs += 2;
    size_t first = 0;
    while (first < m->nitems && m->items[first].kind != TMAP_IT_FUNC)
        first++;
    if (rename_body(c, &m->funcs[m->nfuncs - 1]) ||
        insert_item(m, first, m->nfuncs - 2, f.line) ||
        insert_item(m, item_of_func(m, fi) + 1, m->nfuncs - 1, f.line))
        return -1;
    c->nlabels = 0;
    return 0;
}

/* Marks shared[i] for each function of mine (after the kernel) that
 * another kernel of m reaches. */
static tmap_status find_shared(const tmap_ptx_module *m, const tmap_cfg *mine, uint8_t *shared,
                               tmap_error *err)
{
    for (size_t k = 0; k < tmap_ptx_num_kernels(m); k++) {
        const char *other = tmap_ptx_kernel_name(m, k);
        if (!strcmp(other, mine->funcs[0].name))
            continue;
        tmap_cfg *cfg = NULL;
        tmap_status st = tmap_cfg_build(m, other, &cfg, err);
        if (st != TMAP_OK)
            return st;
        for (size_t i = 1; i < mine->nfuncs; i++)
            for (size_t j = 1; j < cfg->nfuncs; j++)
                shared[i] |= !strcmp(mine->funcs[i].name, cfg->funcs[j].name);
        tmap_cfg_free(cfg);
    }
    return TMAP_OK;
}

/* Clones the shared functions of mine, then renames the calls. */
static tmap_status clone_all(cloner *c, const tmap_cfg *mine, const uint8_t *shared,
                             tmap_error *err)
{
    tmap_ptx_module *m = c->m;
    for (size_t i = 1; i < mine->nfuncs; i++) {
        const tmap_ptx_func *f = tmap_ptx_find_func(m, mine->funcs[i].name);
        if (shared[i] && add_clone(c, (size_t)(f - m->funcs)))
            return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory cloning %s", m->file,
                             mine->funcs[i].name);
    }
    for (size_t i = 0; i < mine->nfuncs; i++) {
        const char *name = mine->funcs[i].name;
        tmap_ptx_func *f = tmap_ptx_find_func(m, shared[i] ? suffixed(c, name) : name);
        if (!f || rename_body(c, f))
            return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory cloning %s", m->file, name);
    }
    return TMAP_OK;
}

tmap_status tmap_func_clone_shared(tmap_ptx_module *m, const char *kernel, tmap_error *err)
{
    tmap_cfg *mine = NULL;
    tmap_status st = tmap_cfg_build(m, kernel, &mine, err);
    if (st != TMAP_OK || mine->nfuncs == 1 || tmap_ptx_num_kernels(m) == 1) {
        tmap_cfg_free(mine); /* nothing to share */
        return st;
    }
    uint8_t *shared = calloc(mine->nfuncs, 1);
    cloner c = {m, NULL, NULL, 0, NULL, 0, 0};
    c.shared = calloc(mine->nfuncs, sizeof *c.shared);
    const char *sfx = "_tmap_";
    char *suffix = tmap_arena_alloc(&m->arena, strlen(sfx) + strlen(kernel) + 1);
    if (!shared || !c.shared || !suffix)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory cloning for %s", m->file, kernel);
    else
        st = find_shared(m, mine, shared, err);
    int indirect = 0;
    for (size_t i = 0; st == TMAP_OK && i < mine->nfuncs; i++) {
        if (shared[i])
            c.shared[c.nshared++] = mine->funcs[i].name;
        indirect |= calls_indirectly(tmap_ptx_find_func(m, mine->funcs[i].name));
    }
    if (st == TMAP_OK && c.nshared && indirect)
        st = tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                       "%s: kernel %s calls through a function pointer and shares .func %s with "
                       "another kernel: it cannot get a copy of its own; put %s in a module of "
                       "its own (compile a source holding only it) and instrument that",
                       m->file, kernel, c.shared[0], kernel);
    if (st == TMAP_OK && c.nshared) {
        strcpy(strcpy(suffix, sfx) + strlen(sfx), kernel);
        c.suffix = suffix;
        st = clone_all(&c, mine, shared, err);
    }
    free(c.labels);
    free(c.shared);
    free(shared);
    tmap_cfg_free(mine);
    return st;
}

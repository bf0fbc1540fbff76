/*
 * safety.c -- which regroupings keep a kernel's results: the rules of
 * thread-data remapping (Zhang et al. 2010, Sec. 3; digest B5) checked on
 * the PTX of a kernel and of every .func it reaches.
 *
 * Structural findings come from one table of rules (opcode, special
 * register, declaration -> field, scope, sentence); the uses of thread ids
 * come from the taint analysis of id_taint.c.  docs/safety.md states the
 * rules, their sources and their limits.
 */
#include "instrument/id_taint.h"
#include "instrument/thread_arrays.h"

#include <stdlib.h>
#include <string.h>

typedef enum match_kind {
    M_OPCODE,      /* the opcode is `text` or starts with `text.`          */
    M_OPCODE_PART, /* the opcode contains `text` (a state space)            */
    M_SREG,        /* an operand register starts with `text`                */
    M_DECL,        /* a directive statement in the body starts with `text`  */
    M_SHARED_SYM   /* an operand names a module-scope .shared variable      */
} match_kind;

typedef enum finding {
    F_BARRIER, F_SHARED, F_WARP, F_HWID, F_ATOMIC, F_CLUSTER, NFINDINGS
} finding;

typedef struct rule {
    match_kind match;
    const char *text;
    const char *unless;  /* an opcode containing this does not match */
    finding what;
    tmap_scope_advice scope;
    const char *why;
} rule;

#define BLOCK_WHY "threads of a thread block cooperate; regroup only within thread blocks"
#define WARP_WHY                                                                        \
    "warp membership matters; only whole warps may move (lanes in order), or none"
#define HW_WHY                                                                          \
    "a hardware fact that moves with the slot, not the work; usually harmless for "     \
    "correctness (timing, placement)"
#define CLUSTER_WHY                                                                     \
    "threads of a thread block cluster cooperate across blocks; no regrouping is known " \
    "to be safe"
#define ATOMIC_WHY                                                                      \
    "atomic updates of global memory may happen in another order; commutative "         \
    "atomics give the same results, order-dependent ones (exch, cas loops, "            \
    "inc/dec wrap) may not"

static const rule rules[] = {
    {M_OPCODE, "bar", ".warp", F_BARRIER, TMAP_SAFE_BLOCK, BLOCK_WHY},
    {M_OPCODE, "barrier", ".cluster", F_BARRIER, TMAP_SAFE_BLOCK, BLOCK_WHY},
    {M_OPCODE_PART, ".shared", "::cluster", F_SHARED, TMAP_SAFE_BLOCK, BLOCK_WHY},
    {M_DECL, ".shared", NULL, F_SHARED, TMAP_SAFE_BLOCK, BLOCK_WHY},
    {M_SHARED_SYM, "", NULL, F_SHARED, TMAP_SAFE_BLOCK, BLOCK_WHY},
    {M_SREG, "%dynamic_smem_size", NULL, F_SHARED, TMAP_SAFE_BLOCK, BLOCK_WHY},
    {M_OPCODE, "shfl", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "vote", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "activemask", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "match", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "redux", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "bar.warp", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "wmma", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "mma", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "wgmma", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "ldmatrix", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "stmatrix", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_OPCODE, "elect", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_SREG, "%laneid", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_SREG, "%lanemask_", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_SREG, "%warpid", NULL, F_WARP, TMAP_SAFE_WARPS, WARP_WHY},
    {M_SREG, "%smid", NULL, F_HWID, TMAP_SAFE_GRID, HW_WHY},
    {M_SREG, "%nsmid", NULL, F_HWID, TMAP_SAFE_GRID, HW_WHY},
    {M_SREG, "%clock", NULL, F_HWID, TMAP_SAFE_GRID, HW_WHY},
    {M_SREG, "%globaltimer", NULL, F_HWID, TMAP_SAFE_GRID, HW_WHY},
    {M_OPCODE, "atom", ".shared", F_ATOMIC, TMAP_SAFE_GRID, ATOMIC_WHY},
    {M_OPCODE, "red", ".shared", F_ATOMIC, TMAP_SAFE_GRID, ATOMIC_WHY},
    {M_OPCODE, "barrier.cluster", NULL, F_CLUSTER, TMAP_SAFE_NONE, CLUSTER_WHY},
    {M_OPCODE_PART, "::cluster", NULL, F_CLUSTER, TMAP_SAFE_NONE, CLUSTER_WHY},
    {M_OPCODE, "mapa", NULL, F_CLUSTER, TMAP_SAFE_NONE, CLUSTER_WHY},
    {M_SREG, "%cluster", NULL, F_CLUSTER, TMAP_SAFE_NONE, CLUSTER_WHY},
    {M_SREG, "%is_explicit_cluster", NULL, F_CLUSTER, TMAP_SAFE_NONE, CLUSTER_WHY},
};
#define NRULES (sizeof rules / sizeof rules[0])

/* Sentences for the uses of ids (tmap_id_use order); the value uses make the
 * layout transform unsafe, the index compare is control only. */
static const char *const use_why[TMAP_NUSES] = {
    "stores a value computed from a thread/block id: the layout transform would store "
    "the slot's id, not the thread's (redirection is fine)",
    "passes a value computed from a thread/block id to or from a call: treated as a "
    "value; the layout transform is unsafe (redirection is fine)",
    "converts a thread/block id to floating point: it is computed with, so the layout "
    "transform is unsafe (redirection is fine)",
    "compares a value computed from a thread/block id, not as a bounds check (an index "
    "against a fixed bound): the branch depends on the thread's position, not its data, "
    "so the layout transform is unsafe (redirection is fine)",
    "uses a value computed from a thread/block id other than as an address: the layout "
    "transform is unsafe (redirection is fine)",
    "compares an index computed from a thread/block id (a bounds check such as "
    "`if (i >= n) return`): the layout transform is safe only when the launch has no "
    "tail threads, i.e. every thread has an element",
};

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

/* A finding of one rule (or of one id use, or of unredirectable reads). */
typedef struct hit {
    int count;
    uint32_t line;
    const char *what; /* opcode or register */
} hit;

/* Sentences for the arrays that are not per-thread (tmap_array_misuse order). */
static const char *const array_why[] = {
    "is indexed both by the thread id and by data (x[t] and x[col[i]]): not a per-thread "
    "array; the layout transform is wrong whether it moves it or not",
    "is indexed by the thread id beyond the thread's element (row[t] and row[t+1], "
    "in[t + k]): a thread reads another thread's element; the layout transform is wrong "
    "whether it moves it or not",
    "is written at a data-dependent index (next[id] for a loaded id) and never indexed "
    "by the thread: not a per-thread array; the layout transform is right only if it "
    "is not declared per-thread (not moved)",
};

typedef struct scan {
    const tmap_ptx_module *m;
    tmap_array_finding *arrays;
    size_t narrays, caparrays;
    hit rule_hits[NRULES];
    hit unredirectable;
    const char *unredirectable_why;
} scan;

static void note(hit *h, uint32_t line, const char *what)
{
    if (h->count++ == 0) {
        h->line = line;
        h->what = what;
    }
}

/* 1 if `name` is a module-scope .shared variable. */
static int module_shared(const tmap_ptx_module *m, const char *name)
{
    for (size_t i = 0; i < m->nitems; i++) {
        const tmap_ptx_item *it = &m->items[i];
        int shared = 0;
        for (uint32_t k = 0; it->kind == TMAP_IT_DECL && k < it->ntoks; k++) {
            const tmap_ptx_tok *t = &it->toks[k];
            shared |= t->kind == TMAP_TOK_DIRECTIVE && !strcmp(t->text, ".shared");
            if (shared && t->kind == TMAP_TOK_IDENT)
                if (!strcmp(t->text, name))
                    return 1;
        }
    }
    return 0;
}

/* What of statement s rule r matches (an opcode or register), or NULL. */
static const char *rule_match(const scan *sc, const rule *r, const tmap_ptx_stmt *s)
{
    if (s->kind == TMAP_ST_DIRECTIVE)
        return r->match == M_DECL && s->ntoks && !strcmp(s->toks[0].text, r->text)
                   ? s->toks[0].text : NULL;
    if (s->kind != TMAP_ST_INSTR || (r->unless && strstr(s->text, r->unless)))
        return NULL;
    switch (r->match) {
    case M_OPCODE:
        return opcode_is(s->text, r->text) ? s->text : NULL;
    case M_OPCODE_PART:
        return strstr(s->text, r->text) ? s->text : NULL;
    case M_SREG:
    case M_SHARED_SYM:
        for (uint32_t k = 0; k < s->ntoks; k++) {
            const tmap_ptx_tok *t = &s->toks[k];
            if (r->match == M_SREG && t->kind == TMAP_TOK_REG &&
                !strncmp(t->text, r->text, strlen(r->text)))
                return t->text;
            if (r->match == M_SHARED_SYM && t->kind == TMAP_TOK_IDENT &&
                module_shared(sc->m, t->text))
                return t->text;
        }
        return NULL;
    case M_DECL:
        return NULL;
    }
    return NULL;
}

static void scan_func(scan *sc, const tmap_ptx_func *f)
{
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        for (size_t r = 0; r < NRULES; r++) {
            const char *what = rule_match(sc, &rules[r], s);
            if (what)
                note(&sc->rule_hits[r], s->line, what);
        }
        const char *why = tmap_redirect_check(s);
        if (why) {
            note(&sc->unredirectable, s->line, s->text);
            if (!sc->unredirectable_why)
                sc->unredirectable_why = why;
        }
    }
}

/* Appends one sentence "file:line: `what` (and N more): why.\n", with the
 * source line after the PTX line when the PTX has .loc lines
 * ("k.ptx:40 (divergent.cu:12): ..."). */
static void reason(tmap_buf *b, const tmap_ptx_module *m, const hit *h, const char *why)
{
    char where[1024];
    tmap_buf_printf(b, "%s: `%s`", tmap_ptx_loc_where(m, h->line, where, sizeof where), h->what);
    if (h->count > 1)
        tmap_buf_printf(b, " (and %d more)", h->count - 1);
    tmap_buf_printf(b, ": %s.\n", why);
}

static int *field_of(tmap_safety *out, finding f)
{
    switch (f) {
    case F_BARRIER: return &out->barriers;
    case F_SHARED: return &out->shared_memory;
    case F_WARP: return &out->warp_collectives;
    case F_HWID: return &out->hardware_ids;
    case F_ATOMIC: return &out->atomics;
    case F_CLUSTER: return &out->cluster;
    case NFINDINGS: break;
    }
    return NULL;
}

/* Fills the counts, the scope, the verdicts and the sentences. */
static void conclude(const scan *sc, const tmap_id_uses *u, tmap_safety *out)
{
    tmap_buf b = {0};
    out->scope = TMAP_SAFE_GRID;
    for (size_t r = 0; r < NRULES; r++) {
        const hit *h = &sc->rule_hits[r];
        if (!h->count)
            continue;
        *field_of(out, rules[r].what) += h->count;
        if (rules[r].scope > out->scope)
            out->scope = rules[r].scope;
        reason(&b, sc->m, h, rules[r].why);
    }
    for (int k = 0; k < TMAP_NUSES; k++) {
        if (!u->count[k])
            continue;
        if (k == TMAP_USE_INDEX_COMPARE)
            out->tid_in_control += u->count[k];
        else
            out->tid_as_value += u->count[k];
        hit h = {u->count[k], u->line[k], u->opcode[k]};
        reason(&b, sc->m, &h, use_why[k]);
    }
    for (size_t i = 0; i < sc->narrays; i++) {
        const tmap_array_finding *a = &sc->arrays[i];
        char why[512];
        snprintf(why, sizeof why, "parameter %s %s", a->param, array_why[a->what]);
        hit h = {1, a->line, a->opcode};
        reason(&b, sc->m, &h, why);
        out->non_thread_arrays += a->breaks_layout;
    }
    if (sc->unredirectable.count) {
        out->unredirectable = sc->unredirectable.count;
        char why[256];
        snprintf(why, sizeof why, "%s: the redirection cannot rewrite it",
                 sc->unredirectable_why);
        reason(&b, sc->m, &sc->unredirectable, why);
    }
    if (!b.len)
        tmap_buf_puts(&b, "no finding: any regrouping keeps the results.\n");
    out->layout_ok = !out->tid_as_value && !out->non_thread_arrays &&
                     out->scope != TMAP_SAFE_NONE;
    out->redirect_ok = !out->unredirectable && out->scope != TMAP_SAFE_NONE;
    size_t n = b.data ? b.len : 0;
    if (n >= sizeof out->reasons) { /* cut at a sentence, and say so */
        static const char more[] = "...\n";
        n = sizeof out->reasons - sizeof more;
        while (n && b.data[n - 1] != '\n')
            n--;
        memcpy(b.data + n, more, sizeof more);
        n += sizeof more - 1;
    }
    if (n)
        memcpy(out->reasons, b.data, n);
    out->reasons[n] = '\0';
    tmap_buf_free(&b);
}

const char *tmap_scope_advice_name(tmap_scope_advice s)
{
    switch (s) {
    case TMAP_SAFE_GRID: return "grid";
    case TMAP_SAFE_BLOCK: return "block";
    case TMAP_SAFE_WARPS: return "warps";
    case TMAP_SAFE_NONE: return "none";
    }
    return "?";
}

tmap_status tmap_safety_analyze(const tmap_ptx_module *m, const char *kernel, tmap_safety *out,
                                tmap_error *err)
{
    if (!m || !kernel || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_safety_analyze: NULL argument");
    tmap_cfg *cfg = NULL;
    tmap_status st = tmap_cfg_build(m, kernel, &cfg, err);
    if (st != TMAP_OK)
        return st;
    scan *sc = calloc(1, sizeof *sc);
    tmap_id_uses uses;
    memset(&uses, 0, sizeof uses);
    if (!sc)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory analyzing %s", m->file, kernel);
    else
        sc->m = m;
    const tmap_ptx_func **funcs = calloc(cfg->nfuncs, sizeof *funcs);
    if (!funcs && st == TMAP_OK)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory analyzing %s", m->file, kernel);
    for (size_t i = 0; st == TMAP_OK && i < cfg->nfuncs; i++) {
        funcs[i] = tmap_ptx_find_func(m, cfg->funcs[i].name);
        scan_func(sc, funcs[i]);
        st = tmap_thread_arrays_find(m, funcs[i], &sc->arrays, &sc->narrays, &sc->caparrays,
                                     err);
    }
    if (st == TMAP_OK)
        st = tmap_id_taint(m, funcs, cfg->nfuncs, &uses, err);
    free(funcs);
    if (st == TMAP_OK) {
        memset(out, 0, sizeof *out);
        conclude(sc, &uses, out);
    }
    if (sc)
        free(sc->arrays);
    free(sc);
    tmap_cfg_free(cfg);
    return st;
}

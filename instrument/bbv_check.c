/*
 * bbv_check.c -- a static checker of the counter pass's output: walks the
 * CFG of the instrumented (printed and reparsed) PTX and proves that each
 * block counts once and each register counter is flushed exactly once on
 * every path to an exit (the rules are in bbv.h).
 */
#include "instrument/bbv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* One function's state while checking. */
typedef struct fcheck {
    const tmap_ptx_module *m;
    const tmap_ptx_func *f;
    tmap_error *err;
    uint32_t nregs;      /* K of .reg .b32 %tmap_n<K> */
    uint32_t *owner;     /* per register: the (original) block it counts */
    uint8_t *zeroed;     /* per register: zeroed in the preamble */
    uint32_t *flush_row; /* per flush triplet seen: register and row, pairs */
    size_t nflush_rows, capflush_rows;
    uint8_t *in_flush;   /* per statement: part of a flush sequence */
    size_t first_counter;/* statement of the function's first counter */
    tmap_bbv_check_stats *stats;
} fcheck;

static tmap_status bad(const fcheck *c, uint32_t line, const char *what)
{
    return tmap_fail(c->err, TMAP_ERR_INVALID, "%s:%u: %s: %s", c->m->file, line, c->f->name,
                     what);
}

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

/* Operand i of s as text (tokens concatenated), or "" if absent. */
static const char *operand(const tmap_ptx_stmt *s, uint32_t i, char *buf, size_t size)
{
    buf[0] = '\0';
    if (s->kind != TMAP_ST_INSTR || i >= s->nopnd)
        return buf;
    uint32_t first, n;
    tmap_ptx_operand(s, i, &first, &n);
    size_t len = 0;
    for (uint32_t k = first; k < first + n && len + 1 < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s", s->toks[k].text);
    return buf;
}

static int opnd_is(const tmap_ptx_stmt *s, uint32_t i, const char *text)
{
    char buf[128];
    return !strcmp(operand(s, i, buf, sizeof buf), text);
}

/* Register number k of "%tmap_n<k>", or NONE. */
static uint32_t counter_reg(const char *text)
{
    if (strncmp(text, "%tmap_n", 7) || text[7] < '0' || text[7] > '9')
        return NONE;
    char *end;
    unsigned long k = strtoul(text + 7, &end, 10);
    return *end || k >= NONE ? NONE : (uint32_t)k;
}

static uint32_t opnd_reg(const tmap_ptx_stmt *s, uint32_t i)
{
    char buf[128];
    return counter_reg(operand(s, i, buf, sizeof buf));
}

/* Whether s mentions any %tmap_n<k> register. */
static int mentions_counter(const tmap_ptx_stmt *s)
{
    for (uint32_t k = 0; k < s->ntoks; k++)
        if (counter_reg(s->toks[k].text) != NONE)
            return 1;
    return 0;
}

static int guard_is(const tmap_ptx_stmt *s, const char *g)
{
    return g ? s->guard && !s->guard_neg && !strcmp(s->guard, g) : !s->guard;
}

/* ------------------------------------------------------- declarations */

static tmap_status read_decls(fcheck *c)
{
    int instrumented = 0;
    for (size_t i = 0; i < c->f->nbody; i++) {
        const tmap_ptx_stmt *s = &c->f->body[i];
        if (s->kind != TMAP_ST_DIRECTIVE)
            continue;
        for (uint32_t k = 0; k < s->ntoks; k++) {
            instrumented |= !strncmp(s->toks[k].text, "%tmap_", 6);
            if (k + 2 < s->ntoks && !strcmp(s->toks[k].text, "%tmap_n") &&
                !strcmp(s->toks[k + 1].text, "<"))
                c->nregs = (uint32_t)strtoul(s->toks[k + 2].text, NULL, 10);
        }
    }
    if (!instrumented)
        return bad(c, c->f->line, "not instrumented");
    c->owner = malloc((c->nregs + 1) * sizeof *c->owner);
    c->zeroed = calloc(c->nregs + 1, 1);
    c->in_flush = calloc(c->f->nbody + 1, 1);
    if (!c->owner || !c->zeroed || !c->in_flush)
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory checking counters");
    for (uint32_t k = 0; k < c->nregs; k++)
        c->owner[k] = NONE;
    return TMAP_OK;
}

/* ---------------------------------------------------------- flushes */

/* The triplet ending at statement i (its red), guarded by predicate `on`:
 *   setp.ne.and.u32 %tmap_f, %tmap_n<k>, 0, on;
 *   @%tmap_f mad.wide.u32 %tmap_a, %tmap_ns, ROW, %tmap_p;
 *   @%tmap_f red.global.add.u32 [%tmap_a], %tmap_n<k>;
 * Returns k, or NONE. */
static uint32_t flush_triplet(const fcheck *c, size_t i, const char *on, unsigned long *row)
{
    if (i < 2)
        return NONE;
    const tmap_ptx_stmt *st = &c->f->body[i - 2], *ma = &c->f->body[i - 1], *re = &c->f->body[i];
    if (st->kind != TMAP_ST_INSTR || ma->kind != TMAP_ST_INSTR || re->kind != TMAP_ST_INSTR)
        return NONE;
    uint32_t k = opnd_reg(re, 1);
    char buf[64];
    int ok = k != NONE && strcmp(re->text, "red.global.add.u32") == 0 &&
             guard_is(re, "%tmap_f") && opnd_is(re, 0, "[%tmap_a]") &&
             !strcmp(ma->text, "mad.wide.u32") && guard_is(ma, "%tmap_f") &&
             opnd_is(ma, 0, "%tmap_a") && opnd_is(ma, 1, "%tmap_ns") && opnd_is(ma, 3, "%tmap_p") &&
             !strcmp(st->text, "setp.ne.and.u32") && guard_is(st, NULL) &&
             opnd_is(st, 0, "%tmap_f") && opnd_reg(st, 1) == k && opnd_is(st, 2, "0") &&
             opnd_is(st, 3, on);
    if (!ok)
        return NONE;
    *row = strtoul(operand(ma, 2, buf, sizeof buf), NULL, 0);
    return k;
}

/* The statements computing %tmap_g for an exit guarded by @[!]g, ending at
 * statement i; returns how many (1 or 2), or 0 if they are not there. */
static size_t guard_prefix(const fcheck *c, size_t i, const tmap_ptx_stmt *exit_stmt)
{
    const tmap_ptx_stmt *a = &c->f->body[i];
    if (a->kind != TMAP_ST_INSTR || strcmp(a->text, "and.pred") || !guard_is(a, NULL) ||
        !opnd_is(a, 0, "%tmap_g"))
        return 0;
    if (!exit_stmt->guard_neg)
        return opnd_is(a, 1, "%tmap_on") && opnd_is(a, 2, exit_stmt->guard) ? 1 : 0;
    if (i < 1 || !opnd_is(a, 1, "%tmap_g") || !opnd_is(a, 2, "%tmap_on"))
        return 0;
    const tmap_ptx_stmt *n = &c->f->body[i - 1];
    return n->kind == TMAP_ST_INSTR && !strcmp(n->text, "not.pred") && guard_is(n, NULL) &&
                   opnd_is(n, 0, "%tmap_g") && opnd_is(n, 1, exit_stmt->guard)
               ? 2
               : 0;
}

/* The complete flush immediately before statement `at` (an exit, or the
 * end of the body when at == nbody), for the exit's guard. */
static tmap_status check_flush(fcheck *c, size_t at, const tmap_ptx_stmt *exit_stmt,
                               uint32_t line)
{
    if (!c->nregs)
        return TMAP_OK;
    const char *on = exit_stmt && exit_stmt->guard ? "%tmap_g" : "%tmap_on";
    uint8_t *seen = calloc(c->nregs, 1);
    if (!seen)
        return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory checking counters");
    size_t i = at;
    for (uint32_t n = 0; n < c->nregs; n++) {
        unsigned long row = 0;
        uint32_t k = i >= 3 ? flush_triplet(c, i - 1, on, &row) : NONE;
        if (k == NONE || k >= c->nregs || seen[k]) {
            free(seen);
            return bad(c, line, "exit not preceded by a complete flush of the counters");
        }
        seen[k] = 1;
        if (tmap_grow(&c->flush_row, &c->capflush_rows, c->nflush_rows + 2,
                      sizeof *c->flush_row)) {
            free(seen);
            return tmap_fail(c->err, TMAP_ERR_NOMEM, "out of memory checking counters");
        }
        c->flush_row[c->nflush_rows++] = k;
        c->flush_row[c->nflush_rows++] = (uint32_t)row;
        i -= 3;
        c->in_flush[i] = c->in_flush[i + 1] = c->in_flush[i + 2] = 1;
    }
    free(seen);
    if (exit_stmt && exit_stmt->guard) {
        size_t g = i ? guard_prefix(c, i - 1, exit_stmt) : 0;
        if (!g)
            return bad(c, line, "flush before a guarded exit does not use its guard");
    }
    c->stats->flushes++;
    return TMAP_OK;
}

/* ---------------------------------------------------------- counters */

/* Whether s is part of the preamble: writes a %tmap_ register, or is the
 * branch around sampling. */
static int pass_instr(const tmap_ptx_stmt *s)
{
    char buf[128];
    if (opcode_is(s->text, "bra"))
        return s->ntoks && !strncmp(s->toks[s->ntoks - 1].text, "$tmap_", 6);
    return !strncmp(operand(s, 0, buf, sizeof buf), "%tmap_", 6) &&
           counter_reg(buf) == NONE;
}

static int is_increment(const tmap_ptx_stmt *s, uint32_t *k)
{
    *k = opnd_reg(s, 0);
    return *k != NONE && !strcmp(s->text, "add.u32") && !s->guard && opnd_reg(s, 1) == *k &&
           opnd_is(s, 2, "1");
}

/* A direct counter starting at statement i; *row its row. */
static int is_direct(const fcheck *c, size_t i, unsigned long *row)
{
    const tmap_ptx_stmt *ma = &c->f->body[i];
    if (i + 1 >= c->f->nbody || ma->kind != TMAP_ST_INSTR)
        return 0;
    const tmap_ptx_stmt *re = &c->f->body[i + 1];
    char buf[64];
    int ok = !strcmp(ma->text, "mad.wide.u32") && guard_is(ma, "%tmap_on") &&
             opnd_is(ma, 0, "%tmap_a") && opnd_is(ma, 1, "%tmap_ns") &&
             opnd_is(ma, 3, "%tmap_p") && re->kind == TMAP_ST_INSTR &&
             !strcmp(re->text, "red.global.add.u32") && guard_is(re, "%tmap_on") &&
             opnd_is(re, 0, "[%tmap_a]") && opnd_is(re, 1, "1");
    if (ok)
        *row = strtoul(operand(ma, 2, buf, sizeof buf), NULL, 0);
    return ok;
}

/* Statements [from, to) of one block of the instrumented CFG: exactly one
 * counter, preceded only by preamble instructions.  *orig is the block's
 * index in the original CFG (advanced when the block counts). */
static tmap_status check_block(fcheck *c, size_t from, size_t to, uint32_t line, int preamble,
                               uint32_t *orig)
{
    size_t counters = 0;
    int before = 1; /* no non-preamble instruction yet */
    for (size_t i = from; i < to; i++) {
        const tmap_ptx_stmt *s = &c->f->body[i];
        if (s->kind != TMAP_ST_INSTR || c->in_flush[i])
            continue;
        uint32_t k;
        unsigned long row = 0;
        if (is_increment(s, &k) || is_direct(c, i, &row)) {
            if (!before || counters++)
                return bad(c, s->line, "a block's counter is not at its start, or twice");
            if (c->first_counter == NONE)
                c->first_counter = i;
            if (k != NONE && (k >= c->nregs || c->owner[k] != NONE))
                return bad(c, s->line, "a counter register counts two blocks");
            if (k != NONE)
                c->owner[k] = *orig, c->stats->reg_blocks++;
            else if (row != 4ul * *orig)
                return bad(c, s->line, "a direct counter writes another block's row");
            else
                c->stats->direct_blocks++, i++;
            continue;
        }
        if (opcode_is(s->text, "mov") && (k = opnd_reg(s, 0)) != NONE) {
            if (c->first_counter != NONE || k >= c->nregs || c->zeroed[k] || !opnd_is(s, 1, "0"))
                return bad(c, s->line, "a counter register is reset outside the preamble");
            c->zeroed[k] = 1;
            continue;
        }
        if (mentions_counter(s))
            return bad(c, s->line, "a counter register is used outside increments and flushes");
        before &= pass_instr(s);
    }
    if (counters == 0 && !preamble)
        return bad(c, line, "a block has no counter");
    *orig += counters != 0;
    return TMAP_OK;
}

/* --------------------------------------------------------- functions */

static int falls_off_end(const tmap_cfg_block *last)
{
    return last->term == TMAP_TERM_FALL ||
           (last->predicated_term && last->term != TMAP_TERM_BRA);
}

/* The statement where block j's statements begin (its label, if any). */
static size_t block_start(const tmap_ptx_func *f, const uint32_t *at, size_t j)
{
    size_t s = at[j];
    return s > 0 && s - 1 < f->nbody && f->body[s - 1].kind == TMAP_ST_LABEL ? s - 1 : s;
}

static tmap_status check_exits(fcheck *c, const tmap_cfg *cfg, const tmap_cfg_func *cf)
{
    tmap_status st = TMAP_OK;
    for (size_t i = 0; i < c->f->nbody && st == TMAP_OK; i++) {
        const tmap_ptx_stmt *s = &c->f->body[i];
        if (s->kind == TMAP_ST_INSTR && (opcode_is(s->text, "ret") || opcode_is(s->text, "exit"))) {
            c->stats->exits++;
            st = check_flush(c, i, s, s->line);
        }
    }
    if (st == TMAP_OK && cf->nblocks &&
        falls_off_end(&cfg->blocks[cf->first_block + cf->nblocks - 1])) {
        c->stats->exits++;
        st = check_flush(c, c->f->nbody, NULL, c->f->line);
    }
    return st;
}

static tmap_status check_rows(const fcheck *c)
{
    for (uint32_t k = 0; k < c->nregs; k++)
        if (c->owner[k] == NONE || !c->zeroed[k])
            return bad(c, c->f->line, "a counter register is not zeroed or counts no block");
    for (size_t i = 0; i < c->nflush_rows; i += 2)
        if (c->flush_row[i + 1] != 4u * c->owner[c->flush_row[i]])
            return bad(c, c->f->line, "a flush writes a register to another block's row");
    return TMAP_OK;
}

static tmap_status check_func(fcheck *c, const tmap_cfg *cfg, const tmap_cfg_func *cf,
                              const uint32_t *at, uint32_t *orig)
{
    tmap_status st = read_decls(c);
    if (st == TMAP_OK)
        st = check_exits(c, cfg, cf);
    c->first_counter = NONE;
    size_t end = cf->first_block + cf->nblocks;
    for (size_t j = cf->first_block; j < end && st == TMAP_OK; j++) {
        size_t from = j == cf->first_block ? 0 : block_start(c->f, at, j);
        size_t to = j + 1 < end ? block_start(c->f, at, j + 1) : c->f->nbody;
        st = check_block(c, from, to, cfg->blocks[j].line, c->first_counter == NONE, orig);
    }
    if (st == TMAP_OK)
        st = check_rows(c);
    free(c->owner);
    free(c->zeroed);
    free(c->flush_row);
    free(c->in_flush);
    return st;
}

tmap_status tmap_bbv_check(const tmap_ptx_module *m, const char *kernel,
                           tmap_bbv_check_stats *stats, tmap_error *err)
{
    tmap_bbv_check_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    tmap_cfg *cfg = NULL;
    uint32_t *at = NULL;
    tmap_status st = tmap_cfg_build_at(m, kernel, &cfg, &at, err);
    uint32_t orig = 0;
    for (size_t i = 0; st == TMAP_OK && i < cfg->nfuncs; i++) {
        fcheck c = {0};
        c.m = m;
        c.f = tmap_ptx_find_func(m, cfg->funcs[i].name);
        c.err = err;
        c.stats = stats;
        st = check_func(&c, cfg, &cfg->funcs[i], at, &orig);
        stats->funcs++;
    }
    free(at);
    tmap_cfg_free(cfg);
    return st;
}

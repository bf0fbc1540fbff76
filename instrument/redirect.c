/*
 * redirect.c -- reference redirection (Zhang et al. 2010, Sec. 3.1; Liang et
 * al. 2016, Sec. III-A): the thread in slot i does the work of thread D[i].
 *
 * A module-scope .u64 __tmap_perm holds the device pointer to D (u32 per
 * thread).  Each rewritten function gets its own registers (%tmap_rr*), a
 * preamble at the top of its body that computes the hardware slot, loads
 * j = D[slot] and splits j into the ids of thread j, and every operand that
 * read %tid.{x,y,z} / %ctaid.{x,y,z} reads the matching new register.
 * Invariant after the rewrite: in a rewritten function, only the preamble
 * (a RAW statement) reads %tid / %ctaid.
 */
#include "instrument/func_clone.h"

#include <stdlib.h>
#include <string.h>

/* Special registers redirected, and the register replacing each. */
static const struct {
    const char *sreg;
    const char *reg;
} redirected[] = {
    {"%tid.x", "%tmap_rr_tid_x"},     {"%tid.y", "%tmap_rr_tid_y"},
    {"%tid.z", "%tmap_rr_tid_z"},     {"%ctaid.x", "%tmap_rr_ctaid_x"},
    {"%ctaid.y", "%tmap_rr_ctaid_y"}, {"%ctaid.z", "%tmap_rr_ctaid_z"},
};
#define NREDIRECTED (sizeof redirected / sizeof redirected[0])

static const char decls_text[] =
    ".reg .pred %tmap_rr_id;\n"
    ".reg .b32 %tmap_rr<10>;\n"
    ".reg .b64 %tmap_rrd<3>;\n"
    ".reg .b32 %tmap_rr_tid_x, %tmap_rr_tid_y, %tmap_rr_tid_z;\n"
    ".reg .b32 %tmap_rr_ctaid_x, %tmap_rr_ctaid_y, %tmap_rr_ctaid_z;\n";

/*
 * rr0..2 = ntid.xyz, rr3 = tpb, rr4 = tid_lin, rr6, rr7 = nctaid.xy,
 * rr8 = ctaid_lin, rrd0 = slot (64-bit), rrd1 = D (0: identity), rr9 = j.
 * Then j's ids: ctaid_lin' = j / tpb, tid_lin' = j % tpb, each split by the
 * block (grid) extents.  Launches have at most 2^32 threads (D is u32), so
 * the linear block id and j fit 32 bits.
 */
static const char preamble_text[] =
    "mov.u32 %tmap_rr0, %ntid.x;\n"
    "mov.u32 %tmap_rr1, %ntid.y;\n"
    "mov.u32 %tmap_rr2, %ntid.z;\n"
    "mul.lo.u32 %tmap_rr3, %tmap_rr0, %tmap_rr1;\n"
    "mul.lo.u32 %tmap_rr3, %tmap_rr3, %tmap_rr2;\n"
    "mov.u32 %tmap_rr4, %tid.z;\n"
    "mov.u32 %tmap_rr5, %tid.y;\n"
    "mad.lo.u32 %tmap_rr4, %tmap_rr4, %tmap_rr1, %tmap_rr5;\n"
    "mov.u32 %tmap_rr5, %tid.x;\n"
    "mad.lo.u32 %tmap_rr4, %tmap_rr4, %tmap_rr0, %tmap_rr5;\n"
    "mov.u32 %tmap_rr6, %nctaid.x;\n"
    "mov.u32 %tmap_rr7, %nctaid.y;\n"
    "mov.u32 %tmap_rr8, %ctaid.z;\n"
    "mov.u32 %tmap_rr5, %ctaid.y;\n"
    "mad.lo.u32 %tmap_rr8, %tmap_rr8, %tmap_rr7, %tmap_rr5;\n"
    "mov.u32 %tmap_rr5, %ctaid.x;\n"
    "mad.lo.u32 %tmap_rr8, %tmap_rr8, %tmap_rr6, %tmap_rr5;\n"
    "mul.wide.u32 %tmap_rrd0, %tmap_rr8, %tmap_rr3;\n"
    "cvt.u64.u32 %tmap_rrd1, %tmap_rr4;\n"
    "add.u64 %tmap_rrd0, %tmap_rrd0, %tmap_rrd1;\n"
    "ld.global.u64 %tmap_rrd1, [" TMAP_REDIRECT_SYMBOL "];\n"
    "setp.eq.u64 %tmap_rr_id, %tmap_rrd1, 0;\n"
    "shl.b64 %tmap_rrd2, %tmap_rrd0, 2;\n"
    "add.u64 %tmap_rrd2, %tmap_rrd1, %tmap_rrd2;\n"
    "@%tmap_rr_id cvt.u32.u64 %tmap_rr9, %tmap_rrd0;\n"
    "@!%tmap_rr_id ld.global.nc.u32 %tmap_rr9, [%tmap_rrd2];\n"
    "div.u32 %tmap_rr8, %tmap_rr9, %tmap_rr3;\n"
    "rem.u32 %tmap_rr4, %tmap_rr9, %tmap_rr3;\n"
    "rem.u32 %tmap_rr_tid_x, %tmap_rr4, %tmap_rr0;\n"
    "div.u32 %tmap_rr4, %tmap_rr4, %tmap_rr0;\n"
    "rem.u32 %tmap_rr_tid_y, %tmap_rr4, %tmap_rr1;\n"
    "div.u32 %tmap_rr_tid_z, %tmap_rr4, %tmap_rr1;\n"
    "rem.u32 %tmap_rr_ctaid_x, %tmap_rr8, %tmap_rr6;\n"
    "div.u32 %tmap_rr8, %tmap_rr8, %tmap_rr6;\n"
    "rem.u32 %tmap_rr_ctaid_y, %tmap_rr8, %tmap_rr7;\n"
    "div.u32 %tmap_rr_ctaid_z, %tmap_rr8, %tmap_rr7;\n";

static const char *replacement(const char *tok)
{
    for (size_t i = 0; i < NREDIRECTED; i++)
        if (!strcmp(tok, redirected[i].sreg))
            return redirected[i].reg;
    return NULL;
}

/* The last '.'-suffix of an opcode ("u32" of "cvt.u64.u32"). */
static const char *last_suffix(const char *op)
{
    const char *dot = strrchr(op, '.');
    return dot ? dot + 1 : "";
}

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

const char *tmap_redirect_check(const tmap_ptx_stmt *s)
{
    if (s->kind != TMAP_ST_INSTR)
        return NULL;
    int reads = 0;
    for (uint32_t k = 0; k < s->ntoks; k++) {
        const tmap_ptx_tok *t = &s->toks[k];
        if (t->kind != TMAP_TOK_REG)
            continue;
        if (!strcmp(t->text, "%tid") || !strcmp(t->text, "%ctaid"))
            return "reads the whole %tid/%ctaid vector";
        reads |= replacement(t->text) != NULL;
    }
    if (!reads)
        return NULL;
    const char *type = last_suffix(s->text);
    int type32 = !strcmp(type, "u32") || !strcmp(type, "s32") || !strcmp(type, "b32");
    if ((opcode_is(s->text, "mov") || opcode_is(s->text, "cvt")) && type32)
        return NULL;
    return "reads a thread or block id other than with mov/cvt of a 32-bit type "
           "(e.g. the legacy 16-bit mov.u16)";
}

/* 1 if f's body carries the marks of `prefix` registers (declared by a pass,
 * in a RAW statement or, after a reparse, in a .reg directive). */
static int has_pass_regs(const tmap_ptx_func *f, const char *mark)
{
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        if (s->kind == TMAP_ST_RAW && strstr(s->text, mark))
            return 1;
        for (uint32_t k = 0; s->kind == TMAP_ST_DIRECTIVE && k < s->ntoks; k++)
            if (s->toks[k].kind == TMAP_TOK_REG && !strcmp(s->toks[k].text, mark))
                return 1;
    }
    return 0;
}

/* Checks every id read of f; *reads receives how many there are. */
static tmap_status check_func(const tmap_ptx_module *m, const tmap_ptx_func *f, size_t *reads,
                              tmap_error *err)
{
    *reads = 0;
    if (has_pass_regs(f, "%tmap_rr_id"))
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "%s:%u: %s is already redirected", m->file, f->line, f->name);
    if (f->instrumented || has_pass_regs(f, "%tmap_on"))
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "%s:%u: %s already has the counter pass: redirect first, then "
                         "instrument", m->file, f->line, f->name);
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        const char *why = tmap_redirect_check(s);
        char where[1024];
        if (why)
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                             "%s: '%s' %s; redirection handles mov.u32/cvt of "
                             "%%tid.{x,y,z} and %%ctaid.{x,y,z} only",
                             tmap_ptx_loc_where(m, s->line, where, sizeof where), s->text, why);
        for (uint32_t k = 0; s->kind == TMAP_ST_INSTR && k < s->ntoks; k++)
            *reads += s->toks[k].kind == TMAP_TOK_REG && replacement(s->toks[k].text);
    }
    return TMAP_OK;
}

static int raw_stmt(tmap_ptx_module *m, const char *text, tmap_ptx_stmt *s)
{
    memset(s, 0, sizeof *s);
    s->kind = TMAP_ST_RAW;
    s->text = tmap_arena_strndup(&m->arena, text, strlen(text));
    return s->text ? 0 : -1;
}

/* Replaces the id operands of f's instructions and prepends the register
 * declarations and the preamble. */
static tmap_status rewrite_func(tmap_ptx_module *m, tmap_ptx_func *f, tmap_error *err)
{
    for (size_t i = 0; i < f->nbody; i++) {
        tmap_ptx_stmt *s = &f->body[i];
        for (uint32_t k = 0; s->kind == TMAP_ST_INSTR && k < s->ntoks; k++) {
            const char *r = s->toks[k].kind == TMAP_TOK_REG ? replacement(s->toks[k].text) : NULL;
            if (r && !(s->toks[k].text = tmap_arena_strndup(&m->arena, r, strlen(r))))
                return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory redirecting", m->file);
        }
    }
    if (tmap_grow(&f->body, &f->capbody, f->nbody + 2, sizeof *f->body))
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory redirecting", m->file);
    tmap_ptx_stmt head[2];
    if (raw_stmt(m, decls_text, &head[0]) || raw_stmt(m, preamble_text, &head[1]))
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory redirecting", m->file);
    memmove(&f->body[2], &f->body[0], f->nbody * sizeof *f->body);
    f->body[0] = head[0];
    f->body[1] = head[1];
    f->nbody += 2;
    return TMAP_OK;
}


/* The preamble computes 64-bit addresses: refuse .address_size 32. */
static tmap_status check_address_size(const tmap_ptx_module *m, tmap_error *err)
{
    for (size_t i = 0; i < m->nitems; i++) {
        const tmap_ptx_item *it = &m->items[i];
        if (it->kind == TMAP_IT_LINE && it->ntoks >= 2 &&
            !strcmp(it->toks[0].text, ".address_size") && strcmp(it->toks[1].text, "64"))
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                             "%s:%u: redirection needs .address_size 64", m->file, it->line);
    }
    return TMAP_OK;
}

tmap_status tmap_redirect_instrument(tmap_ptx_module *m, const char *kernel, tmap_error *err)
{
    if (!m || !kernel)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_redirect_instrument: NULL argument");
    tmap_cfg *cfg = NULL;
    tmap_status st = check_address_size(m, err);
    if (st == TMAP_OK)
        st = tmap_cfg_build(m, kernel, &cfg, err);
    if (st != TMAP_OK)
        return st;
    size_t *reads = calloc(cfg->nfuncs, sizeof *reads);
    if (!reads)
        st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory redirecting", m->file);
    /* check everything first, so that a refusal leaves the module unchanged;
     * then give the kernel its own copy of each .func it shares (the clones
     * are in the same order in the new CFG) */
    for (size_t i = 0; st == TMAP_OK && i < cfg->nfuncs; i++)
        st = check_func(m, tmap_ptx_find_func(m, cfg->funcs[i].name), &reads[i], err);
    if (st == TMAP_OK)
        st = tmap_func_clone_shared(m, kernel, err);
    tmap_cfg_free(cfg);
    cfg = NULL;
    if (st == TMAP_OK)
        st = tmap_cfg_build(m, kernel, &cfg, err);
    for (size_t i = 0; st == TMAP_OK && i < cfg->nfuncs; i++)
        if (reads[i])
            st = rewrite_func(m, tmap_ptx_find_func(m, cfg->funcs[i].name), err);
    if (st == TMAP_OK)
        st = tmap_ptx_add_global(m, TMAP_REDIRECT_SYMBOL,
                                 ".visible .global .align 8 .u64 " TMAP_REDIRECT_SYMBOL ";\n", err);
    free(reads);
    tmap_cfg_free(cfg);
    return st;
}

/*
 * bbv_pass.c -- the per-thread basic-block counter pass.
 *
 * Each instrumented function (the kernel and every .func it reaches) gets
 * its own registers (%tmap_*) and a preamble computing the thread's counter
 * pointer p (row 0 of its column) and the row length %tmap_ns (nslots), and
 * zeroing its register counters %tmap_n<k>.  A function's loop blocks, up
 * to a budget (bbv_plan.c), count in a register: one unguarded `add.u32` at
 * the block's start.  The registers are flushed
 * before every ret and exit (and at the end of a body that falls off it):
 * for each k, `red.global.add.u32 [p + 4*b*ns], %tmap_n<k>` where the count
 * is non-zero, the thread block is sampled (%tmap_on) and, for a guarded
 * `@%p ret`, the guard holds, so each call of each function adds its counts
 * once and memory traffic follows the blocks executed.  Other blocks (not
 * in a loop, or beyond the budget) count with a direct red at block entry.  Each counter has exactly
 * one writer (its thread), so `red` equals a load/add/store and never waits.
 * The 32-bit slot arithmetic is exact because nslots < 2^32 (the runtime
 * refuses larger launches).  The counters' base and the sampling period are
 * module-scope .global variables; the kernel's parameters are untouched.
 * docs/instrumentation.md shows the emitted code.
 */
#include "instrument/bbv.h"
#include "instrument/func_clone.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char decls_text[] =
    ".reg .pred %tmap_on, %tmap_f, %tmap_g;\n"
    ".reg .b32 %tmap_r<8>;\n"
    ".reg .b32 %tmap_ns;\n"
    ".reg .b64 %tmap_rd<4>;\n"
    ".reg .b64 %tmap_p, %tmap_a;\n";

/* The label ending the sampling branch of the preamble (one per function). */
#define COUNTED_LABEL "$tmap_counted"

/* Sets on, ns (nslots) and p.  Without sampling (sample <= 1, the uniform
 * branch skips the rest) everything is 32-bit: tid_lin < tpb <= 1024,
 * cy + ny*cz and ny*nz are below 2^32 for any grid, and
 * ctaid_lin * tpb + tid_lin = slot < nslots < 2^32.  With sampling,
 * ctaid_lin may exceed 32 bits, so its quotient and remainder are taken in
 * 64 bits; the quotients are below 2^32.  The loads come first so that
 * their latency overlaps the arithmetic.  The label is a statement of its
 * own (labels print unindented), between the head and the tail. */
static void emit_preamble_head(tmap_buf *b)
{
    tmap_buf_puts(b,
                  "ld.global.u32 %tmap_r7, [" TMAP_BBV_STRIDE_SYMBOL "];\n"
                  "ld.global.u64 %tmap_rd0, [" TMAP_BBV_BASE_SYMBOL "];\n"
                  "mov.u32 %tmap_r0, %tid.x;\n"
                  "mov.u32 %tmap_r1, %tid.y;\n"
                  "mov.u32 %tmap_r2, %tid.z;\n"
                  "mov.u32 %tmap_r3, %ntid.x;\n"
                  "mov.u32 %tmap_r4, %ntid.y;\n"
                  "mov.u32 %tmap_r5, %ntid.z;\n"
                  "mad.lo.u32 %tmap_r1, %tmap_r2, %tmap_r4, %tmap_r1;\n"
                  "mad.lo.u32 %tmap_r0, %tmap_r1, %tmap_r3, %tmap_r0;\n"
                  "mul.lo.u32 %tmap_r3, %tmap_r3, %tmap_r4;\n"
                  "mul.lo.u32 %tmap_r3, %tmap_r3, %tmap_r5;\n"
                  "mov.u32 %tmap_r1, %ctaid.x;\n"
                  "mov.u32 %tmap_r2, %ctaid.y;\n"
                  "mov.u32 %tmap_r4, %ctaid.z;\n"
                  "mov.u32 %tmap_r5, %nctaid.x;\n"
                  "mov.u32 %tmap_r6, %nctaid.y;\n"
                  "mad.lo.u32 %tmap_r2, %tmap_r4, %tmap_r6, %tmap_r2;\n"
                  "mov.u32 %tmap_r4, %nctaid.z;\n"
                  "mul.lo.u32 %tmap_r6, %tmap_r6, %tmap_r4;\n"
                  "mad.lo.u32 %tmap_r4, %tmap_r2, %tmap_r5, %tmap_r1;\n"
                  "mul.lo.u32 %tmap_ns, %tmap_r6, %tmap_r5;\n"
                  "setp.le.u32 %tmap_on, %tmap_r7, 1;\n"
                  "@%tmap_on bra.uni " COUNTED_LABEL ";\n"
                  "mul.wide.u32 %tmap_rd1, %tmap_r2, %tmap_r5;\n"
                  "cvt.u64.u32 %tmap_rd2, %tmap_r1;\n"
                  "add.u64 %tmap_rd1, %tmap_rd1, %tmap_rd2;\n"
                  "cvt.u64.u32 %tmap_rd2, %tmap_r7;\n"
                  "rem.u64 %tmap_rd3, %tmap_rd1, %tmap_rd2;\n"
                  "setp.eq.u64 %tmap_on, %tmap_rd3, 0;\n"
                  "div.u64 %tmap_rd1, %tmap_rd1, %tmap_rd2;\n"
                  "cvt.u32.u64 %tmap_r4, %tmap_rd1;\n"
                  "mul.wide.u32 %tmap_rd1, %tmap_r6, %tmap_r5;\n"
                  "add.u64 %tmap_rd1, %tmap_rd1, %tmap_rd2;\n"
                  "sub.u64 %tmap_rd1, %tmap_rd1, 1;\n"
                  "div.u64 %tmap_rd1, %tmap_rd1, %tmap_rd2;\n"
                  "cvt.u32.u64 %tmap_ns, %tmap_rd1;\n");
}

/* After COUNTED_LABEL: the slot, nslots and p. */
static void emit_preamble_tail(tmap_buf *b)
{
    tmap_buf_puts(b,
                  "mad.lo.u32 %tmap_r0, %tmap_r4, %tmap_r3, %tmap_r0;\n"
                  "mul.lo.u32 %tmap_ns, %tmap_ns, %tmap_r3;\n"
                  "mad.wide.u32 %tmap_p, %tmap_r0, 4, %tmap_rd0;\n");
}

/* Register counters: declared and zeroed (after the preamble). */
static void emit_registers(tmap_buf *b, uint32_t nregs)
{
    if (!nregs)
        return;
    tmap_buf_printf(b, ".reg .b32 %%tmap_n<%u>;\n", nregs);
}

static void emit_zero(tmap_buf *b, uint32_t nregs)
{
    for (uint32_t k = 0; k < nregs; k++)
        tmap_buf_printf(b, "mov.u32 %%tmap_n%u, 0;\n", k);
}

/* Block `block`'s counter at its start: a register or a direct red. */
static void emit_counter(tmap_buf *b, size_t block, uint32_t reg)
{
    if (reg != TMAP_BBV_DIRECT) {
        tmap_buf_printf(b, "add.u32 %%tmap_n%u, %%tmap_n%u, 1;\n", reg, reg);
        return;
    }
    tmap_buf_printf(b,
                    "@%%tmap_on mad.wide.u32 %%tmap_a, %%tmap_ns, %zu, %%tmap_p;\n"
                    "@%%tmap_on red.global.add.u32 [%%tmap_a], 1;\n",
                    4 * block);
}

/* The flush before an exit guarded by `guard` (NULL: none, neg: @!guard):
 * each register k of blocks [first, end) adds its count at its block's row
 * where it is non-zero, the block is sampled and the exit is taken. */
static void emit_flush(tmap_buf *b, const tmap_bbv_plan *plan, size_t first, size_t end,
                       const char *guard, int neg)
{
    const char *on = "%tmap_on";
    if (guard && neg)
        tmap_buf_printf(b, "not.pred %%tmap_g, %s;\nand.pred %%tmap_g, %%tmap_g, %%tmap_on;\n",
                        guard);
    else if (guard)
        tmap_buf_printf(b, "and.pred %%tmap_g, %%tmap_on, %s;\n", guard);
    if (guard)
        on = "%tmap_g";
    for (size_t blk = first; blk < end; blk++) {
        uint32_t k = plan->reg[blk];
        if (k == TMAP_BBV_DIRECT)
            continue;
        tmap_buf_printf(b,
                        "setp.ne.and.u32 %%tmap_f, %%tmap_n%u, 0, %s;\n"
                        "@%%tmap_f mad.wide.u32 %%tmap_a, %%tmap_ns, %zu, %%tmap_p;\n"
                        "@%%tmap_f red.global.add.u32 [%%tmap_a], %%tmap_n%u;\n",
                        k, on, 4 * blk, k);
    }
}

static int opcode_is(const char *op, const char *base)
{
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '\0' || op[n] == '.');
}

static int is_exit(const tmap_ptx_stmt *s)
{
    return s->kind == TMAP_ST_INSTR && (opcode_is(s->text, "ret") || opcode_is(s->text, "exit"));
}

/* Whether control can fall off the end of the body after block `last`. */
static int falls_off_end(const tmap_cfg_block *last)
{
    return last->term == TMAP_TERM_FALL ||
           (last->predicated_term && last->term != TMAP_TERM_BRA);
}

/* A RAW statement holding b's text (copied into the arena); b is emptied. */
static int raw_stmt(tmap_ptx_module *m, tmap_buf *b, tmap_ptx_stmt *s)
{
    memset(s, 0, sizeof *s);
    s->kind = TMAP_ST_RAW;
    s->text = b->oom || !b->data ? NULL : tmap_arena_strndup(&m->arena, b->data, b->len);
    tmap_buf_free(b);
    return s->text ? 0 : -1;
}

static int label_stmt(tmap_ptx_module *m, const char *name, tmap_ptx_stmt *s)
{
    memset(s, 0, sizeof *s);
    s->kind = TMAP_ST_LABEL;
    s->text = tmap_arena_strndup(&m->arena, name, strlen(name));
    return s->text ? 0 : -1;
}

/* The counter pass's own mark is %tmap_on (other passes, e.g. redirection's
 * %tmap_rr*, share the %tmap_ prefix and may come first). */
static int already_instrumented(const tmap_ptx_func *f)
{
    if (f->instrumented)
        return 1;
    for (size_t i = 0; i < f->nbody; i++) {
        const tmap_ptx_stmt *s = &f->body[i];
        if (s->kind == TMAP_ST_DIRECTIVE)
            for (uint32_t k = 0; k < s->ntoks; k++)
                if (s->toks[k].kind == TMAP_TOK_REG && !strcmp(s->toks[k].text, "%tmap_on"))
                    return 1;
    }
    return 0;
}

static size_t count_exits(const tmap_ptx_func *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nbody; i++)
        n += is_exit(&f->body[i]);
    return n;
}

/* Rewrites f's body: declarations and preamble first; then, in order, each
 * block's counter at at[blk] (non-decreasing within f), a flush before each
 * ret/exit, and one at the end if the last block falls off it. */
static tmap_status rewrite_func(tmap_ptx_module *m, tmap_ptx_func *f, const tmap_cfg *cfg,
                                size_t fi, const uint32_t *at, const tmap_bbv_plan *plan,
                                tmap_error *err)
{
    const tmap_cfg_func *cf = &cfg->funcs[fi];
    size_t first = cf->first_block, end = first + cf->nblocks, blk = first;
    uint32_t nregs = plan->nregs[fi];
    size_t n = f->nbody + 5 + cf->nblocks + count_exits(f);
    tmap_ptx_stmt *body = malloc(n * sizeof *body);
    if (!body)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory instrumenting", m->file);
    size_t k = 0;
    tmap_buf b = {0};
    tmap_buf_puts(&b, decls_text);
    emit_registers(&b, nregs);
    int bad = raw_stmt(m, &b, &body[k++]);
    emit_preamble_head(&b);
    bad |= raw_stmt(m, &b, &body[k++]);
    bad |= label_stmt(m, COUNTED_LABEL, &body[k++]);
    emit_preamble_tail(&b);
    emit_zero(&b, nregs);
    bad |= raw_stmt(m, &b, &body[k++]);
    for (size_t i = 0; i <= f->nbody; i++) {
        for (; blk < end && at[blk] == i; blk++) {
            emit_counter(&b, blk, plan->reg[blk]);
            bad |= raw_stmt(m, &b, &body[k++]);
        }
        if (i == f->nbody)
            break;
        if (nregs && is_exit(&f->body[i])) {
            emit_flush(&b, plan, first, end, f->body[i].guard, f->body[i].guard_neg);
            bad |= raw_stmt(m, &b, &body[k++]);
        }
        body[k++] = f->body[i];
    }
    if (nregs && cf->nblocks && falls_off_end(&cfg->blocks[end - 1])) {
        emit_flush(&b, plan, first, end, NULL, 0);
        bad |= raw_stmt(m, &b, &body[k++]);
    }
    if (bad || blk != end) {
        free(body);
        return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory instrumenting", m->file)
                   : tmap_fail(err, TMAP_ERR_INVALID, "%s:%u: CFG does not match function %s",
                               m->file, f->line, f->name);
    }
    free(f->body);
    f->body = body;
    f->nbody = k;
    f->capbody = n;
    f->instrumented = 1;
    return TMAP_OK;
}


/* Refuses functions already instrumented and CFGs too large for 32-bit rows. */
static tmap_status check_instrumentable(tmap_ptx_module *m, const tmap_cfg *cfg,
                                        tmap_error *err)
{
    if (cfg->nblocks >= (1u << 30))
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: %zu blocks are too many to count",
                         m->file, cfg->nblocks);
    for (size_t i = 0; i < cfg->nfuncs; i++) {
        tmap_ptx_func *f = tmap_ptx_find_func(m, cfg->funcs[i].name);
        if (already_instrumented(f))
            return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                             "%s:%u: %s is already instrumented",
                             m->file, f->line, f->name);
    }
    return TMAP_OK;
}

tmap_status tmap_bbv_instrument_budget(tmap_ptx_module *m, const char *kernel, uint32_t budget,
                                       tmap_cfg **cfg_out, tmap_error *err)
{
    if (cfg_out)
        *cfg_out = NULL;
    tmap_cfg *cfg = NULL, *named = NULL;
    uint32_t *at = NULL;
    tmap_bbv_plan plan = {0};
    /* the CFG returned names the blocks as the module given (before clones) */
    tmap_status st = tmap_cfg_build(m, kernel, &named, err);
    if (st == TMAP_OK)
        st = tmap_func_clone_shared(m, kernel, err);
    if (st == TMAP_OK)
        st = tmap_cfg_build_at(m, kernel, &cfg, &at, err);
    if (st != TMAP_OK) {
        tmap_cfg_free(named);
        return st;
    }
    assert(named->nblocks == cfg->nblocks && named->nfuncs == cfg->nfuncs);
    st = check_instrumentable(m, cfg, err);
    if (st == TMAP_OK)
        st = tmap_bbv_plan_make(m, cfg, budget, &plan, err);
    for (size_t i = 0; i < cfg->nfuncs && st == TMAP_OK; i++)
        st = rewrite_func(m, tmap_ptx_find_func(m, cfg->funcs[i].name), cfg, i, at, &plan, err);
    if (st == TMAP_OK)
        st = tmap_ptx_add_global(m, TMAP_BBV_BASE_SYMBOL,
                                 ".visible .global .align 8 .u64 " TMAP_BBV_BASE_SYMBOL ";\n"
                                 ".visible .global .align 4 .u32 " TMAP_BBV_STRIDE_SYMBOL
                                 " = 1;\n", err);
    tmap_bbv_plan_free(&plan);
    free(at);
    tmap_cfg_free(cfg);
    if (st != TMAP_OK || !cfg_out)
        tmap_cfg_free(named);
    else
        *cfg_out = named;
    return st;
}

tmap_status tmap_bbv_instrument(tmap_ptx_module *m, const char *kernel, tmap_cfg **cfg_out,
                                tmap_error *err)
{
    return tmap_bbv_instrument_budget(m, kernel, TMAP_BBV_REG_BUDGET, cfg_out, err);
}

/*
 * bbv_pass.c -- the per-thread basic-block counter pass.
 *
 * Each instrumented function gets its own registers (%tmap_*), a preamble
 * at the top of its body that computes the thread's counter pointer p and
 * the row stride, and at the start of each block b an increment of the u32
 * at p + b*stride, guarded by the "this thread block is sampled" predicate.
 * The increment is `red.global.add.u32`: each counter has exactly one writer
 * (its thread), so there is no contention and the result equals a plain
 * load/add/store; unlike the load, `red` does not make the thread wait, which
 * measured 3x faster in tight loops (benchmarks/results/overhead-*.md).
 * The counters' base and the sampling period are module-scope .global
 * variables, so the kernel's parameters are untouched.
 */
#include "instrument/ptx.h"

#include <stdlib.h>
#include <string.h>

static const char decls_text[] =
    ".reg .pred %tmap_on, %tmap_ps;\n"
    ".reg .b32 %tmap_r<7>;\n"
    ".reg .b64 %tmap_rd<13>;\n"
    ".reg .b64 %tmap_p, %tmap_stride, %tmap_a;\n";

/* Linear id over a 3-D index (x, y, z) with extents (nx, ny, nz) and the
 * product of the extents, both in 64 bits:
 *   lin = x + nx*(y + ny*z),  total = nx*ny*nz. */
static void emit_linear(tmap_buf *b, const char *idx, const char *ext, int lin, int total)
{
    static const char *const axis[] = {"x", "y", "z"};
    for (int k = 0; k < 3; k++)
        tmap_buf_printf(b, "mov.u32 %%tmap_r%d, %%%s.%s;\n", k, idx, axis[k]);
    for (int k = 0; k < 3; k++)
        tmap_buf_printf(b, "mov.u32 %%tmap_r%d, %%%s.%s;\n", 3 + k, ext, axis[k]);
    for (int k = 0; k < 6; k++)
        tmap_buf_printf(b, "cvt.u64.u32 %%tmap_rd%d, %%tmap_r%d;\n", k, k);
    tmap_buf_printf(b,
                    "mad.lo.u64 %%tmap_rd%d, %%tmap_rd4, %%tmap_rd2, %%tmap_rd1;\n"
                    "mad.lo.u64 %%tmap_rd%d, %%tmap_rd3, %%tmap_rd%d, %%tmap_rd0;\n"
                    "mul.lo.u64 %%tmap_rd%d, %%tmap_rd3, %%tmap_rd4;\n"
                    "mul.lo.u64 %%tmap_rd%d, %%tmap_rd%d, %%tmap_rd5;\n",
                    lin, lin, lin, total, total, total);
}

/* rd6 = ctaid_lin, rd7 = nctaid_total, rd8 = tid_lin, rd9 = tpb,
 * rd10 = sample (>= 1); then on, p and stride.  The 64-bit divisions only
 * run when sampling (ps: sample > 1); without it, on is true and the slot
 * is the linear global thread id. */
static void emit_preamble(tmap_buf *b)
{
    emit_linear(b, "ctaid", "nctaid", 6, 7);
    emit_linear(b, "tid", "ntid", 8, 9);
    tmap_buf_puts(b,
                  "ld.global.u32 %tmap_r6, [" TMAP_BBV_STRIDE_SYMBOL "];\n"
                  "max.u32 %tmap_r6, %tmap_r6, 1;\n"
                  "cvt.u64.u32 %tmap_rd10, %tmap_r6;\n"
                  "setp.ne.u32 %tmap_ps, %tmap_r6, 1;\n"
                  "mov.u64 %tmap_rd11, 0;\n"
                  "@%tmap_ps rem.u64 %tmap_rd11, %tmap_rd6, %tmap_rd10;\n"
                  "setp.eq.u64 %tmap_on, %tmap_rd11, 0;\n"
                  "@%tmap_ps div.u64 %tmap_rd6, %tmap_rd6, %tmap_rd10;\n"
                  "@%tmap_ps add.u64 %tmap_rd7, %tmap_rd7, %tmap_rd10;\n"
                  "@%tmap_ps sub.u64 %tmap_rd7, %tmap_rd7, 1;\n"
                  "@%tmap_ps div.u64 %tmap_rd7, %tmap_rd7, %tmap_rd10;\n"
                  "mad.lo.u64 %tmap_rd6, %tmap_rd6, %tmap_rd9, %tmap_rd8;\n"
                  "mul.lo.u64 %tmap_rd7, %tmap_rd7, %tmap_rd9;\n"
                  "shl.b64 %tmap_stride, %tmap_rd7, 2;\n"
                  "ld.global.u64 %tmap_rd12, [" TMAP_BBV_BASE_SYMBOL "];\n"
                  "shl.b64 %tmap_rd6, %tmap_rd6, 2;\n"
                  "add.u64 %tmap_p, %tmap_rd12, %tmap_rd6;\n");
}

static void emit_counter(tmap_buf *b, size_t block)
{
    tmap_buf_printf(b,
                    "@%%tmap_on mad.lo.u64 %%tmap_a, %%tmap_stride, %zu, %%tmap_p;\n"
                    "@%%tmap_on red.global.add.u32 [%%tmap_a], 1;\n",
                    block);
}

/* A RAW statement holding b's text (copied into the arena); b is freed. */
static int raw_stmt(tmap_ptx_module *m, tmap_buf *b, tmap_ptx_stmt *s)
{
    memset(s, 0, sizeof *s);
    s->kind = TMAP_ST_RAW;
    s->text = b->oom || !b->data ? NULL : tmap_arena_strndup(&m->arena, b->data, b->len);
    tmap_buf_free(b);
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

/* Rewrites f's body: declarations and preamble first, then block
 * first..first+n's counters at at[first..first+n) (non-decreasing). */
static tmap_status rewrite_func(tmap_ptx_module *m, tmap_ptx_func *f, const tmap_cfg_func *cf,
                                const uint32_t *at, tmap_error *err)
{
    size_t n = f->nbody + 2 + cf->nblocks;
    tmap_ptx_stmt *body = malloc(n * sizeof *body);
    if (!body)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory instrumenting", m->file);
    size_t k = 0, blk = cf->first_block, end = cf->first_block + cf->nblocks;
    tmap_buf b = {0};
    tmap_buf_puts(&b, decls_text);
    int bad = raw_stmt(m, &b, &body[k++]);
    emit_preamble(&b);
    bad |= raw_stmt(m, &b, &body[k++]);
    for (size_t i = 0; i <= f->nbody; i++) {
        for (; blk < end && at[blk] == i; blk++) {
            emit_counter(&b, blk);
            bad |= raw_stmt(m, &b, &body[k++]);
        }
        if (i < f->nbody)
            body[k++] = f->body[i];
    }
    if (bad || blk != end) {
        free(body);
        return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory instrumenting", m->file)
                   : tmap_fail(err, TMAP_ERR_INVALID, "%s: CFG does not match function %s",
                               m->file, f->name);
    }
    free(f->body);
    f->body = body;
    f->nbody = k;
    f->capbody = n;
    f->instrumented = 1;
    return TMAP_OK;
}

static int module_has_globals(const tmap_ptx_module *m)
{
    for (size_t i = 0; i < m->nitems; i++) {
        const tmap_ptx_item *it = &m->items[i];
        if (it->kind == TMAP_IT_RAW && strstr(it->text, TMAP_BBV_BASE_SYMBOL))
            return 1;
        for (uint32_t k = 0; it->kind == TMAP_IT_DECL && k < it->ntoks; k++)
            if (!strcmp(it->toks[k].text, TMAP_BBV_BASE_SYMBOL))
                return 1;
    }
    return 0;
}

/* Adds the two .global variables after .version/.target/.address_size. */
static tmap_status add_globals(tmap_ptx_module *m, tmap_error *err)
{
    if (module_has_globals(m))
        return TMAP_OK;
    size_t pos = 0;
    while (pos < m->nitems &&
           (m->items[pos].kind == TMAP_IT_VERSION ||
            (m->items[pos].kind == TMAP_IT_LINE &&
             strcmp(m->items[pos].toks[0].text, ".file"))))
        pos++;
    const char *text = ".visible .global .align 8 .u64 " TMAP_BBV_BASE_SYMBOL ";\n"
                       ".visible .global .align 4 .u32 " TMAP_BBV_STRIDE_SYMBOL " = 1;\n";
    tmap_ptx_item it = {0};
    it.kind = TMAP_IT_RAW;
    it.text = tmap_arena_strndup(&m->arena, text, strlen(text));
    if (!it.text || tmap_grow(&m->items, &m->capitems, m->nitems + 1, sizeof *m->items))
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory instrumenting", m->file);
    memmove(&m->items[pos + 1], &m->items[pos], (m->nitems - pos) * sizeof *m->items);
    m->items[pos] = it;
    m->nitems++;
    return TMAP_OK;
}

tmap_status tmap_bbv_instrument(tmap_ptx_module *m, const char *kernel, tmap_cfg **cfg_out,
                                tmap_error *err)
{
    if (cfg_out)
        *cfg_out = NULL;
    tmap_cfg *cfg = NULL;
    uint32_t *at = NULL;
    tmap_status st = tmap_cfg_build_at(m, kernel, &cfg, &at, err);
    if (st != TMAP_OK)
        return st;
    for (size_t i = 0; i < cfg->nfuncs && st == TMAP_OK; i++) {
        tmap_ptx_func *f = tmap_ptx_find_func(m, cfg->funcs[i].name);
        if (already_instrumented(f))
            st = tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                           "%s:%u: %s is already instrumented (a .func shared by two "
                           "kernels can be counted for one kernel only)",
                           m->file, f->line, f->name);
    }
    for (size_t i = 0; i < cfg->nfuncs && st == TMAP_OK; i++)
        st = rewrite_func(m, tmap_ptx_find_func(m, cfg->funcs[i].name), &cfg->funcs[i], at,
                          err);
    if (st == TMAP_OK)
        st = add_globals(m, err);
    free(at);
    if (st != TMAP_OK || !cfg_out)
        tmap_cfg_free(cfg);
    else
        *cfg_out = cfg;
    return st;
}

/*
 * expr_cuda.c -- the CUDA back end of the expression parser (expr.h):
 * bound trees written as one kernel's CUDA C, and that kernel compiled
 * and loaded.  Its users bind the references their own way (a manifest's
 * arrays: manifest_features.c; a launch's arguments: attach/key.c).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/expr.h"
#include "common/base.h"

#define STR(x) #x
#define XSTR(x) STR(x)

/* v as a C double literal that reads back as v ("C" locale): a whole
 * number gets ".0", so that 1/2 divides doubles as the host does. */
static void number(tmap_buf *out, double v)
{
    char s[32];
    snprintf(s, sizeof s, "%.17g", v);
    tmap_buf_printf(out, "%s%s", s, strpbrk(s, ".e") ? "" : ".0");
}

/* Node i of x as CUDA C: the tree's own shape, every operand a double, so
 * C's precedence and left-to-right + - * / give the host evaluator's
 * value. */
static void emit(const tmap_expr *x, size_t i, const tmap_elem *slot, size_t nslots,
                 tmap_buf *out)
{
    const tmap_expr_node *n = &x->node[i];
    switch (n->kind) {
    case TMAP_EXPR_NUM:
        number(out, n->num);
        break;
    case TMAP_EXPR_REF:
        assert(n->id >= 0 && (size_t)n->id < nslots);
        tmap_buf_printf(out, "ld<%s>(p%ld, (long long)t + %ldLL, lo%ld, hi%ld)",
                        tmap_elem_ctype(slot[n->id]), n->id, n->offset, n->id, n->id);
        break;
    case TMAP_EXPR_NEG:
    case TMAP_EXPR_PAREN:
        tmap_buf_puts(out, n->kind == TMAP_EXPR_NEG ? "-(" : "(");
        emit(x, n->kid, slot, nslots, out);
        tmap_buf_puts(out, ")");
        break;
    default:
        emit(x, n->kid, slot, nslots, out);
        for (size_t j = x->node[n->kid].next; j != TMAP_EXPR_NONE; j = x->node[j].next) {
            tmap_buf_printf(out, " %c ", x->node[j].join);
            emit(x, j, slot, nslots, out);
        }
    }
}

static const char prologue[] =
    "template <typename T>\n"
    "__device__ double ld(const void *p, long long i, long long lo, long long hi)\n"
    "{\n"
    "    return i >= lo && i < hi ? (double)((const T *)p)[i] : 0.0;\n"
    "}\n\n"
    "/* Thread t's row v[0..P) to out[t * P...], called by every thread of the\n"
    " * block.  On the GPU the block's rows are staged in shared memory and\n"
    " * written out coalesced: written directly, a warp's stores would stride\n"
    " * P * 8 bytes.  The stride S is odd: at most 2-way bank conflicts. */\n"
    "template <int P>\n"
    "__device__ void store_rows(double *out, unsigned long long n, unsigned long long t,\n"
    "                           const double *v)\n"
    "{\n"
    "#ifdef __CUDA_ARCH__\n"
    "    if constexpr (P <= " XSTR(TMAP_EXPR_CUDA_STAGED) ") {\n"
    "        constexpr int S = P | 1;\n"
    "        __shared__ double tile[" XSTR(TMAP_EXPR_CUDA_BLOCK) " * S];\n"
    "        unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x;\n"
    "        unsigned long long rows = n - first < blockDim.x ? n - first : blockDim.x;\n"
    "        for (int j = 0; j < P; j++)\n"
    "            tile[threadIdx.x * S + j] = v[j];\n"
    "        __syncthreads();\n"
    "        for (unsigned long long i = threadIdx.x; i < rows * P; i += blockDim.x)\n"
    "            out[first * P + i] = tile[i / P * S + i % P];\n"
    "        return;\n"
    "    }\n"
    "#endif\n"
    "    if (t < n)\n"
    "        for (int j = 0; j < P; j++)\n"
    "            out[t * P + j] = v[j];\n"
    "}\n\n";

tmap_status tmap_expr_cuda_source(const tmap_expr *x, size_t nexprs, const tmap_elem *slot,
                                  size_t nslots, const char *name, char **source,
                                  tmap_error *err)
{
    *source = NULL;
    if (!nexprs || nslots > TMAP_EXPR_CUDA_MAX_SLOTS)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu expressions over %zu arrays (at most "
                         "%d)", name, nexprs, nslots, TMAP_EXPR_CUDA_MAX_SLOTS);
    tmap_buf src = {0};
    locale_t old = tmap_locale_c();
    tmap_buf_printf(&src, "%sextern \"C\" __global__ void __launch_bounds__(%d)\n%s(double *out, "
                    "unsigned long long n", prologue, TMAP_EXPR_CUDA_BLOCK, name);
    for (size_t i = 0; i < nslots; i++)
        tmap_buf_printf(&src, ",\n    const void *p%zu, long long lo%zu, long long hi%zu", i, i, i);
    tmap_buf_printf(&src, ")\n{\n    unsigned long long t = (unsigned long long)blockIdx.x * "
                    "blockDim.x + threadIdx.x;\n    double v[%zu] = {};\n    if (t < n) {\n",
                    nexprs);
    for (size_t j = 0; j < nexprs; j++) {
        assert(x[j].root < x[j].n);
        tmap_buf_printf(&src, "        v[%zu] = (double)(", j);
        emit(&x[j], x[j].root, slot, nslots, &src);
        tmap_buf_puts(&src, ");\n");
    }
    tmap_buf_printf(&src, "    }\n    store_rows<%zu>(out, n, t, v);\n}\n", nexprs);
    tmap_locale_restore(old);
    if (src.oom) {
        tmap_buf_free(&src);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for the source of %s", name);
    }
    *source = src.data;
    return TMAP_OK;
}

tmap_status tmap_expr_cuda_compile(const char *source, const char *what, tmap_compiled *out,
                                   tmap_error *err)
{
    /* no contraction into fma: each + - * / rounds as the host's does */
    const char *options[] = {"--fmad=false", "-std=c++17"};
    tmap_compile_opts o = {.arch = "compute_75", .options = options, .noptions = 2};
    return tmap_compile(source, what, &o, out, err);
}

tmap_status tmap_expr_cuda_load(tmap_cuda *c, const char *source, const char *name,
                                const char *what, tmap_kernel **out, tmap_error *err)
{
    tmap_compiled ptx;
    *out = NULL;
    tmap_status st = tmap_expr_cuda_compile(source, what, &ptx, err);
    if (st != TMAP_OK)
        return st;
    st = tmap_kernel_load(c, ptx.ptx, name, out, err);
    tmap_compiled_free(&ptx);
    return st;
}

tmap_status tmap_expr_cuda_launch(tmap_kernel *k, tmap_expr_cuda_args *a, void *stream,
                                  tmap_error *err)
{
    assert(a->nslots <= TMAP_EXPR_CUDA_MAX_SLOTS);
    if (!a->n)
        return TMAP_OK;
    a->argv[0] = &a->out;
    a->argv[1] = &a->n;
    for (size_t s = 0; s < a->nslots; s++) {
        a->argv[2 + 3 * s] = &a->p[s];
        a->argv[3 + 3 * s] = &a->lo[s];
        a->argv[4 + 3 * s] = &a->hi[s];
    }
    uint64_t blocks = (a->n + TMAP_EXPR_CUDA_BLOCK - 1) / TMAP_EXPR_CUDA_BLOCK;
    tmap_launch l = {.grid = {(unsigned)blocks, 1, 1}, .block = {TMAP_EXPR_CUDA_BLOCK, 1, 1},
                     .args = a->argv, .nargs = 2 + 3 * a->nslots};
    return tmap_kernel_enqueue(k, &l, stream, err);
}

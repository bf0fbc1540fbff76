/*
 * layout.c -- the layout transform: per-thread arrays gathered by the
 * permutation D on the GPU before the unmodified kernel runs, outputs
 * scattered back after it, so the caller sees unregrouped results.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/cuda.h"

/* Moves rows of `words` 32-bit words: gather dst[i] = src[D[i]], scatter
 * dst[D[i]] = src[i]; rows of other sizes move byte by byte. */
static const char move_source[] =
    "template <typename W, bool GATHER>\n"
    "__device__ void move(W *dst, const W *src, const unsigned *perm,\n"
    "                     unsigned long long n, unsigned long long row) {\n"
    "  unsigned long long total = n * row;\n"
    "  for (unsigned long long e = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       e < total; e += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "    unsigned long long slot = e / row, j = e - slot * row;\n"
    "    unsigned long long from = (unsigned long long)perm[slot] * row + j;\n"
    "    if (GATHER) dst[e] = src[from]; else dst[from] = src[e];\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void tmap_gather(void *d, const void *s, const unsigned *p,\n"
    "    unsigned long long n, unsigned long long bytes) {\n"
    "  if (bytes % 4 == 0) move<unsigned, true>((unsigned *)d, (const unsigned *)s, p, n, bytes / 4);\n"
    "  else move<unsigned char, true>((unsigned char *)d, (const unsigned char *)s, p, n, bytes);\n"
    "}\n"
    "extern \"C\" __global__ void tmap_scatter(void *d, const void *s, const unsigned *p,\n"
    "    unsigned long long n, unsigned long long bytes) {\n"
    "  if (bytes % 4 == 0) move<unsigned, false>((unsigned *)d, (const unsigned *)s, p, n, bytes / 4);\n"
    "  else move<unsigned char, false>((unsigned char *)d, (const unsigned char *)s, p, n, bytes);\n"
    "}\n";

static tmap_status load_movers(tmap_cuda *c, tmap_error *err)
{
    if (c->move[0])
        return TMAP_OK;
    tmap_compile_opts o = {.arch = "compute_75"};
    tmap_compiled out;
    tmap_status st = tmap_compile(move_source, "threadmap-layout.cu", &o, &out, err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(c, out.ptx, "tmap_gather", &c->move[0], err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(c, out.ptx, "tmap_scatter", &c->move[1], err);
    tmap_compiled_free(&out);
    return st;
}

static tmap_status move(tmap_cuda *c, int scatter, uint64_t dst, uint64_t src, uint64_t perm,
                        unsigned long long n, unsigned long long row_bytes, tmap_error *err)
{
    void *args[] = {&dst, &src, &perm, &n, &row_bytes};
    unsigned long long units = n * (row_bytes % 4 ? row_bytes : row_bytes / 4);
    unsigned long long blocks = (units + 255) / 256;
    tmap_launch l = {{(unsigned)(blocks > 65535 ? 65535 : blocks ? blocks : 1), 1, 1},
                     {256, 1, 1}, 0, args, 5};
    return tmap_kernel_run(c->move[scatter], &l, err);
}

typedef struct event_clock {
    CUevent e[4];
} event_clock;

static void clock_mark(tmap_cuda *c, event_clock *ec, int i)
{
    if (ec->e[i])
        c->api.event_record(ec->e[i], NULL);
}

static void clock_read(tmap_cuda *c, event_clock *ec, float ms[3])
{
    if (!ms)
        return;
    c->api.event_synchronize(ec->e[3]);
    for (int i = 0; i < 3; i++)
        if (c->api.event_elapsed_time(&ms[i], ec->e[i], ec->e[i + 1]) != CUDA_SUCCESS)
            ms[i] = -1;
}

static tmap_status check_arrays(const tmap_launch *l, const tmap_thread_array *a, size_t n,
                                tmap_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!a[i].elem_size || !a[i].per_thread)
            return tmap_fail(err, TMAP_ERR_INVALID, "thread array %zu: element size and "
                             "elements per thread must be positive", i);
        for (size_t j = 0; j < i; j++)
            if (a[j].arg == a[i].arg)
                return tmap_fail(err, TMAP_ERR_INVALID, "argument %u named twice", a[i].arg);
        if (!l->args || a[i].arg >= l->nargs || !l->args[a[i].arg])
            return tmap_fail(err, TMAP_ERR_INVALID, "thread array %zu: argument %u is not "
                             "among the launch's %zu arguments", i, a[i].arg, l->nargs);
    }
    return TMAP_OK;
}

tmap_status tmap_layout_launch(tmap_cuda *c, tmap_kernel *k, const tmap_launch *l,
                               uint64_t perm, const tmap_thread_array *arrays, size_t narrays,
                               float ms[3], tmap_error *err)
{
    uint64_t n = tmap_launch_threads(l);
    tmap_status st = check_arrays(l, arrays, narrays, err);
    if (st == TMAP_OK)
        st = load_movers(c, err);
    if (st != TMAP_OK)
        return st;
    /* args: the caller's, with each moved array's pointer swapped for its copy */
    uint64_t *copy = calloc(narrays + 1, sizeof *copy), *orig = calloc(narrays + 1, sizeof *orig);
    void **args = calloc(l->nargs + 1, sizeof *args);
    if (!copy || !orig || !args) {
        free(copy), free(orig), free(args);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    memcpy(args, l->args, l->nargs * sizeof *args);
    event_clock ec = {{0}};
    for (int i = 0; ms && i < 4; i++)
        if (c->api.event_create(&ec.e[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS)
            ec.e[i] = NULL;
    clock_mark(c, &ec, 0);
    for (size_t i = 0; st == TMAP_OK && i < narrays; i++) {
        const tmap_thread_array *a = &arrays[i];
        size_t row = a->elem_size * a->per_thread;
        memcpy(&orig[i], l->args[a->arg], sizeof orig[i]);
        if (!a->input && !a->output)
            continue;
        st = tmap_cuda_alloc(c, row * n, &copy[i], err);
        if (st == TMAP_OK && a->input)
            st = move(c, 0, copy[i], orig[i], perm, n, row, err);
        args[a->arg] = &copy[i];
    }
    clock_mark(c, &ec, 1);
    tmap_launch moved = *l;
    moved.args = args;
    if (st == TMAP_OK)
        st = tmap_kernel_run(k, &moved, err);
    clock_mark(c, &ec, 2);
    for (size_t i = 0; st == TMAP_OK && i < narrays; i++)
        if (arrays[i].output)
            st = move(c, 1, orig[i], copy[i], perm, n, arrays[i].elem_size * arrays[i].per_thread,
                      err);
    clock_mark(c, &ec, 3);
    if (st == TMAP_OK && ms && ec.e[3])
        clock_read(c, &ec, ms);
    for (int i = 0; i < 4; i++)
        if (ec.e[i])
            c->api.event_destroy(ec.e[i]);
    for (size_t i = 0; i < narrays; i++)
        tmap_cuda_free(c, copy[i]);
    free(copy), free(orig), free(args);
    return st;
}

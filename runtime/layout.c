/*
 * layout.c -- the layout transform: per-thread arrays gathered by the
 * permutation D on the GPU before the unmodified kernel runs, outputs
 * scattered back after it, so the caller sees unregrouped results.
 *
 * A tmap_layout is made once for a launch's shape and arrays: it holds one
 * pooled device allocation for the copies and a table describing every
 * array.  Applying it is three stream-ordered launches -- one fused gather
 * of all input arrays, the kernel, one fused scatter of all outputs --
 * with no allocation and no synchronization (unless times are asked for).
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/runtime.h"
#include "common/base.h"
#include "runtime/cuda.h"

/* One array to move, as the mover kernels read it (16-byte aligned rows of
 * `units` units of `unit` bytes each: 1, 4, 8 or 16). */
typedef struct mover_desc {
    uint64_t copy;   /* the pooled copy (slot order)        */
    uint64_t orig;   /* the caller's array (thread order)   */
    uint32_t units;  /* units per thread                    */
    uint32_t unit;   /* bytes per unit                      */
    uint32_t gather; /* an input: gathered before the launch */
    uint32_t scatter;/* an output: scattered after it       */
} mover_desc;

/* Gather copy[i] = orig[D[i]] and scatter orig[D[i]] = copy[i], row by row,
 * for every array of the table at once: blockIdx.y picks the array.  Index
 * arithmetic is 32-bit when the array's units fit (the common case). */
static const char move_source[] =
    "struct desc { unsigned long long copy, orig; unsigned units, unit, gather, scatter; };\n"
    "template <typename U, bool GATHER>\n"
    "__device__ void move(const desc &a, const unsigned *perm, unsigned n) {\n"
    "  U *copy = (U *)a.copy, *orig = (U *)a.orig;\n"
    "  unsigned long long total = (unsigned long long)n * a.units;\n"
    "  unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  for (unsigned long long e = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       e < total; e += step) {\n"
    "    unsigned long long slot, j;\n"
    "    if (a.units == 1) { slot = e; j = 0; }\n"
    "    else if (total <= 0xffffffffull) { slot = (unsigned)e / a.units; j = (unsigned)e - (unsigned)slot * a.units; }\n"
    "    else { slot = e / a.units; j = e - slot * a.units; }\n"
    "    unsigned long long from = (unsigned long long)perm[slot] * a.units + j;\n"
    "    if (GATHER) copy[e] = orig[from]; else orig[from] = copy[e];\n"
    "  }\n"
    "}\n"
    "template <bool GATHER>\n"
    "__device__ void move_any(const desc &a, const unsigned *perm, unsigned n) {\n"
    "  if (GATHER ? !a.gather : !a.scatter) return;\n"
    "  switch (a.unit) {\n"
    "  case 16: move<uint4, GATHER>(a, perm, n); break;\n"
    "  case 8: move<uint2, GATHER>(a, perm, n); break;\n"
    "  case 4: move<unsigned, GATHER>(a, perm, n); break;\n"
    "  default: move<unsigned char, GATHER>(a, perm, n); break;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void tmap_gather_all(const desc *t, const unsigned *perm, unsigned n) {\n"
    "  move_any<true>(t[blockIdx.y], perm, n);\n"
    "}\n"
    "extern \"C\" __global__ void tmap_scatter_all(const desc *t, const unsigned *perm, unsigned n) {\n"
    "  move_any<false>(t[blockIdx.y], perm, n);\n"
    "}\n";

struct tmap_layout {
    tmap_cuda *cuda;
    uint64_t pool;        /* every copy, 256-byte aligned each */
    uint64_t table;       /* mover_desc[narrays] on the device */
    mover_desc *host;     /* the same table on the host */
    size_t narrays;
    unsigned *args_index; /* launch argument of each array */
    uint64_t *copy_ptr;   /* argument values pointing at the copies */
    uint64_t nthreads;
    uint64_t max_units;   /* the largest array's units: the movers' grid */
    int any_gather, any_scatter;
};

static tmap_status load_movers(tmap_cuda *c, tmap_error *err)
{
    if (c->move[0])
        return TMAP_OK;
    tmap_compile_opts o = {.arch = "compute_75"};
    tmap_compiled out;
    tmap_status st = tmap_compile(move_source, "<CUDA source of threadmap's layout kernels>", &o, &out, err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(c, out.ptx, "tmap_gather_all", &c->move[0], err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(c, out.ptx, "tmap_scatter_all", &c->move[1], err);
    tmap_compiled_free(&out);
    return st;
}

static tmap_status check_arrays(const tmap_launch *l, const tmap_thread_array *a, size_t n,
                                tmap_error *err)
{
    if (!l || (n && !a))
        return tmap_fail(err, TMAP_ERR_INVALID, "layout: the launch or its arrays are NULL");
    if (tmap_launch_threads(l) > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "layout: %llu threads: a permutation "
                         "holds at most 2^32-1", (unsigned long long)tmap_launch_threads(l));
    for (size_t i = 0; i < n; i++) {
        if (!a[i].elem_size || !a[i].per_thread)
            return tmap_fail(err, TMAP_ERR_INVALID, "thread array %zu: element size and "
                             "elements per thread must be positive", i);
        if (a[i].elem_size > SIZE_MAX / a[i].per_thread / UINT32_MAX)
            return tmap_fail(err, TMAP_ERR_INVALID, "thread array %zu: rows too large", i);
        for (size_t j = 0; j < i; j++)
            if (a[j].arg == a[i].arg)
                return tmap_fail(err, TMAP_ERR_INVALID, "argument %u named twice", a[i].arg);
        if (!l->args || a[i].arg >= l->nargs || !l->args[a[i].arg])
            return tmap_fail(err, TMAP_ERR_INVALID, "thread array %zu: argument %u is not "
                             "among the launch's %zu arguments", i, a[i].arg, l->nargs);
    }
    return TMAP_OK;
}

/* The widest unit (16, 8, 4 or 1 bytes) that divides a row; the pool's
 * copies are 256-byte aligned, so only the caller's array can lower it. */
static uint32_t row_unit(size_t row)
{
    return row % 16 == 0 ? 16 : row % 8 == 0 ? 8 : row % 4 == 0 ? 4 : 1;
}

/* Fills the host table and sizes the pool: copies at 256-byte offsets. */
static size_t plan_table(tmap_layout *y, const tmap_launch *l, const tmap_thread_array *a)
{
    size_t bytes = 0;
    for (size_t i = 0; i < y->narrays; i++) {
        size_t row = a[i].elem_size * a[i].per_thread;
        mover_desc *d = &y->host[i];
        memcpy(&d->orig, l->args[a[i].arg], sizeof d->orig);
        d->unit = row_unit(row);
        while (d->orig % d->unit)  /* the caller's array may be less aligned */
            d->unit = d->unit == 16 ? 8 : d->unit == 8 ? 4 : 1;
        d->units = (uint32_t)(row / d->unit);
        d->gather = a[i].input != 0;
        d->scatter = a[i].output != 0;
        d->copy = bytes; /* an offset until the pool exists */
        y->args_index[i] = a[i].arg;
        if (d->gather || d->scatter)
            bytes += (row * y->nthreads + 255) / 256 * 256;
        if (d->units * y->nthreads > y->max_units)
            y->max_units = d->units * y->nthreads;
        y->any_gather |= d->gather;
        y->any_scatter |= d->scatter;
    }
    return bytes;
}

tmap_status tmap_layout_create(tmap_cuda *c, const tmap_launch *l,
                               const tmap_thread_array *arrays, size_t narrays,
                               tmap_layout **out, tmap_error *err)
{
    if (!c || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_layout_create: %s is NULL",
                         c ? "out" : "the CUDA handle");
    *out = NULL;
    tmap_status st = check_arrays(l, arrays, narrays, err);
    if (st == TMAP_OK)
        st = load_movers(c, err);
    if (st != TMAP_OK)
        return st;
    tmap_layout *y = calloc(1, sizeof *y);
    if (y) {
        y->host = calloc(narrays + 1, sizeof *y->host);
        y->args_index = calloc(narrays + 1, sizeof *y->args_index);
        y->copy_ptr = calloc(narrays + 1, sizeof *y->copy_ptr);
    }
    if (!y || !y->host || !y->args_index || !y->copy_ptr) {
        tmap_layout_free(y);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    y->cuda = c;
    y->narrays = narrays;
    y->nthreads = tmap_launch_threads(l);
    size_t bytes = plan_table(y, l, arrays);
    st = tmap_cuda_alloc(c, bytes ? bytes : 256, &y->pool, err);
    for (size_t i = 0; st == TMAP_OK && i < narrays; i++) {
        mover_desc *d = &y->host[i];
        d->copy += y->pool;
        y->copy_ptr[i] = d->gather || d->scatter ? d->copy : d->orig;
    }
    if (st == TMAP_OK)
        st = tmap_cuda_alloc(c, (narrays ? narrays : 1) * sizeof *y->host, &y->table, err);
    if (st == TMAP_OK && narrays)
        st = tmap_cuda_upload(c, y->table, y->host, narrays * sizeof *y->host, err);
    if (st != TMAP_OK) {
        tmap_layout_free(y);
        return st;
    }
    *out = y;
    return TMAP_OK;
}

void tmap_layout_free(tmap_layout *y)
{
    if (!y)
        return;
    if (y->cuda) {
        tmap_cuda_free(y->cuda, y->pool);
        tmap_cuda_free(y->cuda, y->table);
    }
    free(y->host);
    free(y->args_index);
    free(y->copy_ptr);
    free(y);
}

/* One fused mover launch: x covers the largest array, y the arrays. */
static tmap_status move_all(tmap_layout *y, int scatter, uint64_t perm, void *stream,
                            tmap_error *err)
{
    uint32_t n = (uint32_t)y->nthreads;
    void *args[] = {&y->table, &perm, &n};
    uint64_t blocks = (y->max_units + 255) / 256;
    tmap_launch l = {{(unsigned)(blocks > 8192 ? 8192 : blocks ? blocks : 1),
                      (unsigned)y->narrays, 1},
                     {256, 1, 1}, 0, args, 3};
    return tmap_kernel_enqueue(y->cuda->move[scatter], &l, stream, err);
}

/* CUDA events around the three steps, when times are asked for. */
typedef struct event_clock {
    CUevent e[4];
} event_clock;

static void clock_open(tmap_cuda *c, event_clock *ec, int want)
{
    memset(ec, 0, sizeof *ec);
    for (int i = 0; want && i < 4; i++)
        if (c->api.event_create(&ec->e[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS)
            ec->e[i] = NULL;
}

static void clock_mark(tmap_cuda *c, event_clock *ec, int i, void *stream)
{
    if (ec->e[i])
        c->api.event_record(ec->e[i], (CUstream)stream);
}

static tmap_status clock_close(tmap_cuda *c, event_clock *ec, float ms[3], tmap_error *err)
{
    tmap_status st = TMAP_OK;
    if (ms && ec->e[3]) {
        st = tmap_cuda_check(c, c->api.event_synchronize(ec->e[3]), "cuEventSynchronize", err);
        for (int i = 0; i < 3; i++)
            if (st || c->api.event_elapsed_time(&ms[i], ec->e[i], ec->e[i + 1]) != CUDA_SUCCESS)
                ms[i] = -1;
    }
    for (int i = 0; i < 4; i++)
        if (ec->e[i])
            c->api.event_destroy(ec->e[i]);
    return st;
}

tmap_status tmap_layout_gather(tmap_layout *y, uint64_t perm, void *stream, tmap_error *err)
{
    if (!y || !perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_layout_gather: an argument is NULL");
    return y->any_gather ? move_all(y, 0, perm, stream, err) : TMAP_OK;
}

tmap_status tmap_layout_scatter(tmap_layout *y, uint64_t perm, void *stream, tmap_error *err)
{
    if (!y || !perm)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_layout_scatter: an argument is NULL");
    return y->any_scatter ? move_all(y, 1, perm, stream, err) : TMAP_OK;
}

uint64_t tmap_layout_copy_ptr(const tmap_layout *y, size_t i)
{
    return y && i < y->narrays ? y->copy_ptr[i] : 0;
}

tmap_status tmap_layout_apply(tmap_layout *y, tmap_kernel *k, const tmap_launch *l,
                              uint64_t perm, void *stream, float ms[3], tmap_error *err)
{
    if (!y || !k || !l)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_layout_apply: an argument is NULL");
    if (tmap_launch_threads(l) != y->nthreads)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_layout_apply: the launch has %llu "
                         "threads, the layout was made for %llu",
                         (unsigned long long)tmap_launch_threads(l),
                         (unsigned long long)y->nthreads);
    void *argv[64], **args = l->nargs <= 64 ? argv : calloc(l->nargs, sizeof *args);
    if (!args)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    memcpy(args, l->args, l->nargs * sizeof *args);
    for (size_t i = 0; i < y->narrays; i++)
        args[y->args_index[i]] = &y->copy_ptr[i];
    tmap_launch moved = *l;
    moved.args = args;
    event_clock ec;
    clock_open(y->cuda, &ec, ms != NULL);
    clock_mark(y->cuda, &ec, 0, stream);
    tmap_status st = tmap_layout_gather(y, perm, stream, err);
    clock_mark(y->cuda, &ec, 1, stream);
    if (st == TMAP_OK)
        st = tmap_kernel_enqueue(k, &moved, stream, err);
    clock_mark(y->cuda, &ec, 2, stream);
    if (st == TMAP_OK)
        st = tmap_layout_scatter(y, perm, stream, err);
    clock_mark(y->cuda, &ec, 3, stream);
    tmap_status ct = clock_close(y->cuda, &ec, st == TMAP_OK ? ms : NULL, err);
    if (args != argv)
        free(args);
    return st ? st : ct;
}

tmap_status tmap_layout_launch(tmap_cuda *c, tmap_kernel *k, const tmap_launch *l,
                               uint64_t perm, const tmap_thread_array *arrays, size_t narrays,
                               float ms[3], tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, k, l, ms);
    if (absent)
        return absent;
    tmap_layout *y;
    tmap_status st = tmap_layout_create(c, l, arrays, narrays, &y, err);
    if (st == TMAP_OK)
        st = tmap_layout_apply(y, k, l, perm, NULL, ms, err);
    if (st == TMAP_OK)
        st = tmap_cuda_check(c, c->api.ctx_synchronize(), "cuCtxSynchronize", err);
    tmap_layout_free(y);
    return st;
}

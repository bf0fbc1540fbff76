/*
 * bench_memirr_apps.h -- the inputs and CPU references of bench_memirr_apps
 * (issue 19's kernels), shared with tests/test_memirr_apps.c.  Each app is
 * one irregular reference A[P[t*k + j]] (tmap_memref) plus what its kernel
 * reads besides; mi_cpu_run runs the kernel on the CPU through a layout
 * (slot s runs thread perm[s] and reads A'[Q[...]]), so every layout can
 * be checked against the original bit for bit.  Generators are seeded:
 *   md    -- Lennard-Jones forces over neighbour lists: particles uniform in
 *            a box (density 0.8), neighbours within 2.0 by a cell list,
 *            padded to the longest list with the particle itself; A: the
 *            positions (float4), k: the longest list; locality: Morton;
 *   bfs   -- one BFS level step, edge-parallel, on a Kronecker graph as the
 *            Graph500 generator defines it (initiator 0.57/0.19/0.19/0.05,
 *            edge factor 16, vertex labels and edge order permuted, edges
 *            taken both ways, sorted by destination); A: the levels (int),
 *            thread e reads level[src[e]]; locality: reverse Cuthill-McKee;
 *   spmv  -- SpMV on power-law rows (lengths Pareto, exponent 2.5, at least
 *            4, columns uniform), one thread per nonzero (COO by row):
 *            thread e reads x[col[e]] and adds val[e] x to y[row[e]]; the
 *            matrix is symmetric and diagonally dominant, so CG runs on it;
 *            locality: reverse Cuthill-McKee;
 *   stencil -- the spmv kernel on the 7-point Laplacian of an N^3 grid
 *            (diagonal 6, off-diagonals -1: SPD) under a random symmetric
 *            permutation of its rows and columns; locality: RCM.
 * Each item (particle, edge, row) draws from its own stream (mi_stream),
 * so the generators run on every CPU (mi_parallel) and give the same input
 * for any number of threads.  The locality order is mi_app_order's (not
 * made by the generators: the benchmark times it as part of that layout's
 * build).
 */
#ifndef TMAP_BENCHMARKS_BENCH_MEMIRR_APPS_H
#define TMAP_BENCHMARKS_BENCH_MEMIRR_APPS_H

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "threadmap/regroup.h"

#define MI_NONE UINT32_MAX /* an unreached vertex */

/* splitmix64 */
static inline uint64_t mi_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline double mi_unif(uint64_t *s) { return (double)(mi_rand(s) >> 11) * 0x1.0p-53; }
/* The start of item i's own stream under seed (a hashed point of the
 * splitmix sequence: items' draws do not depend on each other). */
static inline uint64_t mi_stream(uint64_t seed, uint64_t i)
{
    uint64_t s = seed * 0xd1342543de82ef95ull + i;
    return mi_rand(&s);
}

typedef void (*mi_range_fn)(void *ctx, size_t lo, size_t hi);
typedef struct mi_piece {
    mi_range_fn fn;
    void *ctx;
    size_t lo, hi;
} mi_piece;

static inline void *mi_piece_run(void *p)
{
    mi_piece *x = p;
    x->fn(x->ctx, x->lo, x->hi);
    return NULL;
}

/* fn over [0, n) in contiguous pieces, one thread each (the online CPUs,
 * at most 64; one below 2^16 items); pieces must not depend on each
 * other.  A thread that cannot start runs its piece here. */
static inline void mi_parallel(size_t n, mi_range_fn fn, void *ctx)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = n < 65536 || cpus < 2 ? 1 : cpus > 64 ? 64 : (size_t)cpus;
    pthread_t th[64];
    mi_piece p[64];
    int up[64] = {0};
    for (size_t i = 0; i < t; i++) {
        p[i] = (mi_piece){fn, ctx, n * i / t, n * (i + 1) / t};
        up[i] = i > 0 && !pthread_create(&th[i], NULL, mi_piece_run, &p[i]);
    }
    mi_piece_run(&p[0]);
    for (size_t i = 1; i < t; i++)
        if (up[i])
            pthread_join(th[i], NULL);
        else
            mi_piece_run(&p[i]);
}

typedef enum mi_kind { MI_MD, MI_BFS, MI_SPMV } mi_kind;

typedef struct mi_app {
    mi_kind kind;
    tmap_memref ref;     /* the irregular reference */
    uint32_t *index;     /* P [nthreads * k] */
    void *data;          /* A [nelems * elem_bytes] */
    uint32_t *order;     /* the locality order of A (mi_app_order; NULL before) */
    int permute_threads; /* threads own their element (md): they follow order */
    uint32_t *aux;       /* bfs: dst[e]; spmv: row[e] (both ascending) */
    double *val;         /* spmv: val[e] */
    uint32_t nv;         /* bfs: vertices; spmv: rows */
    uint32_t source;     /* bfs: the root */
} mi_app;

static inline void mi_free(mi_app *a)
{
    free(a->index), free(a->data), free(a->order), free(a->aux), free(a->val);
    memset(a, 0, sizeof *a);
}

/* ------------------------------------------------------------------ md */

#define MI_MD_CUT 2.0f
#define MI_MD_CORE 0.5f /* r^2 below it counts as it: forces stay finite */

/* Particle t's neighbour list into nb (at most cap); returns its length.
 * cp: the positions in cell order (cp[i] is particle cell_items[i]'s), so
 * that a cell's particles are read contiguously. */
static size_t mi_md_cell_neighbours(const float *p, const float *cp, const uint32_t *cell_start,
                                    const uint32_t *cell_items, int nc, uint32_t t,
                                    uint32_t *nb, size_t cap)
{
    const float *me = p + 4 * (size_t)t;
    int cx = (int)(me[0] / MI_MD_CUT), cy = (int)(me[1] / MI_MD_CUT), cz = (int)(me[2] / MI_MD_CUT);
    size_t len = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int x = cx + dx, y = cy + dy, z = cz + dz;
                if (x < 0 || y < 0 || z < 0 || x >= nc || y >= nc || z >= nc)
                    continue;
                size_t c = ((size_t)z * nc + y) * nc + x;
                for (uint32_t i = cell_start[c]; i < cell_start[c + 1]; i++) {
                    uint32_t o = cell_items[i];
                    const float *q = cp + 4 * (size_t)i;
                    float ddx = me[0] - q[0], ddy = me[1] - q[1], ddz = me[2] - q[2];
                    if (o != t && ddx * ddx + ddy * ddy + ddz * ddz < MI_MD_CUT * MI_MD_CUT &&
                        len < cap)
                        nb[len++] = o;
                }
            }
    return len;
}

typedef struct mi_md_ctx {
    float *p, *cp, side;
    uint64_t seed;
    const uint32_t *cell_start, *cell_items;
    int nc;
    uint32_t *len, *index;
    size_t k;
} mi_md_ctx;

enum { MI_MD_CAP = 256 };

static void mi_md_place(void *ctx, size_t lo, size_t hi)
{
    mi_md_ctx *c = ctx;
    for (size_t t = lo; t < hi; t++) {
        uint64_t s = mi_stream(c->seed, t);
        float *q = c->p + 4 * t;
        for (int d = 0; d < 3; d++)
            q[d] = (float)mi_unif(&s) * c->side;
        q[3] = 0;
    }
}

/* len[t] (index NULL), else the lists padded to k with the particle. */
static void mi_md_lists(void *ctx, size_t lo, size_t hi)
{
    mi_md_ctx *c = ctx;
    uint32_t nb[MI_MD_CAP];
    for (size_t t = lo; t < hi; t++) {
        size_t len = mi_md_cell_neighbours(c->p, c->cp, c->cell_start, c->cell_items, c->nc,
                                           (uint32_t)t, nb, MI_MD_CAP);
        if (!c->index)
            c->len[t] = (uint32_t)len;
        for (size_t j = 0; c->index && j < c->k; j++)
            c->index[t * c->k + j] = j < len ? nb[j] : (uint32_t)t;
    }
}

/* n particles; 0 on success. */
static inline int mi_md_make(uint32_t n, uint64_t seed, mi_app *a)
{
    memset(a, 0, sizeof *a);
    float side = cbrtf((float)n / 0.8f);
    int nc = (int)(side / MI_MD_CUT) + 1;
    size_t ncell = (size_t)nc * nc * nc;
    float *p = malloc((size_t)n * 16);
    uint32_t *cell_start = calloc(ncell + 1, 4), *cell_items = malloc((size_t)n * 4);
    uint32_t *fill = calloc(ncell, 4), *cell_of = malloc((size_t)n * 4);
    uint32_t *len = malloc((size_t)n * 4);
    float *cp = malloc((size_t)n * 16);
    int ok = p && cell_start && cell_items && fill && cell_of && len && cp;
    mi_md_ctx c = {p, cp, side, seed, cell_start, cell_items, nc, len, NULL, 0};
    if (ok)
        mi_parallel(n, mi_md_place, &c);
    for (uint32_t t = 0; ok && t < n; t++) {
        const float *q = p + 4 * (size_t)t;
        int cx = (int)(q[0] / MI_MD_CUT), cy = (int)(q[1] / MI_MD_CUT), cz = (int)(q[2] / MI_MD_CUT);
        cell_of[t] = (uint32_t)(((size_t)cz * nc + cy) * nc + cx);
        cell_start[cell_of[t] + 1]++;
    }
    for (size_t i = 0; ok && i < ncell; i++)
        cell_start[i + 1] += cell_start[i];
    for (uint32_t t = 0; ok && t < n; t++) {
        uint32_t i = cell_start[cell_of[t]] + fill[cell_of[t]]++;
        cell_items[i] = t;
        memcpy(cp + 4 * (size_t)i, p + 4 * (size_t)t, 16);
    }
    if (ok)
        mi_parallel(n, mi_md_lists, &c);
    c.k = 1;
    for (uint32_t t = 0; ok && t < n; t++)
        c.k = len[t] > c.k ? len[t] : c.k;
    a->index = c.index = ok ? malloc((size_t)n * c.k * 4) : NULL;
    ok = ok && a->index;
    if (ok)
        mi_parallel(n, mi_md_lists, &c);
    free(cell_start), free(cell_items), free(fill), free(cell_of), free(len), free(cp);
    a->kind = MI_MD, a->data = p, a->permute_threads = 1;
    a->ref = (tmap_memref){.nthreads = n, .per_thread = c.k, .elem_bytes = 16, .nelems = n};
    if (!ok)
        mi_free(a);
    return ok ? 0 : -1;
}

/* Thread t's force from a (float4 A' read through q[k]), own: its position. */
static inline void mi_md_force(const float *a, const uint32_t *q, size_t k, const float *own,
                               float *f)
{
    float fx = 0, fy = 0, fz = 0;
    for (size_t j = 0; j < k; j++) {
        const float *o = a + 4 * (size_t)q[j];
        float dx = own[0] - o[0], dy = own[1] - o[1], dz = own[2] - o[2];
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 == 0.0f || r2 >= MI_MD_CUT * MI_MD_CUT)
            continue;
        r2 = r2 < MI_MD_CORE ? MI_MD_CORE : r2;
        float i2 = 1.0f / r2, i6 = i2 * i2 * i2, s = 24.0f * i2 * i6 * (2.0f * i6 - 1.0f);
        fx += s * dx, fy += s * dy, fz += s * dz;
    }
    f[0] = fx, f[1] = fy, f[2] = fz;
}

/* ----------------------------------------------------------------- bfs */

typedef struct mi_bfs_ctx {
    uint64_t *e; /* dst << 32 | src, both ways */
    const uint32_t *perm;
    unsigned scale;
    uint64_t seed;
} mi_bfs_ctx;

/* Edges [lo, hi): Graph500's Kronecker draws (initiator 0.57, 0.19, 0.19),
 * labels permuted; edge i into e[2i] and its reverse into e[2i + 1]. */
static void mi_bfs_edges(void *ctx, size_t lo, size_t hi)
{
    const mi_bfs_ctx *c = ctx;
    const double A = 0.57, B = 0.19, C = 0.19, ab = A + B, c_norm = C / (1 - ab), a_norm = A / ab;
    for (size_t i = lo; i < hi; i++) {
        uint64_t s = mi_stream(c->seed, i);
        uint32_t u = 0, v = 0;
        for (unsigned b = 0; b < c->scale; b++) {
            int ib = mi_unif(&s) > ab, jb = mi_unif(&s) > (ib ? c_norm : a_norm);
            u |= (uint32_t)ib << b, v |= (uint32_t)jb << b;
        }
        u = c->perm[u], v = c->perm[v];
        c->e[2 * i] = (uint64_t)v << 32 | u, c->e[2 * i + 1] = (uint64_t)u << 32 | v;
    }
}

/* A Kronecker graph of 2^scale vertices and 16 x 2^scale edges (Graph500),
 * each edge both ways, sorted by destination (a counting sort: within a
 * destination, in the order drawn, itself random); 0 on success. */
static inline int mi_bfs_make(unsigned scale, uint64_t seed, mi_app *a)
{
    memset(a, 0, sizeof *a);
    uint32_t nv = 1u << scale;
    size_t m = 16 * (size_t)nv, ne = 2 * m;
    uint32_t *perm = malloc((size_t)nv * 4);
    uint64_t *e = malloc(ne * 8);
    size_t *at = calloc((size_t)nv + 1, sizeof *at);
    a->index = malloc(ne * 4), a->aux = malloc(ne * 4), a->data = malloc((size_t)nv * 4);
    if (!perm || !e || !at || !a->index || !a->aux || !a->data) {
        free(perm), free(e), free(at), mi_free(a);
        return -1;
    }
    uint64_t s = mi_stream(seed, UINT64_MAX);
    for (uint32_t v = 0; v < nv; v++)
        perm[v] = v;
    for (uint32_t v = nv - 1; v > 0; v--) {
        uint32_t w = (uint32_t)(mi_rand(&s) % (v + 1)), t = perm[v];
        perm[v] = perm[w], perm[w] = t;
    }
    mi_bfs_ctx c = {e, perm, scale, seed};
    mi_parallel(m, mi_bfs_edges, &c);
    for (size_t i = 0; i < ne; i++)
        at[(e[i] >> 32) + 1]++;
    for (uint32_t v = 0; v < nv; v++)
        at[v + 1] += at[v];
    for (size_t i = 0; i < ne; i++) {
        size_t x = at[e[i] >> 32]++;
        a->index[x] = (uint32_t)e[i], a->aux[x] = (uint32_t)(e[i] >> 32);
    }
    a->source = a->index[(size_t)(mi_rand(&s) % ne)]; /* an endpoint: it has an edge */
    for (uint32_t v = 0; v < nv; v++) /* A: the levels before the search */
        ((uint32_t *)a->data)[v] = v == a->source ? 0 : MI_NONE;
    a->kind = MI_BFS, a->nv = nv;
    a->ref = (tmap_memref){.nthreads = ne, .per_thread = 1, .elem_bytes = 4, .nelems = nv};
    free(perm), free(e), free(at);
    return 0;
}

/* Levels by a queue BFS from a->source (MI_NONE: unreached); returns the
 * number of levels. */
static inline uint32_t mi_bfs_reference(const mi_app *a, uint32_t *level)
{
    size_t ne = a->ref.nthreads;
    uint32_t *rowptr = calloc((size_t)a->nv + 1, 4), *queue = malloc((size_t)a->nv * 4);
    if (!rowptr || !queue)
        return free(rowptr), free(queue), 0;
    for (size_t i = 0; i < ne; i++) /* in-edges by destination == out-edges by source */
        rowptr[a->aux[i] + 1]++;
    for (uint32_t v = 0; v < a->nv; v++)
        rowptr[v + 1] += rowptr[v], level[v] = MI_NONE;
    uint32_t head = 0, tail = 0, depth = 0;
    level[a->source] = 0, queue[tail++] = a->source;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t i = rowptr[u]; i < rowptr[u + 1]; i++) /* edges into u: (src -> u) */
            if (level[a->index[i]] == MI_NONE)
                level[a->index[i]] = level[u] + 1, queue[tail++] = a->index[i];
        depth = level[u] + 1 > depth ? level[u] + 1 : depth;
    }
    free(rowptr), free(queue);
    return depth;
}

/* ---------------------------------------------------------------- spmv */

/* COO by row from rows of known lengths: the arrays, rowptr [n + 1], x
 * random (item n + r of seed's streams); 0 on success. */
static inline int mi_coo_alloc(mi_app *a, uint32_t n, size_t nnz, uint64_t seed)
{
    a->index = malloc(nnz * 4), a->aux = malloc(nnz * 4), a->val = malloc(nnz * 8);
    a->data = malloc((size_t)n * 8);
    if (!a->index || !a->aux || !a->val || !a->data || nnz >= UINT32_MAX)
        return mi_free(a), -1;
    for (uint32_t r = 0; r < n; r++) {
        uint64_t s = mi_stream(seed, (uint64_t)n + r);
        ((double *)a->data)[r] = mi_unif(&s) * 2 - 1;
    }
    a->kind = MI_SPMV, a->nv = n;
    a->ref = (tmap_memref){.nthreads = nnz, .per_thread = 1, .elem_bytes = 8, .nelems = n};
    return 0;
}

/* Sorts v[0..n) ascending (insertion for short rows, else qsort). */
static int mi_u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}
static inline void mi_sort_u64(uint64_t *v, size_t n)
{
    if (n > 24) {
        qsort(v, n, 8, mi_u64_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

typedef struct mi_spmv_ctx {
    mi_app *a;
    uint64_t seed;
    size_t *count;         /* [n]: entries of each row's draws (pass 1) */
    const size_t *drawn;   /* [n + 1]: where each row's draws go in e, w */
    uint64_t *e;           /* row << 32 | col */
    double *w;
    const size_t *rowptr;  /* [n + 1]: the COO's rows */
    uint64_t *key;         /* [nnz]: col << 32 | entry (an entry >= half: the diagonal) */
    size_t half;
} mi_spmv_ctx;

/* Row r's draws (Pareto length, uniform columns, weights in [-1.5, -0.5]),
 * each entry also mirrored; into e, w when given; returns the entries. */
static size_t mi_spmv_row(uint32_t n, uint64_t seed, uint32_t r, uint64_t *e, double *w)
{
    uint64_t s = mi_stream(seed, r);
    double len = 4.0 * pow(1.0 - mi_unif(&s), -1.0 / 1.5);
    size_t d = len > n / 4 + 1 ? n / 4 + 1 : (size_t)len, m = 0;
    for (size_t i = 0; i < (d + 1) / 2; i++) { /* half here, half mirrored */
        uint32_t c = (uint32_t)(mi_rand(&s) % n);
        if (c == r)
            continue;
        double v = -(0.5 + mi_unif(&s));
        if (e)
            e[m] = (uint64_t)r << 32 | c, w[m] = v, e[m + 1] = (uint64_t)c << 32 | r, w[m + 1] = v;
        m += 2;
    }
    return m;
}

static void mi_spmv_draw(void *ctx, size_t lo, size_t hi)
{
    mi_spmv_ctx *c = ctx;
    for (size_t r = lo; r < hi; r++) {
        size_t d = c->drawn ? c->drawn[r] : 0;
        size_t m = mi_spmv_row(c->a->nv, c->seed, (uint32_t)r, c->drawn ? c->e + d : NULL,
                               c->drawn ? c->w + d : NULL);
        if (!c->drawn)
            c->count[r] = m;
    }
}

/* Rows [lo, hi): entries by column (ties by entry), the diagonal 1 + the
 * row's off-diagonal magnitudes. */
static void mi_spmv_rows(void *ctx, size_t lo, size_t hi)
{
    mi_spmv_ctx *c = ctx;
    mi_app *a = c->a;
    for (size_t r = lo; r < hi; r++) {
        size_t b = c->rowptr[r], len = c->rowptr[r + 1] - b;
        mi_sort_u64(c->key + b, len);
        double diag = 1;
        for (size_t i = b; i < b + len; i++)
            diag -= (uint32_t)c->key[i] < c->half ? c->w[(uint32_t)c->key[i]] : 0;
        for (size_t i = b; i < b + len; i++) {
            uint32_t entry = (uint32_t)c->key[i];
            a->aux[i] = (uint32_t)r, a->index[i] = (uint32_t)(c->key[i] >> 32);
            a->val[i] = entry < c->half ? c->w[entry] : diag;
        }
    }
}

/* A symmetric, diagonally dominant matrix of n rows with power-law off-
 * diagonal row lengths, as COO by row (thread e: row[e], col[e], val[e]),
 * columns ascending within a row; x random; 0 on success. */
static inline int mi_spmv_make(uint32_t n, uint64_t seed, mi_app *a)
{
    memset(a, 0, sizeof *a);
    a->nv = n;
    mi_spmv_ctx c = {a, seed, calloc(n, sizeof(size_t)), NULL, NULL, NULL, NULL, NULL, 0};
    size_t *drawn = calloc((size_t)n + 1, sizeof *drawn), *rowptr = calloc((size_t)n + 1, 8);
    int ok = c.count && drawn && rowptr;
    if (ok)
        mi_parallel(n, mi_spmv_draw, &c);
    for (uint32_t r = 0; ok && r < n; r++)
        drawn[r + 1] = drawn[r] + c.count[r];
    c.half = ok ? drawn[n] : 0;
    c.e = ok ? malloc(c.half * 8 + 8) : NULL, c.w = ok ? malloc(c.half * 8 + 8) : NULL;
    c.drawn = drawn;
    ok = ok && c.e && c.w && c.half + n < UINT32_MAX;
    if (ok)
        mi_parallel(n, mi_spmv_draw, &c);
    size_t nnz = c.half + n;
    c.key = ok ? malloc(nnz * 8) : NULL;
    ok = ok && c.key && !mi_coo_alloc(a, n, nnz, seed);
    for (size_t i = 0; ok && i < c.half; i++)
        rowptr[(c.e[i] >> 32) + 1]++;
    for (uint32_t r = 0; ok && r < n; r++)
        rowptr[r + 1] += rowptr[r] + 1; /* + the diagonal */
    for (size_t i = 0; ok && i < c.half; i++) { /* rowptr[r]: the next entry of row r */
        uint32_t r = (uint32_t)(c.e[i] >> 32);
        c.key[rowptr[r]++] = (uint64_t)(uint32_t)c.e[i] << 32 | i;
    }
    for (uint32_t r = 0; ok && r < n; r++)
        c.key[rowptr[r]] = (uint64_t)r << 32 | (c.half + r);
    for (uint32_t r = n; ok && r > 0; r--) /* back to the rows' starts */
        rowptr[r] = rowptr[r - 1] + 1;
    if (ok) {
        rowptr[0] = 0;
        c.rowptr = rowptr;
        mi_parallel(n, mi_spmv_rows, &c);
    }
    free(c.count), free(drawn), free(rowptr), free(c.e), free(c.w), free(c.key);
    if (!ok)
        mi_free(a);
    return ok ? 0 : -1;
}

typedef struct mi_stencil_ctx {
    mi_app *a;
    uint32_t side;
    const uint32_t *perm, *inv; /* grid point -> row; row -> grid point */
    const size_t *rowptr;
} mi_stencil_ctx;

/* Rows [lo, hi) of the permuted Laplacian: their lengths (rowptr[r + 1]
 * of a->aux unset), else their entries, columns ascending. */
static void mi_stencil_rows(void *ctx, size_t lo, size_t hi)
{
    mi_stencil_ctx *c = ctx;
    size_t s = c->side, s2 = s * s;
    for (size_t r = lo; r < hi; r++) {
        size_t g = c->inv[r], x = g % s, y = g / s % s, z = g / s2, m = 0;
        uint64_t v[7];
        size_t nb[6] = {x ? g - 1 : SIZE_MAX, x + 1 < s ? g + 1 : SIZE_MAX,
                        y ? g - s : SIZE_MAX, y + 1 < s ? g + s : SIZE_MAX,
                        z ? g - s2 : SIZE_MAX, z + 1 < s ? g + s2 : SIZE_MAX};
        v[m++] = (uint64_t)r << 32 | 1; /* the diagonal: tag 1 */
        for (int i = 0; i < 6; i++)
            if (nb[i] != SIZE_MAX)
                v[m++] = (uint64_t)c->perm[nb[i]] << 32;
        if (!c->a->aux) {
            ((size_t *)c->rowptr)[r + 1] = m;
            continue;
        }
        mi_sort_u64(v, m);
        for (size_t i = 0, b = c->rowptr[r]; i < m; i++) {
            c->a->aux[b + i] = (uint32_t)r, c->a->index[b + i] = (uint32_t)(v[i] >> 32);
            c->a->val[b + i] = v[i] & 1 ? 6.0 : -1.0;
        }
    }
}

/* The 7-point Laplacian of a side^3 grid (Dirichlet: diagonal 6, -1 to
 * each neighbour) with rows and columns under one random permutation, as
 * COO by row; x random; 0 on success. */
static inline int mi_stencil_make(uint32_t side, uint64_t seed, mi_app *a)
{
    memset(a, 0, sizeof *a);
    size_t n = (size_t)side * side * side;
    uint32_t *perm = malloc(n * 4), *inv = malloc(n * 4);
    size_t *rowptr = calloc(n + 1, sizeof *rowptr);
    int ok = perm && inv && rowptr && n < UINT32_MAX / 8;
    uint64_t s = mi_stream(seed, UINT64_MAX);
    for (size_t g = 0; ok && g < n; g++)
        perm[g] = (uint32_t)g;
    for (size_t g = n; ok && g-- > 1;) {
        size_t w = (size_t)(mi_rand(&s) % (g + 1));
        uint32_t t = perm[g];
        perm[g] = perm[w], perm[w] = t;
    }
    for (size_t g = 0; ok && g < n; g++)
        inv[perm[g]] = (uint32_t)g;
    mi_stencil_ctx c = {a, side, perm, inv, rowptr};
    if (ok)
        mi_parallel(n, mi_stencil_rows, &c);
    for (size_t r = 0; ok && r < n; r++)
        rowptr[r + 1] += rowptr[r];
    ok = ok && !mi_coo_alloc(a, (uint32_t)n, rowptr[n], seed);
    if (ok)
        mi_parallel(n, mi_stencil_rows, &c);
    free(perm), free(inv), free(rowptr);
    return ok ? 0 : -1;
}

typedef struct mi_follow_ctx {
    const mi_app *a;
    const uint32_t *rowptr, *where, *start; /* old row -> new row -> its first slot */
    uint32_t *perm;
} mi_follow_ctx;

static void mi_follow_threads(void *ctx, size_t lo, size_t hi)
{
    const mi_follow_ctx *c = ctx;
    for (size_t t = lo; t < hi; t++) {
        uint32_t row = c->a->aux[t];
        c->perm[c->start[c->where[row]] + (t - c->rowptr[row])] = (uint32_t)t;
    }
}

/* The thread order of bfs and spmv under a locality order of their rows
 * (threads own row aux[t], ascending): rows in the new order, each row's
 * threads in their order, so that threads follow their rows as md's
 * particles follow theirs.  perm [nthreads]; 0 on success. */
static inline int mi_follow_rows(const mi_app *a, const uint32_t *order, uint32_t *perm)
{
    size_t ne = a->ref.nelems;
    uint32_t *rowptr = calloc(ne + 1, 4), *where = malloc(ne * 4), *start = malloc(ne * 4);
    int ok = rowptr && where && start;
    for (size_t i = 0; ok && i < a->ref.nthreads; i++)
        rowptr[a->aux[i] + 1]++;
    for (size_t v = 0; ok && v < ne; v++)
        rowptr[v + 1] += rowptr[v], where[order[v]] = (uint32_t)v;
    for (size_t x = 0, at = 0; ok && x < ne; x++)
        start[x] = (uint32_t)at, at += rowptr[order[x] + 1] - rowptr[order[x]];
    mi_follow_ctx c = {a, rowptr, where, start, perm};
    if (ok)
        mi_parallel(a->ref.nthreads, mi_follow_threads, &c);
    free(rowptr), free(where), free(start);
    return ok ? 0 : -1;
}

/* a->order: Morton for md, else reverse Cuthill-McKee of the rows (the
 * COO's aux ascending, index the columns: a CSR); 0 on success. */
static inline int mi_app_order(mi_app *a)
{
    tmap_error e = {0};
    size_t ne = a->ref.nelems;
    a->order = malloc(ne * 4);
    if (!a->order)
        return -1;
    if (a->kind == MI_MD)
        return tmap_memre_morton(a->data, 4, ne, a->order, &e) ? -1 : 0;
    uint32_t *rowptr = calloc(ne + 1, 4);
    if (!rowptr)
        return -1;
    for (size_t i = 0; i < a->ref.nthreads; i++)
        rowptr[a->aux[i] + 1]++;
    for (size_t v = 0; v < ne; v++)
        rowptr[v + 1] += rowptr[v];
    int rc = tmap_memre_rcm(rowptr, a->index, ne, a->order, &e) ? -1 : 0;
    free(rowptr);
    return rc;
}

/* --------------------------------------------------- the CPU reference */

typedef struct mi_run_ctx {
    const mi_app *a;
    const tmap_memre *m;
    const unsigned char *ap;
    uint32_t step;
    void *out;
    const double *x; /* mi_spmv_cpu */
} mi_run_ctx;

static void mi_run_slots(void *ctx, size_t lo, size_t hi)
{
    const mi_run_ctx *c = ctx;
    const mi_app *a = c->a;
    size_t k = a->ref.per_thread;
    for (size_t s = lo; s < hi; s++) {
        size_t t = c->m->perm ? c->m->perm[s] : s;
        const uint32_t *q = c->m->index + t * k;
        if (a->kind == MI_MD)
            mi_md_force((const float *)c->ap, q, k, (const float *)a->data + 4 * t,
                        (float *)c->out + 3 * t);
        else if (a->kind == MI_BFS)
            ((uint32_t *)c->out)[t] = ((const uint32_t *)c->ap)[q[0]] == c->step ? c->step + 1
                                                                                 : MI_NONE;
        else
            ((double *)c->out)[t] = a->val[t] * ((const double *)c->ap)[q[0]];
    }
}

/* Runs the app's kernel through layout m (NULL: the original) on the CPU:
 * per-thread outputs into out (md: 3 floats; bfs: 1 uint32, the level it
 * would write or MI_NONE; spmv: 1 double, the product), `step` the BFS
 * level.  A' is gathered from the app's data here.  0 on success. */
static inline int mi_cpu_run(const mi_app *a, const tmap_memre *m, uint32_t step, void *out)
{
    size_t eb = a->ref.elem_bytes;
    tmap_memre id = {NULL, a->ref.nelems, a->index, NULL};
    if (!m)
        m = &id;
    unsigned char *ap = malloc(m->nout * eb);
    if (!ap)
        return -1;
    tmap_memre_gather(m, a->data, eb, ap);
    mi_run_ctx c = {a, m, ap, step, out, NULL};
    mi_parallel(a->ref.nthreads, mi_run_slots, &c);
    free(ap);
    return 0;
}

/* The nonzeros of [lo, hi) moved to row boundaries: the rows starting in
 * it, each summed in nonzero order. */
static void mi_spmv_rows_cpu(void *ctx, size_t lo, size_t hi)
{
    const mi_run_ctx *c = ctx;
    const mi_app *a = c->a;
    size_t nnz = a->ref.nthreads;
    double *y = c->out;
    while (lo > 0 && lo < nnz && a->aux[lo] == a->aux[lo - 1])
        lo++;
    while (hi > 0 && hi < nnz && a->aux[hi] == a->aux[hi - 1])
        hi++;
    for (size_t e = lo; e < hi; e++)
        y[a->aux[e]] += a->val[e] * c->x[a->index[e]];
}

/* y = A x for the spmv app (rows summed in nonzero order). */
static inline void mi_spmv_cpu(const mi_app *a, const double *x, double *y)
{
    memset(y, 0, (size_t)a->nv * 8);
    mi_run_ctx c = {a, NULL, NULL, 0, y, x};
    mi_parallel(a->ref.nthreads, mi_spmv_rows_cpu, &c);
}

static inline double mi_dot(const double *x, const double *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

/* CG on the spmv app's matrix, b = its data, x0 = 0, `iters` iterations;
 * returns |r| / |b| (NAN without memory). */
static inline double mi_cg_cpu(const mi_app *a, int iters, double *x)
{
    size_t n = a->nv;
    const double *b = a->data;
    double *r = malloc(n * 8), *p = malloc(n * 8), *ap = malloc(n * 8);
    if (!r || !p || !ap)
        return free(r), free(p), free(ap), NAN;
    memset(x, 0, n * 8), memcpy(r, b, n * 8), memcpy(p, b, n * 8);
    double rr = mi_dot(r, r, n), bb = rr;
    for (int it = 0; it < iters && rr > 0; it++) {
        mi_spmv_cpu(a, p, ap);
        double alpha = rr / mi_dot(p, ap, n), rr2;
        for (size_t i = 0; i < n; i++)
            x[i] += alpha * p[i], r[i] -= alpha * ap[i];
        rr2 = mi_dot(r, r, n);
        for (size_t i = 0; i < n; i++)
            p[i] = r[i] + rr2 / rr * p[i];
        rr = rr2;
    }
    free(r), free(p), free(ap);
    return sqrt(rr / bb);
}

/* Bytes of one thread's output of mi_cpu_run. */
static inline size_t mi_out_bytes(const mi_app *a)
{
    return a->kind == MI_MD ? 12 : a->kind == MI_BFS ? 4 : 8;
}

/* The GPU kernels (NVRTC, compiled with --fmad=false so that md's forces
 * equal mi_md_force's bit for bit).  Slot s runs thread perm[s] (perm NULL:
 * s) and reads A'[q[t*k + j]]. */
static const char mi_kernels_src[] =
    "#define CUT2 4.0f\n"
    "#define CORE 0.5f\n"
    "__device__ static void md_pair(float4 me, float4 o, float3 *acc) {\n"
    "  float dx = me.x - o.x, dy = me.y - o.y, dz = me.z - o.z;\n"
    "  float r2 = dx * dx + dy * dy + dz * dz;\n"
    "  if (r2 == 0.0f || r2 >= CUT2) return;\n"
    "  r2 = r2 < CORE ? CORE : r2;\n"
    "  float i2 = 1.0f / r2, i6 = i2 * i2 * i2, sc = 24.0f * i2 * i6 * (2.0f * i6 - 1.0f);\n"
    "  acc->x += sc * dx, acc->y += sc * dy, acc->z += sc * dz;\n"
    "}\n"
    "__device__ static void md_store(float *f, unsigned t, float3 acc) {\n"
    "  f[3 * (size_t)t] = acc.x, f[3 * (size_t)t + 1] = acc.y, f[3 * (size_t)t + 2] = acc.z;\n"
    "}\n"
    "extern \"C\" __global__ void md_force(const float4 *a, const unsigned *q,\n"
    "    const unsigned *perm, const float4 *own, float *f, unsigned n, unsigned k) {\n"
    "  unsigned s = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (s >= n) return;\n"
    "  unsigned t = perm ? perm[s] : s;\n"
    "  float4 me = own[t];\n"
    "  float3 acc = {0, 0, 0};\n"
    "  for (unsigned j = 0; j < k; j++) md_pair(me, a[q[(size_t)t * k + j]], &acc);\n"
    "  md_store(f, t, acc);\n"
    "}\n"
    /* sharing (wu2013 sec. 3.4): block b stages a[from[x]], x in [start[b],
     * start[b + 1]), in shared memory; q holds positions in that list */
    "extern \"C\" __global__ void md_force_shared(const float4 *a, const unsigned *from,\n"
    "    const unsigned *start, const unsigned *q, const unsigned *perm, const float4 *own,\n"
    "    float *f, unsigned n, unsigned k) {\n"
    "  extern __shared__ float4 staged[];\n"
    "  unsigned b0 = start[blockIdx.x], len = start[blockIdx.x + 1] - b0;\n"
    "  for (unsigned x = threadIdx.x; x < len; x += blockDim.x) staged[x] = a[from[b0 + x]];\n"
    "  __syncthreads();\n"
    "  unsigned s = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (s >= n) return;\n"
    "  unsigned t = perm ? perm[s] : s;\n"
    "  float4 me = own[t];\n"
    "  float3 acc = {0, 0, 0};\n"
    "  for (unsigned j = 0; j < k; j++) md_pair(me, staged[q[(size_t)t * k + j] - b0], &acc);\n"
    "  md_store(f, t, acc);\n"
    "}\n"
    "extern \"C\" __global__ void bfs_step(const unsigned *a, const unsigned *q,\n"
    "    const unsigned *perm, const unsigned *dst, unsigned *level, unsigned n,\n"
    "    unsigned step) {\n"
    "  unsigned s = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (s >= n) return;\n"
    "  unsigned t = perm ? perm[s] : s;\n"
    "  if (a[q[t]] == step && level[dst[t]] == 0xffffffffu) level[dst[t]] = step + 1;\n"
    "}\n"
    "extern \"C\" __global__ void spmv_coo(const double *a, const unsigned *q,\n"
    "    const unsigned *perm, const unsigned *row, const double *val, double *y,\n"
    "    unsigned n) {\n"
    "  unsigned s = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (s >= n) return;\n"
    "  unsigned t = perm ? perm[s] : s;\n"
    "  atomicAdd(&y[row[t]], val[t] * a[q[t]]);\n"
    "}\n"
    /* the CSR row pointers of COO rows (ascending): rowptr[r] = the first e
     * with row[e] >= r, r <= nrows */
    "extern \"C\" __global__ void csr_rows(const unsigned *row, unsigned nnz,\n"
    "    unsigned *rowptr, unsigned nrows) {\n"
    "  unsigned r = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r > nrows) return;\n"
    "  unsigned lo = 0, hi = nnz;\n"
    "  while (lo < hi) { unsigned m = lo + (hi - lo) / 2; if (row[m] < r) lo = m + 1; else hi = m; }\n"
    "  rowptr[r] = lo;\n"
    "}\n"
    /* a vector in a new numbering back to the old: y[order[i]] = v[i] */
    "extern \"C\" __global__ void scatter(const double *v, const unsigned *order, double *y,\n"
    "    unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[order[i]] = v[i];\n"
    "}\n"
    /* a gather's reads for the model: padding (UINT32_MAX) read as element 0 */
    "extern \"C\" __global__ void unpad(const unsigned *from, unsigned n, unsigned *out) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = from[i] == 0xffffffffu ? 0u : from[i];\n"
    "}\n"
    "extern \"C\" __global__ void dot(const double *x, const double *y, double *out,\n"
    "    unsigned n) {\n"
    "  __shared__ double part[256];\n"
    "  double v = 0;\n"
    "  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += gridDim.x * blockDim.x) v += x[i] * y[i];\n"
    "  part[threadIdx.x] = v;\n"
    "  __syncthreads();\n"
    "  for (unsigned h = blockDim.x / 2; h; h /= 2) {\n"
    "    if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (!threadIdx.x) atomicAdd(out, part[0]);\n"
    "}\n"
    "extern \"C\" __global__ void axpy(double *y, const double *x, double alpha,\n"
    "    double beta, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = beta * y[i] + alpha * x[i];\n"
    "}\n";

#endif

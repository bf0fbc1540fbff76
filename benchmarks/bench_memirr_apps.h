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
 *            locality: reverse Cuthill-McKee.
 */
#ifndef TMAP_BENCHMARKS_BENCH_MEMIRR_APPS_H
#define TMAP_BENCHMARKS_BENCH_MEMIRR_APPS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

typedef enum mi_kind { MI_MD, MI_BFS, MI_SPMV } mi_kind;

typedef struct mi_app {
    mi_kind kind;
    tmap_memref ref;     /* the irregular reference */
    uint32_t *index;     /* P [nthreads * k] */
    void *data;          /* A [nelems * elem_bytes] */
    uint32_t *order;     /* the locality order of A */
    int permute_threads; /* threads own their element (md): they follow order */
    uint32_t *aux;       /* bfs: dst[e]; spmv: row[e] */
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

/* Particle t's neighbour list into nb (at most cap); returns its length. */
static size_t mi_md_cell_neighbours(const float *p, const uint32_t *cell_start,
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
                    const float *q = p + 4 * (size_t)o;
                    float ddx = me[0] - q[0], ddy = me[1] - q[1], ddz = me[2] - q[2];
                    if (o != t && ddx * ddx + ddy * ddy + ddz * ddz < MI_MD_CUT * MI_MD_CUT &&
                        len < cap)
                        nb[len++] = o;
                }
            }
    return len;
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
    enum { CAP = 256 };
    uint32_t nb[CAP];
    int ok = p && cell_start && cell_items && fill && cell_of;
    for (uint32_t t = 0; ok && t < n; t++) {
        float *q = p + 4 * (size_t)t;
        for (int d = 0; d < 3; d++)
            q[d] = (float)mi_unif(&seed) * side;
        q[3] = 0;
        int cx = (int)(q[0] / MI_MD_CUT), cy = (int)(q[1] / MI_MD_CUT), cz = (int)(q[2] / MI_MD_CUT);
        cell_of[t] = (uint32_t)(((size_t)cz * nc + cy) * nc + cx);
        cell_start[cell_of[t] + 1]++;
    }
    for (size_t c = 0; ok && c < ncell; c++)
        cell_start[c + 1] += cell_start[c];
    for (uint32_t t = 0; ok && t < n; t++)
        cell_items[cell_start[cell_of[t]] + fill[cell_of[t]]++] = t;
    size_t k = 1;
    for (uint32_t t = 0; ok && t < n; t++) {
        size_t len = mi_md_cell_neighbours(p, cell_start, cell_items, nc, t, nb, CAP);
        k = len > k ? len : k;
    }
    a->index = ok ? malloc((size_t)n * k * 4) : NULL;
    a->order = ok ? malloc((size_t)n * 4) : NULL;
    ok = ok && a->index && a->order;
    for (uint32_t t = 0; ok && t < n; t++) {
        size_t len = mi_md_cell_neighbours(p, cell_start, cell_items, nc, t, nb, CAP);
        for (size_t j = 0; j < k; j++)
            a->index[(size_t)t * k + j] = j < len ? nb[j] : t;
    }
    tmap_error e = {0};
    ok = ok && !tmap_memre_morton(p, 4, n, a->order, &e);
    free(cell_start), free(cell_items), free(fill), free(cell_of);
    a->kind = MI_MD, a->data = p, a->permute_threads = 1;
    a->ref = (tmap_memref){.nthreads = n, .per_thread = k, .elem_bytes = 16, .nelems = n};
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

static int mi_by_dst(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return (*a > *b) - (*a < *b);
}

/* (key, position) records: by key, then position (a stable order). */
static int mi_by_pair(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* A Kronecker graph of 2^scale vertices and 16 x 2^scale edges (Graph500),
 * each edge both ways, sorted by destination; 0 on success. */
static inline int mi_bfs_make(unsigned scale, uint64_t seed, mi_app *a)
{
    memset(a, 0, sizeof *a);
    const double A = 0.57, B = 0.19, C = 0.19, ab = A + B, c_norm = C / (1 - ab), a_norm = A / ab;
    uint32_t nv = 1u << scale;
    size_t m = 16 * (size_t)nv, ne = 2 * m;
    uint32_t *perm = malloc((size_t)nv * 4);
    uint64_t *e = malloc(ne * 8); /* dst << 32 | src */
    uint32_t *rowptr = calloc((size_t)nv + 1, 4), *col = malloc(ne * 4), *fill = calloc(nv, 4);
    a->index = malloc(ne * 4), a->aux = malloc(ne * 4), a->data = malloc((size_t)nv * 4);
    a->order = malloc((size_t)nv * 4);
    if (!perm || !e || !rowptr || !col || !fill || !a->index || !a->aux || !a->data || !a->order) {
        free(perm), free(e), free(rowptr), free(col), free(fill), mi_free(a);
        return -1;
    }
    for (uint32_t v = 0; v < nv; v++)
        perm[v] = v;
    for (uint32_t v = nv - 1; v > 0; v--) {
        uint32_t w = (uint32_t)(mi_rand(&seed) % (v + 1)), t = perm[v];
        perm[v] = perm[w], perm[w] = t;
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t u = 0, v = 0;
        for (unsigned b = 0; b < scale; b++) {
            int ib = mi_unif(&seed) > ab, jb = mi_unif(&seed) > (ib ? c_norm : a_norm);
            u |= (uint32_t)ib << b, v |= (uint32_t)jb << b;
        }
        u = perm[u], v = perm[v];
        e[2 * i] = (uint64_t)v << 32 | u, e[2 * i + 1] = (uint64_t)u << 32 | v;
    }
    for (size_t i = ne - 1; i > 0; i--) { /* the edge order permuted */
        size_t j = (size_t)(mi_rand(&seed) % (i + 1));
        uint64_t t = e[i];
        e[i] = e[j], e[j] = t;
    }
    qsort(e, ne, 8, mi_by_dst);
    for (size_t i = 0; i < ne; i++) {
        a->index[i] = (uint32_t)e[i], a->aux[i] = (uint32_t)(e[i] >> 32);
        rowptr[a->aux[i] + 1]++;
    }
    for (uint32_t v = 0; v < nv; v++)
        rowptr[v + 1] += rowptr[v];
    for (size_t i = 0; i < ne; i++)
        col[rowptr[a->aux[i]] + fill[a->aux[i]]++] = a->index[i];
    tmap_error err = {0};
    int rc = tmap_memre_rcm(rowptr, col, nv, a->order, &err) ? -1 : 0;
    a->source = a->index[(size_t)(mi_rand(&seed) % ne)]; /* an endpoint: it has an edge */
    for (uint32_t v = 0; v < nv; v++) /* A: the levels before the search */
        ((uint32_t *)a->data)[v] = v == a->source ? 0 : MI_NONE;
    a->kind = MI_BFS, a->nv = nv;
    a->ref = (tmap_memref){.nthreads = ne, .per_thread = 1, .elem_bytes = 4, .nelems = nv};
    free(perm), free(e), free(rowptr), free(col), free(fill);
    if (rc)
        mi_free(a);
    return rc;
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

/* A symmetric, diagonally dominant matrix of n rows with power-law off-
 * diagonal row lengths, as COO by row (thread e: row[e], col[e], val[e]);
 * x random; 0 on success. */
static inline int mi_spmv_make(uint32_t n, uint64_t seed, mi_app *a)
{
    memset(a, 0, sizeof *a);
    size_t half = 0, cap = 0;
    uint64_t *e = NULL; /* row << 32 | col, both ways */
    double *w = NULL;   /* the weight of e[i] */
    for (uint32_t r = 0; r < n; r++) {
        double len = 4.0 * pow(1.0 - mi_unif(&seed), -1.0 / 1.5);
        size_t d = len > n / 4 + 1 ? n / 4 + 1 : (size_t)len;
        for (size_t i = 0; i < (d + 1) / 2; i++) { /* half here, half mirrored */
            uint32_t c = (uint32_t)(mi_rand(&seed) % n);
            if (c == r)
                continue;
            if (half + 2 > cap) {
                cap = cap ? 2 * cap : 1 << 20;
                uint64_t *e2 = realloc(e, cap * 8);
                double *w2 = realloc(w, cap * 8);
                if (!e2 || !w2)
                    return free(e2 ? e2 : e), free(w2 ? w2 : w), -1;
                e = e2, w = w2;
            }
            double v = -(0.5 + mi_unif(&seed));
            e[half] = (uint64_t)r << 32 | c, w[half++] = v;
            e[half] = (uint64_t)c << 32 | r, w[half++] = v;
        }
    }
    size_t nnz = half + n;
    double *diag = calloc(n, 8);
    uint64_t *key = malloc(nnz * 16); /* (entry, position) pairs sorted by entry */
    a->index = malloc(nnz * 4), a->aux = malloc(nnz * 4), a->val = malloc(nnz * 8);
    a->data = malloc((size_t)n * 8), a->order = malloc((size_t)n * 4);
    uint32_t *rowptr = calloc((size_t)n + 1, 4);
    if (!diag || !key || !a->index || !a->aux || !a->val || !a->data || !a->order || !rowptr) {
        free(e), free(w), free(diag), free(key), free(rowptr), mi_free(a);
        return -1;
    }
    for (size_t i = 0; i < half; i++)
        diag[e[i] >> 32] += -w[i];
    for (size_t i = 0; i < nnz; i++) /* sort records: (row, col) then the weight's place */
        key[2 * i] = i < half ? e[i] : (uint64_t)(i - half) << 32 | (i - half),
        key[2 * i + 1] = i;
    qsort(key, nnz, 16, mi_by_pair);
    for (size_t i = 0; i < nnz; i++) {
        size_t src = key[2 * i + 1];
        a->aux[i] = (uint32_t)(key[2 * i] >> 32), a->index[i] = (uint32_t)key[2 * i];
        a->val[i] = src < half ? w[src] : 1.0 + diag[src - half];
        rowptr[a->aux[i] + 1]++;
    }
    for (uint32_t r = 0; r < n; r++)
        rowptr[r + 1] += rowptr[r], ((double *)a->data)[r] = mi_unif(&seed) * 2 - 1;
    tmap_error err = {0};
    int rc = tmap_memre_rcm(rowptr, a->index, n, a->order, &err) ? -1 : 0;
    a->kind = MI_SPMV, a->nv = n;
    a->ref = (tmap_memref){.nthreads = nnz, .per_thread = 1, .elem_bytes = 8, .nelems = n};
    free(e), free(w), free(diag), free(key), free(rowptr);
    if (rc)
        mi_free(a);
    return rc;
}

/* --------------------------------------------------- the CPU reference */

/* Runs the app's kernel through layout m (NULL: the original) on the CPU:
 * per-thread outputs into out (md: 3 floats; bfs: 1 uint32, the level it
 * would write or MI_NONE; spmv: 1 double, the product), `step` the BFS
 * level.  A' is gathered from the app's data here.  0 on success. */
static inline int mi_cpu_run(const mi_app *a, const tmap_memre *m, uint32_t step, void *out)
{
    size_t n = a->ref.nthreads, k = a->ref.per_thread, eb = a->ref.elem_bytes;
    tmap_memre id = {NULL, a->ref.nelems, a->index, NULL};
    if (!m)
        m = &id;
    unsigned char *ap = malloc(m->nout * eb);
    if (!ap)
        return -1;
    tmap_memre_gather(m, a->data, eb, ap);
    for (size_t s = 0; s < n; s++) {
        size_t t = m->perm ? m->perm[s] : s;
        const uint32_t *q = m->index + t * k;
        if (a->kind == MI_MD)
            mi_md_force((const float *)ap, q, k, (const float *)a->data + 4 * t,
                        (float *)out + 3 * t);
        else if (a->kind == MI_BFS)
            ((uint32_t *)out)[t] = ((const uint32_t *)ap)[q[0]] == step ? step + 1 : MI_NONE;
        else
            ((double *)out)[t] = a->val[t] * ((const double *)ap)[q[0]];
    }
    free(ap);
    return 0;
}

/* y = A x for the spmv app (rows summed in nonzero order). */
static inline void mi_spmv_cpu(const mi_app *a, const double *x, double *y)
{
    memset(y, 0, (size_t)a->nv * 8);
    for (size_t e = 0; e < a->ref.nthreads; e++)
        y[a->aux[e]] += a->val[e] * x[a->index[e]];
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

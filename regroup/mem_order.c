/*
 * mem_order.c -- locality orders, the baselines of the memory
 * transformations: reverse Cuthill-McKee for graphs and sparse matrices
 * (the serial queue, and the same order level by level as the GPU builds
 * it), Morton order for points (threadmap/regroup.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/regroup.h"
#include "common/base.h"
#include "common/morton.h"
#include "regroup/mem.h"

typedef struct graph {
    const uint32_t *rowptr, *col;
    size_t n;
    uint32_t *deg;     /* neighbours other than itself */
    uint32_t *level;   /* BFS level + 1 of the current search, 0: unreached */
    uint32_t *queue;   /* the current search's vertices in order */
    uint8_t *done;     /* numbered by an earlier component */
} graph;

/* Breadth-first search of root's component (vertices not done); each
 * vertex's unreached neighbours enqueued by ascending degree when
 * `ordered`.  Returns the vertices reached; their levels stay set until
 * clear(). */
static size_t bfs(graph *g, uint32_t root, int ordered, tmap_memre_keyed *scratch)
{
    size_t head = 0, tail = 0;
    g->queue[tail++] = root;
    g->level[root] = 1;
    while (head < tail) {
        uint32_t v = g->queue[head++];
        size_t m = 0;
        for (uint32_t e = g->rowptr[v]; e < g->rowptr[v + 1]; e++) {
            uint32_t u = g->col[e];
            if (u == v || g->level[u] || g->done[u])
                continue;
            g->level[u] = g->level[v] + 1;
            scratch[m++] = (tmap_memre_keyed){g->deg[u], u}; /* by degree, then label */
        }
        if (ordered)
            tmap_memre_sort(scratch, m);
        for (size_t i = 0; i < m; i++)
            g->queue[tail++] = scratch[i].id;
    }
    return tail;
}

static void clear(graph *g, size_t reached)
{
    for (size_t i = 0; i < reached; i++)
        g->level[g->queue[i]] = 0;
}

/* A search from r: *ecc its last level, *far the least-degree vertex of
 * that level (ties by label). */
static void search(graph *g, uint32_t r, uint32_t *ecc, uint32_t *far,
                   tmap_memre_keyed *scratch)
{
    size_t reached = bfs(g, r, 0, scratch);
    *ecc = g->level[g->queue[reached - 1]];
    *far = g->queue[reached - 1];
    for (size_t i = 0; i < reached; i++) {
        uint32_t v = g->queue[i];
        if (g->level[v] == *ecc && (g->deg[v] < g->deg[*far] ||
                                    (g->deg[v] == g->deg[*far] && v < *far)))
            *far = v;
    }
    clear(g, reached);
}

/* George and Liu's pseudo-peripheral vertex: from `start`, move to the
 * far vertex while its eccentricity is larger. */
static uint32_t peripheral(graph *g, uint32_t start, tmap_memre_keyed *scratch)
{
    uint32_t r = start, ecc, far, ecc_far, next;
    search(g, r, &ecc, &far, scratch);
    while (far != r) {
        search(g, far, &ecc_far, &next, scratch);
        if (ecc_far <= ecc)
            break;
        r = far, ecc = ecc_far, far = next;
    }
    return r;
}

static tmap_status check_csr(const uint32_t *rowptr, const uint32_t *col, size_t n,
                             tmap_error *err)
{
    if (!n || n > UINT32_MAX)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_rcm: %zu vertices, must be in "
                         "[1, 2^32 - 1]", n);
    for (size_t v = 0; v < n; v++)
        if (rowptr[v + 1] < rowptr[v])
            return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_rcm: rowptr[%zu] = %u is below "
                             "rowptr[%zu] = %u", v + 1, rowptr[v + 1], v, rowptr[v]);
    for (size_t e = rowptr[0]; e < rowptr[n]; e++)
        if (col[e] >= n)
            return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_rcm: col[%zu] = %u is not a "
                             "vertex (%zu)", e, col[e], n);
    return TMAP_OK;
}

/* Root's component numbered level by level, as tmap_gpu_memre_rcm does it:
 * level L+1 is every vertex not yet reached with a neighbour in level L,
 * each with its least such neighbour's label (its position in out), the
 * level sorted by (that label, degree, vertex).  Returns the vertices
 * numbered into out; their levels stay set until the caller clears them. */
static size_t number_levels(graph *g, uint32_t root, uint32_t *out, uint32_t *parent,
                            tmap_memre_keyed *scratch)
{
    size_t lo = 0, hi = 1;
    out[0] = root, g->level[root] = 1;
    while (lo < hi) {
        size_t m = 0;
        for (size_t i = hi; i-- > lo;) { /* any order: the least label is taken */
            uint32_t v = out[i];
            for (uint32_t e = g->rowptr[v]; e < g->rowptr[v + 1]; e++) {
                uint32_t u = g->col[e];
                if (u == v || g->done[u] || (g->level[u] && g->level[u] != g->level[v] + 1))
                    continue;
                if (!g->level[u])
                    g->level[u] = g->level[v] + 1, parent[u] = (uint32_t)i, scratch[m++].id = u;
                parent[u] = (uint32_t)i < parent[u] ? (uint32_t)i : parent[u];
            }
        }
        for (size_t k = 0; k < m; k++) { /* (parent, degree) in the key, ties by vertex */
            uint32_t u = scratch[k].id;
            scratch[k].key = (uint64_t)(parent[u] - lo) << 32 | g->deg[u];
        }
        tmap_memre_sort(scratch, m);
        for (size_t k = 0; k < m; k++)
            out[hi + k] = scratch[k].id;
        lo = hi, hi += m;
    }
    return hi;
}

/* Reverse Cuthill-McKee: each component from its least-degree vertex's
 * pseudo-peripheral vertex, numbered by the serial queue (tmap_memre_rcm)
 * or level by level (by_levels: tmap_memre_rcm_levels), the whole order
 * reversed. */
static tmap_status rcm(const uint32_t *rowptr, const uint32_t *col, size_t n, uint32_t *order,
                       int by_levels, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, rowptr, col, order);
    if (st || (st = check_csr(rowptr, col, n, err)))
        return st;
    graph g = {rowptr, col, n, calloc(n, sizeof(uint32_t)), calloc(n, sizeof(uint32_t)),
               malloc(n * sizeof(uint32_t)), calloc(n, 1)};
    tmap_memre_keyed *byd = malloc(n * sizeof *byd), *scratch = malloc(n * sizeof *scratch);
    uint32_t *parent = by_levels ? malloc(n * sizeof *parent) : NULL;
    if (!g.deg || !g.level || !g.queue || !g.done || !byd || !scratch || (by_levels && !parent)) {
        st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    } else {
        for (size_t v = 0; v < n; v++) {
            for (uint32_t e = rowptr[v]; e < rowptr[v + 1]; e++)
                g.deg[v] += col[e] != v;
            byd[v] = (tmap_memre_keyed){g.deg[v], (uint32_t)v};
        }
        tmap_memre_sort(byd, n);
        size_t numbered = 0;
        for (size_t i = 0; i < n; i++) { /* each component from its least-degree vertex */
            if (g.done[byd[i].id])
                continue;
            uint32_t root = peripheral(&g, byd[i].id, scratch), *out = order + numbered;
            size_t reached;
            if (by_levels) {
                reached = number_levels(&g, root, out, parent, scratch);
            } else {
                reached = bfs(&g, root, 1, scratch);
                memcpy(out, g.queue, reached * sizeof *out);
            }
            for (size_t q = 0; q < reached; q++)
                g.done[out[q]] = 1, g.level[out[q]] = 0;
            numbered += reached;
        }
        for (size_t i = 0; i < n / 2; i++) { /* reversed */
            uint32_t t = order[i];
            order[i] = order[n - 1 - i], order[n - 1 - i] = t;
        }
    }
    free(g.deg), free(g.level), free(g.queue), free(g.done), free(byd), free(scratch);
    free(parent);
    return st;
}

tmap_status tmap_memre_rcm(const uint32_t *rowptr, const uint32_t *col, size_t n, uint32_t *order,
                           tmap_error *err)
{
    return rcm(rowptr, col, n, order, 0, err);
}

tmap_status tmap_memre_rcm_levels(const uint32_t *rowptr, const uint32_t *col, size_t n,
                                  uint32_t *order, tmap_error *err)
{
    return rcm(rowptr, col, n, order, 1, err);
}

tmap_status tmap_memre_morton(const float *xyz, size_t stride, size_t n, uint32_t *order,
                              tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, xyz, order);
    if (st)
        return st;
    if (!n || n > UINT32_MAX || stride < 3)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_morton: %zu points with a stride "
                         "of %zu: at least 1 point, at most 2^32 - 1, stride >= 3", n, stride);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            double v = xyz[i * stride + d];
            if (!isfinite(v))
                return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memre_morton: point %zu, "
                                 "coordinate %d is not finite", i, d);
            lo[d] = v < lo[d] ? v : lo[d], hi[d] = v > hi[d] ? v : hi[d];
        }
    tmap_memre_keyed *c = malloc(n * sizeof *c);
    if (!c)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        c[i] = (tmap_memre_keyed){tmap_morton_code(xyz + i * stride, lo, hi), (uint32_t)i};
    tmap_memre_sort(c, n);
    for (size_t i = 0; i < n; i++)
        order[i] = c[i].id;
    free(c);
    return TMAP_OK;
}

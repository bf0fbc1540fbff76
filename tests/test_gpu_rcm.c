/*
 * test_gpu_rcm.c -- reverse Cuthill-McKee built on the GPU
 * (tmap_gpu_memre_rcm, level-synchronous) equals the CPU's serial
 * tmap_memre_rcm (and its level-by-level tmap_memre_rcm_levels) exactly: a path, a 3 x 3 grid, components with an
 * isolated vertex and a self loop, a randomly relabeled 3-D grid (a level
 * of thousands of vertices), a ring with random chords (many ties of
 * degree), a Kronecker-like graph (many isolated vertices and small
 * components, hubs), and a star whose sort keys need more than 64 bits
 * (the two-sort path); graphs whose rows are all at most 32 long (the
 * cooperative numbering without a sort: a relabeled path of 10,000
 * levels, a ring with chords, repeats and self loops, a row of exactly
 * 32) and the same with a row of 33.  And tmap_gpu_memre_follow against
 * the threads following their rows computed here: rows ascending (placed
 * by runs, no sort) and shuffled (the sort).  The sweeps' appends are
 * warp-aggregated and the numbering folds each level's claims into the
 * placing of the level before: every graph here runs them.  Every sweep
 * after a component's first runs inside the numbering's kernel (rows at
 * most 32): kept when it confirms the root (the 40^3 grid: its steps
 * counted), discarded when it grows the eccentricity (paths with a
 * pendant on the middle: five numberings discarded, counted).
 */
#include "tests/testutil.h"
#include "threadmap/regroup.h"

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* A CSR from an edge list (each edge both ways unless `directed`). */
typedef struct graph {
    uint32_t n, *rowptr, *col;
    size_t nnz;
} graph;

static graph from_edges(uint32_t n, const uint32_t (*e)[2], size_t m)
{
    graph g = {n, calloc(n + 1, 4), malloc(2 * m * 4 + 4), 2 * m};
    uint32_t *fill = calloc(n, 4);
    for (size_t i = 0; i < m; i++)
        g.rowptr[e[i][0] + 1]++, g.rowptr[e[i][1] + 1]++;
    for (uint32_t v = 0; v < n; v++)
        g.rowptr[v + 1] += g.rowptr[v];
    for (size_t i = 0; i < m; i++) {
        g.col[g.rowptr[e[i][0]] + fill[e[i][0]]++] = e[i][1];
        g.col[g.rowptr[e[i][1]] + fill[e[i][1]]++] = e[i][0];
    }
    free(fill);
    return g;
}

static void graph_free(graph *g) { free(g->rowptr), free(g->col); }

/* GPU == CPU, and the order a permutation; with steps, the timed call. */
static void same_steps(tmap_cuda *c, const graph *g, const char *what, tmap_gpu_rcm_steps *steps)
{
    uint32_t *want = malloc(g->n * 4);
    uint8_t *seen = calloc(g->n, 1);
    TMAP_CHECK(tmap_memre_rcm(g->rowptr, g->col, g->n, want, err));
    for (uint32_t i = 0; i < g->n; i++) {
        assert_true(want[i] < g->n && !seen[want[i]]);
        seen[want[i]] = 1;
    }
    uint32_t *levels = malloc(g->n * 4); /* the GPU's definition on the CPU: the same */
    TMAP_CHECK(tmap_memre_rcm_levels(g->rowptr, g->col, g->n, levels, err));
    assert_memory_equal(levels, want, g->n * 4);
    free(levels);
    uint64_t drow = test_device_copy(c, g->rowptr, (g->n + 1) * 4);
    uint64_t dcol = test_device_copy(c, g->col, g->nnz ? g->nnz * 4 : 4);
    uint64_t dord = test_device_alloc(c, g->n * 4);
    TMAP_CHECK(tmap_gpu_memre_rcm_timed(drow, dcol, g->n, dord, steps, NULL, err));
    test_expect_device_u32(c, dord, want, g->n, what);
    if (steps)
        TMAP_CHECK(tmap_gpu_memre_rcm_floors(drow, dcol, g->n, steps, NULL, err));
    tmap_cuda_free(c, drow), tmap_cuda_free(c, dcol), tmap_cuda_free(c, dord);
    free(want), free(seen);
}

static void same(tmap_cuda *c, const graph *g, const char *what)
{
    same_steps(c, g, what, NULL);
}

static void small_graphs(void **state)
{
    tmap_cuda *c = test_gpu_open();
    /* the path 3-0-4-1-2 (test_memre's rcm_path) */
    static const uint32_t path[4][2] = {{3, 0}, {0, 4}, {4, 1}, {1, 2}};
    graph g = from_edges(5, path, 4);
    same(c, &g, "a path");
    graph_free(&g);
    /* the 3 x 3 grid (test_memre's rcm_small_grid: 8 7 5 6 4 2 3 1 0) */
    static const uint32_t grid[12][2] = {{0, 1}, {1, 2}, {3, 4}, {4, 5}, {6, 7}, {7, 8},
                                         {0, 3}, {3, 6}, {1, 4}, {4, 7}, {2, 5}, {5, 8}};
    g = from_edges(9, grid, 12);
    same(c, &g, "a 3 x 3 grid");
    graph_free(&g);
    /* a triangle with a self loop, an edge, an isolated vertex */
    static const uint32_t comp[5][2] = {{0, 2}, {2, 4}, {4, 0}, {1, 3}, {0, 0}};
    g = from_edges(6, comp, 5);
    same(c, &g, "components");
    graph_free(&g);
    /* one vertex, no edges */
    g = from_edges(1, NULL, 0);
    same(c, &g, "one vertex");
    graph_free(&g);
    tmap_cuda_close(c);
}

/* A side^3 grid under a random relabeling. */
static void grid3d(void **state)
{
    tmap_cuda *c = test_gpu_open();
    enum { S = 40, N = S * S * S };
    uint32_t *lab = test_random_perm(N, 3), (*e)[2] = malloc(3 * (size_t)N * sizeof *e);
    size_t m = 0;
    for (uint32_t p = 0; p < N; p++) {
        uint32_t x = p % S, y = p / S % S, z = p / (S * S);
        if (x + 1 < S) e[m][0] = lab[p], e[m++][1] = lab[p + 1];
        if (y + 1 < S) e[m][0] = lab[p], e[m++][1] = lab[p + S];
        if (z + 1 < S) e[m][0] = lab[p], e[m++][1] = lab[p + S * S];
    }
    graph g = from_edges(N, (const uint32_t (*)[2])e, m);
    tmap_gpu_rcm_steps st;
    same_steps(c, &g, "a relabeled 40^3 grid", &st);
    /* from a corner: numbered at once where both are cooperative, then the
     * far corner's sweep confirms the root; 3 x 39 + 1 levels */
    assert_int_equal(st.components, 1);
    assert_int_equal(st.levels, 3 * (S - 1) + 1);
    if (st.coop_sweeps && st.coop_number) {
        assert_int_equal(st.sweeps, 1), assert_int_equal(st.fused_sweeps, 0);
        assert_int_equal(st.discarded, 0);
        assert_int_equal(st.sweep_barriers, 3 * (S - 1) + 1);
        assert_int_equal(st.sweep_vertices, N), assert_int_equal(st.fused_vertices, 0);
        assert_int_equal(st.number_vertices, N);
        assert_true(st.barrier_us > 0 && st.copy_gbs > 0 && st.floor_number_ms > 0);
    } else {
        assert_int_equal(st.sweeps + st.fused_sweeps, 2);
    }
    graph_free(&g), free(e), free(lab);
    tmap_cuda_close(c);
}

/* A ring with random chords; a Kronecker-like graph (Graph500's initiator:
 * many isolated vertices, small components, hubs, duplicate edges and
 * self loops). */
static void random_graphs(void **state)
{
    tmap_cuda *c = test_gpu_open();
    uint64_t x = 5;
    enum { NV = 50000, CH = 3 };
    uint32_t (*e)[2] = malloc((size_t)NV * (1 + CH) * sizeof *e);
    size_t m = 0;
    for (uint32_t v = 0; v < NV; v++)
        e[m][0] = v, e[m++][1] = (v + 1) % NV;
    for (size_t i = 0; i < (size_t)NV * CH; i++)
        e[m][0] = (uint32_t)(next(&x) % NV), e[m++][1] = (uint32_t)(next(&x) % NV);
    graph g = from_edges(NV, (const uint32_t (*)[2])e, m);
    same(c, &g, "a ring with chords");
    graph_free(&g), free(e);
    for (unsigned scale = 10; scale <= 16; scale += 6) {
        uint32_t n = 1u << scale;
        size_t ne = 8 * (size_t)n;
        uint32_t (*k)[2] = malloc(ne * sizeof *k), *lab = test_random_perm(n, scale);
        for (size_t i = 0; i < ne; i++) {
            uint32_t u = 0, v = 0;
            for (unsigned b = 0; b < scale; b++) {
                double r1 = (double)next(&x) / 2147483648.0, r2 = (double)next(&x) / 2147483648.0;
                int ib = r1 > 0.76, jb = r2 > (ib ? 0.19 / 0.24 : 0.57 / 0.76);
                u |= (uint32_t)ib << b, v |= (uint32_t)jb << b;
            }
            k[i][0] = lab[u], k[i][1] = lab[v];
        }
        g = from_edges(n, (const uint32_t (*)[2])k, ne);
        same(c, &g, "a Kronecker-like graph");
        graph_free(&g), free(k), free(lab);
    }
    tmap_cuda_close(c);
}

/* A star whose keys need more than 64 bits: from a far vertex, a level of
 * 2^20 leaves (20 bits of parent label) of a graph of 2^21 + 1 vertices
 * (22 bits) whose center has degree 5 x 2^20 (23 bits: 2^22 duplicate
 * edges to leaf 1). */
static void wide_keys(void **state)
{
    tmap_cuda *c = test_gpu_open();
    uint32_t L = 1u << 20, n = 2 * L + 1;
    size_t m = 2 * (size_t)L + (4u << 20);
    uint32_t (*e)[2] = malloc(m * sizeof *e);
    size_t i = 0;
    for (uint32_t l = 1; l <= L; l++) {
        e[i][0] = 0, e[i++][1] = l;         /* center - leaf */
        e[i][0] = l, e[i++][1] = l + L;     /* leaf - its outer vertex */
    }
    while (i < m)
        e[i][0] = 0, e[i++][1] = 1;
    graph g = from_edges(n, (const uint32_t (*)[2])e, m);
    same(c, &g, "a star with wide keys");
    graph_free(&g), free(e);
    tmap_cuda_close(c);
}

static uint32_t longest_row(const graph *g)
{
    uint32_t m = 0;
    for (uint32_t v = 0; v < g->n; v++)
        m = g->rowptr[v + 1] - g->rowptr[v] > m ? g->rowptr[v + 1] - g->rowptr[v] : m;
    return m;
}

/* Graphs whose rows are at most 32 long (self loops and repeats counted),
 * numbered without a sort by the cooperative kernel, and the same with one
 * row of 33 (the launches per level): a randomly relabeled path of 20,000
 * vertices (10,000 levels, one or two vertices each); a ring with random
 * chords, repeated edges and self loops, one vertex's row exactly 32. */
static void bounded_rows(void **state)
{
    tmap_cuda *c = test_gpu_open();
    enum { NP = 20000, NR = 30000, CH = 2 };
    uint32_t *lab = test_random_perm(NP, 6), (*e)[2] = malloc((size_t)NR * 8 * sizeof *e);
    for (uint32_t v = 0; v + 1 < NP; v++)
        e[v][0] = lab[v], e[v][1] = lab[v + 1];
    graph g = from_edges(NP, (const uint32_t (*)[2])e, NP - 1);
    assert_int_equal(longest_row(&g), 2);
    same(c, &g, "a relabeled path");
    graph_free(&g), free(lab);
    uint64_t x = 11;
    for (int over = 0; over < 2; over++) {
        size_t m = 0;
        for (uint32_t v = 0; v < NR; v++) /* the ring: every row 2 */
            e[m][0] = v, e[m++][1] = (v + 1) % NR;
        for (size_t i = 0; i < (size_t)NR * CH; i++) { /* chords, some twice, some loops */
            uint32_t a = (uint32_t)(next(&x) % NR), b = next(&x) % 8 ? (uint32_t)(next(&x) % NR) : a;
            e[m][0] = a, e[m++][1] = b;
            if (next(&x) % 8 == 0)
                e[m][0] = b, e[m++][1] = a;
        }
        for (uint32_t k = 0; k < 30 + (uint32_t)over; k++) /* vertex 7's row: 2 + 30 (+ 1) */
            e[m][0] = 7, e[m++][1] = (7 + 100 * (k + 1)) % NR;
        g = from_edges(NR, (const uint32_t (*)[2])e, m);
        uint32_t *cut = calloc(NR, 4); /* drop chords from rows that would pass 32 */
        for (uint32_t v = 0; v < NR; v++)
            cut[v] = g.rowptr[v + 1] - g.rowptr[v];
        size_t kept = NR;
        for (size_t i = NR; i < m; i++) {
            uint32_t a = e[i][0], b = e[i][1];
            int hub = i >= m - 30 - (size_t)over;
            if (!hub && (a == 7 || b == 7 || cut[a] > 30 || cut[b] > 30))
                continue;
            e[kept][0] = a, e[kept++][1] = b;
        }
        graph_free(&g), free(cut);
        g = from_edges(NR, (const uint32_t (*)[2])e, kept);
        assert_int_equal(g.rowptr[8] - g.rowptr[7], 32 + over);
        assert_int_equal(longest_row(&g), 32 + over);
        same(c, &g, over ? "a ring with chords, one row of 33+" : "a ring with chords, rows <= 32");
        graph_free(&g);
    }
    free(e);
    tmap_cuda_close(c);
}

/* Components whose first sweep's far vertex is farther out: a path of
 * 2L + 1 vertices with a pendant s on its middle, s the least label of
 * its component (the start, degree 1).  From s the last level is the two
 * ends (eccentricity L + 1); from the least-labelled end it is 2L, so the
 * numbering from s (at once, where both are cooperative) is discarded
 * after that end's sweep, and the end numbered beside the sweep from the
 * other end, which confirms it.  Six such components of different L (1 to
 * 600: L = 1 has 2L = L + 1, no discard), isolated vertices between them,
 * the path's labels shuffled within the component (s kept least). */
static void discarded(void **state)
{
    tmap_cuda *c = test_gpu_open();
    static const uint32_t len[6] = {1, 2, 7, 40, 600, 3};
    uint64_t x = 21;
    uint32_t n = 0, m = 0, (*e)[2] = malloc(4096 * sizeof *e);
    for (int k = 0; k < 6; k++) {
        uint32_t L = len[k], s = n++, np = 2 * L + 1, *lab = test_random_perm(np, 30 + k);
        for (uint32_t i = 0; i + 1 < np; i++)
            e[m][0] = n + lab[i], e[m++][1] = n + lab[i + 1];
        e[m][0] = s, e[m++][1] = n + lab[L];
        n += np;
        n += (uint32_t)(next(&x) % 3); /* isolated vertices */
        free(lab);
    }
    graph g = from_edges(n, (const uint32_t (*)[2])e, m);
    tmap_gpu_rcm_steps st;
    same_steps(c, &g, "paths with a pendant on the middle", &st);
    if (st.coop_sweeps && st.coop_number) {
        assert_int_equal(st.discarded, 5); /* every L > 1 */
        assert_int_equal(st.sweeps, 6);    /* each s's far end, alone (L = 1: it confirms s) */
        assert_int_equal(st.fused_sweeps, 5); /* the other end, beside the end's numbering */
    }
    graph_free(&g), free(e);
    tmap_cuda_close(c);
}

/* Threads (several per row, some rows none) by their row's position in a
 * random order, stably: rows ascending (the runs placed without a sort),
 * and the same threads shuffled (rows in any order: the sort). */
static void follow_case(int shuffled)
{
    tmap_cuda *c = test_gpu_open();
    uint64_t x = 9;
    uint32_t nrows = 70001;
    uint32_t *order = test_random_perm(nrows, 4), *where = malloc(nrows * 4);
    size_t n = 0, cap = (size_t)nrows * 8;
    uint32_t *row = malloc(cap * 4), *start = calloc(nrows + 1, 4);
    for (uint32_t r = 0; r < nrows; r++)
        for (uint32_t j = (uint32_t)(next(&x) % 8); j > 0; j--)
            row[n++] = r;
    for (size_t i = n; shuffled && i > 1; i--) {
        size_t j = next(&x) % i;
        uint32_t t = row[i - 1];
        row[i - 1] = row[j], row[j] = t;
    }
    for (size_t t = 0; t < n; t++)
        start[row[t] + 1]++;
    for (uint32_t v = 0; v < nrows; v++)
        where[order[v]] = v;
    uint32_t *at = calloc(nrows + 1, 4), *want = malloc(n * 4);
    for (uint32_t v = 0; v < nrows; v++) /* new row v: old row order[v] */
        at[v + 1] = at[v] + start[order[v] + 1];
    for (size_t t = 0; t < n; t++)
        want[at[where[row[t]]]++] = (uint32_t)t;
    uint64_t drow = test_device_copy(c, row, n * 4), dord = test_device_copy(c, order, nrows * 4);
    uint64_t dperm = test_device_alloc(c, n * 4);
    TMAP_CHECK(tmap_gpu_memre_follow(drow, n, dord, nrows, dperm, NULL, err));
    test_expect_device_u32(c, dperm, want, n, shuffled ? "threads following their rows, "
                           "rows in any order" : "threads following their rows");
    tmap_error e2 = {0};
    assert_int_equal(tmap_gpu_memre_rcm(drow, dord, 0, dperm, NULL, &e2), TMAP_ERR_INVALID);
    tmap_cuda_free(c, drow), tmap_cuda_free(c, dord), tmap_cuda_free(c, dperm);
    free(order), free(where), free(row), free(start), free(at), free(want);
    tmap_cuda_close(c);
}

static void follow_rows(void **state) { follow_case(0); }

static void follow_any_rows(void **state) { follow_case(1); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_graphs),
        cmocka_unit_test(grid3d),
        cmocka_unit_test(random_graphs),
        cmocka_unit_test(wide_keys),
        cmocka_unit_test(bounded_rows),
        cmocka_unit_test(discarded),
        cmocka_unit_test(follow_rows),
        cmocka_unit_test(follow_any_rows),
    };
    return test_gpu_main(tests, NULL, NULL);
}

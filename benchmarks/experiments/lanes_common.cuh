// lanes_common.cuh -- what the lane experiments share (bfs_lanes.cu,
// mummer_lanes.cu, deal_mem.cu; not built by CMake): the error check, the
// data generator (seed 7, the manifests' Pareto draws), the timing (median of
// `reps` launches after 2 warm-ups, optionally the L2 flushed before each),
// the orders as the layout transform applies them (slot i runs original
// thread perm[i]), and the host <-> device copies.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_) {                                                                      \
            printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static unsigned long long rs = 7;
static double unit()
{
    rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rs >> 11) * 0x1p-53;
}
static int pareto(double lo, double hi, double alpha)
{
    double v = lo * pow(1.0 - unit(), -1.0 / (alpha - 1.0));
    return (int)floor(v > hi ? hi : v);
}

__global__ void flush_l2(int *buf, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] += 1;
}
static int *flushbuf; // FLUSH_N ints, allocated by a caller that flushes
static const size_t FLUSH_N = (size_t)64 << 20; // 256 MiB

// median ms of `reps` launches of f after 2 warm-ups; flush: the L2 emptied
// before each launch (outside the timed region)
template <class F> static double median_ms(F f, int reps, bool flush = false)
{
    static cudaEvent_t a, b;
    if (!a) {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    std::vector<float> ms(reps);
    for (int r = -2; r < reps; r++) {
        if (flush) flush_l2<<<264, 512>>>(flushbuf, FLUSH_N);
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        if (r >= 0) CK(cudaEventElapsedTime(&ms[r], a, b));
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2];
}

// bin-and-deal of an order (regroup/deal.c): its warps of 32 dealt
// round-robin to the thread blocks, each warp in index order
static std::vector<int> dealt(const std::vector<int> &sorted, int block)
{
    size_t n = sorted.size(), nblocks = n / block, ngroups = n / 32;
    std::vector<int> perm(n);
    for (size_t g = 0; g < ngroups; g++) {
        int *dst = &perm[(g % nblocks) * block + (g / nblocks) * 32];
        std::copy(&sorted[g * 32], &sorted[g * 32 + 32], dst);
        std::sort(dst, dst + 32);
    }
    return perm;
}

// threads by a key, descending (stable)
template <class K> static std::vector<int> sorted_by(const std::vector<K> &key)
{
    std::vector<int> id(key.size());
    std::iota(id.begin(), id.end(), 0);
    std::stable_sort(id.begin(), id.end(), [&](int a, int b) { return key[a] > key[b]; });
    return id;
}

// 0 identity, 1 sorted by work descending, 2 bin-and-deal
static std::vector<int> order_of(const std::vector<long> &work, int which, int block)
{
    if (which == 0) {
        std::vector<int> id(work.size());
        std::iota(id.begin(), id.end(), 0);
        return id;
    }
    std::vector<int> s = sorted_by(work);
    return which == 1 ? s : dealt(s, block);
}

// bfs_topdown's input as its manifest draws it: half the vertices on the
// frontier, Pareto degrees (1..4096, alpha 2.1), edge lists at the scanned
// degrees, uniform neighbours in ne slots (wrapped), half the vertices visited
struct bfs_input {
    std::vector<int> frontier, degree, estart, adj;
    std::vector<unsigned char> visited;
    std::vector<long> work; // frontier x degree: a thread's iterations
    long edges;
};
static inline bfs_input bfs_draw(int n, int ne)
{
    bfs_input b{std::vector<int>(n), std::vector<int>(n), std::vector<int>(n), std::vector<int>(ne),
                std::vector<unsigned char>(n), std::vector<long>(n), 0};
    for (int i = 0; i < n; i++) b.frontier[i] = unit() < 0.5;
    for (int i = 0; i < n; i++) b.degree[i] = pareto(1, 4096, 2.1);
    for (int i = 0; i < n; i++) b.estart[i] = (int)b.edges, b.edges += b.degree[i];
    for (int i = 0; i < ne; i++) b.adj[i] = (int)(unit() * n);
    for (int i = 0; i < n; i++) b.visited[i] = unit() < 0.5;
    for (int i = 0; i < n; i++) b.work[i] = (long)b.frontier[i] * b.degree[i];
    return b;
}

// spmv_csr's input as its manifest draws it: Pareto row lengths (1..2048,
// alpha 2.1), rows at the scanned lengths, uniform columns and values in nz
// slots (wrapped), x uniform in (-1, 1)
struct spmv_input {
    std::vector<int> rowlen, rowstart, col;
    std::vector<float> val, x;
    std::vector<long> work; // the row lengths
    long nnz;
};
static inline spmv_input spmv_draw(int n, int nz)
{
    spmv_input m{std::vector<int>(n), std::vector<int>(n), std::vector<int>(nz), std::vector<float>(nz),
                 std::vector<float>(n), std::vector<long>(n), 0};
    for (int i = 0; i < n; i++) m.rowlen[i] = pareto(1, 2048, 2.1);
    for (int i = 0; i < n; i++) m.rowstart[i] = (int)m.nnz, m.nnz += m.rowlen[i];
    for (int i = 0; i < nz; i++) m.col[i] = (int)(unit() * n), m.val[i] = (float)(2 * unit() - 1);
    for (int i = 0; i < n; i++) m.x[i] = (float)(2 * unit() - 1);
    for (int i = 0; i < n; i++) m.work[i] = m.rowlen[i];
    return m;
}

template <class T> static T *upload(const std::vector<T> &h)
{
    T *d;
    CK(cudaMalloc(&d, h.size() * sizeof(T) + 4));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T> static std::vector<T> permuted(const std::vector<T> &h, const std::vector<int> &p)
{
    std::vector<T> o(h.size());
    for (size_t i = 0; i < h.size(); i++) o[i] = h[p[i]];
    return o;
}

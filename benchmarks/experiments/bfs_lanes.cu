// bfs_lanes.cu -- an experiment, not built by CMake: why bfs_topdown's and
// spmv_csr's groupings that put the heavy threads together (sorting,
// bin-and-deal) lose 90-160% on an H100 (issue 16, docs/model.md).
//
// Part A: the suite kernels (benchmarks/suite/bfs_topdown.cu, spmv_csr.cu) on
// data drawn as their manifests draw it (Pareto degrees / row lengths, an
// exclusive scan for the starts, uniform adjacency / columns), under three
// orders applied as the layout transform applies them (thread i takes the
// per-thread elements of original thread perm[i]): identity, sorted (work
// descending) and bin-and-deal (sorted, cut into warps, dealt round-robin to
// the thread blocks, each warp in index order: regroup/deal.c).  Variants of
// the loop change one thing at a time (the random byte store, the dependent
// load, the span the lanes' segments lie in: L2-resident or not, the L2
// flushed before each launch).  cyc/iter = median time x SM clock / the
// heaviest thread's iterations.
// Part B: one warp per SM walking its lanes' own segments (a serial chain:
// each load's address waits for the last), 1..32 active lanes, the segments
// in an L2-resident span or fresh from DRAM, with or without a dependent
// gathered byte (bfs's visited[u]); and the TLB control: the same L2-resident
// footprint read with ld.global.cg from one 2 MiB page a warp or 32.
//   nvcc -O3 -arch=sm_90 -o bfs_lanes benchmarks/experiments/bfs_lanes.cu && ./bfs_lanes [ncu]
// With the argument "ncu" only Part A's suite kernels run, once per order
// (for a profiler).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "../suite/bfs_topdown.cu"
#include "../suite/spmv_csr.cu"
#include "lanes_common.cuh"

// bfs_step with one thing changed: MODE 1 no store (count the unvisited; the
// unrolled iterations' loads may then overlap), 4 the same with the next
// adjacency load's index waiting for this visited byte (z is 0, the compiler
// cannot know it), as the store serializes the suite's loop; 2 no dependent
// load and no store (the adjacency walk alone), 3 the store unconditional
// without the load.
template <int MODE>
__global__ void bfs_var(const int *frontier, const int *degree, const int *edgestart,
                        const int *adj, const unsigned char *visited, unsigned char *next,
                        int *found, int vmask, int emask, int nodes)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nodes) return;
    int c = 0;
    if (frontier[v]) {
        int e0 = edgestart[v], d = degree[v], z = 0;
        for (int k = 0; k < d; k++) {
            int u = adj[(e0 + k + z) & emask] & vmask;
            if (MODE == 4) {
                unsigned char b = visited[u];
                c += !b;
                z = b >> 7;
            } else if (MODE == 1) {
                c += !visited[u];
            } else if (MODE == 2) {
                c += u;
            } else {
                next[u] = 1;
                c++;
            }
        }
    }
    found[v] = c;
}

static int mhz;

static const char *order_name[] = {"identity", "sorted", "bin-and-deal"};

static void part_a(bool ncu_mode)
{
    const int N = 1 << 20, B = 256, NE = 1 << 23, REPS = 9;
    // ---- bfs_topdown
    bfs_input in = bfs_draw(N, NE);
    const std::vector<int> &frontier = in.frontier, &degree = in.degree, &estart = in.estart, &adj = in.adj;
    const std::vector<unsigned char> &visited = in.visited;
    const std::vector<long> &work = in.work;
    long s = in.edges;
    long maxw = *std::max_element(work.begin(), work.end());
    int *dadj = upload(adj), *dfound;
    unsigned char *dvis = upload(visited), *dnext;
    CK(cudaMalloc(&dnext, N)); CK(cudaMemset(dnext, 0, N));
    CK(cudaMalloc(&dfound, N * 4));
    if (!ncu_mode) {
        printf("# bfs_topdown: %d threads in blocks of %d, %ld edges (adj %d ints, wrapped), heaviest work %ld\n",
               N, B, s, NE, maxw);
        printf("%-13s %-26s %10s %10s %8s\n", "order", "variant", "ms", "cyc/iter", "vs id");
    }
    struct variant { const char *name; int mode; int emask; bool flush; };
    const variant vars[] = {
        {"suite kernel (warm L2)", 0, NE - 1, false},
        {"suite kernel, L2 flushed", 0, NE - 1, true},
        {"adj span 4 MiB (L2)", 0, (1 << 20) - 1, false},
        {"no store", 1, NE - 1, false},
        {"no store, serial", 4, NE - 1, false},
        {"adj walk only", 2, NE - 1, false},
        {"store only, no load", 3, NE - 1, false},
        {"adj walk only, 4 MiB", 2, (1 << 20) - 1, false},
    };
    const int nv = ncu_mode ? 1 : (int)(sizeof vars / sizeof vars[0]);
    std::vector<double> base(nv);
    for (int o = 0; o < 3; o++) {
        std::vector<int> p = order_of(work, o, B);
        int *df = upload(permuted(frontier, p)), *dd = upload(permuted(degree, p)),
            *de = upload(permuted(estart, p));
        for (int v = 0; v < nv; v++) {
            const variant &x = vars[v];
            auto launch = [&]() {
                if (x.mode == 0) bfs_step<<<N / B, B>>>(df, dd, de, dadj, dvis, dnext, dfound, N - 1, x.emask, N);
                if (x.mode == 1) bfs_var<1><<<N / B, B>>>(df, dd, de, dadj, dvis, dnext, dfound, N - 1, x.emask, N);
                if (x.mode == 2) bfs_var<2><<<N / B, B>>>(df, dd, de, dadj, dvis, dnext, dfound, N - 1, x.emask, N);
                if (x.mode == 4) bfs_var<4><<<N / B, B>>>(df, dd, de, dadj, dvis, dnext, dfound, N - 1, x.emask, N);
                if (x.mode == 3) bfs_var<3><<<N / B, B>>>(df, dd, de, dadj, dvis, dnext, dfound, N - 1, x.emask, N);
            };
            if (ncu_mode) { launch(); CK(cudaDeviceSynchronize()); continue; }
            double ms = median_ms(launch, REPS, x.flush);
            if (o == 0) base[v] = ms;
            printf("%-13s %-26s %10.4f %10.1f %7.1f%%\n", order_name[o], x.name, ms,
                   ms * 1e-3 * mhz * 1e6 / maxw, 100.0 * (base[v] - ms) / base[v]);
        }
        CK(cudaFree(df)); CK(cudaFree(dd)); CK(cudaFree(de));
    }
    CK(cudaFree(dadj)); CK(cudaFree(dvis)); CK(cudaFree(dnext)); CK(cudaFree(dfound));
    // ---- spmv_csr
    spmv_input m = spmv_draw(N, NE);
    const std::vector<int> &rowlen = m.rowlen, &rowstart = m.rowstart, &col = m.col;
    const std::vector<float> &val = m.val, &x = m.x;
    const std::vector<long> &rw = m.work;
    s = m.nnz;
    maxw = *std::max_element(rw.begin(), rw.end());
    int *dcol = upload(col);
    float *dval = upload(val), *dx = upload(x), *dy;
    CK(cudaMalloc(&dy, N * 4));
    if (!ncu_mode)
        printf("# spmv_csr: %d rows in blocks of %d, %ld nonzeros (col, val %d each, wrapped), longest row %ld\n",
               N, B, s, NE, maxw);
    struct svariant { const char *name; int nzmask; bool flush; };
    const svariant sv[] = {
        {"suite kernel (warm L2)", NE - 1, false},
        {"suite kernel, L2 flushed", NE - 1, true},
        {"col/val span 4 MiB (L2)", (1 << 20) - 1, false},
    };
    const int nsv = ncu_mode ? 1 : 3;
    for (int o = 0; o < 3; o++) {
        std::vector<int> p = order_of(rw, o, B);
        int *dst = upload(permuted(rowstart, p)), *dl = upload(permuted(rowlen, p));
        for (int v = 0; v < nsv; v++) {
            auto launch = [&]() { spmv_csr_rows<<<N / B, B>>>(dst, dl, dcol, dval, dx, dy, N - 1, sv[v].nzmask, N); };
            if (ncu_mode) { launch(); CK(cudaDeviceSynchronize()); continue; }
            double ms = median_ms(launch, REPS, sv[v].flush);
            if (o == 0) base[v] = ms;
            printf("%-13s %-26s %10.4f %10.1f %7.1f%%\n", order_name[o], sv[v].name, ms,
                   ms * 1e-3 * mhz * 1e6 / maxw, 100.0 * (base[v] - ms) / base[v]);
        }
        CK(cudaFree(dst)); CK(cudaFree(dl));
    }
    CK(cudaFree(dcol)); CK(cudaFree(dval)); CK(cudaFree(dx)); CK(cudaFree(dy));
}

// Part B.  Each active lane walks its own segment from a start hashed from
// (rep, block, lane) in [0, amask]; the next load's index waits for the last
// value (v >> 30 is 0: the values are below 2^30).  DEP: then reads a byte
// at the value (in 1 MiB, L2-resident), as bfs reads visited[u].  CG: the
// walk's loads bypass L1 (ld.global.cg); pages 1 or 32: the TLB control's
// fixed starts (below) instead of a hashed one.
__device__ unsigned hash3(unsigned a, unsigned b, unsigned c)
{
    unsigned h = a * 0x9E3779B1u ^ b * 0x85EBCA77u ^ c * 0xC2B2AE3Du;
    h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h *= 0x297A2D39u; h ^= h >> 15;
    return h;
}

template <bool DEP, bool CG>
__global__ void walk(const int *a, const unsigned char *g, int *out, int L, unsigned amask, int lanes,
                     unsigned rep, int pages)
{
    int lane = threadIdx.x & 31;
    if (lane >= lanes) return;
    // pages 1: lane l of block b at (32 b + l) L (a warp's 32 L ints in one page);
    // pages 32: at l (2 MiB + 2 KiB) + b L (each lane in a page of its own)
    size_t start = pages == 1    ? ((size_t)blockIdx.x * 32 + lane) * L
                   : pages == 32 ? lane * (((size_t)2 << 20) / 4 + 512) + (size_t)blockIdx.x * L
                                 : (size_t)(hash3(rep, blockIdx.x, lane) & amask);
    int acc = 0, carry = 0;
    for (int k = 0; k < L; k++) {
        size_t i = pages ? start + k + carry : ((start + k + carry) & amask);
        int v = CG ? __ldcg(&a[i]) : a[i];
        if (DEP) v = g[v & 0xFFFFF];
        acc += v;
        carry = v >> 30;
    }
    out[blockIdx.x * 32 + lane] = acc;
}

static void part_b()
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const size_t BIG = (size_t)64 << 20; // 64 Mi ints = 256 MiB
    std::vector<int> h(BIG);
    for (size_t i = 0; i < BIG; i++) h[i] = (int)(unit() * (1 << 20)); // < 2^30
    std::vector<unsigned char> hg(1 << 20);
    for (auto &c : hg) c = (unsigned char)(unit() * 2);
    int *da = upload(h), *dout;
    unsigned char *dg = upload(hg);
    CK(cudaMalloc(&dout, sms * 32 * 4));
    const int L = 2048, REPS = 9;
    printf("# Part B: one warp a block, serial walk of L = %d loads a lane (each index waits for the last value)\n", L);
    printf("%-7s %-6s %-24s %-5s %10s %10s\n", "blocks", "lanes", "segments", "dep", "cyc/iter", "us");
    unsigned rep = 0;
    for (int blocks : {1, sms})
        for (int span = 0; span < 2; span++)
            for (int dep = 0; dep < 2; dep++)
                for (int lanes : {1, 2, 4, 8, 16, 32}) {
                    // span 0: 4 MiB, the same starts every launch (L2-resident after the warm-ups);
                    // span 1: 256 MiB, fresh starts every launch (DRAM)
                    unsigned amask = span ? (unsigned)(BIG - 1) : (1u << 20) - 1;
                    auto f = [&]() {
                        unsigned r = span ? ++rep : 0;
                        if (dep) walk<true, false><<<blocks, 32>>>(da, dg, dout, L, amask, lanes, r, 0);
                        else walk<false, false><<<blocks, 32>>>(da, dg, dout, L, amask, lanes, r, 0);
                    };
                    double ms = median_ms(f, REPS, false);
                    printf("%-7d %-6d %-24s %-5d %10.1f %10.1f\n", blocks, lanes,
                           span ? "256 MiB, fresh (DRAM)" : "4 MiB, warm (L2)", dep,
                           ms * 1e-3 * mhz * 1e6 / L, ms * 1e3);
                }
    // TLB control: L2-resident, ld.global.cg, a warp's lanes 2 KiB apart (one 2 MiB page)
    // or 2 MiB + 2 KiB apart (32 pages a warp); the same footprint, 2 KiB a lane, either way.
    const int LT = 512;
    for (int blocks : {1, sms})
        for (int spread = 0; spread < 2; spread++)
            for (int lanes : {1, 32}) {
                auto f = [&]() { walk<false, true><<<blocks, 32>>>(da, dg, dout, LT, 0, lanes, 0, spread ? 32 : 1); };
                double ms = median_ms(f, REPS, false);
                printf("%-7d %-6d %-24s %-5s %10.1f %10.1f\n", blocks, lanes,
                       spread ? "cg, 32 pages a warp" : "cg, 1 page a warp", "-",
                       ms * 1e-3 * mhz * 1e6 / LT, ms * 1e3);
            }
    CK(cudaFree(da)); CK(cudaFree(dg)); CK(cudaFree(dout));
}

int main(int argc, char **argv)
{
    bool ncu_mode = argc > 1 && !strcmp(argv[1], "ncu");
    CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, 0));
    mhz /= 1000;
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    CK(cudaMalloc(&flushbuf, FLUSH_N * 4));
    CK(cudaMemset(flushbuf, 0, FLUSH_N * 4));
    if (!ncu_mode)
        printf("# %s, %d SMs, max SM clock %d MHz, L2 %d MiB; medians of 9 launches after 2 warm-ups\n",
               pr.name, pr.multiProcessorCount, mhz, pr.l2CacheSize >> 20);
    part_a(ncu_mode);
    if (!ncu_mode) part_b();
    return 0;
}

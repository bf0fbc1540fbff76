// deal_mem.cu -- an experiment, not built by CMake: why spmv_csr's and
// bfs_topdown's bin-and-deal lose 90-150% on an H100 where the SM model says
// 32% and 126% (issue 16, docs/model.md "What it cannot see").
//
// The suite kernels (benchmarks/suite/spmv_csr.cu, bfs_topdown.cu) on data
// drawn as benchmarks/experiments/bfs_lanes.cu draws it (lanes_common.cuh:
// the manifests' distributions, seed 7; spmv first), under the identity,
// sorted (work descending) and bin-and-deal orders applied as the layout
// transform applies them.  Per order:
//  * "suite": the suite kernel, median of 9 launches after 2 warm-ups.
//  * "timed": a copy that records, per thread, its SM, globaltimer at entry and
//    exit and its clock64 cycles (the loop's SASS is the suite's); per warp the
//    earliest entry, latest exit, most cycles.  The critical warp (latest exit):
//    its cycles an iteration, when it ran, and how many warps ran on the GPU
//    meanwhile (the load it saw).
//  * "alone": the timed kernel with only some warps' work kept (the others'
//    row lengths / frontier flags 0): the critical warp alone on the GPU, its
//    thread block alone, and (bin-and-deal) every block's first warp (the dealt
//    heavy warps, one a block, without the light ones).
//  * spmv "hoisted": the suite's loop with each gathered x[col] made to wait for
//    the body's last val load (a zero from a parameter), so ptxas issues all
//    eight col/val loads of an unrolled body before any gather.  ptxas's own
//    schedule of the suite loop issues val[3], val[4] only after col[1]'s value
//    is back (it waits for it to form the first gather's address): two loads
//    from DRAM one after the other in a body whose lanes start new sectors.
//   nvcc -O3 -arch=sm_90 -o deal_mem benchmarks/experiments/deal_mem.cu && ./deal_mem
//   ./deal_mem ncu   (each order's suite and hoisted kernels once, for a profiler)
//   XMOD=K: spmv's columns taken mod K (x's gathers within K words: L2-resident, the
//   gather round's DRAM share gone); SKIP_BFS=1: spmv only
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

struct rec {
    unsigned long long g0, g1; // globaltimer at entry, exit (ns)
    unsigned cyc, sm;          // clock64 cycles entry to exit, SM id
};

__device__ unsigned long long gtime()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ unsigned smid()
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

// spmv: HOIST 0 the suite's loop; 1 each gather waits for the body's last val
// load (zero == 0 at run time).  TIMED: per-thread records.
template <int HOIST, bool TIMED>
__global__ void spmv_k(const int *rowstart, const int *rowlen, const int *col, const float *val,
                       const float *x, float *y, int xmask, int nzmask, int rows, int zero, rec *out)
{
    unsigned long long g0 = TIMED ? gtime() : 0;
    long long c0 = TIMED ? clock64() : 0;
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int k0 = rowstart[r], n = rowlen[r];
    float s = 0.f;
    int k = 0;
    if (HOIST) {
#pragma unroll 1
        for (; k + 4 <= n; k += 4) {
            int e = k0 + k, c[4];
            float v[4];
#pragma unroll
            for (int j = 0; j < 4; j++) c[j] = col[(e + j) & nzmask];
#pragma unroll
            for (int j = 0; j < 4; j++) v[j] = val[(e + j) & nzmask];
            int z = __float_as_int(v[3]) & zero;
#pragma unroll
            for (int j = 0; j < 4; j++) s += v[j] * x[(c[j] | z) & xmask];
        }
    }
    for (; k < n; k++) {
        int e = (k0 + k) & nzmask;
        s += val[e] * x[col[e] & xmask];
    }
    y[r] = s;
    if (TIMED) out[r] = rec{g0, gtime(), (unsigned)(clock64() - c0), smid()};
}

// bfs: the suite's step, timed.
__global__ void bfs_timed(const int *frontier, const int *degree, const int *edgestart, const int *adj,
                          const unsigned char *visited, unsigned char *next, int *found, int vmask,
                          int emask, int nodes, rec *out)
{
    unsigned long long g0 = gtime();
    long long c0 = clock64();
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nodes) return;
    int c = 0;
    if (frontier[v]) {
        int e0 = edgestart[v], d = degree[v];
        for (int k = 0; k < d; k++) {
            int u = adj[(e0 + k) & emask] & vmask;
            if (!visited[u]) {
                next[u] = 1;
                c++;
            }
        }
    }
    found[v] = c;
    out[v] = rec{g0, gtime(), (unsigned)(clock64() - c0), smid()};
}

static int mhz, nsm;
static bool ncu_mode;

static const char *order_name[] = {"identity", "sorted", "bin-and-deal"};

// The timed launch's records, per warp; prints the critical warp and the load.
static void analyse(const char *kernel, const char *order, const char *what, const std::vector<rec> &r,
                    const std::vector<long> &slotwork, double ms)
{
    size_t nw = r.size() / 32;
    std::vector<unsigned long long> ws(nw, ~0ULL), we(nw, 0);
    std::vector<unsigned> wc(nw, 0);
    std::vector<long> wwork(nw, 0);
    unsigned long long t0 = ~0ULL, t1 = 0;
    for (size_t i = 0; i < r.size(); i++) {
        size_t w = i / 32;
        ws[w] = std::min(ws[w], r[i].g0), we[w] = std::max(we[w], r[i].g1);
        wc[w] = std::max(wc[w], r[i].cyc), wwork[w] = std::max(wwork[w], slotwork[i]);
    }
    for (size_t w = 0; w < nw; w++) t0 = std::min(t0, ws[w]), t1 = std::max(t1, we[w]);
    size_t crit = 0;
    for (size_t w = 0; w < nw; w++)
        if (we[w] > we[crit]) crit = w;
    // warps (with work) running on the GPU during the critical warp's life, time-averaged
    double busy = 0;
    long working = 0;
    std::vector<unsigned long long> ends;
    for (size_t w = 0; w < nw; w++) {
        if (!wwork[w]) continue;
        working++;
        ends.push_back(we[w]);
        unsigned long long a = std::max(ws[w], ws[crit]), b = std::min(we[w], we[crit]);
        if (b > a && w != crit) busy += (double)(b - a);
    }
    std::sort(ends.begin(), ends.end());
    double life = (double)(we[crit] - ws[crit]);
    auto at = [&](double q) { return (ends[(size_t)(q * (ends.size() - 1))] - t0) * 1e-3; };
    double iters = (double)wwork[crit];
    printf("%-8s %-13s %-40s %9.4f %9.1f %6zu %6.0f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f\n", kernel, order, what, ms,
           (t1 - t0) * 1e-3, crit, iters, (ws[crit] - t0) * 1e-3, life * 1e-3,
           iters > 0 ? wc[crit] / iters : 0.0, ends.size() > 1 ? at(0.5) : 0.0, ends.size() > 1 ? at(0.99) : 0.0,
           ends.size() > 1 ? (ends[ends.size() - 2] - t0) * 1e-3 : 0.0, life > 0 ? busy / life : 0.0);
    (void)working;
}

static void header()
{
    printf("%-8s %-13s %-40s %9s %9s %6s %6s %8s %8s %8s %8s %8s %8s %9s\n", "kernel", "order", "variant", "ms",
           "span_us", "crit", "iters", "start_us", "life_us", "cyc/iter", "end50_us", "end99_us", "end2nd_us",
           "co-warps");
}

// which warps keep their work: all, the critical warp, its block, each block's first warp
enum keep { ALL, CRIT_WARP, CRIT_BLOCK, FIRST_WARPS };
static const char *keep_name[] = {"", "crit warp alone", "crit block alone", "each block's warp 0"};
// the timed runs: which warps keep their work, and the L2 flushed before each launch or not
struct variant { keep k; bool flush; };
static const variant variants[] = {{ALL, false}, {ALL, true}, {CRIT_WARP, false}, {CRIT_WARP, true},
                                   {CRIT_BLOCK, true}, {FIRST_WARPS, true}};
static void variant_name(char *buf, size_t n, const char *kernel, const variant &v)
{
    snprintf(buf, n, "%s%s%s%s", kernel, v.k ? ", " : "", keep_name[v.k], v.flush ? ", flushed" : "");
}
static std::vector<int> kept(const std::vector<long> &slotwork, keep k, int block)
{
    size_t n = slotwork.size();
    std::vector<int> on(n, 1);
    if (k == ALL) return on;
    size_t best = 0;
    for (size_t i = 0; i < n; i++)
        if (slotwork[i] > slotwork[best]) best = i;
    for (size_t i = 0; i < n; i++) {
        if (k == CRIT_WARP) on[i] = i / 32 == best / 32;
        if (k == CRIT_BLOCK) on[i] = i / block == best / block;
        if (k == FIRST_WARPS) on[i] = (i % block) < 32;
    }
    return on;
}

static void run_spmv()
{
    const int N = 1 << 20, B = 256, NE = 1 << 23, REPS = 9;
    spmv_input m = spmv_draw(N, NE);
    const char *xmod = getenv("XMOD"); /* x's gathers kept within its first XMOD words (L2-resident) */
    if (xmod && atoi(xmod) > 0) {
        for (int &c : m.col)
            c %= atoi(xmod);
        if (!ncu_mode) printf("# XMOD=%d: every column taken mod %d (x's gathers within %d KB)\n", atoi(xmod), atoi(xmod),
                              atoi(xmod) * 4 / 1024);
    }
    const std::vector<int> &rowlen = m.rowlen, &rowstart = m.rowstart;
    const std::vector<long> &rw = m.work;
    long s = m.nnz;
    int *dcol = upload(m.col);
    float *dval = upload(m.val), *dx = upload(m.x), *dy;
    rec *drec;
    CK(cudaMalloc(&dy, N * 4));
    CK(cudaMalloc(&drec, N * sizeof(rec)));
    std::vector<rec> hrec(N);
    if (!ncu_mode) printf("# spmv_csr: %d rows in blocks of %d, %ld nonzeros (col, val %d each, wrapped)\n", N, B, s, NE);
    for (int o = 0; o < 3; o++) {
        std::vector<int> p = order_of(rw, o, B);
        std::vector<long> slotwork = permuted(rw, p);
        int *dst = upload(permuted(rowstart, p)), *dl = upload(permuted(rowlen, p));
        auto suite = [&]() { spmv_csr_rows<<<N / B, B>>>(dst, dl, dcol, dval, dx, dy, N - 1, NE - 1, N); };
        auto hoist = [&]() { spmv_k<1, false><<<N / B, B>>>(dst, dl, dcol, dval, dx, dy, N - 1, NE - 1, N, 0, drec); };
        if (ncu_mode) {
            suite(), hoist();
            CK(cudaDeviceSynchronize());
            CK(cudaFree(dst)); CK(cudaFree(dl));
            continue;
        }
        printf("%-8s %-13s %-40s %9.4f\n", "spmv", order_name[o], "suite", median_ms(suite, REPS));
        printf("%-8s %-13s %-40s %9.4f\n", "spmv", order_name[o], "hoisted", median_ms(hoist, REPS));
        for (int hz = 0; hz < 2; hz++)
            for (const variant &v : variants) {
                if (v.k == FIRST_WARPS && o != 2) continue;
                std::vector<int> on = kept(slotwork, v.k, B);
                std::vector<int> len = permuted(rowlen, p);
                std::vector<long> w = slotwork;
                for (int i = 0; i < N; i++)
                    if (!on[i]) len[i] = 0, w[i] = 0;
                int *dl2 = upload(len);
                auto f = [&]() {
                    if (hz) spmv_k<1, true><<<N / B, B>>>(dst, dl2, dcol, dval, dx, dy, N - 1, NE - 1, N, 0, drec);
                    else spmv_k<0, true><<<N / B, B>>>(dst, dl2, dcol, dval, dx, dy, N - 1, NE - 1, N, 0, drec);
                };
                double ms = median_ms(f, REPS, v.flush);
                CK(cudaMemcpy(hrec.data(), drec, N * sizeof(rec), cudaMemcpyDeviceToHost));
                char what[64];
                variant_name(what, sizeof what, hz ? "hoisted" : "timed", v);
                analyse("spmv", order_name[o], what, hrec, w, ms);
                CK(cudaFree(dl2));
            }
        CK(cudaFree(dst)); CK(cudaFree(dl));
    }
    CK(cudaFree(dcol)); CK(cudaFree(dval)); CK(cudaFree(dx)); CK(cudaFree(dy)); CK(cudaFree(drec));
}

static void run_bfs()
{
    const int N = 1 << 20, B = 256, NE = 1 << 23, REPS = 9;
    bfs_input in = bfs_draw(N, NE);
    const std::vector<int> &frontier = in.frontier, &degree = in.degree, &estart = in.estart;
    const std::vector<long> &work = in.work;
    long s = in.edges;
    int *dadj = upload(in.adj), *dfound;
    unsigned char *dvis = upload(in.visited), *dnext;
    rec *drec;
    CK(cudaMalloc(&dnext, N)); CK(cudaMemset(dnext, 0, N));
    CK(cudaMalloc(&dfound, N * 4));
    CK(cudaMalloc(&drec, N * sizeof(rec)));
    std::vector<rec> hrec(N);
    if (!ncu_mode) printf("# bfs_topdown: %d threads in blocks of %d, %ld edges (adj %d ints, wrapped)\n", N, B, s, NE);
    for (int o = 0; o < 3; o++) {
        std::vector<int> p = order_of(work, o, B);
        std::vector<long> slotwork = permuted(work, p);
        int *dd = upload(permuted(degree, p)), *de = upload(permuted(estart, p));
        std::vector<int> fr = permuted(frontier, p);
        int *df = upload(fr);
        auto suite = [&]() { bfs_step<<<N / B, B>>>(df, dd, de, dadj, dvis, dnext, dfound, N - 1, NE - 1, N); };
        if (ncu_mode) {
            suite();
            CK(cudaDeviceSynchronize());
            CK(cudaFree(df)); CK(cudaFree(dd)); CK(cudaFree(de));
            continue;
        }
        printf("%-8s %-13s %-40s %9.4f\n", "bfs", order_name[o], "suite", median_ms(suite, REPS));
        for (const variant &v : variants) {
            if (v.k == FIRST_WARPS && o != 2) continue;
            std::vector<int> on = kept(slotwork, v.k, B);
            std::vector<int> f2 = fr;
            std::vector<long> w = slotwork;
            for (int i = 0; i < N; i++)
                if (!on[i]) f2[i] = 0, w[i] = 0;
            int *df2 = upload(f2);
            auto f = [&]() { bfs_timed<<<N / B, B>>>(df2, dd, de, dadj, dvis, dnext, dfound, N - 1, NE - 1, N, drec); };
            double ms = median_ms(f, REPS, v.flush);
            CK(cudaMemcpy(hrec.data(), drec, N * sizeof(rec), cudaMemcpyDeviceToHost));
            char what[64];
            variant_name(what, sizeof what, "timed", v);
            analyse("bfs", order_name[o], what, hrec, w, ms);
            CK(cudaFree(df2));
        }
        CK(cudaFree(df)); CK(cudaFree(dd)); CK(cudaFree(de));
    }
    CK(cudaFree(dadj)); CK(cudaFree(dvis)); CK(cudaFree(dnext)); CK(cudaFree(dfound)); CK(cudaFree(drec));
}

int main(int argc, char **argv)
{
    ncu_mode = argc > 1 && !strcmp(argv[1], "ncu");
    CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, 0));
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    mhz /= 1000;
    CK(cudaMalloc(&flushbuf, FLUSH_N * 4));
    CK(cudaMemset(flushbuf, 0, FLUSH_N * 4));
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    if (!ncu_mode) {
        printf("# %s, %d SMs, max SM clock %d MHz, L2 %d MiB; medians of 9 launches after 2 warm-ups\n", pr.name,
               nsm, mhz, pr.l2CacheSize >> 20);
        printf("# times from each run's first thread entry; crit = the warp that ends last (its index in the grid),\n"
               "# iters = its heaviest lane's iterations, cyc/iter = its clock64 cycles / iters, end50/end99/end2nd =\n"
               "# when half, 99%%, all but one of the warps with work had ended, co-warps = warps with work running\n"
               "# beside it, averaged over its life\n");
        header();
    }
    run_spmv();
    if (!getenv("SKIP_BFS"))
        run_bfs();
    return 0;
}

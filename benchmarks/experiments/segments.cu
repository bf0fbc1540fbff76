// segments.cu -- an experiment, not built by CMake: issue 19's item 5 (control
// flow and memory together).  zhang2011 sec. 4.3 treats the control flow first
// (job swapping: our regrouping) and then reorders the data for the memory
// references the regrouping made irregular.  For the suite's spmv_csr and
// bfs_topdown each thread walks its own segment (col/val or adj from
// rowstart[r]); the regrouping moves the threads, not the segments.  This
// measures, on the suite's own kernels, what relocating the segments into the
// regrouped order gives (rowstart' = exclusive scan of the lengths in slot
// order, the nonzeros copied there), beside the regrouping alone, and, as an
// upper bound that no relocation of the data can reach without changing the
// kernel, a sliced layout (SELL-32: a warp's 32 segments interleaved, lane l's
// k-th entry at base + 32 k + l) read by a kernel of our own.
//   orders: original; sorted (the heaviest first over the grid, homogeneous
//   warps); bin-and-deal (sorted warps dealt round-robin to blocks of 256)
//   each: segments in place (what threadmap's layout transform does today)
//   and relocated (the combination); every output compared with the original.
// Inputs: 2^20 rows (vertices), lengths a truncated power law (the suite's
// manifests: spmv [1, 2048, 2.1], bfs [1, 4096, 2.1], bfs frontier 1/2),
// columns uniform; the nonzero buffers sized to the total (no wrap).  Not the
// manifests' generator: same shape, our own draw (seed 7).
//   nvcc -O3 -arch=sm_90 -o segments benchmarks/experiments/segments.cu && ./segments
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <numeric>
#include <algorithm>
#include "../suite/spmv_csr.cu"
#include "../suite/bfs_topdown.cu"
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

static unsigned long long st = 7;
static unsigned rnd() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)(st >> 33); }
static double unif() { return (rnd() + 0.5) / 2147483648.0; }
static int powerlaw(int lo, int hi, double a)
{
    double u = unif(), l = pow((double)lo, 1 - a), h = pow((double)hi + 1, 1 - a);
    int v = (int)pow(l + u * (h - l), 1 / (1 - a));
    return v < lo ? lo : v > hi ? hi : v;
}

// The upper bound: SELL-32 rows, lane l of warp w reads base[w] + 32 k + l.
__global__ void spmv_sell(const int *base, const int *len, const int *col, const float *val,
                          const float *x, float *y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int k0 = base[r >> 5] + (r & 31), n = len[r];
    float s = 0.f;
    for (int k = 0; k < n; k++) s += val[k0 + 32 * k] * x[col[k0 + 32 * k]];
    y[r] = s;
}

static cudaEvent_t e0, e1;
template <class F> static double median_us(F launch)
{
    const int reps = 11;
    std::vector<float> ms(reps);
    for (int r = -3; r < reps; r++) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&ms[r], e0, e1));
    }
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2] * 1e3;
}

template <class T> static T *up(const std::vector<T> &h)
{
    T *d;
    CK(cudaMalloc(&d, h.size() * sizeof(T) + 4));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

// perm[s]: the original thread slot s runs.
static std::vector<int> sorted_order(const std::vector<int> &key)
{
    std::vector<int> p(key.size());
    std::iota(p.begin(), p.end(), 0);
    std::stable_sort(p.begin(), p.end(), [&](int a, int b) { return key[a] > key[b]; });
    return p;
}
static std::vector<int> deal(const std::vector<int> &sorted, int block)
{
    size_t n = sorted.size(), nb = n / block;
    std::vector<int> p(n);
    for (size_t g = 0; g < n / 32; g++) {
        int *dst = &p[(g % nb) * block + (g / nb) * 32];
        std::copy(sorted.begin() + g * 32, sorted.begin() + g * 32 + 32, dst);
        std::sort(dst, dst + 32);
    }
    return p;
}

struct csr { std::vector<int> start, len, col; std::vector<float> val; };

// The segments of `a` in slot order: start = scan of the lengths.
static csr relocate(const csr &a, const std::vector<int> &perm)
{
    csr b;
    size_t n = perm.size();
    b.start.resize(n), b.len.resize(n);
    size_t at = 0;
    for (size_t s = 0; s < n; s++) {
        int t = perm[s];
        b.start[s] = (int)at, b.len[s] = a.len[t];
        for (int k = 0; k < a.len[t]; k++) {
            b.col.push_back(a.col[a.start[t] + k]);
            if (!a.val.empty()) b.val.push_back(a.val[a.start[t] + k]);
        }
        at += a.len[t];
    }
    return b;
}
// The segments in place, the per-thread arrays moved (the layout transform).
static csr moved(const csr &a, const std::vector<int> &perm)
{
    csr b = a;
    for (size_t s = 0; s < perm.size(); s++) b.start[s] = a.start[perm[s]], b.len[s] = a.len[perm[s]];
    return b;
}
// SELL-32 of the slot order (lengths padded to the warp's longest).
static csr sell(const csr &a, const std::vector<int> &perm, std::vector<int> &base)
{
    csr b;
    size_t n = perm.size();
    b.len.resize(n);
    base.assign(n / 32, 0);
    size_t at = 0;
    for (size_t w = 0; w < n / 32; w++) {
        int m = 0;
        for (int l = 0; l < 32; l++) m = std::max(m, a.len[perm[w * 32 + l]]);
        base[w] = (int)at;
        b.col.resize(at + 32 * (size_t)m, 0), b.val.resize(at + 32 * (size_t)m, 0.f);
        for (int l = 0; l < 32; l++) {
            int t = perm[w * 32 + l];
            b.len[w * 32 + l] = a.len[t];
            for (int k = 0; k < a.len[t]; k++)
                b.col[at + 32 * k + l] = a.col[a.start[t] + k], b.val[at + 32 * k + l] = a.val[a.start[t] + k];
        }
        at += 32 * (size_t)m;
    }
    return b;
}

static int mask_of(size_t n) { size_t m = 1; while (m < n) m <<= 1; return (int)(m - 1); }

static void spmv(const csr &a, const std::vector<float> &x)
{
    int n = (int)a.len.size();
    float *dx = up(x), *dy;
    CK(cudaMalloc(&dy, n * 4));
    std::vector<float> ref;
    printf("\nspmv_csr (the suite's kernel), %d rows, %zu nonzeros, longest row %d\n", n, a.col.size(),
           *std::max_element(a.len.begin(), a.len.end()));
    printf("%-14s %-10s %10s %8s %s\n", "order", "segments", "us", "vs orig", "same");
    double orig = 0;
    std::vector<int> id(n);
    std::iota(id.begin(), id.end(), 0);
    std::vector<int> srt = sorted_order(a.len), dl = deal(srt, 256);
    const std::vector<int> *orders[] = {&id, &srt, &dl};
    const char *oname[] = {"original", "sorted", "bin-and-deal"};
    for (int o = 0; o < 3; o++)
        for (int how = 0; how < (o ? 3 : 1); how++) {
            const std::vector<int> &p = *orders[o];
            std::vector<int> base;
            csr b = how == 0 ? moved(a, p) : how == 1 ? relocate(a, p) : sell(a, p, base);
            int *ds = up(how == 2 ? base : b.start), *dlen = up(b.len), *dc = up(b.col);
            float *dv = up(b.val);
            int nz = mask_of(b.col.size()), xm = (int)x.size() - 1;
            double us = median_us([&] {
                if (how == 2)
                    spmv_sell<<<n / 256, 256>>>(ds, dlen, dc, dv, dx, dy, n);
                else
                    spmv_csr_rows<<<n / 256, 256>>>(ds, dlen, dc, dv, dx, dy, xm, nz, n);
            });
            CK(cudaGetLastError());
            std::vector<float> y(n), yo(n);
            CK(cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost));
            for (int s = 0; s < n; s++) yo[p[s]] = y[s];
            bool same = true;
            if (o == 0) ref = yo, orig = us;
            else for (int r = 0; r < n && same; r++) same = fabsf(yo[r] - ref[r]) <= 1e-4f * (1 + fabsf(ref[r]));
            printf("%-14s %-10s %10.1f %7.2fx %s\n", oname[o],
                   how == 0 ? "in place" : how == 1 ? "relocated" : "SELL-32*", us, orig / us,
                   same ? "yes" : "NO");
            CK(cudaFree(ds)); CK(cudaFree(dlen)); CK(cudaFree(dc)); CK(cudaFree(dv));
        }
    CK(cudaFree(dx)); CK(cudaFree(dy));
}

static void bfs(const csr &a, const std::vector<int> &frontier, const std::vector<unsigned char> &visited)
{
    int n = (int)a.len.size();
    std::vector<int> work(n);
    for (int v = 0; v < n; v++) work[v] = frontier[v] * a.len[v];
    unsigned char *dvis = up(visited), *dnext;
    int *dfound;
    CK(cudaMalloc(&dnext, n)); CK(cudaMalloc(&dfound, n * 4));
    printf("\nbfs_topdown (the suite's kernel), %d vertices, %zu edges, half on the frontier\n", n,
           a.col.size());
    printf("%-14s %-10s %10s %8s %s\n", "order", "segments", "us", "vs orig", "same");
    std::vector<int> id(n);
    std::iota(id.begin(), id.end(), 0);
    std::vector<int> srt = sorted_order(work), dl = deal(srt, 256);
    const std::vector<int> *orders[] = {&id, &srt, &dl};
    const char *oname[] = {"original", "sorted", "bin-and-deal"};
    double orig = 0;
    std::vector<int> reff;
    std::vector<unsigned char> refn;
    for (int o = 0; o < 3; o++)
        for (int how = 0; how < (o ? 2 : 1); how++) {
            const std::vector<int> &p = *orders[o];
            csr b = how == 0 ? moved(a, p) : relocate(a, p);
            std::vector<int> f(n);
            for (int s = 0; s < n; s++) f[s] = frontier[p[s]];
            int *dfr = up(f), *ds = up(b.start), *dlen = up(b.len), *dc = up(b.col);
            int em = mask_of(b.col.size());
            double us = median_us([&] {
                CK(cudaMemsetAsync(dnext, 0, n));
                bfs_step<<<n / 256, 256>>>(dfr, dlen, ds, dc, dvis, dnext, dfound, n - 1, em, n);
            });
            CK(cudaGetLastError());
            std::vector<int> fo(n), found(n);
            std::vector<unsigned char> nx(n);
            CK(cudaMemcpy(fo.data(), dfound, n * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(nx.data(), dnext, n, cudaMemcpyDeviceToHost));
            for (int s = 0; s < n; s++) found[p[s]] = fo[s];
            if (o == 0) reff = found, refn = nx, orig = us;
            bool same = found == reff && nx == refn;
            printf("%-14s %-10s %10.1f %7.2fx %s\n", oname[o], how ? "relocated" : "in place", us,
                   orig / us, same ? "yes" : "NO");
            CK(cudaFree(dfr)); CK(cudaFree(ds)); CK(cudaFree(dlen)); CK(cudaFree(dc));
        }
}

int main()
{
    const int n = 1 << 20;
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    int mhz = 0, drv = 0;
    CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, 0));
    CK(cudaDriverGetVersion(&drv));
    printf("# %s, %d SMs, max SM clock %d MHz, driver API %d; kernel times: CUDA events, medians "
           "of 11 after 3 warm-ups (bfs: next cleared before each launch, inside the time)\n",
           pr.name, pr.multiProcessorCount, mhz / 1000, drv);
    printf("# * SELL-32: a kernel of our own over an interleaved layout, the bound of what a "
           "relocation could give were the kernel's stride changed; not applicable to the "
           "suite's kernel\n");
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    csr a;
    a.start.resize(n), a.len.resize(n);
    for (int r = 0; r < n; r++) a.len[r] = powerlaw(1, 2048, 2.1);
    for (int r = 0, at = 0; r < n; at += a.len[r], r++) a.start[r] = at;
    size_t nnz = (size_t)a.start[n - 1] + a.len[n - 1];
    a.col.resize(nnz), a.val.resize(nnz);
    for (size_t e = 0; e < nnz; e++) a.col[e] = (int)(rnd() % n), a.val[e] = (float)(unif() * 2 - 1);
    std::vector<float> x(n);
    for (auto &v : x) v = (float)(unif() * 2 - 1);
    spmv(a, x);

    csr g;
    g.start.resize(n), g.len.resize(n);
    std::vector<int> frontier(n);
    std::vector<unsigned char> visited(n);
    for (int v = 0; v < n; v++) g.len[v] = powerlaw(1, 4096, 2.1), frontier[v] = rnd() & 1, visited[v] = rnd() & 1;
    for (int v = 0, at = 0; v < n; at += g.len[v], v++) g.start[v] = at;
    size_t ne = (size_t)g.start[n - 1] + g.len[n - 1];
    g.col.resize(ne);
    for (size_t e = 0; e < ne; e++) g.col[e] = (int)(rnd() % n);
    bfs(g, frontier, visited);
    return 0;
}

// walk_unit.cu -- an experiment, not built by CMake: what one lane pays to
// walk its own segment from DRAM, per byte walked (issue 16, the SM model's
// walk term, docs/model.md "A walked body's share").  The model charges a
// walked load the DRAM latency in a share bytes / 32 of its executions (a new
// 32-byte sector); spmv_csr's unrolled body walks 16 bytes of two arrays an
// execution.  Here one thread alone on the GPU reads U consecutive 4-byte
// words of NA arrays an iteration, and the next iteration's address waits for
// the loaded values, so iterations do not overlap; per iteration, cycles
// (clock64 in the kernel) with the arrays
//   hot   in a 128-byte window (L1 hits after the first pass),
//   warm  walked again right after a first launch (L2 hits; the L1 starts
//         each launch empty),
//   cold  walked after 512 MiB were written (DRAM),
// and the same under each L2 fetch granularity hint
// (cudaLimitMaxL2FetchGranularity; its default is printed).  From these,
// (cold - hot) / ((U x 4 / 32) x (DRAM - L1)) is the share of a new 32-byte
// sector's DRAM round the walk pays.
//   nvcc -O3 -arch=sm_90 -o walk_unit benchmarks/experiments/walk_unit.cu && ./walk_unit
#include <algorithm>
#include <vector>
#include "probe_common.cuh"

template <int U, int NA>
__global__ void walk(const int *a, const int *b, long long iters, unsigned window, long long *cycles,
                     int *out)
{
    long long i = 0;
    int acc = 0;
    long long t0 = clock64();
    for (long long it = 0; it < iters; it++) {
        long long at = window ? (i & (window - 1)) : i;
        int v = 0;
#pragma unroll
        for (int k = 0; k < U; k++)
            v += a[at + k];
        if (NA == 2) {
#pragma unroll
            for (int k = 0; k < U; k++)
                v += b[at + k];
        }
        acc += v;
        i += U + (v == 0x7fffffff); /* never true: the next address waits for v */
    }
    cycles[0] = clock64() - t0;
    out[0] = acc;
}

enum { ITERS = 16384, PAD = 64 };

struct bufs { int *a, *b, *out; long long *cyc; char *flush; size_t flush_bytes; };

template <int U, int NA>
static double run(const bufs &m, unsigned window, int mode) /* 0 hot, 1 warm, 2 cold */
{
    long long c = 0;
    std::vector<double> v;
    for (int r = 0; r < 5; r++) {
        if (mode == 2)
            CK(cudaMemset(m.flush, r, m.flush_bytes));
        else
            walk<U, NA><<<1, 1>>>(m.a, m.b, ITERS, window, m.cyc, m.out); /* warms L2 */
        walk<U, NA><<<1, 1>>>(m.a, m.b, ITERS, window, m.cyc, m.out);
        CK(cudaMemcpy(&c, m.cyc, sizeof c, cudaMemcpyDeviceToHost));
        v.push_back((double)c / ITERS);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <int U, int NA>
static void row(const bufs &m)
{
    double hot = run<U, NA>(m, 32, 0), warm = run<U, NA>(m, 0, 1), cold = run<U, NA>(m, 0, 2);
    printf("  %2d  %d  %3d   %7.1f %7.1f %7.1f   %6.3f\n", U, NA, U * 4, hot, warm, cold, U * 4 / 32.0);
}

int main()
{
    int sms = 0, clk = 0;
    probe_banner(&sms, &clk);
    size_t n = (size_t)ITERS * 16 + PAD, dflt = 0;
    bufs m;
    m.flush_bytes = (size_t)512 << 20;
    CK(cudaMalloc(&m.a, n * 4));
    CK(cudaMalloc(&m.b, n * 4));
    CK(cudaMalloc(&m.out, 4));
    CK(cudaMalloc(&m.cyc, 8));
    CK(cudaMalloc(&m.flush, m.flush_bytes));
    std::vector<int> ones(n, 1);
    CK(cudaMemcpy(m.a, ones.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(m.b, ones.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaDeviceGetLimit(&dflt, cudaLimitMaxL2FetchGranularity));
    printf("# cudaLimitMaxL2FetchGranularity default: %zu bytes\n", dflt);
    printf("# one thread alone; %d iterations, each waiting for the last; cycles an iteration, median of 5\n",
           ITERS);
    size_t hints[] = {dflt, 32, 64, 128};
    for (size_t h : hints) {
        CK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, h));
        size_t got = 0;
        CK(cudaDeviceGetLimit(&got, cudaLimitMaxL2FetchGranularity));
        printf("# L2 fetch granularity hint %zu (reads back %zu)\n", h, got);
        printf("   U NA bytes/iter    hot    warm    cold   sectors/iter/array\n");
        row<1, 1>(m); row<2, 1>(m); row<4, 1>(m); row<8, 1>(m); row<16, 1>(m);
        row<1, 2>(m); row<4, 2>(m); row<8, 2>(m);
    }
    return 0;
}

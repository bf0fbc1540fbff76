// store_drag.cu -- an experiment, not built by CMake: how other warps' stores
// on the same SM lengthen a warp's chain (docs/model.md, "Issue and chains on
// a sub-partition": sw's warps slow down from 4 warps an SM, its local stores
// written through to the L2).  One block per SM: warp 0 runs a chain of N
// steps, warps 1..k (on every sub-partition) store as fast as they can until
// it ends (a flag in shared memory), each lane 4 or 16 bytes a store, round
// a 16 KB buffer of its warp's (sw's rows' size; global stores, written
// through to the L2 as local ones are).  Chains:
//   l1   a dependent load per step, a chase through 4 KB read with ld.ca
//        (every lane the same word: one L1 hit a step)
//   alu  a dependent FADD per step (no memory at all)
// Per chain, store width and k: the chain's cycles a step (clock64 in warp 0),
// and the stores' bytes a cycle on the SM while it ran.  Medians over the
// SMs' blocks and 5 launches.
//   nvcc -O3 -arch=sm_90 -o store_drag benchmarks/experiments/store_drag.cu && ./store_drag
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "probe_common.cuh"

enum { L1, ALU };
enum { SLOTS = 32 }; /* a storing warp's buffer in 16-byte slots a lane: 16 KB a warp, the size of sw's rows */

__global__ void drag(const unsigned *tiny, int chain, int n, int wide, float4 *buf,
                     long long *cycles, unsigned long long *stores, float *sink)
{
    __shared__ volatile int done;
    int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0)
        done = 0;
    __syncthreads();
    if (w == 0) {
        long long t0 = clock64();
        unsigned p = blockIdx.x & 1023;
        float x = lane;
        for (int i = 0; i < n; i++) {
            if (chain == L1)
                p = __ldca(tiny + p);
            else
                x = x + 1.0001f;
        }
        long long dt = clock64() - t0;
        __syncwarp();
        if (lane == 0) {
            done = 1;
            cycles[blockIdx.x] = dt;
        }
        if (x + p == 12345.f)
            sink[threadIdx.x] = x;
        return;
    }
    /* a storing warp: its lanes' slots side by side, streamed */
    float4 *mine = buf + ((size_t)blockIdx.x * (blockDim.x / 32) + w) * SLOTS * 32;
    float *mine1 = (float *)mine;
    unsigned long long count = 0;
    float v = lane;
    while (!done) {
        size_t at = (count % SLOTS) * 32 + lane;
        if (wide)
            mine[at] = make_float4(v, v, v, v);
        else
            mine1[at] = v;
        count++;
    }
    if (lane == 0)
        atomicAdd(&stores[blockIdx.x], count);
}

__global__ void cycle(unsigned *next, unsigned len)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len)
        next[i] = (unsigned)((i * 2654435769ull + 40503ull) & (len - 1));
}

int main()
{
    int sms = 0, clk = 0;
    probe_banner(&sms, &clk);
    unsigned *tiny;
    CK(cudaMalloc(&tiny, 1024 * sizeof(unsigned)));
    cycle<<<4, 256>>>(tiny, 1024);
    const int kmax = 31;
    float4 *buf;
    CK(cudaMalloc(&buf, (size_t)sms * (kmax + 1) * SLOTS * 32 * sizeof(float4)));
    long long *cyc;
    unsigned long long *st;
    float *sink;
    CK(cudaMalloc(&cyc, sms * sizeof(long long)));
    CK(cudaMalloc(&st, sms * sizeof(unsigned long long)));
    CK(cudaMalloc(&sink, 1024 * sizeof(float)));
    printf("# chain  n       bytes/lane  k   cycles/step  x_alone  store_bytes/cycle/SM\n");
    const int ks[] = {0, 1, 3, 7, 15, 31};
    for (int chain = 0; chain < 2; chain++) {
        int n = chain == L1 ? 20000 : 100000;
        double alone = 0;
        for (int wide = 1; wide >= 0; wide--)
            for (int k : ks) {
                if (!wide && !k)
                    continue;
                std::vector<double> c, b;
                std::vector<long long> h(sms);
                std::vector<unsigned long long> s(sms);
                for (int r = -1; r < 5; r++) {
                    CK(cudaMemset(st, 0, sms * sizeof(unsigned long long)));
                    drag<<<sms, 32 * (k + 1)>>>(tiny, chain, n, wide, buf, cyc, st, sink);
                    CK(cudaGetLastError());
                    CK(cudaMemcpy(h.data(), cyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
                    CK(cudaMemcpy(s.data(), st, sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                    if (r < 0)
                        continue;
                    std::vector<double> per(sms), bw(sms);
                    for (int i = 0; i < sms; i++)
                        per[i] = (double)h[i] / n, bw[i] = (double)s[i] * 32 * (wide ? 16 : 4) / h[i];
                    std::sort(per.begin(), per.end()), std::sort(bw.begin(), bw.end());
                    c.push_back(per[sms / 2]), b.push_back(bw[sms / 2]);
                }
                std::sort(c.begin(), c.end()), std::sort(b.begin(), b.end());
                if (!k)
                    alone = c[2];
                printf("%-6s %6d  %2d         %2d  %10.1f  %7.2f  %8.1f\n", chain == L1 ? "l1" : "alu",
                       n, wide ? 16 : 4, k, c[2], c[2] / alone, b[2]);
            }
    }
    return 0;
}

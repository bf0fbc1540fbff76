// stretch.cu -- an experiment, not built by CMake: how much a warp's chain is
// stretched by other warps issuing on its sub-partition, against what its
// waits are made of (docs/model.md, "Issue and chains on a sub-partition").
// The SM model adds the critical warp's stalls to the sub-partition's whole
// issue (a stretch of 1 per issued cycle of the others); max(issue, chain)
// would be 0.  One block per SM of 4 (k + 1) warps: warp 0 runs a chain,
// warps 4, 8, ..., 4k (its sub-partition: benchmarks/results/subpartition.txt)
// each issue F FADD in S independent streams (S = 8: always ready; S = 1:
// ready one cycle in the FADD latency), the other warps exit at once.  Chains, N steps each:
//   alu   a dependent FADD per step (waits of the FADD latency, ~4 cycles)
//   alu4  4 dependent FADD per step, the same length in cycles as one of
//         `mix`'s ALU parts
//   l2    a dependent load per step, a chase through 4 MiB (L2 hits)
//   dram  the same through 1 GiB (L2 misses)
//   mix   a dependent load (L2) then 32 dependent FADD per step
// Per chain, filler kind and k (1..4): the chain warp's cycles (clock64, in
// the warp) alone and beside the fillers, the fillers' cycles alone (the same
// block without the chain), and
//   share = (chain with fillers - chain alone) / (the fillers' k F FADD).
// Medians over the SMs' blocks and 7 launches.
// `./stretch runs`: the FADD and L2 chains against fillers of S = 1, 2, 3,
// 4, 8 streams (k = 1, 2): the stretch against the fillers' run length.
// `./stretch young`: the FADD and L2 chains on the block's last warp of the
// sub-partition instead of its first, the fillers before it (the
// scheduler's oldest-first choice, if warp order is age).
//   nvcc -O3 -arch=sm_90 -o stretch benchmarks/experiments/stretch.cu && ./stretch && ./stretch runs
//   ./stretch young
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "probe_common.cuh"

enum { ALU, ALU4, L2, DRAM, MIX, NCHAIN };
static const char *chain_name[NCHAIN] = {"alu", "alu4", "l2", "dram", "mix"};

/* S independent FADD streams, n instructions in all (n / S a stream):
 * with S at least the FADD latency the warp is ready every cycle, else it
 * issues S and waits */
template <int S> __device__ float streams(float x, int n)
{
    float a[S];
#pragma unroll
    for (int k = 0; k < S; k++)
        a[k] = x + k;
    for (int i = 0; i < n / S; i++)
#pragma unroll
        for (int k = 0; k < S; k++)
            a[k] = a[k] + 0.999f;
    float out = 0;
#pragma unroll
    for (int k = 0; k < S; k++)
        out += a[k];
    return out;
}

__device__ unsigned chase(const unsigned *next, unsigned p, int n)
{
    for (int i = 0; i < n; i++)
        p = __ldcg(next + p);
    return p;
}

// cycles[block * 2 + 0]: the chain warp's cycles (0 if none); [.. + 1]: the
// longest filler's
__global__ void probe(const unsigned *next, unsigned mask, int chain, int n, int fill,
                      int width, int young, float *sink, long long *cycles)
{
    int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    int cw = young ? (int)blockDim.x / 32 - 4 : 0; /* the chain's warp: the first or the last */
    bool chainer = w == cw && chain >= 0, filler = w != cw && w % 4 == 0;
    if (!chainer && !filler)
        return;
    __syncwarp();
    long long t0 = clock64();
    float out = 0;
    if (chainer) {
        unsigned p = (blockIdx.x * 7919u) & mask; /* the same for every lane: one sector */
        float x = lane;
        for (int i = 0; i < n; i++) {
            if (chain == ALU) {
                x = x + 1.0001f;
            } else if (chain == ALU4) {
                x = x + 1.0001f; x = x + 1.0001f; x = x + 1.0001f; x = x + 1.0001f;
            } else if (chain == MIX) {
                p = chase(next, p + (unsigned)(x > 1e30f), 1);
#pragma unroll
                for (int k = 0; k < 32; k++)
                    x = x + 1.0001f;
            } else {
                p = chase(next, p, 1);
            }
        }
        out = x + p;
    } else {
        switch (width) {
        case 1: out = streams<1>(lane, fill); break;
        case 2: out = streams<2>(lane, fill); break;
        case 3: out = streams<3>(lane, fill); break;
        case 4: out = streams<4>(lane, fill); break;
        default: out = streams<8>(lane, fill); break;
        }
    }
    long long dt = clock64() - t0;
    if (lane == 0)
        atomicMax((unsigned long long *)&cycles[blockIdx.x * 2 + (chainer ? 0 : 1)],
                  (unsigned long long)dt);
    if (out == 12345.f)
        sink[threadIdx.x] = out;
}

struct times { double chain, fill; };

// next[i] = (a i + c) mod len: one cycle through every word (a = 1 mod 4, c
// odd), its steps scattered
__global__ void cycle(unsigned *next, unsigned len)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < len;
         i += (size_t)gridDim.x * blockDim.x)
        next[i] = (unsigned)((i * 2654435769ull + 40503ull) & (len - 1));
}

static times run(const unsigned *next, unsigned mask, int chain, int n, int k, int fill,
                 int width, int young, float *sink, long long *cyc, int sms)
{
    std::vector<double> tc, tf;
    std::vector<long long> h(2 * sms);
    for (int r = -2; r < 7; r++) {
        CK(cudaMemset(cyc, 0, 2 * sms * sizeof(long long)));
        probe<<<sms, 32 * 4 * (k + 1)>>>(next, mask, chain, n, fill, width, young, sink, cyc);
        CK(cudaGetLastError());
        CK(cudaMemcpy(h.data(), cyc, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        if (r < 0)
            continue;
        std::vector<long long> a, b;
        for (int i = 0; i < sms; i++)
            a.push_back(h[2 * i]), b.push_back(h[2 * i + 1]);
        std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
        tc.push_back((double)a[sms / 2]), tf.push_back((double)b[sms / 2]);
    }
    std::sort(tc.begin(), tc.end()), std::sort(tf.begin(), tf.end());
    return {tc[3], tf[3]};
}

int main(int argc, char **argv)
{
    bool runs = argc > 1 && !strcmp(argv[1], "runs");
    int young = argc > 1 && !strcmp(argv[1], "young");
    int sms = 0, clk = 0;
    probe_banner(&sms, &clk);
    const unsigned big = 1u << 28, small = 1u << 20; /* 1 GiB and 4 MiB of words */
    unsigned *nbig, *nsmall;
    CK(cudaMalloc(&nbig, (size_t)big * sizeof(unsigned)));
    CK(cudaMalloc(&nsmall, (size_t)small * sizeof(unsigned)));
    cycle<<<4 * sms, 256>>>(nbig, big);
    cycle<<<4 * sms, 256>>>(nsmall, small);
    CK(cudaDeviceSynchronize());
    float *sink;
    long long *cyc;
    CK(cudaMalloc(&sink, 4096 * sizeof(float)));
    CK(cudaMalloc(&cyc, 2 * sms * sizeof(long long)));
    printf("# share = (chain_with - chain_alone) / fill_instr: of the fillers' issued instructions\n"
           "# (k x fill FADD, loop overhead not counted), the part that lengthens the chain (the SM\n"
           "# model: 1; max(issue, chain): 0).  fillers: S independent FADD streams a warp (S >= the\n"
           "# FADD latency: ready every cycle; S = 1: ready one cycle in the latency)\n");
    printf("# chain      n  S  k  chain_alone  fill_alone  fill_instr  chain_with   share   (cycles: medians over SMs, 7 launches)\n");
    static const int widths_all[] = {8, 1}, widths_runs[] = {1, 2, 3, 4, 8};
    const int *widths = runs ? widths_runs : widths_all;
    int nwidths = runs ? 5 : 2;
    if (young)
        printf("# young: the chain runs on the block's last warp of its sub-partition, the fillers\n"
               "# on the warps before it\n");
    for (int c = 0; c < NCHAIN; c++) {
        if ((runs || young) && c != ALU && c != L2)
            continue;
        int n = c == ALU ? 40000 : c == ALU4 ? 10000 : c == MIX ? 400 : c == L2 ? 300 : 200;
        const unsigned *next = c == DRAM ? nbig : nsmall;
        unsigned mask = (c == DRAM ? big : small) - 1;
        double alone = run(next, mask, c, n, 0, 0, 8, young, sink, cyc, sms).chain;
        for (int wi = 0; wi < nwidths; wi++)
            for (int k = 1; k <= 4; k++) {
                int S = widths[wi];
                if (runs && k != 1 && k != 2)
                    continue;
                /* the fillers' time alone about 60% of the chain's (an instruction a
                 * cycle at S >= 4, S in the FADD latency's 4 below) */
                int fill = (int)(0.6 * alone / k * (S < 4 ? S / 4.0 : 1)) / 24 * 24;
                double fa = run(next, mask, -1, n, k, fill, S, young, sink, cyc, sms).fill;
                times both = run(next, mask, c, n, k, fill, S, young, sink, cyc, sms);
                printf("%-6s %6d  %d  %d  %11.0f %11.0f %11d %11.0f  %6.3f\n", chain_name[c], n, S, k,
                       alone, fa, k * fill, both.chain, (both.chain - alone) / (k * fill));
            }
    }
    return 0;
}

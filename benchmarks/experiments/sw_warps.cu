// sw_warps.cu -- an experiment, not built by CMake: the cycles of one inner
// iteration of the suite's Smith-Waterman kernel (benchmarks/suite/
// smith_waterman.cu, sw_score: a 64-residue query, every thread's sequence L
// residues long, so every lane runs L x 64 iterations, no divergence) when a
// warp runs alone on the GPU and when W warps share each SM (W / 4 on each
// sub-partition), to hold the SM model's chain of its hot loop (docs/model.md,
// "Issue and chains on a sub-partition") against the measured one, and to see
// how co-scheduled copies of the same chain stretch it (the model adds their
// issue; max(issue, chain) would not); then the same with one long lane a
// warp and the other 31 short (`lone`), as the original order's warps run.  Kernel time by CUDA events, median of
// 5 launches after one warm-up; cycles = time x the SM clock.
//   nvcc -O3 -arch=sm_90 -o sw_warps benchmarks/experiments/sw_warps.cu && ./sw_warps
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "probe_common.cuh"
#include "../suite/smith_waterman.cu"

int main()
{
    int sms = 0, clk = 0;
    probe_banner(&sms, &clk);
    const int L = 1024, q = 64, resmask = (1 << 20) - 1;
    const int maxthreads = sms * 64 * 32; /* 64 warps an SM at most */
    std::vector<int> start(maxthreads), len(maxthreads, L);
    std::vector<unsigned char> res(resmask + 1), query(q);
    unsigned long long s = 7;
    for (auto &r : res)
        s = s * 6364136223846793005ull + 1442695040888963407ull, r = (unsigned char)(s >> 59) % 20;
    for (auto &c : query)
        s = s * 6364136223846793005ull + 1442695040888963407ull, c = (unsigned char)(s >> 59) % 20;
    for (int t = 0; t < maxthreads; t++)
        start[t] = (int)((t * 7919ll) & resmask);
    unsigned char *dres, *dq;
    int *dstart, *dlen, *dscore, *dend;
    CK(cudaMalloc(&dres, res.size()));
    CK(cudaMalloc(&dq, q));
    CK(cudaMalloc(&dstart, maxthreads * 4));
    CK(cudaMalloc(&dlen, maxthreads * 4));
    CK(cudaMalloc(&dscore, maxthreads * 4));
    CK(cudaMalloc(&dend, maxthreads * 4));
    CK(cudaMemcpy(dres, res.data(), res.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dq, query.data(), q, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dstart, start.data(), maxthreads * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dlen, len.data(), maxthreads * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("# L = %d residues x %d query columns = %d inner iterations a lane\n", L, q, L * q);
    printf("# warps/SM  blocks x threads    ms      cycles/iteration  (per warp; W/4 warps a sub-partition)\n");
    struct cfg { int w, blocks, threads; } cfgs[] = {
        {0, 1, 32}, {1, sms, 32}, {4, sms, 128}, {8, 2 * sms, 128}, {16, 4 * sms, 128},
        {32, 8 * sms, 128}, {64, 16 * sms, 128}};
    for (int lone = 0; lone < 2; lone++)
    for (const cfg &c : cfgs) {
        int n = c.blocks * c.threads;
        if (lone && c.w > 16)
            continue;
        /* lone: lane 0 of every warp L long, the other 31 lanes 16 (as the
         * original order's warps are: one long sequence, the rest done early) */
        for (int t = 0; t < maxthreads; t++)
            len[t] = lone && t % 32 ? 16 : L;
        CK(cudaMemcpy(dlen, len.data(), maxthreads * 4, cudaMemcpyHostToDevice));
        if (lone && c.w == 0)
            printf("# lone: lane 0 of each warp %d residues long, lanes 1-31 16 long\n", L);
        std::vector<float> t;
        for (int r = -1; r < 5; r++) {
            CK(cudaEventRecord(e0));
            sw_score<<<c.blocks, c.threads>>>(dres, dstart, dlen, dq, dscore, dend, resmask, q, n);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0)
                t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        double ms = t[2], cyc = ms * 1e-3 * clk * 1e3 / ((double)L * q);
        if (c.w == 0)
            printf("  %-8s  %5d x %-5d  %9.3f  %8.1f   (one warp on the GPU)\n", "1 (alone)", c.blocks,
                   c.threads, ms, cyc);
        else
            printf("  %-8d  %5d x %-5d  %9.3f  %8.1f\n", c.w, c.blocks, c.threads, ms, cyc);
    }
    return 0;
}

// subpartition.cu -- an experiment, not built by CMake: which sub-partition
// (warp scheduler) runs which warp, as far as timing shows it.  A "heavy"
// warp runs an issue-bound loop (8 independent FMA chains); the other warps
// exit at once.  Two heavy warps on one scheduler take about twice as long as
// two on different schedulers.
//   within a block: blocks of 8 warps, one per SM, heavy warps {0, 4}
//     (the same scheduler if warp j runs on j mod 4) against {0, 1};
//   across blocks: blocks of 4 warps, k per SM (grid 132 k), heavy warp 0 of
//     every block (the same scheduler if each block's warp j runs on j mod 4)
//     against heavy warp i mod 4 for the SM's i-th block to arrive (%smid and
//     a counter per SM: one per scheduler then); the same with blocks of 8.
// The model (model/sm.c) assumed warp j of a block on sub-partition j mod 4.
//   nvcc -O3 -arch=sm_90 -o subpartition benchmarks/experiments/subpartition.cu && ./subpartition
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

// mode 0: heavy warps are those whose bit is set in `mask`; mode 1: heavy
// warp i mod warps, i = the block's arrival on its SM (%smid, a counter).
__global__ void spin(float *out, int iters, unsigned mask, int mode, unsigned *arrivals)
{
    __shared__ unsigned order;
    int w = threadIdx.x / 32;
    if (mode == 1) {
        if (threadIdx.x == 0) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            order = atomicAdd(&arrivals[sm], 1u);
        }
        __syncthreads();
    }
    int heavy = mode == 0 ? (mask >> w) & 1 : w == (int)(order % 4);
    if (!heavy) return;
    float a[8];
    for (int i = 0; i < 8; i++) a[i] = threadIdx.x + i;
    for (int k = 0; k < iters; k++)
#pragma unroll
        for (int i = 0; i < 8; i++) a[i] = fmaf(a[i], 0.999f, 0.5f);
    float s = 0;
    for (int i = 0; i < 8; i++) s += a[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

static float run(float *out, int blocks, int threads, int iters, unsigned mask, int mode,
                 unsigned *arrivals)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<float> t(7);
    for (int r = -2; r < 7; r++) {
        CK(cudaMemset(arrivals, 0, 1024 * sizeof(unsigned)));
        CK(cudaEventRecord(e0));
        spin<<<blocks, threads>>>(out, iters, mask, mode, arrivals);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
    }
    std::sort(t.begin(), t.end());
    return t[3];
}

int main()
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    float *out;
    unsigned *arr;
    CK(cudaMalloc(&out, 1 << 26));
    CK(cudaMalloc(&arr, 1024 * sizeof(unsigned)));
    const int iters = 200000;
    printf("# %s, %d SMs; %d iterations of 8 FMAs a heavy warp; medians of 7 (ms)\n", p.name, sms,
           iters);
    float one = run(out, sms, 256, iters, 1u, 0, arr);
    float same = run(out, sms, 256, iters, 0x11u, 0, arr);
    float diff = run(out, sms, 256, iters, 0x03u, 0, arr);
    printf("within a block (8 warps, one block per SM): heavy {0} %.3f, {0,4} %.3f, {0,1} %.3f"
           " -> {0,4}/{0,1} = %.2f\n", one, same, diff, same / diff);
    for (int k : {1, 2, 4, 8}) {
        float w0 = run(out, sms * k, 128, iters, 1u, 0, arr);
        float rot = run(out, sms * k, 128, iters, 0, 1, arr);
        printf("across blocks (4 warps, %d blocks per SM): heavy warp 0 of each %.3f, rotated %.3f"
               " -> ratio %.2f\n", k, w0, rot, w0 / rot);
    }
    for (int k : {1, 2, 4}) {
        float w0 = run(out, sms * k, 256, iters, 1u, 0, arr);
        float rot = run(out, sms * k, 256, iters, 0, 1, arr);
        printf("across blocks (8 warps, %d blocks per SM): heavy warp 0 of each %.3f, rotated %.3f"
               " -> ratio %.2f\n", k, w0, rot, w0 / rot);
    }
    return 0;
}

// l1_local.cu -- an experiment, not built by CMake: the L1's capacity for
// local memory on the reference GPU (issue 16, the SM model's local term,
// docs/model.md "Local memory in L1").  One thread block of W warps on one
// SM, each lane with a row of L ints in local memory (interleaved per
// thread, so word j of a warp's 32 lanes is one 128-byte line: a warp's rows
// take L lines), swept the way the nw kernel (benchmarks/suite/
// needleman_wunsch.cu) sweeps its row: read row[j], write row[j], j = 0..L-1,
// again and again.  The live footprint F = W x L x 128 bytes is varied
// across the capacity; per point: cycles per inner iteration of the slowest
// warp (clock64 around the sweeps, after a fill that warms the L1), and,
// under Nsight Compute, the local-load L1 hit rate.  The shared-memory
// carveout is left at the default, as the suite kernels launch (no shared
// memory, no preference), and, for comparison, at its largest L1
// (cudaFuncAttributePreferredSharedMemoryCarveout = 0).
//   nvcc -O3 -arch=sm_90 -o l1_local benchmarks/experiments/l1_local.cu
//   ./l1_local time            (a table: W, L, F in KB, cycles per iteration)
//   ./l1_local once W L        (one launch, for ncu)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

enum { LMAX = 1536 };

extern "C" __global__ void sweep(int L, int rounds, const int *seed, int *out,
                                 long long *cycles)
{
    int row[LMAX];
    int t = threadIdx.x, s = seed[t];
    for (int j = 0; j < L; j++)
        row[j] = s - 2 * j;
    __syncthreads();
    long long t0 = clock64();
    int left = 0;
    for (int r = 0; r < rounds; r++) {
        int diag = row[0] + r;
        left = -2 * r;
        for (int j = 0; j < L; j++) {
            int up = row[j];
            int v = diag + (((up ^ j) & 1) ? 2 : -1);
            v = max(v, max(up, left) - 2);
            diag = up;
            left = v;
            row[j] = v;
        }
    }
    long long t1 = clock64();
    out[t] = left;
    if ((t & 31) == 0)
        cycles[t / 32] = t1 - t0;
}

static int *d_seed, *d_out;
static long long *d_cyc;

// The slowest warp's cycles per inner iteration.
static double run(int W, int L, int rounds)
{
    sweep<<<1, 32 * W>>>(L, rounds, d_seed, d_out, d_cyc);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<long long> c(W);
    CK(cudaMemcpy(c.data(), d_cyc, W * sizeof(long long), cudaMemcpyDeviceToHost));
    long long m = 0;
    for (int w = 0; w < W; w++) m = c[w] > m ? c[w] : m;
    return (double)m / ((double)rounds * L);
}

int main(int argc, char **argv)
{
    if (argc < 2) { printf("usage: l1_local time | once W L\n"); return 2; }
    std::vector<int> seed(1024);
    for (int i = 0; i < 1024; i++) seed[i] = (i * 7919) % 1000;
    CK(cudaMalloc(&d_seed, 1024 * sizeof(int)));
    CK(cudaMalloc(&d_out, 1024 * sizeof(int)));
    CK(cudaMalloc(&d_cyc, 32 * sizeof(long long)));
    CK(cudaMemcpy(d_seed, seed.data(), 1024 * sizeof(int), cudaMemcpyHostToDevice));
    if (!strcmp(argv[1], "once") && argc == 4) {
        int W = atoi(argv[2]), L = atoi(argv[3]);
        printf("%d %d %.1f\n", W, L, run(W, L, 200000 / L + 1));
        return 0;
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("# %s, %d SMs, L1+shared per SM %zu KB, max shared per block (optin) %zu KB\n", p.name,
           p.multiProcessorCount, (size_t)p.sharedMemPerMultiprocessor / 1024,
           (size_t)p.sharedMemPerBlockOptin / 1024);
    const int Ws[] = {2, 4, 8, 16};
    const int Fk[] = {64, 96, 128, 144, 160, 176, 184, 192, 200, 208, 216, 224, 232, 240, 256, 288, 320};
    for (int carve = 0; carve < 2; carve++) {
        CK(cudaFuncSetAttribute(sweep, cudaFuncAttributePreferredSharedMemoryCarveout,
                                carve ? 0 : -1));
        printf("# carveout: %s\n# W  L  F_KB  cycles_per_iteration(slowest warp)\n",
               carve ? "0 (L1 at its largest)" : "default (-1)");
        for (int W : Ws)
            for (int F : Fk) {
                int L = F * 1024 / (128 * W);
                if (L > LMAX || L < 8) continue;
                run(W, L, 2); // warm-up launch
                printf("%d %d %d %.2f\n", W, L, F, run(W, L, 200000 / L + 1));
            }
    }
    return 0;
}

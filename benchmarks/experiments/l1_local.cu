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
//   ./l1_local warps time|once (capacity against resident warps, issue 16:
//        W = 4..32 warps, F = 64..320 KB, rows in a frame of 513 ints a
//        lane, the nw kernel's, and of 1536 as above; one block of W warps
//        on one SM, and W / 4 blocks of 4 warps on every SM, as the suite
//        launches nw; "once" launches each point once, for ncu)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

enum { LMAX = 1536, LNW = 513 };

// LM: the row's frame in ints a lane (the local window's stride per thread).
template <int LM>
__global__ void sweep(int L, int rounds, const int *seed, int *out, long long *cycles)
{
    int row[LM];
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
    int g = blockIdx.x * blockDim.x + t;
    out[g] = left;
    if ((t & 31) == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        cycles[2 * (g / 32)] = t1 - t0;
        cycles[2 * (g / 32) + 1] = sm;
    }
}

static int *d_seed, *d_out;
static long long *d_cyc;
static int nsm_lo, nsm_hi; // the fewest and most warps on an SM in the last launch

// The slowest warp's cycles per inner iteration: B blocks of 32 W / B warps.
template <int LM>
static double runb(int B, int W, int L, int rounds)
{
    sweep<LM><<<B, 32 * W / B>>>(L, rounds, d_seed, d_out, d_cyc);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<long long> c(2 * W);
    CK(cudaMemcpy(c.data(), d_cyc, 2 * W * sizeof(long long), cudaMemcpyDeviceToHost));
    long long m = 0;
    std::vector<int> per(1024, 0);
    for (int w = 0; w < W; w++) m = c[2 * w] > m ? c[2 * w] : m, per[c[2 * w + 1] & 1023]++;
    nsm_lo = 1 << 30, nsm_hi = 0;
    for (int k = 0; k < 1024; k++)
        if (per[k]) nsm_lo = per[k] < nsm_lo ? per[k] : nsm_lo, nsm_hi = per[k] > nsm_hi ? per[k] : nsm_hi;
    return (double)m / ((double)rounds * L);
}

static double run(int W, int L, int rounds) { return runb<LMAX>(1, W, L, rounds); }

// Capacity against resident warps: per frame (513: nw's row; 1536) and
// layout (one block of W warps on one SM; W / 4 blocks of 4 warps per SM on
// every SM), W warps an SM with rows of L lines, F = W L 128 bytes.
template <int LM>
static void warps(bool once, int sms)
{
    const int Ws[] = {4, 8, 12, 16, 24, 32};
    const int Fk[] = {64, 96, 128, 160, 176, 192, 208, 224, 240, 256, 288, 320};
    for (int spread = 0; spread < 2; spread++)
        for (int W : Ws)
            for (int F : Fk) {
                int L = F * 1024 / (128 * W), B = spread ? sms * W / 4 : 1;
                if (L > LM || L < 8 || (spread && LM != LNW)) continue;
                int rounds = 200000 / L + 1;
                if (once) {
                    runb<LM>(B, spread ? W * sms : W, L, rounds);
                    printf("%d %s %d %d %d launched %d %d\n", LM, spread ? "all-SMs" : "one-SM", W, L, F,
                           nsm_lo, nsm_hi);
                    continue;
                }
                runb<LM>(B, spread ? W * sms : W, L, 2); // warm-up launch
                double c = runb<LM>(B, spread ? W * sms : W, L, rounds);
                printf("%d %s %d %d %d %.2f %d %d\n", LM, spread ? "all-SMs" : "one-SM", W, L, F, c,
                       nsm_lo, nsm_hi);
            }
}

int main(int argc, char **argv)
{
    if (argc < 2) { printf("usage: l1_local time | once W L | warps time|once\n"); return 2; }
    std::vector<int> seed(1024);
    for (int i = 0; i < 1024; i++) seed[i] = (i * 7919) % 1000;
    const int NT = 1024 * 8 * 132; // threads of the largest launch (32 warps on each of 132 SMs)
    CK(cudaMalloc(&d_seed, 1024 * sizeof(int)));
    CK(cudaMalloc(&d_out, NT * sizeof(int)));
    CK(cudaMalloc(&d_cyc, NT / 32 * 2 * sizeof(long long)));
    CK(cudaMemcpy(d_seed, seed.data(), 1024 * sizeof(int), cudaMemcpyHostToDevice));
    if (!strcmp(argv[1], "once") && argc == 4) {
        int W = atoi(argv[2]), L = atoi(argv[3]);
        printf("%d %d %.1f\n", W, L, run(W, L, 200000 / L + 1));
        return 0;
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    if (!strcmp(argv[1], "warps") && argc == 3) {
        bool once = !strcmp(argv[2], "once");
        printf("# %s, %d SMs; frame(ints a lane) layout W L F_KB %s fewest_warps_an_SM most\n", p.name,
               p.multiProcessorCount, once ? "(launched)" : "cycles_per_iteration(slowest warp)");
        warps<LNW>(once, p.multiProcessorCount);
        warps<LMAX>(once, p.multiProcessorCount);
        return 0;
    }
    printf("# %s, %d SMs, L1+shared per SM %zu KB, max shared per block (optin) %zu KB\n", p.name,
           p.multiProcessorCount, (size_t)p.sharedMemPerMultiprocessor / 1024,
           (size_t)p.sharedMemPerBlockOptin / 1024);
    const int Ws[] = {2, 4, 8, 16};
    const int Fk[] = {64, 96, 128, 144, 160, 176, 184, 192, 200, 208, 216, 224, 232, 240, 256, 288, 320};
    for (int carve = 0; carve < 2; carve++) {
        CK(cudaFuncSetAttribute(sweep<LMAX>, cudaFuncAttributePreferredSharedMemoryCarveout,
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

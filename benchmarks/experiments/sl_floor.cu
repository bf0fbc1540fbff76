// sl_floor.cu -- an experiment, not built by CMake: sound_localization's kernel
// (benchmarks/suite/sound_localization.cu) kernel-only under grid sorting and
// five ways of dealing warps to thread blocks (the round-robin deal regroup/deal.c
// uses; rotated within the block by the block index, by block / SMs, by both;
// rows of 4 warps, one per sub-partition), at blocks of 256 and 128, then two
// floors: one warp of the longest thread alone, and the same total work spread
// evenly.  nang is a power law on [8, 1024] like the manifest's (own generator,
// seed 7), the layout transform applied on the host (not timed).
//   nvcc -O3 -arch=sm_90 -o sl_floor benchmarks/experiments/sl_floor.cu && ./sl_floor
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <numeric>
#include "../suite/sound_localization.cu"
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
static unsigned long long st = 7;
static double urand() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return ((st >> 11) + 0.5) / 9007199254740992.0; }
int main(int argc, char **argv)
{
    int n = 131072, reps = 15;
    cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0)); int nsms = pr.multiProcessorCount;
    std::vector<float> az(n), el(n), spec(256); std::vector<int> na(n);
    for (int i = 0; i < n; i++) { az[i] = urand() * 6.2831853; el[i] = -0.5 + urand() * 1.7;
        double u = urand(); /* power law on [8,1024], exponent 2: inverse cdf */
        double a = 8, b = 1024; na[i] = (int)(1.0 / (1.0 / a - u * (1.0 / a - 1.0 / b))); }
    for (int i = 0; i < 256; i++) spec[i] = urand() * 2 - 1;
    float *daz, *del, *dspec, *dpow; int *dna, *dang;
    CK(cudaMalloc(&daz, n * 4)); CK(cudaMalloc(&del, n * 4)); CK(cudaMalloc(&dna, n * 4));
    CK(cudaMalloc(&dspec, 1024)); CK(cudaMalloc(&dpow, n * 4)); CK(cudaMalloc(&dang, n * 4));
    CK(cudaMemcpy(dspec, spec.data(), 1024, cudaMemcpyHostToDevice));
    std::vector<unsigned> sorted(n); std::iota(sorted.begin(), sorted.end(), 0);
    std::stable_sort(sorted.begin(), sorted.end(), [&](unsigned x, unsigned y) { return na[x] > na[y]; });
    const char *names[] = {"identity", "sort-grid", "deal-rr(old)", "deal-rot-b", "deal-rot-b/nsms", "deal-rot-b+b/nsms", "deal-rows(new)"};
    for (int bs : {256, 128}) {
        int nb = n / bs, w = bs / 32, P = 4;
        for (int v = 0; v < 7; v++) {
            std::vector<unsigned> perm(n);
            if (v == 0) std::iota(perm.begin(), perm.end(), 0);
            else if (v == 1) perm = sorted;
            else for (int g = 0; g < n / 32; g++) {
                int blk, slot;
                if (v == 6) { int R = std::min(P, w); int u = g / R; blk = u % nb; slot = (u / nb) * R + g % R; }
                else { blk = g % nb; int r = g / nb; int rot = v == 2 ? 0 : v == 3 ? blk : v == 4 ? blk / nsms : blk + blk / nsms;
                       slot = (w % P == 0) ? P * (r / P) + (r + rot) % P : r; }
                std::vector<unsigned> grp(sorted.begin() + g * 32, sorted.begin() + g * 32 + 32);
                std::sort(grp.begin(), grp.end());
                std::copy(grp.begin(), grp.end(), perm.begin() + blk * bs + slot * 32);
            }
            std::vector<char> seen(n, 0); for (unsigned p : perm) { if (seen[p]) { printf("not a perm\n"); return 1; } seen[p] = 1; }
            std::vector<float> a2(n), e2(n); std::vector<int> n2(n);
            for (int i = 0; i < n; i++) { a2[i] = az[perm[i]]; e2[i] = el[perm[i]]; n2[i] = na[perm[i]]; }
            CK(cudaMemcpy(daz, a2.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(del, e2.data(), n * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(dna, n2.data(), n * 4, cudaMemcpyHostToDevice));
            cudaEvent_t s, t; cudaEventCreate(&s); cudaEventCreate(&t);
            std::vector<float> ms;
            for (int r = 0; r < reps + 3; r++) {
                cudaEventRecord(s); sl_srp<<<nb, bs>>>(daz, del, dna, dspec, dpow, dang, 0.01f, n); cudaEventRecord(t);
                CK(cudaEventSynchronize(t)); float m; cudaEventElapsedTime(&m, s, t); if (r >= 3) ms.push_back(m);
            }
            std::sort(ms.begin(), ms.end());
            printf("block %d  %-20s %8.4f ms\n", bs, names[v], ms[ms.size() / 2]);
        }
    }
    /* floors: one warp of the longest thread alone; the same total work spread evenly */
    long long tot = 0; int mx = 0; for (int i = 0; i < n; i++) { tot += na[i]; mx = std::max(mx, na[i]); }
    for (int f = 0; f < 2; f++) {
        std::vector<int> n2(n, f == 0 ? mx : (int)((tot + n - 1) / n));
        CK(cudaMemcpy(dna, n2.data(), n * 4, cudaMemcpyHostToDevice));
        int threads = f == 0 ? 32 : n;
        cudaEvent_t s, t; cudaEventCreate(&s); cudaEventCreate(&t); std::vector<float> ms;
        for (int r = 0; r < reps + 3; r++) {
            cudaEventRecord(s); sl_srp<<<(threads + 255) / 256, std::min(threads, 256)>>>(daz, del, dna, dspec, dpow, dang, 0.01f, threads); cudaEventRecord(t);
            CK(cudaEventSynchronize(t)); float m; cudaEventElapsedTime(&m, s, t); if (r >= 3) ms.push_back(m);
        }
        std::sort(ms.begin(), ms.end());
        printf("floor %-30s %8.4f ms (max nang %d, mean %.1f)\n", f == 0 ? "one warp of the longest thread" : "total work spread evenly", ms[ms.size() / 2], mx, (double)tot / n);
    }
    return 0;
}

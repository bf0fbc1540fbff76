// tail_block.cu -- an experiment, not built by CMake: what one thread block
// alone on the GPU pays per row iteration of spmv_csr's kernel
// (benchmarks/suite/spmv_csr.cu) when its rows are long and how many of its
// lanes walk one: the tail of a grid whose heaviest rows were sorted into one
// block, against the original order where a heavy row shares its warp with
// short ones.  One block of W warps, A active lanes per warp (the others get
// rows of length 0), every active row L nonzeros in its own segment (8 M
// nonzeros, col uniform over x's 1 M floats, as the suite's manifest); the
// block alone, then the same block on every SM (132 copies, each its own
// rows).  Prints cycles per iteration (event time x SM clock / L) and the
// sectors per SM cycle the block's misses make (1.25 a lane and iteration:
// x's gathered sector, col's and val's eighth of a sector).
//   nvcc -O3 -arch=sm_90 -o tail_block benchmarks/experiments/tail_block.cu && ./tail_block
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "../suite/spmv_csr.cu"
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

static unsigned long long st = 7;
static unsigned rnd() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)(st >> 33); }

int main()
{
    const int NZ = 1 << 23, NX = 1 << 20, L = 2048, REPS = 9;
    int dev = 0, mhz = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    mhz /= 1000;
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, dev));
    printf("# %s, %d SMs, max SM clock %d MHz; L = %d iterations a row, medians of %d\n", pr.name,
           sms, mhz, L, REPS);
    std::vector<int> col(NZ);
    std::vector<float> val(NZ), x(NX);
    for (int i = 0; i < NZ; i++) col[i] = (int)(rnd() % NX), val[i] = (rnd() % 1000) / 999.f;
    for (int i = 0; i < NX; i++) x[i] = (rnd() % 1000) / 999.f;
    int *dcol, *dstart, *dlen;
    float *dval, *dx, *dy;
    const int maxthreads = 1024 * 132;
    CK(cudaMalloc(&dcol, NZ * 4)); CK(cudaMalloc(&dval, NZ * 4)); CK(cudaMalloc(&dx, NX * 4));
    CK(cudaMalloc(&dy, maxthreads * 4)); CK(cudaMalloc(&dstart, maxthreads * 4));
    CK(cudaMalloc(&dlen, maxthreads * 4));
    CK(cudaMemcpy(dcol, col.data(), NZ * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dval, val.data(), NZ * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, x.data(), NX * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    printf("%-6s %-6s %-7s %12s %14s %12s\n", "warps", "lanes", "blocks", "cyc/iter", "sectors/cyc/SM",
           "us");
    const int wlist[] = {1, 2, 4, 8, 16, 32}, alist[] = {1, 8, 32};
    for (int copies : {1, sms})
        for (int w : wlist)
            for (int a : alist) {
                int threads = 32 * w, n = threads * copies;
                std::vector<int> start(n), len(n);
                for (int t = 0; t < n; t++) {
                    len[t] = (t % 32) < a ? L : 0;
                    start[t] = (int)(rnd() % NZ); // its own segment, anywhere
                }
                CK(cudaMemcpy(dstart, start.data(), n * 4, cudaMemcpyHostToDevice));
                CK(cudaMemcpy(dlen, len.data(), n * 4, cudaMemcpyHostToDevice));
                std::vector<float> ms(REPS);
                for (int r = -2; r < REPS; r++) {
                    CK(cudaEventRecord(e0));
                    spmv_csr_rows<<<copies, threads>>>(dstart, dlen, dcol, dval, dx, dy, NX - 1,
                                                       NZ - 1, n);
                    CK(cudaEventRecord(e1));
                    CK(cudaEventSynchronize(e1));
                    if (r >= 0) CK(cudaEventElapsedTime(&ms[r], e0, e1));
                }
                std::sort(ms.begin(), ms.end());
                double t = ms[REPS / 2], cyc = t * 1e-3 * mhz * 1e6 / L;
                double sect = 1.25 * a * w / cyc;
                printf("%-6d %-6d %-7d %12.1f %14.3f %12.1f\n", w, a, copies, cyc, sect, t * 1e3);
            }
    return 0;
}

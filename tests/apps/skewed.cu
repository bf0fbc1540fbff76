// skewed.cu -- a divergent CUDA runtime-API application for run mode's tests
// (`threadmap run --key 'arg0[t]' -- skewed`): each thread of `work` loops
// n[t] times, and one thread in eight, scattered, loops 64 times longer, so
// that every warp of the original order waits for its heavy threads.
// Usage: skewed [N [LAUNCHES]]: N threads (default 2^20, a multiple of 256),
// the kernel launched LAUNCHES times (default 200) on the same input, each
// launch adding to out.  Prints a checksum of out and the wall time of the
// launches: the checksum is the same with and without threadmap.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void work(const int *n, float *out, int len)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len)
        return;
    float x = out[t], v = 1.0f + (t & 15) * 0.001f;
    for (int i = 0; i < n[t]; i++)
        x = x * 0.999f + v * (float)(i & 7);
    out[t] = x;
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "skewed: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 20, launches = argc > 2 ? atoi(argv[2]) : 200;
    if (n <= 0 || n % 256 || launches <= 0) {
        fprintf(stderr, "skewed: N must be a positive multiple of 256, LAUNCHES positive\n");
        return 2;
    }
    std::vector<int> trips(n);
    std::vector<float> out(n);
    for (int t = 0; t < n; t++) {
        unsigned h = (unsigned)t * 2654435761u;
        trips[t] = (h >> 29) == 0 ? 1024 : 16; /* one in eight heavy */
    }
    int *d_n;
    float *d_out;
    check(cudaMalloc(&d_n, n * sizeof(int)), "cudaMalloc");
    check(cudaMalloc(&d_out, n * sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(d_n, trips.data(), n * sizeof(int), cudaMemcpyHostToDevice), "upload");
    check(cudaMemset(d_out, 0, n * sizeof(float)), "cudaMemset");
    check(cudaDeviceSynchronize(), "sync");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; i++)
        work<<<n / 256, 256>>>(d_n, d_out, n);
    check(cudaGetLastError(), "work");
    check(cudaDeviceSynchronize(), "work");
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
    check(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost), "download");
    unsigned long long sum = 0;
    for (int t = 0; t < n; t++) {
        unsigned u;
        memcpy(&u, &out[t], 4);
        sum = sum * 31 + u;
    }
    printf("checksum %llu\nout[0..3] %.6g %.6g %.6g %.6g\n", sum, out[0], out[1], out[2], out[3]);
    fprintf(stderr, "skewed: %d launches of work over %d threads: %.3f ms\n", launches, n, ms);
    cudaFree(d_n);
    cudaFree(d_out);
    return 0;
}

// alloc_first.cu -- what the first use of an allocator costs in a process:
// cudaMallocAsync/cudaFreeAsync (the stream-ordered pool) and cudaMalloc/cudaFree,
// each the first time after the runtime is up (cudaFree(0)) and again, for a few
// sizes; wall time around the call and a stream sync (the pool's work is stream-
// ordered).  Order matters, so each case runs in its own process (argv[1]).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double once(int async, size_t bytes, cudaStream_t s)
{
    void *p = nullptr;
    double t0 = now_ms();
    if (async) {
        if (cudaMallocAsync(&p, bytes, s) != cudaSuccess) return -1;
        cudaMemsetAsync(p, 0, 4, s);
        cudaFreeAsync(p, s);
        cudaStreamSynchronize(s);
    } else {
        if (cudaMalloc(&p, bytes) != cudaSuccess) return -1;
        cudaMemsetAsync(p, 0, 4, s);
        cudaStreamSynchronize(s);
        cudaFree(p);
    }
    return now_ms() - t0;
}

int main(int argc, char **argv)
{
    int async = argc > 1 && !strcmp(argv[1], "async");
    size_t mb = argc > 2 ? strtoul(argv[2], nullptr, 10) : 64;
    cudaFree(0);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaStreamSynchronize(s);
    double a = once(async, mb << 20, s), b = once(async, mb << 20, s), c = once(async, mb << 20, s);
    double d = once(async, 1, s);
    printf("%-6s %6zu MiB: first %8.3f ms, second %8.3f, third %8.3f; then 1 byte %8.3f\n",
           async ? "async" : "malloc", mb, a, b, c, d);
    return 0;
}

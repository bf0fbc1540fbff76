// loop_runtime.cu -- a CUDA runtime-API application for attach mode's tests:
// count_up (a per-thread loop, so its threads diverge) launched twice with
// <<<>>> and a templated kernel between them.  Usage: loop_runtime [N [INPUT
// [graph]]]: N threads (default 4096, a multiple of 128); INPUT, unless "-",
// receives the first launch's input (N little-endian i32) for the manifest
// path; "graph": the first launch is captured into a CUDA graph and run so.
// Prints a checksum and a few outputs: the same with and without threadmap.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void count_up(const int *n, int *out, int len)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len)
        return;
    int s = 0;
    for (int i = 0; i < n[t]; i++)
        s += (i & 1) ? i : 2 * i;
    out[t] = s;
}

template <int K>
__global__ void scale(int *x, int len)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < len)
        x[t] = x[t] % 7 == 0 ? x[t] * K : x[t] + 1;
}

static int check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "loop_runtime: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n <= 0 || n % 128) {
        fprintf(stderr, "loop_runtime: N must be a positive multiple of 128\n");
        return 2;
    }
    std::vector<int> in(n), out(n);
    for (int t = 0; t < n; t++)
        in[t] = (int)((t * 7919u) % 37u);
    if (argc > 2 && strcmp(argv[2], "-")) {
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(in.data(), sizeof(int), n, f) != (size_t)n || fclose(f)) {
            fprintf(stderr, "loop_runtime: cannot write %s\n", argv[2]);
            return 1;
        }
    }
    int *d_in, *d_out;
    check(cudaMalloc(&d_in, n * sizeof(int)), "cudaMalloc");
    check(cudaMalloc(&d_out, n * sizeof(int)), "cudaMalloc");
    check(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice), "upload");
    if (argc > 3 && !strcmp(argv[3], "graph")) {
        cudaStream_t s;
        cudaGraph_t g;
        cudaGraphExec_t x;
        check(cudaStreamCreate(&s), "cudaStreamCreate");
        check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "begin capture");
        count_up<<<n / 128, 128, 0, s>>>(d_in, d_out, n);
        check(cudaStreamEndCapture(s, &g), "end capture");
        check(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate");
        check(cudaGraphLaunch(x, s), "cudaGraphLaunch");
        check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    } else
        count_up<<<n / 128, 128>>>(d_in, d_out, n);
    check(cudaGetLastError(), "count_up");
    scale<3><<<n / 128, 128>>>(d_in, n);
    check(cudaGetLastError(), "scale");
    count_up<<<n / 64, 64>>>(d_in, d_out, n);
    check(cudaGetLastError(), "count_up");
    check(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost), "download");
    unsigned long long sum = 0;
    for (int t = 0; t < n; t++)
        sum = sum * 31 + (unsigned)out[t];
    printf("checksum %llu\nout[0..3] %d %d %d %d\n", sum, out[0], out[1], out[2], out[3]);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}

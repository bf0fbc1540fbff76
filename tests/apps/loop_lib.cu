// loop_lib.cu -- a shared library holding a kernel, which loop_dlopen.c
// loads at run time (dlopen): attach mode must find the kernel's PTX in the
// library, not the executable.  loop_lib_run(n) launches lib_count (a
// per-thread loop) on n threads and returns a checksum of its output.
#include <cstdio>
#include <vector>

__global__ void lib_count(const int *n, int *out, int len)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len)
        return;
    int s = 1;
    for (int i = 0; i < n[t]; i++)
        s = s * 3 % 1000003;
    out[t] = s;
}

extern "C" unsigned long long loop_lib_run(int n)
{
    std::vector<int> in(n), out(n);
    for (int t = 0; t < n; t++)
        in[t] = (int)((t * 31u) % 101u);
    int *d_in, *d_out;
    if (cudaMalloc(&d_in, n * sizeof(int)) || cudaMalloc(&d_out, n * sizeof(int)))
        return 0;
    cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    lib_count<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
    cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d_in);
    cudaFree(d_out);
    unsigned long long sum = 0;
    for (int t = 0; t < n; t++)
        sum = sum * 31 + (unsigned)out[t];
    return sum;
}

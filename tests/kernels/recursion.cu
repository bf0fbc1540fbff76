// A recursive device function: a call cycle in the call graph.
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
extern "C" __global__ void recursion(const int *n, int *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) out[i] = fib(n[i] & 15);
}

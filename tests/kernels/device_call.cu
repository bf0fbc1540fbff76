// Calls to non-inlined device functions with a data-dependent loop inside.
__device__ __noinline__ int collatz_steps(unsigned x)
{
    int s = 0;
    while (x > 1 && s < 1000) { x = (x & 1) ? 3 * x + 1 : x / 2; s++; }
    return s;
}
__device__ __noinline__ float scale(float v, int k) { return k > 10 ? v * k : v - k; }
extern "C" __global__ void device_call(const unsigned *in, float *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    out[i] = scale((float)in[i], collatz_steps(in[i]));
}

// Per-thread loop trip counts read from the input: the classic divergent loop.
extern "C" __global__ void loop_per_thread(const int *n, int *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    int acc = 0;
#pragma unroll 1
    for (int k = 0; k < n[i]; k++) acc += k * 3 + (acc >> 3);
    out[i] = acc;
}

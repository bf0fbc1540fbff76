// Atomics: a histogram and a CAS loop (a data-dependent retry loop).
extern "C" __global__ void atomics(const int *in, int *hist, float *fsum, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    atomicAdd(&hist[in[i] & 63], 1);
    int *addr = (int *)fsum;
    int old = *addr, assumed;
    do {
        assumed = old;
        old = atomicCAS(addr, assumed, __float_as_int(__int_as_float(assumed) + 1.0f));
    } while (assumed != old);
}

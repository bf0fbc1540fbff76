// Bounds checks on the thread's index: one on threadIdx.x, which -G re-reads
// into a new register for the compare, one on i + 1.
extern "C" __global__ void safety_bounds(float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < n && i + 1 < n) a[i] += b[i];
}

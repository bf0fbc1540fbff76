// The global index through __umul24, which -G compiles as a call to a .func.
extern "C" __global__ void safety_umul24(float *a, int n)
{
    int t = __umul24(blockIdx.x, blockDim.x) + threadIdx.x;
    if (t < n) a[t] *= 2.f;
}

// An irregular reference a[p[t*k + j]], j < k: the A[P[tid]] of zhang2011
// and wu2013 (the manifest names it in "references").
extern "C" __global__ void gather(const float *a, const unsigned *p, float *out, int count, int k)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    float acc = 0;
    for (int j = 0; j < k; j++) acc += a[p[(size_t)t * k + j]];
    out[t] = acc;
}

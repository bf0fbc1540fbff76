// Dynamic shared memory and a tile loop.
extern "C" __global__ void dynamic_shared(const float *in, float *out, int count)
{
    extern __shared__ float tile[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = i < count ? in[i] : 0.f;
    __syncthreads();
    float s = 0.f;
    for (int k = 0; k <= t; k++) s += tile[k];
    if (i < count) out[i] = s;
}

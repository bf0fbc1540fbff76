// Warp reduction with shuffles.
extern "C" __global__ void warp_shuffle(const float *in, float *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < count ? in[i] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}

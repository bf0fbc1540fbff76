// Block reduction in shared memory with __syncthreads.
extern "C" __global__ void syncthreads_shared(const float *in, float *out, int count)
{
    __shared__ float buf[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buf[t] = i < count ? in[i] : 0.f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = buf[0];
}

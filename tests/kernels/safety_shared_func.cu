// A __device__ function called from two kernels (a .func shared by both, as under -G).
__device__ __noinline__ int shared_load(const int *a)
{
    return a[blockIdx.x * blockDim.x + threadIdx.x] + 1;
}
extern "C" __global__ void shared_k1(const int *a, int *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = shared_load(a);
}
extern "C" __global__ void shared_k2(const int *a, int *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2 * shared_load(a);
}

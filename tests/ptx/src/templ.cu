template <typename T> __global__ void scale(T *x, T f, int n) {
    __shared__ T tile[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x % 128] = i < n ? x[i] : T(0);
    __syncthreads();
    if (i < n) x[i] = tile[(threadIdx.x + 1) % 128] * f;
}
template __global__ void scale<float>(float *, float, int);
template __global__ void scale<double>(double *, double, int);
__constant__ int ctab[4] = {1, 2, 3, 4};
__device__ float gvec[3] = {1.5f, -2.0f, 0.25f};
extern "C" __global__ void usetab(int *o) { o[threadIdx.x] = ctab[threadIdx.x & 3] + (int)gvec[threadIdx.x % 3]; }

// Template kernels in a namespace: C++ mangled entry names.
namespace tmk {
template <typename T, int STEPS>
__global__ void saxpy_steps(const T *x, T *y, T a, const int *n, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    T v = y[i];
    for (int s = 0; s < STEPS && s < n[i]; s++) v = a * x[i] + v;
    y[i] = v;
}
template __global__ void saxpy_steps<float, 4>(const float *, float *, float, const int *, int);
template __global__ void saxpy_steps<double, 8>(const double *, double *, double, const int *, int);
}

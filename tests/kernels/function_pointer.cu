// An indirect call through a function pointer (call with a prototype).
typedef float (*op_t)(float);
__device__ __noinline__ float op_sq(float x) { return x * x; }
__device__ __noinline__ float op_neg(float x) { return -x; }
__device__ op_t ops[2] = {op_sq, op_neg};
extern "C" __global__ void function_pointer(const int *sel, float *x, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    x[i] = ops[sel[i] & 1](x[i]);
}

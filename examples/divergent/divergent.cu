// divergent.cu -- the bundled example: each thread refines its value for a
// data-dependent number of steps, along one of two paths chosen by its class.
// Threads of a warp have different step counts and classes, so the warp runs
// as long as its slowest thread, and both paths one after the other.
extern "C" __global__ void divergent(const int *steps, const int *cls, const float *x,
                                     float *y, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float v = x[i];
    if (cls[i]) {
        for (int k = 0; k < steps[i]; k++)
            v = v * 0.999f + __sinf(v) * 0.5f;
    } else {
        for (int k = 0; k < steps[i]; k++)
            v = sqrtf(v * v + 1.0f) - 0.75f;
    }
    y[i] = v;
}

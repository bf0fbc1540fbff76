// count_launches.cu -- kernels that update their input: c[t] counts the
// launches that saw it, so a launch that does not start from the pristine
// input (c[t] == 0) finds out, takes a slow branch, and (second kernel)
// sets the module variable `stale`, which restoring the arrays leaves alone.
// Written for tests/test_gpu_restore.c.

__device__ float slow_path(int v)
{
    float s = 0.0f;
    for (int i = 0; i < 100000 * v; i++)
        s = s * 0.999f + __sinf((float)i);
    return s;
}

extern "C" {
__device__ unsigned int stale;
}

/* Thread t's launch: counts it in c[t]; a stale input sets *flag (if any). */
__device__ void count(int *c, float *out, int t, unsigned int *flag)
{
    int v = c[t] + 1;
    c[t] = v;
    if (v != 1 && flag)
        *flag = 1;
    out[t] = v == 1 ? 1.0f : slow_path(v);
}

extern "C" __global__ void count_launches(int *c, float *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        count(c, out, t, 0);
}

extern "C" __global__ void count_launches_stale(int *c, float *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        count(c, out, t, &stale);
}

// loop_kernel.cu -- the kernel of loop_driver.c, compiled to a fatbin that
// the application loads with cuModuleLoadData (extern "C": looked up by name).
extern "C" __global__ void count_up(const int *n, int *out, int len, double scale)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len)
        return;
    int s = 0;
    for (int i = 0; i < n[t]; i++)
        s += (i & 1) ? i : 2 * i;
    out[t] = (int)(s * scale);
}

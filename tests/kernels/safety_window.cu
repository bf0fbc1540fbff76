// A window over the input, in[i + k] for k < 4 (unrolled by -O3, a loop under -G),
// and a per-thread slice, slice[4 * i + k] (each thread's own four elements).
extern "C" __global__ void safety_window(const float *in, const float *slice, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 >= n) return;
    float s = 0.f;
    for (int k = 0; k < 4; k++) s += in[i + k] * slice[4 * i + k];
    out[i] = s;
}

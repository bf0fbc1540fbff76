// Special functions and division: SFU and multi-instruction PTX ops.
extern "C" __global__ void float_math(const float *in, float *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float x = in[i];
    float r = sinf(x) + __cosf(x) + expf(-x) + sqrtf(fabsf(x)) + rsqrtf(x * x + 1.f);
    out[i] = r / (x + 2.f) + __fdividef(x, 3.f) + log2f(fabsf(x) + 1.f);
}

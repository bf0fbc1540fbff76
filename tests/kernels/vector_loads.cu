// Vector loads and stores (float4): braces in operands.
extern "C" __global__ void vector_loads(const float4 *in, float4 *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float4 v = in[i];
    if (v.x > v.y) { float t = v.x; v.x = v.y; v.y = t; }
    out[i] = make_float4(v.x + v.w, v.y * 2.f, v.z, v.w - v.x);
}

// A dense switch on per-thread data (the compiler may emit a jump table).
extern "C" __global__ void switch_case(const int *op, float *x, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float v = x[i];
    switch (op[i] & 7) {
    case 0: v = v + 1.f; break;
    case 1: v = v * 3.f; break;
    case 2: v = v - 7.f; break;
    case 3: v = v * v; break;
    case 4: v = -v; break;
    case 5: v = v / 3.f; break;
    case 6: v = v * 0.5f + 2.f; break;
    default: v = 0.f; break;
    }
    x[i] = v;
}

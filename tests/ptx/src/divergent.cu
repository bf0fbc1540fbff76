#include <cstdio>
__device__ __noinline__ int collatz(int x) {
    int n = 0;
    while (x != 1) { x = (x & 1) ? 3 * x + 1 : x / 2; n++; }
    return n;
}
__device__ int (*fptr)(int) = collatz;
extern "C" __global__ void __launch_bounds__(256) divergent(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    switch (v & 7) {
    case 0: v += 3; break;
    case 1: v *= 7; break;
    case 2: v -= 11; break;
    case 3: v ^= 0x55; break;
    case 4: v = collatz(v & 1023 | 1); break;
    case 5: v = fptr(v & 255 | 1); break;
    default: v = -v;
    }
    if (v > 1000) printf("big %d\n", v);
    out[i] = v;
}
extern "C" __global__ void loops(float *a, int n) {
    int t = threadIdx.x + blockDim.x * blockIdx.y;
    float s = 0.f;
    for (int k = 0; k < t % 17; k++) s += sqrtf(a[k] + 1.0f);
    if (s < 0) asm volatile("trap;");
    if (t == 3) asm volatile("{ .reg .pred p; setp.eq.u32 p, %0, 3; @p exit; }" :: "r"(t));
    a[t] = s;
}

// uniform_control.cu -- the control kernel: every thread runs the same number
// of the same branch-free steps (steps is a launch scalar; __sinf and fmaf have
// no data-dependent paths), so there is no control-flow divergence and no
// regrouping can pay for its cost: regroup() must decline here.
extern "C" __global__ void uniform_control(const float *x, float *y, int steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.f;
    for (int k = 0; k < steps; k++) {
        acc = fmaf(__sinf(v), 0.5f, acc);
        v = fmaf(v, 1.0001f, 0.0003f);
    }
    y[i] = acc;
}

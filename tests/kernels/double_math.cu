// fp64 arithmetic, division and a data-dependent Newton iteration.
extern "C" __global__ void double_math(const double *in, double *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    double a = fabs(in[i]) + 1.0, x = a;
    int k = 0;
    while (fabs(x * x - a) > 1e-12 * a && k < 64) { x = 0.5 * (x + a / x); k++; }
    out[i] = x + k;
}

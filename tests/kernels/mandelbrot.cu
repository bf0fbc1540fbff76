// Escape-time fractal: per-pixel iteration counts.
extern "C" __global__ void mandelbrot(int *iters, int w, int h, int max_iter)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float cr = -2.f + 3.f * x / w, ci = -1.5f + 3.f * y / h, zr = 0.f, zi = 0.f;
    int k = 0;
    while (k < max_iter && zr * zr + zi * zi < 4.f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.f * zr * zi + ci;
        zr = t;
        k++;
    }
    iters[y * w + x] = k;
}

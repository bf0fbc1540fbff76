// escape_time.cu -- escape-time fractal (Mandelbrot set): each thread iterates
// z <- z^2 + c for its point c until |z| > 2 or maxit.  Points inside the set
// run all maxit iterations, points far outside stop at once: the iteration
// count is the divergence.  Points come as per-thread inputs (cx, cy), so the
// thread id is only an index.  A user knows before launch whether c lies in
// the main cardioid or the period-2 bulb (closed forms: the manifest features).
extern "C" __global__ void escape_time(const float *cx, const float *cy, int *iters, float *mag,
                                       int maxit, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x0 = cx[i], y0 = cy[i], x = 0.f, y = 0.f;
    int k = 0;
    while (k < maxit && x * x + y * y <= 4.f) {
        float xt = x * x - y * y + x0;
        y = 2.f * x * y + y0;
        x = xt;
        k++;
    }
    iters[i] = k;
    mag[i] = x * x + y * y;
}

// Nested loops whose bounds both depend on the thread's data.
extern "C" __global__ void nested_loops(const int *rows, const int *cols, float *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float acc = 0.f;
    for (int r = 0; r < rows[i]; r++)
        for (int c = 0; c < cols[i] + r; c++)
            acc += (float)(r ^ c);
    out[i] = acc;
}

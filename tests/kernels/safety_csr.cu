// CSR SpMV with a diagonal term: row[t] and row[t+1], x[t] and x[col[i]].
extern "C" __global__ void safety_csr(const int *row, const int *col, const float *val,
                                      const float *x, float *y, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float s = x[t];
    for (int i = row[t]; i < row[t + 1]; i++) s += val[i] * x[col[i]];
    y[t] = s;
}

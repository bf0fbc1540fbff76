// SpMV in CSR with one thread per row: row-length divergence.
extern "C" __global__ void spmv_csr(const int *rowptr, const int *col, const float *val,
                                    const float *x, float *y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.f;
    for (int k = rowptr[r]; k < rowptr[r + 1]; k++) s += val[k] * x[col[k]];
    y[r] = s;
}

// spmv_csr.cu -- y = A x for a sparse matrix in CSR, one thread per row
// (CSR-scalar).  Row lengths follow a power law, so the threads of a warp run
// their row loops for very different counts: row-length divergence.
// Layout-transform ready: a thread reads only its own rowstart/rowlen element
// (the manifest's {"scan": "rowlen"} gives the starts); the nonzeros live in a
// power-of-two buffer of nzmask + 1 entries, and indices wrap with `& nzmask`
// because the total (nnz) depends on the generated lengths.
extern "C" __global__ void spmv_csr_rows(const int *rowstart, const int *rowlen, const int *col,
                                         const float *val, const float *x, float *y, int xmask,
                                         int nzmask, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int k0 = rowstart[r], n = rowlen[r];
    float s = 0.f;
    for (int k = 0; k < n; k++) {
        int e = (k0 + k) & nzmask;
        s += val[e] * x[col[e] & xmask];
    }
    y[r] = s;
}

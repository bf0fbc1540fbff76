// A per-thread local array with dynamic indexing (spills to .local).
extern "C" __global__ void local_array(const int *idx, int *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    int a[32];
    for (int k = 0; k < 32; k++) a[k] = k * i;
    int s = 0;
    for (int k = 0; k < (idx[i] & 31); k++) s += a[(idx[i] + k * 7) & 31];
    out[i] = s;
}

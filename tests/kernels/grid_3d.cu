// A 3-D grid of 3-D blocks with a per-cell loop.
extern "C" __global__ void grid_3d(int *out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    int s = 0;
    for (int k = 0; k < (x + y + z) % 5; k++) s += k;
    out[(z * ny + y) * nx + x] = s;
}

// Marching-cubes style: per-voxel vertex count from a table drives a loop.
__constant__ unsigned char num_verts[16] = {0, 3, 3, 6, 3, 6, 6, 9, 3, 6, 6, 9, 6, 9, 9, 12};
extern "C" __global__ void marching_cubes(const float *field, float *out, int n, float iso)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 >= n) return;
    unsigned c = 0;
    for (int k = 0; k < 4; k++) c |= (field[i + k] > iso) << k;
    float s = 0.f;
    for (unsigned v = 0; v < num_verts[c]; v++) s += __sinf(field[i + (v & 3)] * v);
    out[i] = s;
}

// marching_cubes.cu -- MC: the triangle-generation stage of marching cubes,
// one thread per active voxel.  A classify pass (as in the CUDA SDK) gives each
// voxel its case (which of the 8 corners lie inside the surface: `cube`) and
// the crossing point of the surface on each of the 12 edges (`frac`, 12 per
// voxel).  The thread looks up its case's triangle list in a 256-entry table
// and loops over 0..5 triangles (interpolating vertices, accumulating area
// and the summed normal): the case decides the trip count, the divergence.
//
// The table is not copied from anywhere: it is built at compile time
// (constexpr) by walking the cube's six faces.  On each face the inside
// corners form runs along the face's outward-oriented corner cycle; a run
// entering at edge a and leaving at edge b gives the segment a -> b (a face
// with two separate inside corners, the ambiguous case, gives two segments).
// Every crossed edge is entered on one face and left on the other, so the
// segments close into loops; a loop of m crossed edges is fanned into m - 2
// triangles.
#define MC_MAXT 5 /* the face walk gives at most 5 triangles; a longer row would be a write
                    past the array, which makes mc_build() no constant and fails the build */

struct mc_table {
    signed char tri[256][3 * MC_MAXT];
    unsigned char ntri[256];
};

/* the corners of edge e: x-edges 0-3, y-edges 4-7, z-edges 8-11; corner c
 * sits at (c & 1, c >> 1 & 1, c >> 2 & 1) */
__host__ __device__ constexpr int mc_edge_corner(int e, int end)
{
    int j = e & 3;
    int a = e < 4 ? 2 * j : e < 8 ? (j & 1) | (j >> 1) << 2 : j;
    return end ? a + (e < 4 ? 1 : e < 8 ? 2 : 4) : a;
}

__host__ __device__ constexpr int mc_edge_of(int a, int b)
{
    for (int e = 0; e < 12; e++)
        if ((mc_edge_corner(e, 0) == a && mc_edge_corner(e, 1) == b) ||
            (mc_edge_corner(e, 0) == b && mc_edge_corner(e, 1) == a))
            return e;
    return -1;
}

__host__ __device__ constexpr mc_table mc_build()
{
    /* each face's corners, counter-clockwise seen from outside the cube */
    constexpr int face[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    mc_table t{};
    for (int cs = 0; cs < 256; cs++) {
        int next[12] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
        for (int f = 0; f < 6; f++)
            for (int k = 0; k < 4; k++) {
                int prev = face[f][(k + 3) % 4], cur = face[f][k];
                if (!(cs >> cur & 1) || (cs >> prev & 1))
                    continue; /* not the first inside corner of a run */
                int j = k;
                while (cs >> face[f][(j + 1) % 4] & 1)
                    j = (j + 1) % 4;
                next[mc_edge_of(prev, cur)] =
                    mc_edge_of(face[f][j], face[f][(j + 1) % 4]);
            }
        bool seen[12] = {};
        int n = 0;
        for (int e0 = 0; e0 < 12; e0++) {
            if (next[e0] < 0 || seen[e0])
                continue;
            int loop[12] = {}, m = 0;
            for (int e = e0; !seen[e]; e = next[e]) {
                seen[e] = true;
                loop[m++] = e;
            }
            for (int k = 1; k + 1 < m; k++) {
                t.tri[cs][3 * n] = (signed char)loop[0];
                t.tri[cs][3 * n + 1] = (signed char)loop[k];
                t.tri[cs][3 * n + 2] = (signed char)loop[k + 1];
                n++;
            }
        }
        t.ntri[cs] = (unsigned char)n;
    }
    return t;
}

__constant__ mc_table mc = mc_build();

__device__ inline float corner_coord(int c, int axis) { return (float)(c >> axis & 1); }

extern "C" __global__ void mc_triangles(const unsigned char *cube, const float *frac, float *area,
                                        float *normal_len, int *ntri, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int cs = cube[i], nt = mc.ntri[cs];
    float a = 0.f, sx = 0.f, sy = 0.f, sz = 0.f;
    for (int k = 0; k < nt; k++) {
        float p[3][3];
        for (int v = 0; v < 3; v++) {
            int e = mc.tri[cs][3 * k + v];
            int c0 = mc_edge_corner(e, 0), c1 = mc_edge_corner(e, 1);
            float s = frac[12 * i + e];
            for (int ax = 0; ax < 3; ax++)
                p[v][ax] = corner_coord(c0, ax) + s * (corner_coord(c1, ax) - corner_coord(c0, ax));
        }
        float ux = p[1][0] - p[0][0], uy = p[1][1] - p[0][1], uz = p[1][2] - p[0][2];
        float vx = p[2][0] - p[0][0], vy = p[2][1] - p[0][1], vz = p[2][2] - p[0][2];
        float nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
        a += 0.5f * sqrtf(nx * nx + ny * ny + nz * nz);
        sx += nx, sy += ny, sz += nz;
    }
    area[i] = a;
    normal_len[i] = sqrtf(sx * sx + sy * sy + sz * sz);
    ntri[i] = nt;
}

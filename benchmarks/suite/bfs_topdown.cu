// bfs_topdown.cu -- one top-down BFS step, one thread per vertex: a vertex on
// the frontier scans its adjacency list and marks unvisited neighbours for the
// next frontier.  Divergence: the frontier flag (who works at all) times the
// vertex degree (power law: a skewed graph), plus the visited test per edge.
// Launch-count safe: `visited` is read only; `next` gets the value 1 from every
// writer (order-free); `found` (per thread) counts the neighbours marked.
// Edge lists start at the manifest's {"scan": "degree"} and wrap with emask.
extern "C" __global__ void bfs_step(const int *frontier, const int *degree, const int *edgestart,
                                    const int *adj, const unsigned char *visited,
                                    unsigned char *next, int *found, int vmask, int emask,
                                    int nodes)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nodes) return;
    int c = 0;
    if (frontier[v]) {
        int e0 = edgestart[v], d = degree[v];
        for (int k = 0; k < d; k++) {
            int u = adj[(e0 + k) & emask] & vmask;
            if (!visited[u]) {
                next[u] = 1;
                c++;
            }
        }
    }
    found[v] = c;
}

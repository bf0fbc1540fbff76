// Top-down BFS step: frontier flag and node degree drive divergence.
extern "C" __global__ void bfs_topdown(const int *rowptr, const int *adj, const char *frontier,
                                       char *next, int *dist, int level, int nodes)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nodes || !frontier[v]) return;
    for (int k = rowptr[v]; k < rowptr[v + 1]; k++) {
        int u = adj[k];
        if (dist[u] < 0) { dist[u] = level + 1; next[u] = 1; }
    }
}

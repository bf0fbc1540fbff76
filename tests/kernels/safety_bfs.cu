// BFS relaxation: reads cost[tid], writes cost[id] for a neighbour id.
extern "C" __global__ void safety_bfs(const int *row, const int *adj, int *cost, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    int c = cost[tid];
    for (int k = row[tid]; k < row[tid + 1]; k++) {
        int id = adj[k];
        if (cost[id] > c + 1) cost[id] = c + 1;
    }
}

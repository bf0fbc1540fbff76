// A search loop with break and continue: the exit point differs per thread.
extern "C" __global__ void early_exit_loop(const int *data, int len, const int *keys, int *pos, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    int found = -1;
    for (int k = 0; k < len; k++) {
        if (data[k] < 0) continue;
        if (data[k] == keys[i]) { found = k; break; }
    }
    pos[i] = found;
}

// Warp votes and lane ids.
extern "C" __global__ void warp_vote(const int *in, unsigned *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < count ? in[i] : 0;
    unsigned b = __ballot_sync(0xffffffffu, v > 0);
    int any = __any_sync(0xffffffffu, v > 100), all = __all_sync(0xffffffffu, v >= 0);
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    if (i < count) out[i] = b ^ (any << 1) ^ all ^ lane;
}

// Device printf: a call to the extern vprintf with a parameter block.
// NVRTC declares printf itself: no header is needed.
extern "C" __global__ void device_printf(const int *in, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count && in[i] < 0) printf("negative at %d: %d\n", i, in[i]);
}

// An assertion (a call to the extern __assertfail, as assert() expands to;
// NVRTC has no <cassert>) and __trap: calls to functions without a body and
// a trap terminator.
extern "C" __device__ void __assertfail(const char *msg, const char *file, unsigned line,
                                        const char *func, size_t size);
#define check(c) ((c) ? (void)0 : __assertfail(#c, __FILE__, __LINE__, __func__, 1))
extern "C" __global__ void trap_assert(const int *in, int *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    check(in[i] != 12345);
    if (in[i] == -777) __trap();
    out[i] = in[i] * 2;
}

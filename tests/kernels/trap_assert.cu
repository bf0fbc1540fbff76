// assert (a call to the extern __assertfail) and __trap: calls to functions
// without a body and a trap terminator.
#include <cassert>
extern "C" __global__ void trap_assert(const int *in, int *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    assert(in[i] != 12345);
    if (in[i] == -777) __trap();
    out[i] = in[i] * 2;
}

// A brx.idx jump table written in inline PTX (compilers rarely emit one).
extern "C" __global__ void brx_inline(const unsigned *sel, unsigned *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    unsigned s = sel[i] % 3, r;
    asm volatile("{\n\t"
                 ".reg .u32 t;\n\t"
                 "ts: .branchtargets L0, L1, L2;\n\t"
                 "brx.idx %1, ts;\n\t"
                 "L0: mov.u32 t, 10;\n\t"
                 "bra.uni DONE;\n\t"
                 "L1: mov.u32 t, 20;\n\t"
                 "bra.uni DONE;\n\t"
                 "L2: mov.u32 t, 30;\n\t"
                 "DONE: mov.u32 %0, t;\n\t"
                 "}"
                 : "=r"(r) : "r"(s));
    out[i] = r;
}

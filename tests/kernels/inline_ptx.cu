// Inline PTX with its own scope, registers and a local loop label.
extern "C" __global__ void inline_ptx(const unsigned *in, unsigned *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    unsigned x = in[i], r;
    asm volatile("{\n\t"
                 ".reg .pred p;\n\t"
                 ".reg .u32 c;\n\t"
                 "mov.u32 c, 0;\n\t"
                 "LOOP_%=:\n\t"
                 "setp.eq.u32 p, %1, 0;\n\t"
                 "@p bra END_%=;\n\t"
                 "shr.u32 %1, %1, 1;\n\t"
                 "add.u32 c, c, 1;\n\t"
                 "bra.uni LOOP_%=;\n\t"
                 "END_%=:\n\t"
                 "mov.u32 %0, c;\n\t"
                 "}"
                 : "=r"(r), "+r"(x));
    out[i] = r;
}

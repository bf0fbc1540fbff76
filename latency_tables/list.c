/*
 * list.c -- the built-in list of latency probes (microbenchmarks): for each
 * PTX opcode, the dependent chain that measures it, its run-time operands
 * and the SASS it must compile to.  Every chain was chosen so that ptxas
 * cannot fold it (tests/test_latency_measure.c checks the SASS):
 *   - operands come from memory at run time, through a per-thread address,
 *     so ptxas can neither constant-fold them nor prove them warp-uniform;
 *   - pure bitwise chains collapse into LOP3s and min/max into 3-input
 *     VIMNMX3, so those interleave an add (the companion, subtracted);
 *   - involutions (bfly twice) and idempotent forms are avoided;
 *   - a divisor that stays the same would have its reciprocal hoisted, so
 *     divisions chain through the divisor.
 * The list is in measuring order: a companion comes before its users.
 */
#include <string.h>

#include "latency_tables/probe.h"

/* IEEE bit patterns of the constants used below. */
#define F32_0 0x00000000u
#define F32_HALF 0x3F000000u
#define F32_1 0x3F800000u
#define F32_1_25 0x3FA00000u
#define F32_1_5 0x3FC00000u
#define F32_2 0x40000000u
#define F64_0 0x0000000000000000ull
#define F64_HALF 0x3FE0000000000000ull
#define F64_1 0x3FF0000000000000ull
#define F64_1_25 0x3FF4000000000000ull
#define F64_1_5 0x3FF8000000000000ull
#define F64_2 0x4000000000000000ull

#define ALT(op) op " {X}, {X}, {Y};"
#define COMP(op) "add.s32 {T}, {Y}, {C}; " op " {X}, {T}, {Y};"

static const tmap_latency_probe probes[] = {
    /* ------------------------------------------------------------- int */
    {{"add.s32"}, "int", "b32", TMAP_LAT_REGS, ALT("add.s32"), 1, NULL,
     1, 2, 0, 0, 0, 1, 75, {"IADD3", "IMAD.IADD", "VIADD"}, 1,
     "x[i] = x[i-2] + x[i-1] (two registers alternating)"},
    {{"sub.s32"}, "int", "b32", TMAP_LAT_REGS, ALT("sub.s32"), 1, NULL,
     7, 2, 0, 0, 0, 1, 75, {"IADD3", "IMAD.IADD", "VIADD"}, 1,
     "x[i] = x[i-2] - x[i-1]"},
    {{"mul.lo.s32"}, "int", "b32", TMAP_LAT_REGS, ALT("mul.lo.s32"), 1, NULL,
     3, 5, 0, 0, 0, 1, 75, {"IMAD"}, 1, "x[i] = x[i-2] * x[i-1] (odd values)"},
    {{"mad.lo.s32"}, "int", "b32", TMAP_LAT_REGS, "mad.lo.s32 {X}, {X}, {Y}, {Y};", 1, NULL,
     3, 5, 0, 0, 0, 1, 75, {"IMAD"}, 1, "x[i] = x[i-2] * x[i-1] + x[i-1]"},
    {{"mul.wide.s32"}, "int", "b32", TMAP_LAT_REGS,
     "mul.wide.s32 {W}, {Y}, {X}; mov.b64 {{T}, {X}}, {W};", 1, NULL,
     0x40000000, 0x40000001, 0, 0, 0, 1, 75, {"IMAD.WIDE"}, 1,
     "x[i] = high half of x[i-1] * x[i-2] (64-bit product; the high half keeps it wide)"},
    {{"div.u32"}, "int", "b32", TMAP_LAT_REGS, "div.u32 {X}, {C}, {Y};", 1, NULL,
     3, 3, 0xFFFFFFFFu, 0, 0, 1, 75, {"MUFU.RCP"}, 1,
     "x[i] = C / x[i-1], C = 2^32-1, x cycles 3 <-> 1431655765 (divisor varies: no hoisted reciprocal)"},
    {{"rem.u32"}, "int", "b32", TMAP_LAT_REGS, "rem.u32 {X}, {C}, {Y};", 1, NULL,
     1000, 1000, 1000003, 0, 0, 1, 75, {"MUFU.RCP"}, 1,
     "x[i] = C % x[i-1] (divisor varies; it reaches 0, harmless: the SASS is branch-free)"},
    {{"div.s32"}, "int", "b32", TMAP_LAT_REGS, "div.s32 {X}, {C}, {Y};", 1, NULL,
     3, 3, 0x7FFFFFFF, 0, 0, 1, 75, {"MUFU.RCP"}, 1,
     "x[i] = C / x[i-1], C = 2^31-1, x cycles 3 <-> 715827882"},
    {{"min.s32"}, "int", "b32", TMAP_LAT_REGS, ALT("min.s32"), 1, NULL,
     9, 4, 0, 0, 0, 1, 75, {"VIMNMX", "IMNMX"}, 1, "x[i] = min(x[i-2], x[i-1])"},
    {{"max.s32"}, "int", "b32", TMAP_LAT_REGS, ALT("max.s32"), 1, NULL,
     9, 4, 0, 0, 0, 1, 75, {"VIMNMX", "IMNMX"}, 1, "x[i] = max(x[i-2], x[i-1])"},
    {{"and.b32"}, "int", "b32", TMAP_LAT_REGS, COMP("and.b32"), 1, "add.s32",
     0x12345678, 0x12345678, 0x9E3779B9u, 0, 0, 1, 75, {"LOP3"}, 1,
     "t = x[i-1] + C; x[i] = t & x[i-1]; minus add.s32 (a pure and-chain folds into LOP3)"},
    {{"or.b32"}, "int", "b32", TMAP_LAT_REGS, COMP("or.b32"), 1, "add.s32",
     0x12345678, 0x12345678, 0x9E3779B9u, 0, 0, 1, 75, {"LOP3"}, 1,
     "t = x[i-1] + C; x[i] = t | x[i-1]; minus add.s32"},
    {{"xor.b32"}, "int", "b32", TMAP_LAT_REGS, COMP("xor.b32"), 1, "add.s32",
     0x12345678, 0x12345678, 0x9E3779B9u, 0, 0, 1, 75, {"LOP3"}, 1,
     "t = x[i-1] + C; x[i] = t ^ x[i-1]; minus add.s32"},
    {{"shl.b32"}, "int", "b32", TMAP_LAT_REGS, "shl.b32 {X}, {Y}, {C};", 1, NULL,
     0x0F0F0F0F, 0x0F0F0F0F, 1, 0, 0, 1, 75, {"SHF", "SHL", "IMAD.SHL"}, 1,
     "x[i] = x[i-1] << C (C = 1 at run time)"},
    {{"shr.u32"}, "int", "b32", TMAP_LAT_REGS, "shr.u32 {X}, {Y}, {C};", 1, NULL,
     0xF0F0F0F0u, 0xF0F0F0F0u, 1, 0, 0, 1, 75, {"SHF", "SHR"}, 1,
     "x[i] = x[i-1] >> C (C = 1 at run time)"},
    {{"popc.b32"}, "int", "b32", TMAP_LAT_REGS, "popc.b32 {X}, {Y};", 1, NULL,
     0xFFFFFFFFu, 0xFFFFFFFFu, 0, 0, 0, 1, 75, {"POPC"}, 1, "x[i] = popc(x[i-1])"},
    {{"clz.b32"}, "int", "b32", TMAP_LAT_REGS, "clz.b32 {X}, {Y};", 1, NULL,
     1, 1, 0, 0, 0, 1, 75, {"FLO"}, 1, "x[i] = clz(x[i-1]) (FLO and a subtract in SASS)"},
    {{"add.s64"}, "int", "b64", TMAP_LAT_REGS, ALT("add.s64"), 1, NULL,
     1, 2, 0, 0, 0, 1, 75, {"IADD3", "IADD.64", "IMAD.X"}, 1,
     "x[i] = x[i-2] + x[i-1], 64-bit"},
    {{"mul.lo.s64"}, "int", "b64", TMAP_LAT_REGS, ALT("mul.lo.s64"), 1, NULL,
     3, 5, 0, 0, 0, 1, 75, {"IMAD.WIDE"}, 1, "x[i] = x[i-2] * x[i-1], 64-bit"},
    /* ------------------------------------------------------------ fp32 */
    {{"add.f32"}, "fp32", "f32", TMAP_LAT_REGS, "add.f32 {X}, {Y}, {C};", 1, NULL,
     F32_0, F32_0, F32_1, 0, 0, 1, 75, {"FADD"}, 1,
     "x[i] = x[i-1] + C (C = 1.0 at run time; IEEE rounding forbids reassociation)"},
    {{"sub.f32"}, "fp32", "f32", TMAP_LAT_REGS, "sub.f32 {X}, {Y}, {C};", 1, NULL,
     F32_0, F32_0, F32_1, 0, 0, 1, 75, {"FADD"}, 1, "x[i] = x[i-1] - C"},
    {{"mul.f32"}, "fp32", "f32", TMAP_LAT_REGS, "mul.f32 {X}, {Y}, {C};", 1, NULL,
     F32_1_5, F32_1_5, F32_1, 0, 0, 1, 75, {"FMUL"}, 1, "x[i] = x[i-1] * C (C = 1.0)"},
    {{"fma.rn.f32"}, "fp32", "f32", TMAP_LAT_REGS, "fma.rn.f32 {X}, {Y}, {C}, {D};", 1, NULL,
     F32_0, F32_0, F32_HALF, F32_1, 0, 1, 75, {"FFMA"}, 1,
     "x[i] = x[i-1] * C + D (C = 0.5, D = 1: converges to 2)"},
    {{"min.f32"}, "fp32", "f32", TMAP_LAT_REGS, ALT("min.f32"), 1, NULL,
     F32_2, F32_1, 0, 0, 0, 1, 75, {"FMNMX"}, 1, "x[i] = min(x[i-2], x[i-1])"},
    {{"div.rn.f32"}, "fp32", "f32", TMAP_LAT_REGS, "div.rn.f32 {X}, {C}, {Y};", 1, NULL,
     F32_1_25, F32_1_25, F32_1_5, 0, 0, 1, 75, {"MUFU.RCP"}, 1,
     "x[i] = C / x[i-1] (C = 1.5: x cycles 1.25 <-> 1.2, the fast path)"},
    {{"sqrt.rn.f32"}, "fp32", "f32", TMAP_LAT_REGS, "sqrt.rn.f32 {X}, {Y};", 1, NULL,
     F32_2, F32_2, 0, 0, 0, 1, 75, {"MUFU.RSQ"}, 1, "x[i] = sqrt(x[i-1]) (from 2, to 1)"},
    {{"rcp.rn.f32"}, "fp32", "f32", TMAP_LAT_REGS, "rcp.rn.f32 {X}, {Y};", 1, NULL,
     F32_1_25, F32_1_25, 0, 0, 0, 1, 75, {"MUFU.RCP"}, 1, "x[i] = 1 / x[i-1] (1.25 <-> 0.8)"},
    /* ------------------------------------------------------------- SFU */
    {{"sqrt.approx.f32"}, "sfu", "f32", TMAP_LAT_REGS, "sqrt.approx.f32 {X}, {Y};", 1, NULL,
     F32_2, F32_2, 0, 0, 0, 1, 75, {"MUFU.SQRT", "MUFU.RSQ"}, 1, "x[i] = sqrt(x[i-1])"},
    {{"rsqrt.approx.f32"}, "sfu", "f32", TMAP_LAT_REGS, "rsqrt.approx.f32 {X}, {Y};", 1, NULL,
     F32_2, F32_2, 0, 0, 0, 1, 75, {"MUFU.RSQ"}, 1, "x[i] = rsqrt(x[i-1]) (to 1)"},
    {{"sin.approx.f32"}, "sfu", "f32", TMAP_LAT_REGS, "sin.approx.f32 {X}, {Y};", 1, NULL,
     F32_1, F32_1, 0, 0, 0, 1, 75, {"MUFU.SIN"}, 1, "x[i] = sin(x[i-1]) (from 1, slowly to 0)"},
    {{"cos.approx.f32"}, "sfu", "f32", TMAP_LAT_REGS, "cos.approx.f32 {X}, {Y};", 1, NULL,
     F32_1, F32_1, 0, 0, 0, 1, 75, {"MUFU.COS"}, 1, "x[i] = cos(x[i-1]) (to 0.739)"},
    {{"ex2.approx.ftz.f32"}, "sfu", "f32", TMAP_LAT_REGS,
     "neg.f32 {T}, {Y}; ex2.approx.ftz.f32 {X}, {T};", 1, NULL,
     F32_HALF, F32_HALF, 0, 0, 0, 1, 75, {"MUFU.EX2"}, 1,
     "x[i] = 2^-x[i-1] (the negation is an operand modifier in SASS; to 0.641)"},
    {{"tanh.approx.f32"}, "sfu", "f32", TMAP_LAT_REGS, "tanh.approx.f32 {X}, {Y};", 1, NULL,
     F32_1, F32_1, 0, 0, 0, 1, 75, {"MUFU.TANH"}, 1, "x[i] = tanh(x[i-1])"},
    /* ------------------------------------------------------------ fp64 */
    {{"add.f64"}, "fp64", "f64", TMAP_LAT_REGS, "add.f64 {X}, {Y}, {C};", 1, NULL,
     F64_0, F64_0, F64_1, 0, 0, 1, 75, {"DADD"}, 1, "x[i] = x[i-1] + C (C = 1.0)"},
    {{"mul.f64"}, "fp64", "f64", TMAP_LAT_REGS, "mul.f64 {X}, {Y}, {C};", 1, NULL,
     F64_1_5, F64_1_5, F64_1, 0, 0, 1, 75, {"DMUL"}, 1, "x[i] = x[i-1] * C (C = 1.0)"},
    {{"fma.rn.f64"}, "fp64", "f64", TMAP_LAT_REGS, "fma.rn.f64 {X}, {Y}, {C}, {D};", 1, NULL,
     F64_0, F64_0, F64_HALF, F64_1, 0, 1, 75, {"DFMA"}, 1, "x[i] = x[i-1] * C + D (0.5, 1)"},
    {{"div.rn.f64"}, "fp64", "f64", TMAP_LAT_REGS, "div.rn.f64 {X}, {C}, {Y};", 1, NULL,
     F64_1_25, F64_1_25, F64_1_5, 0, 0, 1, 75, {"MUFU.RCP64H"}, 1, "x[i] = C / x[i-1] (C = 1.5)"},
    {{"sqrt.rn.f64"}, "fp64", "f64", TMAP_LAT_REGS, "sqrt.rn.f64 {X}, {Y};", 1, NULL,
     F64_2, F64_2, 0, 0, 0, 1, 75, {"MUFU.RSQ64H"}, 1, "x[i] = sqrt(x[i-1])"},
    {{"rcp.rn.f64"}, "fp64", "f64", TMAP_LAT_REGS, "rcp.rn.f64 {X}, {Y};", 1, NULL,
     F64_1_25, F64_1_25, 0, 0, 0, 1, 75, {"MUFU.RCP64H"}, 1, "x[i] = 1 / x[i-1]"},
    /* ------------------------------------------------------ conversion */
    {{"cvt.rn.f32.s32", "cvt.rzi.s32.f32"}, "conversion", "b32", TMAP_LAT_REGS,
     "cvt.rn.f32.s32 {F}, {Y}; cvt.rzi.s32.f32 {X}, {F};", 2, NULL,
     12345, 12345, 0, 0, 0, 1, 75, {"I2FP", "I2F", "F2I"}, 2,
     "round trip s32 -> f32 -> s32; each opcode gets half the pair"},
    {{"cvt.rn.f64.s32", "cvt.rzi.s32.f64"}, "conversion", "b32", TMAP_LAT_REGS,
     "cvt.rn.f64.s32 {G}, {Y}; cvt.rzi.s32.f64 {X}, {G};", 2, NULL,
     12345, 12345, 0, 0, 0, 1, 75, {"I2F", "F2I"}, 2,
     "round trip s32 -> f64 -> s32; half the pair each"},
    {{"cvt.f64.f32", "cvt.rn.f32.f64"}, "conversion", "f32", TMAP_LAT_REGS,
     "cvt.f64.f32 {G}, {Y}; cvt.rn.f32.f64 {X}, {G};", 2, NULL,
     F32_1_5, F32_1_5, 0, 0, 0, 1, 75, {"F2F"}, 2,
     "round trip f32 -> f64 -> f32; half the pair each"},
    /* -------------------------------------------------- compare/select */
    {{"setp.lt.s32", "selp.b32"}, "control", "b32", TMAP_LAT_REGS,
     "setp.lt.s32 {P}, {Y}, {C}; selp.b32 {X}, {D}, {E}, {P};", 2, NULL,
     5, 5, 10, 5, 20, 1, 75, {"ISETP", "SEL"}, 2,
     "p = x[i-1] < C; x[i] = p ? D : E (selecting run-time values: not a min); half the pair each"},
    /* ---------------------------------------------------------- memory */
    {{"ld.global.u64"}, "global", "b64", TMAP_LAT_GLOBAL64, "ld.global.u64 {X}, [{Y}];", 1, NULL,
     0, 0, 0, 0, 0, 1, 75, {"LDG"}, 1,
     "pointer chase x = *x on a global word holding its own address (L1 hit after the warm pass)"},
    {{"ld.global.cg.u64"}, "global", "b64", TMAP_LAT_GLOBAL64, "ld.global.cg.u64 {X}, [{Y}];", 1,
     NULL, 0, 0, 0, 0, 0, 1, 75, {"LDG"}, 1,
     "pointer chase x = *x with .cg (cached in L2, not L1): the L2 hit latency"},
    {{"ld.global.u32"}, "global", "b32", TMAP_LAT_GLOBAL32,
     "mov.b64 {W}, {{Y}, {E}}; ld.global.u32 {X}, [{W}];", 1, NULL,
     0, 0, 0, 0, 0, 1, 75, {"LDG"}, 1,
     "chase on a global u32 holding the low half of its own address (high half E; "
     "the pairing is a register move off the chain)"},
    {{"ld.shared.u32"}, "shared", "b32", TMAP_LAT_SHARED, "ld.shared.u32 {X}, [{Y}];", 1, NULL,
     0, 0, 0, 0, 0, 1, 75, {"LDS"}, 1,
     "chase on a shared word holding its own (32-bit) shared address, written by the thread"},
    {{"ld.const.u32"}, "const", "b32", TMAP_LAT_CONST,
     "cvt.u64.u32 {W}, {Y}; add.s64 {W}, {CB}, {W}; ld.const.u32 {X}, [{W}];", 1, NULL,
     0, 0, 0, 0, 0, 1, 75, {"LDC"}, 1,
     "chase on tmap_lat_const[k] = 4k (set by the host): x = *(const + x) (one indexed LDC)"},
    /* One warp reading tmap_lat_const at one address, then at 16 (lanes
     * 0-15 and 16-31 alike): the difference over 15 is what each further
     * distinct address of a __constant__ read costs (it is serialized). */
    {{"sm:const.lanes1"}, "const", "b32", TMAP_LAT_CONST,
     "and.b32 {T}, {Y}, {C}; and.b32 %sv, %me, {C}; shl.b32 %sv, %sv, 2; add.u32 {T}, {T}, %sv; "
     "cvt.u64.u32 {W}, {T}; add.s64 {W}, {CB}, {W}; ld.const.u32 {X}, [{W}];", 1, NULL,
     0, 0, 0, 0, 0, 32, 75, {"LDC"}, 1,
     "one warp: x = *(const + (x & 0) + 4 (lane & 0)), one address for the warp"},
    {{"sm:const.lanes16"}, "const", "b32", TMAP_LAT_CONST,
     "and.b32 {T}, {Y}, {C}; and.b32 %sv, %me, 15; shl.b32 %sv, %sv, 2; add.u32 {T}, {T}, %sv; "
     "cvt.u64.u32 {W}, {T}; add.s64 {W}, {CB}, {W}; ld.const.u32 {X}, [{W}];", 1, NULL,
     0, 0, 0, 0, 0, 32, 75, {"LDC"}, 1,
     "one warp: x = *(const + (x & 0) + 4 (lane & 15)), 16 addresses for the warp"},
    {{"ld.local.u32"}, "local", "b32", TMAP_LAT_LOCAL, "ld.local.u32 {X}, [{Y}];", 1, NULL,
     0, 0, 0, 0, 0, 1, 75, {"LDL"}, 1,
     "chase on a local word holding its own (32-bit) local address (L1 hit)"},
    /* --------------------------------------------------------- atomics */
    {{"atom.global.add.u32"}, "atomic", "b32", TMAP_LAT_ATOM_GLOBAL,
     "atom.global.add.u32 {X}, [{AP}], {Y};", 1, NULL,
     0, 0, 0, 0, 0, 1, 75, {"ATOMG", "ATOM"}, 1,
     "x[i] = atomicAdd(&counter[tid], x[i-1]) (per-thread address: no warp aggregation)"},
    {{"atom.shared.add.u32"}, "atomic", "b32", TMAP_LAT_ATOM_SHARED,
     "atom.shared.add.u32 {X}, [{SP}], {Y};", 1, NULL,
     0, 0, 0, 0, 0, 1, 75, {"ATOMS"}, 1,
     "x[i] = atomicAdd(&shared_counter[tid], x[i-1])"},
    /* ----------------------------------------------------------- other */
    {{"shfl.sync.bfly.b32"}, "other", "b32", TMAP_LAT_REGS,
     "shfl.sync.bfly.b32 {X}, {Y}, 1, 0x1f, 0xffffffff;", 1, NULL,
     7, 7, 0, 0, 0, 32, 75, {"SHFL"}, 1,
     "x[i] = shfl_xor(x[i-1], 1), one warp (values not provably uniform, else ptxas drops it)"},
};

const tmap_latency_probe *tmap_latency_probes(size_t *count)
{
    if (count)
        *count = sizeof probes / sizeof probes[0];
    return probes;
}

const tmap_latency_probe *tmap_latency_find(const char *opcode)
{
    if (!opcode)
        return NULL;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        for (int j = 0; j < 2; j++)
            if (probes[i].opcodes[j] && !strcmp(probes[i].opcodes[j], opcode))
                return &probes[i];
    return NULL;
}

/*
 * ptx.c -- writes the PTX module of one latency probe (microbenchmark): the
 * prologue that loads the run-time operands (or prepares the memory to
 * chase), a timed region of `steps` chain steps between two %clock64 reads
 * run for `passes` passes (read from memory; the last is recorded), and the
 * stores that keep the chain alive.
 */
#include <stdlib.h>
#include <string.h>

#include "latency_tables/probe.h"

/* Parses "sm_90" (also "sm_90a"): the number, or -1. */
static int arch_number(const char *arch)
{
    if (!arch || strncmp(arch, "sm_", 3))
        return -1;
    char *end = NULL;
    long v = strtol(arch + 3, &end, 10);
    if (end == arch + 3 || v < 10 || v > 999)
        return -1;
    if (*end && (strcmp(end, "a") && strcmp(end, "f")))
        return -1;
    return (int)v;
}

/* The lowest PTX ISA that knows the target (tmap_kernel_load lowers the
 * directive further when the driver needs it). */
static const char *ptx_version_for(int sm, const char *arch)
{
    int family = strchr(arch, 'f') != NULL;
    if (sm <= 90)
        return "8.0";
    if (family || sm == 103 || sm == 121)
        return "8.8";
    if (sm == 100 || sm == 101)
        return "8.6";
    if (sm == 120)
        return "8.7";
    return "9.0";
}

tmap_status tmap_latency_ptx_target(const char *arch, unsigned min_sm, const char *what,
                                    tmap_buf *out, tmap_error *err)
{
    int sm = arch_number(arch);
    if (sm < 0)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "latency benchmark %s: bad architecture '%s' (want sm_XY)", what,
                         arch ? arch : "(null)");
    if ((unsigned)sm < min_sm)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "latency benchmark %s needs sm_%u or newer, not %s", what, min_sm, arch);
    tmap_buf_printf(out, ".version %s\n.target %s\n.address_size 64\n",
                    ptx_version_for(sm, arch), arch);
    return TMAP_OK;
}

/* Register standing for a placeholder name, or NULL if `name` is none. */
static const char *placeholder(const char *name, size_t len, unsigned i)
{
    static const struct { const char *name, *reg; } fixed[] = {
        {"C", "%c"}, {"D", "%d"}, {"E", "%e"}, {"T", "%t"}, {"P", "%p"},
        {"W", "%w"}, {"F", "%ft"}, {"G", "%gt"}, {"CB", "%cb"}, {"AP", "%ap"},
        {"SP", "%sv"},
    };
    if (len == 1 && name[0] == 'X')
        return i % 2 ? "%x1" : "%x0";
    if (len == 1 && name[0] == 'Y')
        return i % 2 ? "%x0" : "%x1";
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        if (strlen(fixed[k].name) == len && !strncmp(fixed[k].name, name, len))
            return fixed[k].reg;
    return NULL;
}

/* Appends step i of the chain: b->step with its placeholders replaced.
 * A '{' that does not open a known placeholder (PTX vector braces) is kept. */
static void put_step(tmap_buf *out, const char *step, unsigned i)
{
    tmap_buf_puts(out, "    ");
    for (const char *s = step; *s;) {
        const char *close = *s == '{' ? strchr(s + 1, '}') : NULL;
        const char *reg = close ? placeholder(s + 1, (size_t)(close - s - 1), i) : NULL;
        if (reg) {
            tmap_buf_puts(out, reg);
            s = close + 1;
        } else {
            tmap_buf_put(out, s, 1);
            s++;
        }
    }
    tmap_buf_puts(out, "\n");
}

static int uses_shared(const tmap_latency_probe *b)
{
    return b->setup == TMAP_LAT_SHARED || b->setup == TMAP_LAT_ATOM_SHARED;
}

static void put_head(tmap_buf *out, const tmap_latency_probe *b, unsigned steps)
{
    tmap_buf_printf(out, "// threadmap latency microbenchmark: %s%s%s, %u steps\n"
                         "// chain: %s\n\n",
                    b->opcodes[0], b->opcodes[1] ? " + " : "",
                    b->opcodes[1] ? b->opcodes[1] : "", steps, b->chain);
    if (uses_shared(b))
        tmap_buf_puts(out, ".shared .align 4 .b32 tmap_lat_smem[32];\n");
    if (b->setup == TMAP_LAT_CONST)
        tmap_buf_puts(out, ".const .align 4 .b32 " TMAP_LATENCY_CONST "[16];\n");
    tmap_buf_printf(out,
                    "\n.visible .entry " TMAP_LATENCY_ENTRY
                    "(.param .u64 out, .param .u64 in)\n{\n"
                    "    .reg .b64 %%in, %%out, %%src, %%toff, %%t0, %%t1, %%dt, %%w, %%cb, %%ap;\n"
                    "    .reg .b32 %%me, %%zero, %%lane0, %%passes, %%pass, %%sp, %%sv;\n"
                    "    .reg .pred %%p, %%again, %%first;\n"
                    "    .reg .%s %%x0, %%x1, %%c, %%d, %%e, %%t;\n"
                    "    .reg .f32 %%ft;\n    .reg .f64 %%gt;\n",
                    b->type);
    if (b->setup == TMAP_LAT_LOCAL)
        tmap_buf_puts(out, "    .local .align 4 .b32 tmap_lat_lmem[16];\n");
}

/* Loads the operands through a per-thread address (thread index masked by
 * a zero read from memory): ptxas cannot prove them warp-uniform. */
static void put_operands(tmap_buf *out, const char *type)
{
    tmap_buf_printf(out,
                    "    ld.param.u64 %%out, [out];\n    ld.param.u64 %%in, [in];\n"
                    "    cvta.to.global.u64 %%out, %%out;\n    cvta.to.global.u64 %%in, %%in;\n"
                    "    mov.u32 %%me, %%tid.x;\n"
                    "    ld.global.u32 %%zero, [%%in+%d];\n"
                    "    and.b32 %%lane0, %%me, %%zero;\n"
                    "    mul.wide.u32 %%toff, %%lane0, 8;\n"
                    "    add.s64 %%src, %%in, %%toff;\n"
                    "    ld.global.u32 %%passes, [%%src+%d];\n",
                    TMAP_LAT_IN_ZERO, TMAP_LAT_IN_PASSES);
    const char *regs[] = {"%x0", "%x1", "%c", "%d", "%e"};
    const int offs[] = {TMAP_LAT_IN_A, TMAP_LAT_IN_B, TMAP_LAT_IN_C, TMAP_LAT_IN_D,
                        TMAP_LAT_IN_E};
    for (int k = 0; k < 5; k++)
        tmap_buf_printf(out, "    ld.global.%s %s, [%%src+%d];\n", type, regs[k], offs[k]);
}

/* The setup-specific start of the chain (overrides x0, x1, E). */
static void put_setup(tmap_buf *out, tmap_latency_setup setup)
{
    switch (setup) {
    case TMAP_LAT_REGS:
        break;
    case TMAP_LAT_GLOBAL64:
        tmap_buf_printf(out, "    ld.global.u64 %%x1, [%%src+%d];\n    mov.b64 %%x0, %%x1;\n",
                        TMAP_LAT_IN_CHASE64);
        break;
    case TMAP_LAT_GLOBAL32:
        tmap_buf_printf(out,
                        "    ld.global.u32 %%x1, [%%src+%d];\n    mov.b32 %%x0, %%x1;\n"
                        "    ld.global.u32 %%e, [%%src+%d];\n",
                        TMAP_LAT_IN_CHASE32, TMAP_LAT_IN_CHASE32_HI);
        break;
    case TMAP_LAT_SHARED:
        tmap_buf_puts(out, "    mov.u32 %sp, tmap_lat_smem;\n    add.u32 %x1, %sp, %zero;\n"
                           "    st.shared.u32 [%x1], %x1;\n    bar.sync 0;\n"
                           "    mov.b32 %x0, %x1;\n");
        break;
    case TMAP_LAT_LOCAL:
        tmap_buf_puts(out, "    mov.u32 %sp, tmap_lat_lmem;\n    add.u32 %x1, %sp, %zero;\n"
                           "    st.local.u32 [%x1], %x1;\n    mov.b32 %x0, %x1;\n");
        break;
    case TMAP_LAT_CONST:
        tmap_buf_printf(out, "    mov.u64 %%cb, " TMAP_LATENCY_CONST ";\n"
                             "    ld.global.u32 %%x1, [%%src+%d];\n    mov.b32 %%x0, %%x1;\n",
                        TMAP_LAT_IN_CONST_START);
        break;
    case TMAP_LAT_ATOM_GLOBAL:
        tmap_buf_printf(out, "    mul.wide.u32 %%ap, %%me, 4;\n    add.s64 %%ap, %%ap, %%in;\n"
                             "    add.s64 %%ap, %%ap, %d;\n",
                        TMAP_LAT_IN_ATOM);
        break;
    case TMAP_LAT_ATOM_SHARED:
        tmap_buf_puts(out, "    mov.u32 %sp, tmap_lat_smem;\n    mad.lo.u32 %sv, %me, 4, %sp;\n"
                           "    st.shared.u32 [%sv], %zero;\n    bar.sync 0;\n");
        break;
    }
}

static void put_timed(tmap_buf *out, const tmap_latency_probe *b, unsigned steps)
{
    tmap_buf_puts(out, "    mov.u32 %pass, 0;\n$Lpass:\n    mov.u64 %t0, %clock64;\n");
    for (unsigned i = 0; i < steps; i++)
        put_step(out, b->step, i);
    tmap_buf_printf(out,
                    "    mov.u64 %%t1, %%clock64;\n"
                    "    add.u32 %%pass, %%pass, 1;\n"
                    "    setp.lt.u32 %%again, %%pass, %%passes;\n"
                    "    @%%again bra $Lpass;\n"
                    "    sub.s64 %%dt, %%t1, %%t0;\n"
                    "    setp.eq.u32 %%first, %%me, 0;\n"
                    "    @%%first st.global.u64 [%%out+%d], %%dt;\n"
                    "    @%%first st.global.%s [%%out+%d], %%x0;\n"
                    "    @%%first st.global.%s [%%out+%d], %%x1;\n"
                    "    ret;\n}\n",
                    TMAP_LAT_OUT_CYCLES, b->type, TMAP_LAT_OUT_X0, b->type, TMAP_LAT_OUT_X1);
}

tmap_status tmap_latency_probe_ptx(const tmap_latency_probe *b, unsigned steps,
                                   const char *arch, tmap_buf *out, tmap_error *err)
{
    if (steps == 0 || steps > 65536)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "latency benchmark %s: chain length %u out of 1..65536",
                         b->opcodes[0], steps);
    tmap_status st = tmap_latency_ptx_target(arch, b->min_sm, b->opcodes[0], out, err);
    if (st != TMAP_OK)
        return st;
    put_head(out, b, steps);
    put_operands(out, b->type);
    put_setup(out, b->setup);
    put_timed(out, b, steps);
    if (out->oom)
        return tmap_fail(err, TMAP_ERR_NOMEM, "latency benchmark %s: out of memory",
                         b->opcodes[0]);
    return TMAP_OK;
}

tmap_status tmap_latency_ptx(const char *opcode, unsigned steps, const char *arch,
                             char **ptx, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, opcode, ptx);
    if (absent)
        return absent;
    *ptx = NULL;
    const tmap_latency_probe *b = tmap_latency_find(opcode);
    if (!b)
        return tmap_fail(err, TMAP_ERR_INVALID,
                         "no latency benchmark for opcode '%s' (see threadmap latency --list)",
                         opcode);
    tmap_buf buf = {0};
    tmap_status st = tmap_latency_probe_ptx(b, steps, arch, &buf, err);
    if (st != TMAP_OK) {
        tmap_buf_free(&buf);
        return st;
    }
    *ptx = buf.data;
    return TMAP_OK;
}

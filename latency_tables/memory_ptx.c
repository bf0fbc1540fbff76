/*
 * memory_ptx.c -- the PTX module of the memory probes (tmap_latency_memprobes):
 *   tmap_mem_link    node i of a chase buffer gets the address of node next[i]
 *   tmap_mem_chase   one thread: `steps` dependent ld.global.cg.u64 between two
 *                    %clock64 (and %globaltimer) reads
 *   tmap_mem_stream  every thread: 4 coalesced 128-bit ld.global.cg per round,
 *                    rounds x passes, each block's first thread records
 *                    {globaltimer, clock64} after a barrier at its start and end
 *   tmap_mem_gather  every thread: 4 ld.global.u32 per round at random words
 *                    (an LCG per thread: word = state >> shift), records alike
 *   tmap_mem_cchase  one thread: a chain of ld.const.u32 cycling through n
 *                    words `stride` words apart in tmap_mem_ctab, 2n + 64
 *                    steps untimed, then `iters` between two %clock64 reads
 *   tmap_mem_lsweep  one block: each thread fills `words` words of its local
 *                    row, sweeps it once untimed, then `passes` times
 *                    between two %clock64 reads (a chain through x & zero),
 *                    each warp's first thread recording its cycles
 *   tmap_mem_ctput   every thread: 4 independent ld.const.u32 chains, lane l
 *                    of a request at a hashed word of `words` shared by the
 *                    lanes l mod k (k distinct addresses a request), records
 *                    as stream's
 * The loaded values are xor-ed into one register stored only when it equals
 * a run-time `magic` that it never equals, so no load is dead code; the
 * constant chains depend on each value through `x & zero` (zero = 0 at run
 * time; the table is zero-filled, as PTX fills .const data).
 */
#include "latency_tables/probe.h"

static const char link_ptx[] =
    ".visible .entry " TMAP_MEM_ENTRY_LINK "(.param .u64 buf, .param .u64 next, .param .u32 n,\n"
    "                                .param .u32 stride)\n"
    "{\n"
    "    .reg .b64 %buf, %gbuf, %next, %a, %v;\n"
    "    .reg .b32 %i, %j, %t, %n, %s;\n"
    "    .reg .pred %p;\n"
    "    ld.param.u64 %buf, [buf];\n"
    "    ld.param.u64 %next, [next];\n"
    "    ld.param.u32 %n, [n];\n"
    "    ld.param.u32 %s, [stride];\n"
    "    cvta.to.global.u64 %gbuf, %buf;\n"
    "    cvta.to.global.u64 %next, %next;\n"
    "    mov.u32 %i, %ctaid.x;\n"
    "    mov.u32 %j, %ntid.x;\n"
    "    mov.u32 %t, %tid.x;\n"
    "    mad.lo.u32 %i, %i, %j, %t;\n"
    "    setp.ge.u32 %p, %i, %n;\n"
    "    @%p bra $Ldone;\n"
    "    mul.wide.u32 %a, %i, 4;\n"
    "    add.s64 %a, %next, %a;\n"
    "    ld.global.u32 %j, [%a];\n"
    "    mul.wide.u32 %v, %j, %s;\n"
    "    add.s64 %v, %buf, %v;\n"
    "    mul.wide.u32 %a, %i, %s;\n"
    "    add.s64 %a, %gbuf, %a;\n"
    "    st.global.u64 [%a], %v;\n"
    "$Ldone:\n"
    "    ret;\n"
    "}\n\n";

/* out: {clock64 cycles, globaltimer ns, the last node}; steps: a multiple of 8. */
static const char chase_ptx[] =
    ".visible .entry " TMAP_MEM_ENTRY_CHASE "(.param .u64 out, .param .u64 start, .param .u32 steps)\n"
    "{\n"
    "    .reg .b64 %out, %x, %c0, %c1, %g0, %g1;\n"
    "    .reg .b32 %k;\n"
    "    .reg .pred %p;\n"
    "    ld.param.u64 %out, [out];\n"
    "    cvta.to.global.u64 %out, %out;\n"
    "    ld.param.u64 %x, [start];\n"
    "    ld.param.u32 %k, [steps];\n"
    "    mov.u64 %g0, %globaltimer;\n"
    "    mov.u64 %c0, %clock64;\n"
    "$Lchase:\n"
    "    ld.global.cg.u64 %x, [%x];\n    ld.global.cg.u64 %x, [%x];\n"
    "    ld.global.cg.u64 %x, [%x];\n    ld.global.cg.u64 %x, [%x];\n"
    "    ld.global.cg.u64 %x, [%x];\n    ld.global.cg.u64 %x, [%x];\n"
    "    ld.global.cg.u64 %x, [%x];\n    ld.global.cg.u64 %x, [%x];\n"
    "    sub.u32 %k, %k, 8;\n"
    "    setp.ne.u32 %p, %k, 0;\n"
    "    @%p bra $Lchase;\n"
    "    mov.u64 %c1, %clock64;\n"
    "    mov.u64 %g1, %globaltimer;\n"
    "    sub.s64 %c1, %c1, %c0;\n"
    "    sub.s64 %g1, %g1, %g0;\n"
    "    st.global.u64 [%out], %c1;\n"
    "    st.global.u64 [%out+8], %g1;\n"
    "    st.global.u64 [%out+16], %x;\n"
    "    ret;\n"
    "}\n\n";

/* The start of stream and gather: thread ids, the accumulator, and the
 * first thread's start record after a barrier. */
#define TIMED_START                                                                      \
    "    .reg .b64 %out, %buf, %rec, %a0, %a1, %a2, %a3, %q, %step, %c0, %c1, %g0, %g1;\n" \
    "    .reg .b32 %tx, %nt, %cta, %ncta, %gtid, %T, %it, %pass, %iters, %passes;\n"    \
    "    .reg .b32 %acc, %magic, %s, %w, %shift, %v<16>;\n"                                \
    "    .reg .pred %p, %first;\n"                                                         \
    "    ld.param.u64 %out, [out];\n"                                                      \
    "    ld.param.u64 %buf, [buf];\n"                                                      \
    "    ld.param.u32 %iters, [iters];\n"                                                  \
    "    ld.param.u32 %passes, [passes];\n"                                                \
    "    ld.param.u32 %magic, [magic];\n"                                                  \
    "    cvta.to.global.u64 %out, %out;\n"                                                 \
    "    cvta.to.global.u64 %buf, %buf;\n"                                                 \
    "    mov.u32 %tx, %tid.x;\n"                                                           \
    "    mov.u32 %nt, %ntid.x;\n"                                                          \
    "    mov.u32 %cta, %ctaid.x;\n"                                                        \
    "    mov.u32 %ncta, %nctaid.x;\n"                                                      \
    "    mad.lo.u32 %gtid, %cta, %nt, %tx;\n"                                           \
    "    mul.lo.u32 %T, %ncta, %nt;\n"                                                   \
    "    mov.u32 %acc, 0;\n"                                                               \
    "    setp.eq.u32 %first, %tx, 0;\n"                                                   \
    "    bar.sync 0;\n"                                                                    \
    "    @%first mov.u64 %g0, %globaltimer;\n"                                             \
    "    @%first mov.u64 %c0, %clock64;\n"                                                 \
    "    mov.u32 %pass, 0;\n"

/* The end: the first thread's end record {g0, g1, c0, c1} at out + 32 cta,
 * and the accumulator, where it never goes (magic), after the records. */
#define TIMED_END                                                       \
    "    bar.sync 0;\n"                                                 \
    "    @%first mov.u64 %c1, %clock64;\n"                              \
    "    @%first mov.u64 %g1, %globaltimer;\n"                          \
    "    mul.wide.u32 %rec, %cta, 32;\n"                                \
    "    add.s64 %rec, %out, %rec;\n"                                   \
    "    @%first st.global.v2.u64 [%rec], {%g0, %g1};\n"                \
    "    @%first st.global.v2.u64 [%rec+16], {%c0, %c1};\n"             \
    "    setp.eq.u32 %p, %acc, %magic;\n"                               \
    "    mul.wide.u32 %rec, %ncta, 32;\n"                               \
    "    add.s64 %rec, %out, %rec;\n"                                   \
    "    @%p st.global.u32 [%rec], %acc;\n"                             \
    "    ret;\n"                                                        \
    "}\n\n"

#define XOR4(a, b, c, d)                                                      \
    "    xor.b32 %acc, %acc, " a ";\n    xor.b32 %acc, %acc, " b ";\n"        \
    "    xor.b32 %acc, %acc, " c ";\n    xor.b32 %acc, %acc, " d ";\n"

/* Round r of pass p: thread g reads the 16 bytes at 64 T r + 16 (g + k T),
 * k = 0..3 (a warp's 512 contiguous bytes per load). */
static const char stream_ptx[] =
    ".visible .entry " TMAP_MEM_ENTRY_STREAM "(.param .u64 out, .param .u64 buf, .param .u32 iters,\n"
    "                                  .param .u32 passes, .param .u32 magic)\n"
    "{\n" TIMED_START
    "    mul.wide.u32 %q, %T, 16;\n"
    "    shl.b64 %step, %q, 2;\n"
    "$Lpass:\n"
    "    mul.wide.u32 %a0, %gtid, 16;\n"
    "    add.s64 %a0, %buf, %a0;\n"
    "    mov.u32 %it, 0;\n"
    "$Lround:\n"
    "    add.s64 %a1, %a0, %q;\n"
    "    add.s64 %a2, %a1, %q;\n"
    "    add.s64 %a3, %a2, %q;\n"
    "    ld.global.cg.v4.u32 {%v0, %v1, %v2, %v3}, [%a0];\n"
    "    ld.global.cg.v4.u32 {%v4, %v5, %v6, %v7}, [%a1];\n"
    "    ld.global.cg.v4.u32 {%v8, %v9, %v10, %v11}, [%a2];\n"
    "    ld.global.cg.v4.u32 {%v12, %v13, %v14, %v15}, [%a3];\n"
    XOR4("%v0", "%v1", "%v2", "%v3") XOR4("%v4", "%v5", "%v6", "%v7")
    XOR4("%v8", "%v9", "%v10", "%v11") XOR4("%v12", "%v13", "%v14", "%v15")
    "    add.s64 %a0, %a0, %step;\n"
    "    add.u32 %it, %it, 1;\n"
    "    setp.lt.u32 %p, %it, %iters;\n"
    "    @%p bra $Lround;\n"
    "    add.u32 %pass, %pass, 1;\n"
    "    setp.lt.u32 %p, %pass, %passes;\n"
    "    @%p bra $Lpass;\n" TIMED_END;

/* One random word: state = state * 1664525 + 1013904223, word = state >> shift. */
#define GATHER_ONE(v)                                     \
    "    mad.lo.u32 %s, %s, 1664525, 1013904223;\n"       \
    "    shr.u32 %w, %s, %shift;\n"                       \
    "    mul.wide.u32 %a0, %w, 4;\n"                      \
    "    add.s64 %a0, %buf, %a0;\n"                       \
    "    ld.global.u32 " v ", [%a0];\n"

/* iters rounds of 4 loads (passes = 1); shift = 32 - log2(words). */
static const char gather_ptx[] =
    ".visible .entry " TMAP_MEM_ENTRY_GATHER "(.param .u64 out, .param .u64 buf, .param .u32 iters,\n"
    "                                  .param .u32 passes, .param .u32 magic,\n"
    "                                  .param .u32 shift)\n"
    "{\n" TIMED_START
    "    ld.param.u32 %shift, [shift];\n"
    "    mad.lo.u32 %s, %gtid, 0x9E3779B9, 0x7F4A7C15;\n"
    "    mov.u32 %it, 0;\n"
    "$Lround:\n"
    GATHER_ONE("%v0") GATHER_ONE("%v1") GATHER_ONE("%v2") GATHER_ONE("%v3")
    XOR4("%v0", "%v1", "%v2", "%v3")
    "    add.u32 %it, %it, 1;\n"
    "    setp.lt.u32 %p, %it, %iters;\n"
    "    @%p bra $Lround;\n" TIMED_END;

/* out[warp] = the warp's cycles of the timed passes (u64); out + 64 +
 * 4 tid: the thread's last value.  Local words interleave by lane (word i
 * of a warp's 32 lanes is one 128-byte line), so the block's rows take
 * 128 x 4 words bytes of the L1. */
static const char lsweep_ptx[] =
    ".visible .entry " TMAP_MEM_ENTRY_LSWEEP "(.param .u64 out, .param .u32 words, .param .u32 passes,\n"
    "                                  .param .u32 zero)\n"
    "{\n"
    "    .local .align 4 .b8 row[" TMAP_MEM_LROW_BYTES_S "];\n"
    "    .reg .b64 %out, %base, %a, %c0, %c1;\n"
    "    .reg .b32 %x, %i, %n, %k, %np, %z, %t, %me;\n"
    "    .reg .pred %p, %lead;\n"
    "    ld.param.u64 %out, [out];\n"
    "    cvta.to.global.u64 %out, %out;\n"
    "    ld.param.u32 %n, [words];\n"
    "    ld.param.u32 %z, [zero];\n"
    "    mov.u32 %me, %tid.x;\n"
    "    mov.u64 %base, row;\n"
    "    mov.u32 %x, 0;\n"
    "    mov.u32 %i, 0;\n"
    "$Lfill:\n"
    "    mul.wide.u32 %a, %i, 4;\n"
    "    add.s64 %a, %base, %a;\n"
    "    st.local.u32 [%a], %x;\n"
    "    add.u32 %i, %i, 1;\n"
    "    setp.lt.u32 %p, %i, %n;\n"
    "    @%p bra $Lfill;\n"
    "    ld.param.u32 %np, [passes];\n"
    "    add.u32 %k, %np, 1;\n"
    "$Lpass:\n"
    "    setp.eq.u32 %p, %k, %np;\n"
    "    @!%p bra $Lsweep;\n"
    "    bar.sync 0;\n"
    "    mov.u64 %c0, %clock64;\n"
    "$Lsweep:\n"
    "    mov.u32 %i, 0;\n"
    "$Lword:\n"
    "    and.b32 %t, %x, %z;\n"
    "    add.u32 %t, %t, %i;\n"
    "    mul.wide.u32 %a, %t, 4;\n"
    "    add.s64 %a, %base, %a;\n"
    "    ld.local.u32 %x, [%a];\n"
    "    add.u32 %i, %i, 1;\n"
    "    setp.lt.u32 %p, %i, %n;\n"
    "    @%p bra $Lword;\n"
    "    sub.u32 %k, %k, 1;\n"
    "    setp.ne.u32 %p, %k, 0;\n"
    "    @%p bra $Lpass;\n"
    "    mov.u64 %c1, %clock64;\n"
    "    sub.s64 %c1, %c1, %c0;\n"
    "    and.b32 %t, %me, 31;\n"
    "    setp.eq.u32 %lead, %t, 0;\n"
    "    shr.u32 %t, %me, 5;\n"
    "    mul.wide.u32 %a, %t, 8;\n"
    "    add.s64 %a, %out, %a;\n"
    "    @%lead st.global.u64 [%a], %c1;\n"
    "    mul.wide.u32 %a, %me, 4;\n"
    "    add.s64 %a, %out, %a;\n"
    "    st.global.u32 [%a+64], %x;\n"
    "    ret;\n"
    "}\n\n";

/* The constant table: 56 KB of the 64 KB a module may hold. */
static const char ctab_ptx[] =
    ".const .align 4 .b32 " TMAP_MEM_CTAB "[" TMAP_MEM_CTAB_WORDS_S "];\n\n";

/* One step of the constant chase: word i * stride + (x & zero), i cycling
 * through n. */
#define CCHASE_STEP                              \
    "    and.b32 %t, %x, %z;\n"                  \
    "    mad.lo.u32 %t, %i, %s, %t;\n"           \
    "    mul.wide.u32 %a, %t, 4;\n"              \
    "    add.s64 %a, %base, %a;\n"               \
    "    ld.const.u32 %x, [%a];\n"               \
    "    add.u32 %i, %i, 1;\n"                   \
    "    setp.eq.u32 %p, %i, %n;\n"              \
    "    selp.u32 %i, 0, %i, %p;\n"

/* out: {clock64 cycles of the timed steps, the last value (u32)}. */
static const char cchase_ptx[] =
    ".visible .entry " TMAP_MEM_ENTRY_CCHASE "(.param .u64 out, .param .u32 stride, .param .u32 n,\n"
    "                                  .param .u32 iters, .param .u32 zero)\n"
    "{\n"
    "    .reg .b64 %out, %a, %base, %c0, %c1;\n"
    "    .reg .b32 %x, %i, %k, %n, %s, %z, %t;\n"
    "    .reg .pred %p;\n"
    "    ld.param.u64 %out, [out];\n"
    "    cvta.to.global.u64 %out, %out;\n"
    "    ld.param.u32 %s, [stride];\n"
    "    ld.param.u32 %n, [n];\n"
    "    ld.param.u32 %z, [zero];\n"
    "    mov.u64 %base, " TMAP_MEM_CTAB ";\n"
    "    mov.u32 %x, 0;\n"
    "    mov.u32 %i, 0;\n"
    "    add.u32 %k, %n, %n;\n"
    "    add.u32 %k, %k, 64;\n"
    "$Lwarm:\n" CCHASE_STEP
    "    sub.u32 %k, %k, 1;\n"
    "    setp.ne.u32 %p, %k, 0;\n"
    "    @%p bra $Lwarm;\n"
    "    ld.param.u32 %k, [iters];\n"
    "    mov.u64 %c0, %clock64;\n"
    "$Ltimed:\n" CCHASE_STEP
    "    sub.u32 %k, %k, 1;\n"
    "    setp.ne.u32 %p, %k, 0;\n"
    "    @%p bra $Ltimed;\n"
    "    mov.u64 %c1, %clock64;\n"
    "    sub.s64 %c1, %c1, %c0;\n"
    "    st.global.u64 [%out], %c1;\n"
    "    st.global.u32 [%out+8], %x;\n"
    "    ret;\n"
    "}\n\n";

/* h = h ^ h >> 15, * 0x2c1b3c6d, ^ >> 12, * 0x297a2d39, ^ >> 15 */
#define MIX(h)                                                                  \
    "    shr.u32 %m, " h ", 15;\n    xor.b32 " h ", " h ", %m;\n"                \
    "    mul.lo.u32 " h ", " h ", 0x2c1b3c6d;\n"                                  \
    "    shr.u32 %m, " h ", 12;\n    xor.b32 " h ", " h ", %m;\n"                \
    "    mul.lo.u32 " h ", " h ", 0x297a2d39;\n"                                  \
    "    shr.u32 %m, " h ", 15;\n    xor.b32 " h ", " h ", %m;\n"

/* Chain c of a round: word mix(hg ^ c) mod words, after x_c. */
#define CTPUT_ONE(c, x)                                   \
    "    xor.b32 %hc, %hg, " c ";\n" MIX("%hc")            \
    "    rem.u32 %hc, %hc, %words;\n"                     \
    "    and.b32 %t, " x ", %z;\n"                         \
    "    add.u32 %t, %t, %hc;\n"                          \
    "    mul.wide.u32 %a0, %t, 4;\n"                       \
    "    add.s64 %a0, %cb, %a0;\n"                         \
    "    ld.const.u32 " x ", [%a0];\n"

/* iters rounds of 4 chained requests a warp (passes = 1, buf unused); the
 * round's hash h = it 0x9e3779b1 + warp 0x51ed27, mixed; lane l's group
 * g = l mod k, hg = mix(h) ^ g 0x85ebca77. */
static const char ctput_ptx[] =
    ".visible .entry " TMAP_MEM_ENTRY_CTPUT "(.param .u64 out, .param .u64 buf, .param .u32 iters,\n"
    "                                  .param .u32 passes, .param .u32 magic,\n"
    "                                  .param .u32 words, .param .u32 k, .param .u32 zero)\n"
    "{\n" TIMED_START
    "    .reg .b64 %cb;\n"
    "    .reg .b32 %words, %k, %z, %g, %wp, %h, %hg, %hc, %m, %t, %x<4>;\n"
    "    ld.param.u32 %words, [words];\n"
    "    ld.param.u32 %k, [k];\n"
    "    ld.param.u32 %z, [zero];\n"
    "    mov.u64 %cb, " TMAP_MEM_CTAB ";\n"
    "    and.b32 %g, %tx, 31;\n"
    "    rem.u32 %g, %g, %k;\n"
    "    mul.lo.u32 %g, %g, 0x85ebca77;\n"
    "    shr.u32 %wp, %gtid, 5;\n"
    "    mul.lo.u32 %wp, %wp, 0x51ed27;\n"
    "    mov.u32 %x0, 0;\n    mov.u32 %x1, 1;\n    mov.u32 %x2, 2;\n    mov.u32 %x3, 3;\n"
    "    mov.u32 %it, 0;\n"
    "$Lround:\n"
    "    mad.lo.u32 %h, %it, 0x9e3779b1, %wp;\n" MIX("%h")
    "    xor.b32 %hg, %h, %g;\n"
    CTPUT_ONE("0", "%x0") CTPUT_ONE("1", "%x1") CTPUT_ONE("2", "%x2") CTPUT_ONE("3", "%x3")
    "    add.u32 %it, %it, 1;\n"
    "    setp.lt.u32 %p, %it, %iters;\n"
    "    @%p bra $Lround;\n"
    XOR4("%x0", "%x1", "%x2", "%x3") TIMED_END;

tmap_status tmap_latency_mem_ptx(const char *arch, tmap_buf *out, tmap_error *err)
{
    tmap_buf_puts(out, "// threadmap memory probes (docs/latency.md)\n");
    tmap_status st = tmap_latency_ptx_target(arch, 75, "memory probes", out, err);
    if (st != TMAP_OK)
        return st;
    tmap_buf_puts(out, "\n");
    tmap_buf_puts(out, link_ptx);
    tmap_buf_puts(out, chase_ptx);
    tmap_buf_puts(out, stream_ptx);
    tmap_buf_puts(out, gather_ptx);
    tmap_buf_puts(out, lsweep_ptx);
    tmap_buf_puts(out, ctab_ptx);
    tmap_buf_puts(out, cchase_ptx);
    tmap_buf_puts(out, ctput_ptx);
    if (out->oom)
        return tmap_fail(err, TMAP_ERR_NOMEM, "memory probes: out of memory");
    return TMAP_OK;
}

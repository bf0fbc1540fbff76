/*
 * latency_tables/probe.h -- private to latency_tables/: the PTX text of one
 * probe kernel (a latency microbenchmark), the layout of its `in` and `out` buffers, and the
 * formatting of measured results into a table.
 */
#ifndef TMAP_LATENCY_TABLES_PROBE_H
#define TMAP_LATENCY_TABLES_PROBE_H

#include "threadmap/latency_tables.h"
#include "common/base.h"

/* Appends the PTX module of benchmark b with `steps` chain steps for `arch`
 * ("sm_90").  Fails (naming the opcode) on a bad arch, an arch older than
 * b->min_sm, or steps == 0. */
tmap_status tmap_latency_probe_ptx(const tmap_latency_probe *b, unsigned steps,
                                   const char *arch, tmap_buf *out, tmap_error *err);
/* Appends the module's ".version", ".target arch" and ".address_size 64"
 * lines; fails (naming `what`) on a bad arch or one older than sm_<min_sm>. */
tmap_status tmap_latency_ptx_target(const char *arch, unsigned min_sm, const char *what,
                                    tmap_buf *out, tmap_error *err);
#define TMAP_LATENCY_ENTRY "tmap_lat"          /* the kernel's name */
#define TMAP_LATENCY_CONST "tmap_lat_const"    /* .const .u32[16] */

/* Byte offsets in the kernel's `in` buffer (the host fills it). */
enum {
    TMAP_LAT_IN_A = 0, TMAP_LAT_IN_B = 8, TMAP_LAT_IN_C = 16, TMAP_LAT_IN_D = 24,
    TMAP_LAT_IN_E = 32,
    TMAP_LAT_IN_ZERO = 40,     /* u32 0: masks the thread index into 0 */
    TMAP_LAT_IN_PASSES = 44,   /* u32 2: timed passes; the last is recorded */
    TMAP_LAT_IN_CHASE64 = 48,  /* u64: its own device address */
    TMAP_LAT_IN_CHASE32 = 56,  /* u32: low half of its own address */
    TMAP_LAT_IN_CHASE32_HI = 60, /* u32: the high half */
    TMAP_LAT_IN_CONST_START = 64, /* u32: offset of a tmap_lat_const word */
    TMAP_LAT_IN_ATOM = 128,    /* u32 counters, one per thread (32) */
    TMAP_LAT_IN_BYTES = 256
};
/* Byte offsets in `out`: the recorded cycles (u64) and the chain's values. */
enum { TMAP_LAT_OUT_CYCLES = 0, TMAP_LAT_OUT_X0 = 8, TMAP_LAT_OUT_X1 = 16,
       TMAP_LAT_OUT_BYTES = 32 };

/* The memory probes' module (memory_ptx.c), its kernels and their records. */
tmap_status tmap_latency_mem_ptx(const char *arch, tmap_buf *out, tmap_error *err);
#define TMAP_MEM_ENTRY_LINK "tmap_mem_link"
#define TMAP_MEM_ENTRY_CHASE "tmap_mem_chase"
#define TMAP_MEM_ENTRY_STREAM "tmap_mem_stream"
#define TMAP_MEM_ENTRY_GATHER "tmap_mem_gather"
#define TMAP_MEM_ENTRY_CCHASE "tmap_mem_cchase"
#define TMAP_MEM_ENTRY_CTPUT "tmap_mem_ctput"
#define TMAP_MEM_ENTRY_LSWEEP "tmap_mem_lsweep"
#define TMAP_MEM_LROW_BYTES_S "4096"     /* the local sweep's row per thread, at most */
#define TMAP_MEM_CTAB "tmap_mem_ctab"    /* the constant probes' table ... */
#define TMAP_MEM_CTAB_WORDS_S "14336"    /* ... of 14336 words (56 KB) */
enum {
    TMAP_MEM_NODE_BYTES = 256,   /* chase nodes: one sector each, lines apart */
    TMAP_MEM_CHASE_SHORT = 1024, /* steps of the two chases (multiples of 8) */
    TMAP_MEM_CHASE_LONG = 2048,
    TMAP_MEM_BLOCK = 512,        /* stream and gather: threads per block ... */
    TMAP_MEM_BLOCKS_PER_SM = 2,  /* ... and blocks per SM (at most) */
    TMAP_MEM_RECORD_BYTES = 32,  /* per block: {g0, g1, c0, c1} */
    TMAP_MEM_CTAB_WORDS = 14336, /* the constant table's words */
    TMAP_MEM_CONST_LINE = 64,    /* the capacity chase's stride (bytes) ... */
    TMAP_MEM_CONST_STEPS = 8192, /* ... and its timed steps */
    TMAP_MEM_CONST_BLOCK = 256,  /* the constant throughput: threads per block ... */
    TMAP_MEM_CONST_BLOCKS_PER_SM = 8, /* ... and blocks per SM (at most) */
    TMAP_MEM_CONST_K = 32,       /* ... distinct words a request ... */
    TMAP_MEM_CONST_ROUNDS = 64,  /* ... and rounds of 4 requests a thread */
    TMAP_MEM_LROW_BYTES = 4096,  /* the local sweep: a thread's row, at most ... */
    TMAP_MEM_LOCAL_THREADS = 128, /* ... in one block of 4 warps ... */
    TMAP_MEM_LOCAL_PASSES = 8    /* ... sweeping its row this often, timed */
};

/* Formats results as the latency table (header comments, opcode lines of
 * the ok benchmarks, the ok memory probes' sm: lines, class:NAME lines from
 * the medians of each class). */
void tmap_latency_table_format(const tmap_device_info *info, const char *date,
                               const tmap_latency_result *r, size_t n,
                               const tmap_latency_mem_result *mr, size_t mn,
                               const struct tmap_lat_table *base, tmap_buf *out);

#endif

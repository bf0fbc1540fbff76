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

/* Formats results as the latency table (header comments, opcode lines of
 * the ok benchmarks, class:NAME lines from the medians of each class). */
void tmap_latency_table_format(const tmap_device_info *info, const char *date,
                               const tmap_latency_result *r, size_t n,
                               const struct tmap_lat_table *base, tmap_buf *out);

#endif

/*
 * bbv.h -- the counter pass's private pieces (private to instrument/ and the
 * tests): which blocks count in registers (bbv_plan.c), the pass with an
 * explicit register budget (bbv_pass.c), and a static checker of the
 * instrumented code (bbv_check.c).  docs/instrumentation.md explains them.
 */
#ifndef TMAP_INSTRUMENT_BBV_H
#define TMAP_INSTRUMENT_BBV_H

#include <stdint.h>

#include "instrument/ptx.h"

/* Counters kept in registers per instrumented function (the rest count with
 * a red.global at block entry).  Why 16: docs/instrumentation.md. */
#define TMAP_BBV_REG_BUDGET 16u

/* A block counted with a direct red.global rather than a register. */
#define TMAP_BBV_DIRECT UINT32_MAX

/* Which blocks of a CFG count in registers. */
typedef struct tmap_bbv_plan {
    uint32_t *reg;     /* per CFG block: register k (%tmap_n<k>) of its function,
                          or TMAP_BBV_DIRECT */
    uint8_t *in_loop;  /* per CFG block: in a cycle of its function's CFG */
    uint32_t *nregs;   /* per CFG function: registers used, <= the budget */
} tmap_bbv_plan;

/*
 * Rule: in each function, blocks in a cycle of its CFG (a strongly connected
 * component of two or more blocks, or a block that jumps to itself) take
 * registers first, in block order, then the other blocks in block order,
 * until `budget` registers are taken.  A function that calls anything while
 * some .func of the CFG executes `exit` gets no registers: an exit in a
 * callee would end the thread before the caller's flush.
 */
tmap_status tmap_bbv_plan_make(const tmap_ptx_module *m, const tmap_cfg *cfg, uint32_t budget,
                               tmap_bbv_plan *plan, tmap_error *err);
void tmap_bbv_plan_free(tmap_bbv_plan *plan);

/* tmap_bbv_instrument with an explicit register budget (0: all direct). */
tmap_status tmap_bbv_instrument_budget(tmap_ptx_module *m, const char *kernel, uint32_t budget,
                                       tmap_cfg **cfg_out, tmap_error *err);

/* What tmap_bbv_check saw. */
typedef struct tmap_bbv_check_stats {
    size_t funcs;          /* instrumented functions */
    size_t reg_blocks;     /* blocks counted in a register */
    size_t direct_blocks;  /* blocks counted with a direct red */
    size_t exits;          /* ret/exit instructions, plus falls off the end */
    size_t flushes;        /* complete flush sequences (one per exit with K > 0) */
} tmap_bbv_check_stats;

/*
 * Checks the instrumented (printed and reparsed) module m for `kernel`:
 * every block of its CFG starts with exactly one counter (an unguarded
 * `add.u32 %tmap_n<k>` for a register, each register owned by one block, or
 * a direct red whose row is the block's own index); the registers are zeroed
 * in the preamble and written nowhere else; every ret and exit, and the end
 * of a body that can fall off it, is immediately preceded by one complete
 * flush (each register once, at its block's row) guarded by %tmap_on and the
 * exit's own guard; no red of a register happens anywhere else.  Hence on
 * every path from the entry to an exit each register is flushed exactly once.
 */
tmap_status tmap_bbv_check(const tmap_ptx_module *m, const char *kernel,
                           tmap_bbv_check_stats *stats, tmap_error *err);

#endif

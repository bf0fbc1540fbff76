/*
 * sass_flow.h -- the SASS basic blocks of a listing (sass.c) and which of
 * them a warp may issue once per group of its threads (sass_flow.c).
 */
#ifndef TMAP_INSTRUMENT_SASS_FLOW_H
#define TMAP_INSTRUMENT_SASS_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "threadmap/instrument.h"

/* How a SASS basic block ends; SASS_NONE (0): an instruction that does not
 * transfer control. */
enum {
    SASS_NONE,
    SASS_FALL, /* into the next block (BREAK, or a label follows) */
    SASS_BRA,  /* to `target` */
    SASS_CALL, /* into `target`, a function, and back to the next block */
    SASS_RET,  /* back after the calls to its function */
    SASS_EXIT, /* EXIT, KILL, BPT */
    SASS_SYNC, /* BSYNC, WARPSYNC: the warp's waiting threads go on together */
    SASS_LOST  /* an indirect jump (BRX, JMX, JMP): successors unknown */
};

typedef struct tmap_sass_block {
    size_t owner;    /* the CFG block it counts for; SIZE_MAX: none */
    uint32_t ninstr; /* its counted instructions */
    int end;         /* SASS_*, from its last instruction */
    int cond;        /* that instruction may also fall through */
    size_t target;   /* SASS_BRA, SASS_CALL: the block; SIZE_MAX: unknown */
    int func;        /* the CFG function of its code */
    int branched_to; /* some SASS_BRA block's target */
} tmap_sass_block;

/* The splits (tmap_sass_split) of blocks blk[0..n), in listing order; the
 * kernel's code begins at blk[kernel_first]. */
tmap_status tmap_sass_find_splits(const tmap_sass_block *blk, size_t n, size_t kernel_first,
                                  tmap_sass_splits *out, tmap_error *err);

#endif

/*
 * threadmap/model.h -- the model stage (stable): latency tables and block costs, the divergence
 * metrics of Liang et al. (TCAD 2016, section IV), the thread-block
 * scheduling simulation, and the BBV regression (eq. 1) with its predictor
 * file.  docs/model.md gives the formulas and every choice made where the
 * paper is vague.
 *
 * The conventions of threadmap.h hold: functions that can fail return a
 * tmap_status and fill `err` (may be NULL) with one line naming the file,
 * line or field; arrays the library allocates are released with free();
 * there is no global mutable state.
 */
#ifndef THREADMAP_MODEL_H
#define THREADMAP_MODEL_H

#include "threadmap/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ latency tables */

/* How a lookup found its latency, from most to least specific. */
typedef enum tmap_lat_match {
    TMAP_LAT_EXACT,      /* the opcode itself                              */
    TMAP_LAT_NORMALIZED, /* after dropping latency-neutral modifiers       */
    TMAP_LAT_ROOT_TYPE,  /* operation (+ state space) and type             */
    TMAP_LAT_ROOT,       /* operation (+ state space) alone                */
    TMAP_LAT_CLASS,      /* a class default (class:fp32 ...)               */
    TMAP_LAT_DEFAULT     /* class:default                                  */
} tmap_lat_match;

/* The one rule for latencies in cycles, wherever they are read (a table's
 * line, a block latency file, the sums tmap_lat_blocks makes) or used
 * (metrics, regrouping): finite and in [0, TMAP_LAT_MAX], so that sums over
 * a launch stay finite. */
#define TMAP_LAT_MAX 1e15
/* Checks lat[0..n) against that rule; the message names `name` and the
 * first block that breaks it. */
tmap_status tmap_lat_check(const double *lat, size_t n, const char *name, tmap_error *err);

/* A parsed latency table (opaque).  See docs/model.md for the format. */
typedef struct tmap_lat_table tmap_lat_table;

typedef struct tmap_lat_lookup {
    double latency;        /* cycles */
    double issue;          /* issue interval in cycles, or -1 if "-" */
    tmap_lat_match match;
    char key[96];          /* the table key that answered ("class:int"...) */
} tmap_lat_lookup;

/* One opcode that did not match exactly, and how often it occurred. */
typedef struct tmap_lat_fallback {
    char *opcode;
    tmap_lat_lookup how;
    size_t count; /* static occurrences in the CFG */
} tmap_lat_fallback;

typedef struct tmap_lat_report {
    size_t n;
    tmap_lat_fallback *items; /* sorted by opcode */
} tmap_lat_report;

tmap_status tmap_lat_parse(const char *text, size_t len, const char *name,
                           tmap_lat_table **out, tmap_error *err);
tmap_status tmap_lat_load(const char *path, tmap_lat_table **out, tmap_error *err);
void tmap_lat_free(tmap_lat_table *t);
/* "# arch: X" and "# device: X" header values, or "" if absent. */
const char *tmap_lat_arch(const tmap_lat_table *t);
const char *tmap_lat_device(const tmap_lat_table *t);
/* Looks one opcode up through the fallback chain; fails (TMAP_ERR_INVALID)
 * only if even class:default is missing or the opcode is malformed. */
tmap_status tmap_lat_lookup_opcode(const tmap_lat_table *t, const char *opcode,
                                   tmap_lat_lookup *out, tmap_error *err);
/* lat[b] = sum of the latencies of block b's instructions, for every block
 * of cfg (*lat: malloc'ed, cfg->nblocks).  `report` (optional) receives the
 * opcodes that fell back. */
tmap_status tmap_lat_blocks(const tmap_lat_table *t, const tmap_cfg *cfg, double **lat,
                            tmap_lat_report *report, tmap_error *err);
void tmap_lat_report_free(tmap_lat_report *r);
/* chain[b] = the cycles one warp alone takes through block b of `kernel`'s
 * CFG in module m: in-order issue, one instruction a cycle at most, each
 * waiting for the registers it reads (written earlier in the block) with
 * the table's latencies, but data_latency (when > 0) for the loads that
 * acc[nacc] (tmap_access_list; may be NULL) gives as data-dependent global
 * loads (*chain: malloc'ed, one per CFG block). */
tmap_status tmap_lat_chains(const tmap_lat_table *t, const tmap_ptx_module *m,
                            const char *kernel, const tmap_access *acc, size_t nacc,
                            double data_latency, double **chain, tmap_error *err);
/* The same with each load waiting for what the block computes before it and
 * every instruction issued once what it reads is ready (a dataflow critical
 * path): the walk term of the SM model (tmap_sm_blocks) reads these. */
tmap_status tmap_lat_chains_dataflow(const tmap_lat_table *t, const tmap_ptx_module *m,
                                     const char *kernel, const tmap_access *acc, size_t nacc,
                                     double data_latency, double **chain, tmap_error *err);
const char *tmap_lat_match_name(tmap_lat_match m);
/* The class an opcode falls back to ("fp32", "mem.global"...; "default" for
 * a malformed opcode), and the class names a table may define. */
const char *tmap_lat_class_of(const char *opcode);
size_t tmap_lat_num_classes(void);
const char *tmap_lat_class_name(size_t i);
/* The table's entries, sorted by key (class defaults are "class:NAME"). */
size_t tmap_lat_num_entries(const tmap_lat_table *t);
void tmap_lat_entry(const tmap_lat_table *t, size_t i, const char **key, double *latency,
                    double *issue, const char **source);
/* The default table for an architecture ("sm_90"): $THREADMAP_DATA, then
 * the build tree, then the install tree; writes the path into buf. */
tmap_status tmap_lat_default_path(const char *arch, char *buf, size_t size,
                                  tmap_error *err);

/* ---------------------------------------------- scheduling (Fig. 4, 5) */

/* Where one thread block ran. */
typedef struct tmap_sched_slot {
    uint32_t sm;
    uint32_t slot;  /* resident-block slot on that SM */
    double start, finish;
} tmap_sched_slot;

/*
 * Dynamic round robin (BBV-weighted-scheduled): thread blocks, in order, go
 * to the SM slot that frees first (ties: lowest SM, then lowest slot).  The
 * nsms * blocks_per_sm slots run independently.  Returns the time the last
 * block finishes in *makespan; `where` (optional) receives each block's
 * placement.  O(nblocks log(nsms * blocks_per_sm)).
 */
tmap_status tmap_sched_dynamic(const double *cost, size_t nblocks, size_t nsms,
                               size_t blocks_per_sm, double *makespan,
                               tmap_sched_slot *where, tmap_error *err);
/* Static round robin (the assumption behind eq. 5, Fig. 4 left): block k
 * goes to SM k % nsms; within an SM, to the slot that frees first. */
tmap_status tmap_sched_static(const double *cost, size_t nblocks, size_t nsms,
                              size_t blocks_per_sm, double *makespan,
                              tmap_sched_slot *where, tmap_error *err);

/* The SM model's time and its terms in SM cycles, each the largest over
 * the SMs: cycles = max over the SMs of max(issue + latency, memory). */
typedef struct tmap_sm_time_parts {
    double cycles;
    double issue;   /* the busiest sub-partition's issue cycles */
    double latency; /* one slot's stalls: its blocks' longest chains beyond
                       their own issue, and their own sectors at one SM's
                       rates (one_sm_*), summed */
    double memory;  /* the kernel's sectors x 32 bytes / (nsms x
                       bytes_per_cycle), a lane's own sectors at
                       gather_sectors_per_cycle: the L2's whole bandwidth;
                       or an SM's own sectors at its own rates
                       (one_sm_*), where larger */
    double constant; /* the SM's constant cache: the distinct addresses of
                        its warps' __constant__ reads, each at its cost
                        (idc_cycles, more when the SM's rows exceed the
                        cache); 0 where the counts have no keys (ca) */
} tmap_sm_time_parts;

/* ------------------------------------------------------------- metrics */

typedef struct tmap_model_params {
    size_t block_size;    /* threads per thread block (S) */
    size_t nsms;          /* #SM */
    size_t blocks_per_sm; /* resident blocks per SM (occupancy) */
    const double *simd_weights; /* [nblocks] instructions per execution of
                                   each block for SIMD efficiency, e.g. SASS
                                   counts (tmap_sass_block_counts); NULL:
                                   the CFG's PTX instruction counts */
    const tmap_sass_splits *simd_splits; /* the instructions of simd_weights
                                   that a warp issues once per group of its
                                   threads (tmap_sass_block_counts); NULL:
                                   none, each is issued once per execution */
    const struct tmap_sm_model *sm; /* the SM model (tmap_sm_model_make): the
                                   metrics then give its time (sm_cycles)
                                   and the plan ranks by it; NULL: the
                                   paper's BBV-weighted-scheduled ranks */
} tmap_model_params;

typedef struct tmap_metrics {
    size_t nwarps;          /* ceil(nthreads / 32) ... per thread block */
    size_t nthread_blocks;  /* ceil(nthreads / block_size) */
    double bbv_weighted;           /* eq. 5, cycles */
    double bbv_weighted_scheduled; /* dynamic round robin, cycles */
    double zero_divergence;        /* cycles, per kernel: the original launch
                                      if no warp diverged (each at its
                                      threads' mean counts, scheduled as
                                      above); the same under every perm */
    double divergent_warps_pct;    /* percent of non-empty warps */
    double divergent_branches;     /* estimate; NAN without a CFG */
    double branch_executions;      /* warp executions of the branches
                                      estimated (NAN without a CFG) */
    size_t branches_unestimated;   /* branch blocks with no usable
                                      successor count (see docs) */
    double simd_active_threads_per_inst; /* SIMD efficiency as Nsight
                                      Compute states it: active threads per
                                      warp instruction, 0..32 (x 100 / 32:
                                      percent); NAN without a CFG */
    double thread_instructions;    /* its numerator and denominator, the  */
    double warp_instructions;      /* counterparts of ncu's smsp__thread_
                                      inst_executed.sum and smsp__inst_
                                      executed.sum; NAN without a CFG */
    double *warp_cost;   /* T_w, eq. 3, per warp slot [nwarps] */
    double *block_cost;  /* TT_B, eq. 4, per thread block [nthread_blocks] */
    double *ideal_warp_cost; /* per warp of the original launch at its
                                threads' mean counts [nwarps] */
    tmap_sm_time_parts sm;   /* the SM model's time and its terms, cycles
                                (params->sm); NAN without it */
} tmap_metrics;

/*
 * Computes every metric for BBV `bbv` with block latencies `lat`
 * [bbv->nblocks].  `perm` (may be NULL = identity) has bbv->nthreads
 * entries, a permutation: slot i runs original thread perm[i].  Warps are
 * 32 consecutive slots inside a thread block (a partial last block has a
 * partial last warp; absent threads cost nothing).  `cfg` (may be NULL)
 * must have bbv->nblocks blocks; it enables SIMD efficiency and the
 * divergent-branch estimate.
 */
tmap_status tmap_metrics_compute(const tmap_bbv *bbv, const double *lat,
                                 const uint32_t *perm, const tmap_cfg *cfg,
                                 const tmap_model_params *params, tmap_metrics *out,
                                 tmap_error *err);
void tmap_metrics_free(tmap_metrics *m);
/* Checks that perm[0..n) is a permutation of 0..n-1. */
tmap_status tmap_perm_check(const uint32_t *perm, size_t n, const char *name,
                            tmap_error *err);

/* ------------------------------ memory transactions (sectors.c) */

/*
 * The transaction model of an irregular reference A[P[t*k + j]] (Wu et al.
 * 2013, with the 32-byte sectors of current GPUs; docs/memory.md): warps
 * are `warp` consecutive slots (the last may be partial), slot s runs
 * thread perm[s] (perm NULL: s), and its request j < k reads element
 * index[perm[s] * k + j] of elem_bytes bytes (index NULL: the element
 * perm[s] * k + j itself, a regular reference).  Each warp request costs
 * the distinct sector_bytes sectors its lanes' elements fall in (the data
 * array starts on a sector boundary).  Beside it, each thread block of
 * `block` consecutive slots costs the distinct sectors of all of its
 * requests (block_sectors: what its warps, sharing an L1, pass to the
 * L2).  Counts are in tmap_sector_counts (threadmap/runtime.h).
 */
typedef struct tmap_memref {
    size_t nthreads;       /* 1 to 2^32 */
    size_t per_thread;     /* k >= 1; nthreads x k at most 2^40 */
    size_t elem_bytes;     /* a power of two */
    size_t nelems;         /* elements of A, 1 to 2^32: every index is below it */
    unsigned warp;         /* lanes per warp; 0: 32 */
    unsigned sector_bytes; /* a power of two; 0: 32 */
    unsigned block;        /* slots per thread block, for block_sectors: whole
                              warps; 0: 256 (whole warps, at least one) */
    int write;             /* the reference stores: a layout may not hold two
                              copies of an element (regroup's tmap_memre_*) */
} tmap_memref;

/* On the CPU (the reference).  index: nthreads x k entries or NULL; perm:
 * a permutation of the threads or NULL.  An index not below nelems is an
 * error naming its position. */
tmap_status tmap_sectors_count(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                               tmap_sector_counts *out, tmap_error *err);
/* As tmap_sectors_count, and each[w * k + j] (warps x k entries): the
 * sectors of warp w's request j. */
tmap_status tmap_sectors_each(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                              uint32_t *each, tmap_sector_counts *out, tmap_error *err);
/* The same on the GPU for large inputs: index and perm are device arrays
 * (0: NULL); warp must be 32.  *l2_bytes (may be NULL): the device's L2
 * size, for tmap_sectors_fit_l2. */
tmap_status tmap_sectors_count_gpu(tmap_cuda *c, const tmap_memref *r, uint64_t index,
                                   uint64_t perm, tmap_sector_counts *out, uint64_t *l2_bytes,
                                   tmap_error *err);
/* Checks a reference's geometry and, index not NULL, that its
 * nthreads x k values are below nelems (without one, that the accesses
 * fit in the elements); errors start with fn. */
tmap_status tmap_sectors_check(const tmap_memref *r, const uint32_t *index, const char *fn,
                               tmap_error *err);
/* sectors / requests (0 without requests). */
double tmap_sectors_per_request(const tmap_sector_counts *s);
/* 1 when the launch's footprint (distinct sectors x sector bytes) fits in
 * an L2 of l2_bytes: repeated sectors are then L2 hits, DRAM sees about the
 * footprint once, and fewer sectors per request save L2 bandwidth and
 * latency rather than DRAM traffic (docs/memory.md). */
int tmap_sectors_fit_l2(const tmap_sector_counts *s, const tmap_memref *r, uint64_t l2_bytes);

/* ------------------------------------------- the SM model, "sm90" (sm.c) */

/*
 * A kernel's time on SMs of Volta and later (Hopper, sm_90, the reference):
 * P sub-partitions per SM, each a warp scheduler that issues to its warps
 * and hides one warp's latency behind the others' issue; R resident thread
 * blocks; a memory term from the 32-byte sectors the warps' accesses touch.
 * docs/model.md gives the formulas; sm.c's header repeats them.  It stands
 * beside the paper's metrics (BBV-weighted, BBV-weighted-scheduled).
 */
#define TMAP_SM_MAX_SUBPARTITIONS 8

typedef struct tmap_sm_params {
    size_t nsms;            /* SMs */
    size_t blocks_per_sm;   /* R: resident blocks (the original's occupancy) */
    size_t subpartitions;   /* P: 4 on Volta and later */
    size_t warps_per_block; /* ceil(threads per block / 32) */
    double bytes_per_cycle; /* the L2's bandwidth over the SMs, bytes per SM
                               cycle per SM (the memory term takes nsms x it);
                               0: no memory term */
    double const_replay;    /* issue cycles of each further distinct address of a
                               __constant__ read (it is serialized) */
    int redirect;           /* thread ids redirected (the arrays not moved):
                               thread-affine accesses scatter as data ones do */
    double gather_sectors_per_cycle; /* the L2's sectors per SM cycle per SM for
                               loads of a sector per lane (gathered, scattered
                               segment starts); 0: they cost 32 / bytes_per_cycle */
    double one_sm_bytes_per_cycle; /* one SM's own rates, no other SM drawing on
                               the L2 (sm:l2.one_sm.*): bytes per cycle ... */
    double one_sm_gather_sectors_per_cycle; /* ... and gathered sectors per
                               cycle; 0: no per-SM term */
    double l1_local_bytes;  /* the L1's capacity for the resident warps' local
                               rows (sm:l1.local_bytes); 0: no local term */
    double local_miss_cycles; /* what a local load whose line left the L1
                               waits (the L2 latency) */
    double const_cache_bytes; /* the SM's constant cache (sm:const.cache_bytes);
                               0: unknown.  Priced where the counts have keys
                               (tmap_warp_counts_const), else it only says
                               when the model cannot see the cache's capacity
                               (tmap_sm_model_const_blind) */
    double idc_cycles;      /* the constant cache's cycles per distinct address
                               of a request, the SM's rows in it
                               (sm:const.idc_cycles) ... */
    double idc_fill_cycles; /* ... and more per address, times m^2, m = 1 -
                               const_cache_bytes / the SM's rows' bytes
                               (sm:const.idc_fill_cycles); both 0: no term */
} tmap_sm_params;

/* The warps of one grouping, as the model reads them: each thread block's
 * slots in warps of 32 from its first slot (warp j of thread block k is
 * warp k * ceil(block_size / 32) + j; a block's last warp may be partial). */
typedef struct tmap_warp_counts {
    size_t nthreads, block_size, nwarps, nblocks;
    uint32_t *c;     /* [nwarps * nblocks]: most executions of block b by a
                        thread of warp w (c_wb) */
    uint32_t *a;     /* [nwarps * nblocks]: executions of b summed over the
                        warp's threads (a_wb) */
    uint32_t *d;     /* [nwarps]: distinct groups of 8 among the original
                        thread ids of the warp's threads (id / 8): 32-byte
                        sectors of a 4-byte array in the original order */
    double *ca;      /* [nwarps * nblocks] or NULL: the distinct addresses of
                        each of b's __constant__ reads by warp w, summed over
                        its executions (tmap_warp_counts_const) ... */
    double *const_ws; /* ... and per thread block, the bytes of constant
                        data its SM's resident blocks read while it runs */
} tmap_warp_counts;

/* The counts of the grouping perm (slot i runs thread perm[i]; NULL: the
 * identity) of bbv in thread blocks of block_size; free with
 * tmap_warp_counts_free.  A sum over a warp that does not fit 32 bits fails
 * (TMAP_ERR_UNSUPPORTED). */
tmap_status tmap_warp_counts_make(const tmap_bbv *bbv, const uint32_t *perm, size_t block_size,
                                  tmap_warp_counts *out, tmap_error *err);
void tmap_warp_counts_free(tmap_warp_counts *w);
/* Adds ca and const_ws to w (the counts of bbv under perm), where each
 * thread's __constant__ reads at varying addresses are decided by its
 * group (group[t] < ngroups: threads of one group read the same rows at the
 * same executions): ca_wb = the sum over the warp's distinct groups of the
 * most executions of b by a lane of that group (a request's distinct
 * addresses: its active lanes' distinct groups, the lanes of a group active
 * together); const_ws_k = table_bytes x (the distinct groups of thread
 * blocks k, k + nsms, ..., k + (blocks_per_sm - 1) nsms: an SM's residents
 * as the waves place them) / ngroups: the table's rows, spread evenly over
 * the groups (docs/model.md, "The constant cache's capacity"). */
tmap_status tmap_warp_counts_const(tmap_warp_counts *w, const tmap_bbv *bbv, const uint32_t *perm,
                                   const uint32_t *group, size_t ngroups, double table_bytes,
                                   size_t nsms, size_t blocks_per_sm, tmap_error *err);
/* The slots of warp k of w: [*first, *first + the count returned), at most
 * 32, from its thread block's first slot in warps of 32 (0 past the end). */
size_t tmap_warp_counts_slots(const tmap_warp_counts *w, size_t k, size_t *first);
/* Warp k's lanes made distinct by group: for each of its n slots (the count
 * returned, as tmap_warp_counts_slots), thread[i] = the thread it runs
 * (perm[slot], or the slot; perm NULL) and lane_of[i] = the index of its
 * group among the warp's, in order of first appearance; *ndistinct = how
 * many.  group NULL: every lane its own. */
size_t tmap_warp_counts_lanes(const tmap_warp_counts *w, const uint32_t *group,
                              const uint32_t *perm, size_t k, uint32_t thread[32],
                              uint32_t lane_of[32], size_t *ndistinct);

/* What one execution of a CFG block by a warp costs. */
typedef struct tmap_sm_block {
    double issue;        /* issue cycles (SASS instructions, or the pipe
                            with the longest issue interval times its count) */
    double latency;      /* latency chain (tmap_lat_chains) */
    double affine_n;     /* global/local accesses whose address follows the
                            thread id (neighbouring threads, neighbouring
                            elements) ... */
    double affine_bytes; /* ... and their bytes per thread, summed */
    double data_n;       /* global accesses at an address from data read at the
                            thread's index (tmap_access: DATA) ... */
    double data_bytes;   /* ... and their bytes per thread, summed */
    double gather_n;     /* global accesses through loaded data (GATHER) */
    double uniform_n;    /* global accesses at one address for the warp */
    double const_n;      /* __constant__ reads at addresses that vary ... */
    double const_keyed_n; /* ... of which those at an address from data read
                            at the thread's index (DATA: a table row chosen
                            by the thread's own element) */
    double walk;         /* what the chain grows by per execution when every
                            lane walking its own segment (its DATA loads)
                            starts a sector there, at the walk latency
                            (docs/model.md, "A warp waits for its slowest
                            lane"); 0 in a nested loop ... */
    double walk_base;    /* ... the part of that the chain holds at a share
                            walk_q of executions at the L2 latency ... */
    double walk_q;       /* ... and that share: bytes / 32, at most 1 */
    double local_loads;  /* local-memory loads (each a warp request that waits
                            for the L2 when its line left the L1) */
    double local_fill;   /* bytes a lane's local stores at a moving address
                            fill per execution, in a loop that holds no loop
                            and is held by none (a row's fill); 0 elsewhere */
    double local_fixed;  /* bytes of local stores at a fixed address (a spill
                            slot): a lane's once, whatever its executions */
    double rewalk_bytes; /* bytes of the block's walked loads (DATA) when it lies
                            in a loop inside that loop: each lane walks its
                            segment again on every outer iteration, its lines
                            share the L1 with the local rows ... */
    uint32_t visit_parent; /* 1 + the block whose visits bound this one's (its
                              immediate dominator, in the same loop), or 0: a
                              warp then runs it whenever any lane does
                              (tmap_sm_visits); 0 for none */
    uint32_t loop_id;    /* in a block of a loop that holds a loop and is held by
                            none: 1 + that loop's header; else 0 */
    uint32_t rewalk_loop; /* with rewalk_bytes: the loop_id of that outer loop */
} tmap_sm_block;

/* visit_parent of every block of cfg (parent[nblocks]): 1 + its immediate
 * dominator when both lie in the same loop (the same loop depth, the block
 * not the loop's first), else 0 (docs/model.md, "A warp runs a block
 * whenever any lane does"). */
tmap_status tmap_sm_visit_parents(const tmap_cfg *cfg, uint32_t *parent, tmap_error *err);
/* A warp's executions of each block (visits[nblocks]) from its counts c, a
 * (one warp's row of tmap_warp_counts): c where visit_parent is 0; else,
 * with p the parent, v_p (1 - (1 - a_b / a_p)^(a_p / v_p)) when a_b <= a_p,
 * v_p a_b / a_p when larger, clamped to [c_b, a_b].  stack: nblocks
 * scratch entries.  The parents must form a forest (tmap_sm_time checks). */
void tmap_sm_visits(const tmap_sm_block *blk, size_t nblocks, const uint32_t *c,
                    const uint32_t *a, double *visits, uint32_t *stack);


/* The kernel's time: blk[nblocks] per CFG block; w->block_size gives
 * p->warps_per_block.  The mean over 16 list schedules of the thread
 * blocks, each block's duration perturbed by a fixed +-1% (docs/model.md,
 * "One schedule is one draw"); each part of *t is its mean too. */
tmap_status tmap_sm_time(const tmap_warp_counts *w, const tmap_sm_block *blk,
                         const tmap_sm_params *p, tmap_sm_time_parts *t, tmap_error *err);

/* blk[b] for every block of cfg (the CFG of `kernel` in module m; *blk
 * malloc'ed): issue = the larger of the block's instructions (sass[b], its
 * SASS count, or its PTX count when sass is NULL) and, over the opcode
 * classes, the sum of the table's issue intervals of its instructions of
 * one class (0 when its count is 0: its SASS runs in another block's);
 * latency = tmap_lat_chains with data-dependent global loads at
 * l2_latency; the accesses by class (tmap_access_list); walk, walk_base and
 * walk_q from tmap_lat_chains_dataflow with the walked loads all hitting,
 * all starting a sector and as they are, scaled to the table's
 * sm:dram.latency (else l2_latency) over ld.global.u32's (an L1 hit). */
tmap_status tmap_sm_blocks(const tmap_lat_table *t, const tmap_ptx_module *m, const char *kernel,
                           const tmap_cfg *cfg, const double *sass, double l2_latency,
                           tmap_sm_block **blk, tmap_error *err);

/*
 * How far a predicted count lies from the true one, from a predictor's
 * training rows (tmap_regress_fit): per CFG block, TMAP_NOISE_BINS bins of
 * the predicted value (edge: the quantiles k / TMAP_NOISE_BINS of the
 * training predictions; a value goes to the bin of the edges below it), in
 * each the mean and standard deviation of true minus predicted; the most
 * executions of the block by one training thread (cap); and rho, the share
 * of the residuals' variance that threads with equal features share (1:
 * equal features, equal counts; 0: each thread its own; from the training
 * rows whose features repeat, 0 where none do).  nblocks 0: none (a
 * predictor file of version 1).
 */
enum { TMAP_NOISE_BINS = 8 };
typedef struct tmap_bbv_noise {
    size_t nblocks;
    double *edge; /* [nblocks][TMAP_NOISE_BINS - 1], ascending */
    double *mean; /* [nblocks][TMAP_NOISE_BINS] */
    double *sd;   /* [nblocks][TMAP_NOISE_BINS] */
    double *cap;  /* [nblocks] */
    double *rho;  /* [nblocks], in [0, 1] */
} tmap_bbv_noise;

/* Zeroed bins for nblocks blocks; free with tmap_noise_free (which accepts
 * a zeroed struct). */
tmap_status tmap_noise_create(tmap_bbv_noise *nz, size_t nblocks, tmap_error *err);
void tmap_noise_free(tmap_bbv_noise *nz);
/* A thread's feature row as a key: FNV-1a 64 of its p values' bytes
 * (equal rows, equal keys); tmap_noise_keys: the keys of n rows of p
 * features (row-major) into key[n]. */
uint64_t tmap_noise_key(const double *row, size_t p);
void tmap_noise_keys(const double *features, size_t n, size_t p, uint64_t *key);
/* The rows' groups of equal keys: group[i] in [0, *ngroups), rows of one
 * key one group (one sort of the keys). */
tmap_status tmap_noise_groups(const uint64_t *key, size_t n, uint32_t *group, size_t *ngroups,
                              tmap_error *err);
/* One block's bins (edge, mean, sd: TMAP_NOISE_BINS - 1, TMAP_NOISE_BINS
 * and TMAP_NOISE_BINS entries), cap and rho from n predictions, the true
 * counts and the rows' groups of equal features (tmap_noise_groups; NULL:
 * rho 0).  The edges are the quantiles of an evenly spaced sample of at
 * most 65536 predictions.  A bin no training row fell in takes the nearest
 * filled bin's. */
tmap_status tmap_noise_fit(const double *pred, const double *truth, const uint32_t *group,
                           size_t ngroups, size_t n, double *edge, double *mean, double *sd,
                           double *cap, double *rho, tmap_error *err);
/* The expected slowest lane: raises each c_wb of w (made from the predicted
 * bbv by tmap_warp_counts_make with the same perm and block_size) to the
 * expected most executions among the warp's lanes when each lane's true
 * count is normal about its prediction plus its bin's mean, with its bin's
 * deviation; lanes of one group (group[thread], the groups of equal
 * features: tmap_noise_groups; NULL: none equal) share the part rho of the variance; the maximum by Clark's
 * moments (1961), at most cap.  a_wb becomes the expected sum of the lanes'
 * counts: each lane's prediction plus its bin's mean, within [0, cap],
 * summed, and at least c_wb (docs/model.md, "Predicted BBVs: the expected
 * slowest lane"). */
tmap_status tmap_noise_warp_counts(const tmap_bbv_noise *nz, const tmap_bbv *bbv,
                                   const uint32_t *group, const uint32_t *perm, tmap_warp_counts *w,
                                   tmap_error *err);

/* The SM model of one kernel on one GPU: what tmap_sm_time takes. */
typedef struct tmap_sm_model {
    tmap_sm_params params;
    size_t block_size;     /* threads per thread block */
    tmap_sm_block *blocks; /* [nblocks], owned */
    size_t nblocks;
    const tmap_bbv_noise *noise; /* the BBVs it is given are predictions with
                                    this noise (tmap_noise_warp_counts), or
                                    NULL: exact counts; not owned */
    uint32_t *group;       /* [group_n]: each thread's group of equal feature
                              rows (tmap_sm_model_features), or NULL; with
                              noise, lanes of one group share its part rho;
                              where tmap_sm_model_const_keyed, the groups
                              key the __constant__ rows; owned */
    size_t group_n, ngroups; /* threads grouped, groups */
    size_t const_loads;    /* __constant__ reads at addresses that vary over a
                              warp, in the kernel's code (static) ... */
    size_t const_bytes;    /* ... and, when there are any, the module's
                              __constant__ data (tmap_access_const_bytes) */
    int issue_sass;        /* 1: the blocks' issue from SASS counts; 0: from
                              PTX counts (sass was NULL: no ptxas or nvdisasm) */
} tmap_sm_model;

/* The parameters a latency table gives the SM model (0 where it has none:
 * that term is then left out): the L2 hit latency (ld.global.cg.u64), and
 * into p what each further distinct address of a __constant__ read costs
 * ((sm:const.lanes16 - sm:const.lanes1) / 15), the L2 bandwidth per SM
 * (sm:l2.bytes_per_cycle) and its rate of gathered sectors
 * (sm:l2.gather_sectors_per_cycle), one SM's own two rates
 * (sm:l2.one_sm.bytes_per_cycle, sm:l2.one_sm.gather_sectors_per_cycle),
 * the L1's room for local rows (sm:l1.local_bytes) and the constant
 * cache's size (sm:const.cache_bytes); p's other fields are left alone. */
void tmap_sm_table_params(const tmap_lat_table *t, double *l2_latency, tmap_sm_params *p);
/* The model of `kernel` (its CFG cfg in module m; sass: SASS counts per
 * block or NULL) with the table's parameters, on nsms SMs with
 * blocks_per_sm resident blocks of block_size threads; redirect: the
 * grouping is applied by redirecting thread ids.  Free with
 * tmap_sm_model_free. */
tmap_status tmap_sm_model_make(const tmap_lat_table *t, const tmap_ptx_module *m,
                               const char *kernel, const tmap_cfg *cfg, const double *sass,
                               size_t nsms, size_t blocks_per_sm, size_t block_size, int redirect,
                               tmap_sm_model *out, tmap_error *err);
void tmap_sm_model_free(tmap_sm_model *s);
/* s->group from n threads' feature rows of p values (row-major): threads of
 * equal rows one group (tmap_noise_keys, tmap_noise_groups), sorted once
 * for every grouping s times; replaces any groups s had. */
tmap_status tmap_sm_model_features(tmap_sm_model *s, const double *features, size_t n, size_t p,
                                   tmap_error *err);
/* 1 when the model cannot see what s's kernel loses to the constant cache's
 * capacity: it reads __constant__ data at addresses that vary over a warp,
 * the module has more of it than the cache holds (docs/model.md, "The
 * constant cache"), and no key prices it (groups with
 * tmap_sm_model_const_keyed); 0 otherwise, and where the table has no
 * cache size. */
int tmap_sm_model_const_blind(const tmap_sm_model *s);
/* 1 when s's kernel reads __constant__ data at varying addresses, each from
 * data read at the thread's index (a key per thread then prices them:
 * tmap_sm_model_features); 0 otherwise. */
int tmap_sm_model_const_keyed(const tmap_sm_model *s);
/* *cycles = the model's time of the grouping perm (NULL: the identity). */
tmap_status tmap_sm_model_time(const tmap_sm_model *s, const tmap_bbv *bbv, const uint32_t *perm,
                               tmap_sm_time_parts *cycles, tmap_error *err);

/* ---------------------------------------------------------- regression */

/* GSL: the fits call gsl_set_error_handler_off() (GSL's handler is one for
 * the whole process) so that a GSL error, such as a failed allocation,
 * becomes a tmap_status instead of aborting the host process.  A host that
 * wants another handler sets it after its fits. */

/* One profiling run: features [nthreads][nfeatures] (row t = thread t, whose
 * thread id is t) and its measured BBV (nthreads rows). */
typedef struct tmap_regress_run {
    const double *features;
    const tmap_bbv *bbv;
} tmap_regress_run;

/*
 * Eq. 1 for every block b: BBV_t[b] ~ c0 + c1*I_t[1] + ... + cp*I_t[p]
 * + c(p+1)*tid.  coef[b * (nfeatures + 2) + j], j = 0 intercept, 1..p the
 * features, p+1 the thread id.
 */
typedef struct tmap_predictor {
    char *kernel;
    uint64_t cfg_hash;    /* tmap_cfg_hash of the blocks it was fitted on */
    size_t nblocks;
    char **block_names;   /* nblocks names (strings, maybe "") */
    size_t nfeatures;
    char **feature_names; /* nfeatures names */
    double *coef;         /* [nblocks][nfeatures + 2] */
    double *r2;           /* per block, on the training rows (1 if constant) */
    double *rms;          /* per block RMS residual on the training rows */
    size_t *rank;         /* per block effective rank used */
    tmap_bbv_noise noise; /* per block, the residuals by predicted value
                             (nblocks 0 from a version-1 file) */
} tmap_predictor;

/* FNV-1a 64 of the block count and the names (NULL names hash as ""). */
uint64_t tmap_cfg_hash(size_t nblocks, const char *const *names);

/*
 * Fits eq. 1 on the stacked runs (all must have the same nblocks).  Columns
 * (features, thread id) that are constant over all rows are dropped
 * (coefficient 0, absorbed by the intercept); remaining rank deficiency is
 * handled by truncated SVD (gsl_multifit_linear_tsvd).  Feature values must
 * be finite.  kernel, block_names, feature_names are copied (names may be
 * NULL: "" and "f<i>").
 */
tmap_status tmap_regress_fit(const tmap_regress_run *runs, size_t nruns,
                             size_t nfeatures, const char *kernel,
                             const char *const *block_names,
                             const char *const *feature_names,
                             tmap_predictor *out, tmap_error *err);

/* Cross-validation result: RMS error of held-out predictions (rounded and
 * clamped like tmap_predict) per block, and over all blocks. */
typedef struct tmap_cv_result {
    size_t nblocks;
    double *rms;       /* [nblocks] */
    double total_rms;  /* over every held-out (thread, block) */
    size_t folds;      /* folds actually used */
    int by_run;        /* 1: leave-one-run-out, 0: k-fold over threads */
} tmap_cv_result;

/* k-fold cross-validation over threads (thread t of run r in fold
 * (global row index) % k) when by_run == 0; leave-one-run-out when
 * by_run != 0 (needs nruns >= 2). */
tmap_status tmap_regress_cv(const tmap_regress_run *runs, size_t nruns,
                            size_t nfeatures, size_t k, int by_run,
                            tmap_cv_result *out, tmap_error *err);
void tmap_cv_result_free(tmap_cv_result *r);

/* Predicts BBVs for nthreads threads (thread id = row): each count is the
 * linear prediction rounded to nearest, clamped to [0, 2^32-1]. */
tmap_status tmap_predict(const tmap_predictor *p, const double *features,
                         size_t nthreads, tmap_bbv *out, tmap_error *err);

/*
 * The predictor file is text: a magic line "threadmap-predictor", "version
 * 1", kernel, cfg_hash, block and feature names, coefficients (%.17g) and
 * fit quality, and a last line "checksum <FNV-1a 64 of all bytes before>".
 * Names must not contain whitespace.
 */
tmap_status tmap_predictor_save(const char *path, const tmap_predictor *p,
                                tmap_error *err);
/* Loads and verifies a predictor.  If kernel is not NULL it must match; if
 * nblocks is not 0 it must match; if block_names is not NULL (nblocks of
 * them) the CFG hash must match. */
tmap_status tmap_predictor_load(const char *path, const char *kernel, size_t nblocks,
                                const char *const *block_names, tmap_predictor *out,
                                tmap_error *err);
void tmap_predictor_free(tmap_predictor *p);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_MODEL_H */

/*
 * threadmap/latency_tables.h -- the latency_tables stage (experimental):
 * the latency microbenchmarks: the built-in
 * list of PTX opcodes with the dependent chain that measures each, the PTX
 * text of one benchmark kernel, and measuring them all on the present GPU
 * into the latency table (TSV, format in docs/latency.md).
 *
 * One benchmark kernel: ONE thread (a full warp for shuffles, lane 0 records)
 * runs `steps` dependent steps of the chain between two reads of %clock64,
 * twice (the first pass warms the caches; the second is recorded), and
 * stores the cycle difference and the chain's values.  The latency is
 * (t[256] - t[128]) / 128 per step, medians over launches, which cancels
 * the fixed costs.
 */
#ifndef THREADMAP_LATENCY_TABLES_H
#define THREADMAP_LATENCY_TABLES_H

#include "threadmap/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Chain lengths (steps) of the two kernels of one benchmark. */
enum { TMAP_LATENCY_SHORT = 128, TMAP_LATENCY_LONG = 256 };
/* The issue interval is measured with one block of this many threads, so
 * that each of an SM's 4 sub-partitions runs TMAP_LATENCY_FULL_WARPS_PER_SP
 * copies of the chain: once they outnumber the latency, the sub-partition's
 * issue is the bottleneck and a step costs warps x interval. */
enum { TMAP_LATENCY_FULL_THREADS = 1024, TMAP_LATENCY_FULL_WARPS_PER_SP = 8 };

/* What a kernel sets up before the timed region, and so how the chain starts. */
typedef enum tmap_latency_setup {
    TMAP_LAT_REGS,          /* x0, x1, C, D, E from the operand slots        */
    TMAP_LAT_GLOBAL64,      /* x = address of a global u64 holding itself    */
    TMAP_LAT_GLOBAL32,      /* x = low half of such an address, E = high half */
    TMAP_LAT_SHARED,        /* x = shared address of a word holding itself   */
    TMAP_LAT_LOCAL,         /* x = local address of a word holding itself    */
    TMAP_LAT_CONST,         /* x = offset into tmap_lat_const of a word
                               holding its own offset (set by the host)      */
    TMAP_LAT_ATOM_GLOBAL,   /* %aptr = this thread's global counter (0)      */
    TMAP_LAT_ATOM_SHARED    /* %sptr = this thread's shared counter (0)      */
} tmap_latency_setup;

/*
 * One benchmark.  `step` is the PTX of one step of the chain; the
 * generator replaces these placeholders:
 *   {X} the register this step writes   {Y} the previous step's result
 *   {C} {D} {E} run-time operands (loaded from memory, unknown to ptxas)
 *   {T} a temporary of the chain type   {P} a predicate
 *   {W} a .b64 temporary   {F} a .f32 temporary   {G} a .f64 temporary
 *   {CB} the .u64 address of tmap_lat_const   {AP} {SP} the atomic counters
 * Steps alternate x0/x1 as {X}: step i writes x[i % 2] and reads x[(i+1) % 2],
 * so every step depends on the one before.
 */
typedef struct tmap_latency_probe {
    const char *opcodes[2];   /* table opcodes it reports ([1] may be NULL) */
    const char *cls;          /* class name, without "class:" */
    const char *type;         /* PTX type of the chain registers */
    tmap_latency_setup setup;
    const char *step;
    unsigned ops_per_step;    /* measured instructions per step: a pair (2)
                                 reports half the step to each opcode */
    const char *companion;    /* opcode whose latency is subtracted per step
                                 (an extra instruction that stops ptxas from
                                 folding the chain), or NULL */
    uint64_t a, b, c, d, e;   /* initial bits of x0, x1 and C, D, E (an f32
                                 uses the low 32 bits) */
    unsigned threads;         /* launch width: 1, or 32 for warp operations */
    unsigned min_sm;          /* lowest sm_XY the PTX is valid for (75 = all
                                 that CUDA 13 supports) */
    const char *sass[4];      /* SASS mnemonics the chain must compile to ... */
    unsigned sass_per_step;   /* ... at least this many per step (sm_90) */
    const char *chain;        /* one line saying how the chain is built */
} tmap_latency_probe;

/* The built-in list (static, in measuring order: companions come first). */
const tmap_latency_probe *tmap_latency_probes(size_t *count);
/* The benchmark that reports `opcode`, or NULL. */
const tmap_latency_probe *tmap_latency_find(const char *opcode);

/* Convenience: the PTX for the benchmark reporting `opcode` (malloc'ed). */
tmap_status tmap_latency_ptx(const char *opcode, unsigned steps, const char *arch,
                             char **ptx, tmap_error *err);

/* ------------------------------------------------------------ measuring */

/* Called once per benchmark (index of total) with one printable line:
 * a result, or a line starting "warning: " for a suspect opcode. */
typedef void (*tmap_latency_progress)(void *user, size_t index, size_t total,
                                      const char *line);

typedef struct tmap_latency_measure_opts {
    int reps;                    /* launches per chain length (median); 0: 5 */
    const char *const *only;     /* measure only these opcodes or memory probe
                                    keys (NULL: all); */
    size_t nonly;                /* companions are added where needed        */
    tmap_latency_progress progress; /* may be NULL */
    void *user;
    const char *date;            /* the `# date:` value; NULL: now (UTC) */
    const struct tmap_lat_table *base; /* entries and class defaults to keep
                                    for what is not measured (may be NULL) */
} tmap_latency_measure_opts;

/* One benchmark's outcome. */
typedef struct tmap_latency_result {
    const tmap_latency_probe *bench;
    int ok;               /* passed the self-checks: its lines go in the table */
    double t_short;       /* median cycles of the timed region, 128 steps */
    double t_long;        /* ... and 256 steps */
    double per_step;      /* (t_long - t_short) / 128 */
    double latency;       /* per opcode: halved for pairs, companion taken off */
    double spread;        /* (max - min) / median of the launches, the worse N */
    int reps;             /* launches per chain length */
    char note[200];       /* why it is suspect (when !ok) */
    double per_step_full; /* per_step with TMAP_LATENCY_FULL_THREADS threads (0: not run) */
    double issue;         /* cycles a warp instruction holds its sub-partition's issue:
                             per_step_full / (warps per sub-partition x ops_per_step),
                             companion taken off; 0: not measured (not a register
                             chain, or latency-bound at that width: see issue_note) */
    char issue_note[120];
} tmap_latency_result;

/* Measures the benchmarks (all, or opts->only) on the GPU of c.  *results
 * (malloc'ed, *count entries) is in list order; a suspect benchmark is
 * returned with ok = 0, never with a made-up number.  CUDA failures
 * (loading, launching) fail the call, naming the opcode. */
tmap_status tmap_latency_measure_results(tmap_cuda *c, const tmap_latency_measure_opts *o,
                                         tmap_latency_result **results, size_t *count,
                                         tmap_error *err);

/* Measures and formats: *table_text (malloc'ed) is the table, in the format
 * of docs/latency.md. */
tmap_status tmap_latency_measure(tmap_cuda *c, const tmap_latency_measure_opts *o,
                                 char **table_text, tmap_error *err);

/* The issue interval from a chain's cycles per step alone (per_step) and
 * with TMAP_LATENCY_FULL_WARPS_PER_SP warps per sub-partition
 * (per_step_full): 1 and *issue = per_step_full / (warps x ops) when the
 * full width took at least 1.25x as long (issue-bound); 0, *issue = 0 and
 * the bound it gives in note when it was latency-bound. */
int tmap_latency_issue(double per_step, double per_step_full, unsigned ops_per_step,
                       double *issue, char *note, size_t note_size);

/* Pure self-check on two medians: 1 and *per_step when the chain scaled
 * linearly; 0 and a reason in note otherwise. */
int tmap_latency_check(double t_short, double t_long, double *per_step, char *note,
                       size_t note_size);

/* ------------------------------------------------- the memory probes */

/*
 * The SM model's memory parameters (docs/latency.md, "Memory probes"),
 * measured after the chains by `--measure` (or named in opts->only):
 *   chase   one thread follows a random cyclic permutation of nodes 256
 *           bytes apart (ld.global.cg.u64), 2048 vs 1024 steps: cycles per
 *           load, at the L2 (8 MiB, warmed) or DRAM (1 GiB, L2 flushed)
 *   stream  every SM, 2 blocks of 512 threads each, 128-bit ld.global.cg
 *           coalesced over a buffer that fits in L2 (warmed) or is 16x
 *           larger: bytes per SM cycle per SM
 *   gather  the same threads, 32-bit ld.global at a random index per lane
 *           in 16 MiB (L2-resident): sectors per SM cycle per SM, one
 *           sector per lane
 * Cycles are SM cycles: %clock64 for the chases; for stream and gather the
 * span of the launch by %globaltimer (ns, last block's end - first block's
 * start) times the SM clock measured in the same launch (median over the
 * blocks of their clock64 / globaltimer ratio).
 *   const.lines  one thread, a chain of ld.const.u32 cycling through N words
 *           64 bytes apart: the constant cache's bytes, the most N whose
 *           access stays within 5% of N = 1's cycles, times 64
 *   const.idc, const.fill  every SM, 8 blocks of 256 threads, each thread 4
 *           chains of ld.const.u32, 32 distinct random words a request in a
 *           window of S bytes: SM cycles per address; idc, their mean over
 *           S = C/4 .. C (C: the capacity); fill, c1 of (cycles - idc) =
 *           c1 m^2, m = 1 - C / S, over S = 1.25 C .. 24 C (at most 56 KB)
 *   l1.local  one block of 4 warps alone, each thread sweeping a local row
 *           of W words (a chain of ld.local.u32), 8 passes after a fill and
 *           an untimed one: the L1's room for local rows, the most 512 W
 *           bytes whose access stays within 5% of W = 16's cycles
 */
typedef enum tmap_memprobe_kind {
    TMAP_MEM_CHASE, TMAP_MEM_STREAM, TMAP_MEM_GATHER,
    TMAP_MEM_CONST_LINES, TMAP_MEM_CONST_IDC, TMAP_MEM_CONST_FILL, TMAP_MEM_L1_LOCAL
} tmap_memprobe_kind;

typedef struct tmap_latency_memprobe {
    const char *key;          /* table key, "sm:dram.latency" */
    tmap_memprobe_kind kind;
    uint64_t bytes;           /* the buffer (chase: nodes x 256; stream and
                                 gather: at least; the launch reads a whole
                                 number of its rounds) */
    const char *unit;         /* of the value */
    const char *how;          /* one line */
    int one_sm;               /* stream and gather: one block alone on the GPU
                                 (one SM's own rate), else every SM */
} tmap_latency_memprobe;

/* The built-in list, in measuring order (the DRAM stream flushes the L2
 * before the DRAM chase). */
const tmap_latency_memprobe *tmap_latency_memprobes(size_t *count);
/* The memory probe of table key `key`, or NULL. */
const tmap_latency_memprobe *tmap_latency_memprobe_find(const char *key);

typedef struct tmap_latency_mem_result {
    const tmap_latency_memprobe *probe;
    int ok;              /* passed its self-checks: its line goes in the table */
    double value;        /* in probe->unit */
    double amount;       /* per launch: bytes read (stream), sectors (gather),
                            steps more in the long chase (chase) */
    double ns;           /* its time: the launch's span, or the long chase's
                            extra time (medians) */
    double mhz;          /* the SM clock measured meanwhile */
    double spread;       /* (max - min) / median of the launches' values */
    unsigned blocks, threads, passes; /* stream, gather, const.idc and
                                         const.fill: the launch */
    double lo, hi;       /* const.lines: cycles an access at one line and at
                            the table's 896; const.idc: the windows' least and
                            most; const.fill: the idc it took, and C;
                            l1.local: cycles an access at 8 KB and 512 KB */
    int reps;
    char note[200];      /* why it is suspect (when !ok) */
} tmap_latency_mem_result;

/* Measures the memory probes (all, or those opts->only names) on the GPU of
 * c, in list order; a probe that fails its self-checks comes back with
 * ok = 0 and a note.  CUDA failures fail the call. */
tmap_status tmap_latency_measure_memory(tmap_cuda *c, const tmap_latency_measure_opts *o,
                                        tmap_latency_mem_result **results, size_t *count,
                                        tmap_error *err);

/* amount / (ns x mhz / 1000 x nsms): per SM cycle per SM (0 when any of
 * ns, mhz, nsms is not positive). */
double tmap_latency_per_sm_cycle(double amount, double ns, double mhz, int nsms);
/* const.fill's c1: least squares of cycles[i] - c0 = c1 m_i^2 over n
 * windows, m_i = 1 - cache_bytes / window[i] (0 when no window exceeds the
 * cache). */
double tmap_latency_idc_fill(const double *window, const double *cycles, size_t n,
                             double cache_bytes, double c0);

/* From per-block records of 4 u64 {globaltimer start, end, clock64 start,
 * end} (rec[4 * k + i]): *ns = the latest end - the earliest start and
 * *mhz = the median over the blocks of (clock end - start) / (timer end -
 * start) x 1000.  0 when a record runs backwards or n is 0. */
int tmap_latency_span(const uint64_t *rec, size_t n, double *ns, double *mhz);

/* A random cyclic permutation of n nodes (Sattolo's algorithm, seeded):
 * next[i] is the node after i, and following next from any node visits
 * all n before it returns. */
void tmap_latency_cycle(uint32_t *next, uint32_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_LATENCY_TABLES_H */

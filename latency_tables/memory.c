/*
 * memory.c -- runs the memory probes (threadmap/latency_tables.h): the DRAM
 * and L2 bandwidth, the L2's throughput of gathered sectors and the DRAM
 * and L2 latency of a dependent load, the constant cache's size and its
 * cycles per address under load, the L1's room for local rows, each the
 * median of `reps` launches,
 * self-checked against each other and the DRAM's peak.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "latency_tables/probe.h"

#define MIB (1024.0 * 1024.0)

static const tmap_latency_memprobe memprobes[] = {
    {"sm:dram.bytes_per_cycle", TMAP_MEM_STREAM, 256ull << 20, "bytes per SM cycle per SM",
     "every SM streams a buffer 5x the L2 (flushing it for the DRAM chase)", 0},
    {"sm:dram.latency", TMAP_MEM_CHASE, 1ull << 30, "cycles",
     "one thread chases a random cycle of nodes 256 B apart in 1 GiB: every load misses L2", 0},
    {"sm:l2.bytes_per_cycle", TMAP_MEM_STREAM, 16ull << 20, "bytes per SM cycle per SM",
     "every SM streams a buffer that fits in L2 (warmed)", 0},
    {"sm:l2.gather_sectors_per_cycle", TMAP_MEM_GATHER, 16ull << 20,
     "sectors per SM cycle per SM",
     "every SM loads 32-bit words at a random index per lane in 16 MiB (L2-resident)", 0},
    {"sm:l2.one_sm.bytes_per_cycle", TMAP_MEM_STREAM, 16ull << 20, "bytes per SM cycle",
     "one block of 512 threads alone streams a buffer that fits in L2 (warmed)", 1},
    {"sm:l2.one_sm.gather_sectors_per_cycle", TMAP_MEM_GATHER, 16ull << 20,
     "sectors per SM cycle",
     "one block of 512 threads alone loads 32-bit words at a random index per lane in 16 MiB",
     1},
    {"sm:l2.latency", TMAP_MEM_CHASE, 8ull << 20, "cycles",
     "one thread chases a random cycle of nodes 256 B apart in 8 MiB (warmed): L2 hits", 0},
    {"sm:const.cache_bytes", TMAP_MEM_CONST_LINES, TMAP_MEM_CTAB_WORDS * 4, "bytes",
     "one thread's chain of ld.const.u32 through N words 64 B apart: the most N that hits", 0},
    {"sm:const.idc_cycles", TMAP_MEM_CONST_IDC, TMAP_MEM_CTAB_WORDS * 4,
     "SM cycles per distinct address",
     "every SM, 32 distinct random constant words a request within the cache's size", 0},
    {"sm:const.idc_fill_cycles", TMAP_MEM_CONST_FILL, TMAP_MEM_CTAB_WORDS * 4,
     "SM cycles per distinct address, times m^2",
     "every SM, 32 distinct random constant words a request in windows past the cache", 0},
    {"sm:l1.local_bytes", TMAP_MEM_L1_LOCAL, TMAP_MEM_LOCAL_THREADS * TMAP_MEM_LROW_BYTES,
     "bytes", "one block of 4 warps sweeps its lanes' local rows: the most bytes that all hit",
     0},
};
enum { NPROBES = sizeof memprobes / sizeof memprobes[0] };

const tmap_latency_memprobe *tmap_latency_memprobes(size_t *count)
{
    if (count)
        *count = NPROBES;
    return memprobes;
}

const tmap_latency_memprobe *tmap_latency_memprobe_find(const char *key)
{
    for (size_t i = 0; key && i < NPROBES; i++)
        if (!strcmp(memprobes[i].key, key))
            return &memprobes[i];
    return NULL;
}

/* ------------------------------------------------------- the arithmetic */

double tmap_latency_per_sm_cycle(double amount, double ns, double mhz, int nsms)
{
    double cycles = ns * mhz / 1000;
    return ns > 0 && mhz > 0 && nsms > 0 ? amount / (cycles * nsms) : 0;
}

int tmap_latency_span(const uint64_t *rec, size_t n, double *ns, double *mhz)
{
    double *ratio = malloc((n + 1) * sizeof *ratio);
    uint64_t first = UINT64_MAX, last = 0;
    int ok = ratio && n > 0;
    for (size_t k = 0; ok && k < n; k++) {
        const uint64_t *r = &rec[4 * k];
        ok = r[1] > r[0] && r[3] > r[2];
        ratio[k] = ok ? (double)(r[3] - r[2]) / (double)(r[1] - r[0]) * 1000 : 0;
        first = r[0] < first ? r[0] : first;
        last = r[1] > last ? r[1] : last;
    }
    *ns = ok ? (double)(last - first) : 0;
    *mhz = ok ? tmap_median(ratio, n) : 0;
    free(ratio);
    return ok;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void tmap_latency_cycle(uint32_t *next, uint32_t n, uint64_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        next[i] = i;
    for (uint32_t i = n; i > 1; i--) { /* Sattolo: j < i - 1 strictly */
        uint32_t j = (uint32_t)((splitmix(&seed) >> 32) * (i - 1) >> 32);
        uint32_t t = next[i - 1];
        next[i - 1] = next[j], next[j] = t;
    }
}

/* ------------------------------------------------------------ the GPU */

typedef struct mem_gpu {
    tmap_cuda *cuda;
    tmap_device_info info;
    tmap_kernel *link, *chase, *stream, *gather, *cchase, *ctput, *lsweep;
    uint64_t big, strm, next, out; /* the 1 GiB chase; the DRAM stream's buffer (its
                                      start: the L2 probes'); next[]; records */
    unsigned blocks;                /* stream and gather: nsms x blocks per SM */
    unsigned cblocks;               /* the constant throughput's */
    int reps;
    int const_done;                 /* const.lines ran: const_bytes (0: it failed) */
    double const_bytes;
    int idc_done;                   /* const.idc ran: idc (0: it failed) */
    double idc;
} mem_gpu;

static tmap_status load_kernels(mem_gpu *g, tmap_error *err)
{
    char arch[16];
    tmap_buf ptx = {0};
    snprintf(arch, sizeof arch, "sm_%d%d", g->info.cc_major, g->info.cc_minor);
    tmap_status st = tmap_latency_mem_ptx(arch, &ptx, err);
    if (!st) st = tmap_kernel_load(g->cuda, ptx.data, TMAP_MEM_ENTRY_LINK, &g->link, err);
    if (!st) st = tmap_kernel_load(g->cuda, ptx.data, TMAP_MEM_ENTRY_CHASE, &g->chase, err);
    if (!st) st = tmap_kernel_load(g->cuda, ptx.data, TMAP_MEM_ENTRY_STREAM, &g->stream, err);
    if (!st) st = tmap_kernel_load(g->cuda, ptx.data, TMAP_MEM_ENTRY_GATHER, &g->gather, err);
    if (!st) st = tmap_kernel_load(g->cuda, ptx.data, TMAP_MEM_ENTRY_CCHASE, &g->cchase, err);
    if (!st) st = tmap_kernel_load(g->cuda, ptx.data, TMAP_MEM_ENTRY_CTPUT, &g->ctput, err);
    if (!st) st = tmap_kernel_load(g->cuda, ptx.data, TMAP_MEM_ENTRY_LSWEEP, &g->lsweep, err);
    tmap_buf_free(&ptx);
    return st;
}

/* Blocks per SM for stream and gather: TMAP_MEM_BLOCKS_PER_SM, or fewer
 * when the occupancy API says so for either. */
static tmap_status pick_blocks(mem_gpu *g, tmap_error *err)
{
    tmap_launch l = {{1, 1, 1}, {TMAP_MEM_BLOCK, 1, 1}, 0, NULL, 0};
    tmap_kernel_stats s1, s2;
    tmap_status st = tmap_kernel_stats_get(g->stream, &l, &s1, err);
    if (!st) st = tmap_kernel_stats_get(g->gather, &l, &s2, err);
    if (st)
        return st;
    int per = TMAP_MEM_BLOCKS_PER_SM;
    per = s1.blocks_per_sm < per ? s1.blocks_per_sm : per;
    per = s2.blocks_per_sm < per ? s2.blocks_per_sm : per;
    if (per < 1)
        return tmap_fail(err, TMAP_ERR_CUDA, "memory probes: no block of %d threads fits an SM",
                         TMAP_MEM_BLOCK);
    g->blocks = (unsigned)(per * g->info.sms);
    l.block[0] = TMAP_MEM_CONST_BLOCK;
    if ((st = tmap_kernel_stats_get(g->ctput, &l, &s1, err)))
        return st;
    per = s1.blocks_per_sm < TMAP_MEM_CONST_BLOCKS_PER_SM ? s1.blocks_per_sm
                                                          : TMAP_MEM_CONST_BLOCKS_PER_SM;
    g->cblocks = (unsigned)((per > 0 ? per : 1) * g->info.sms);
    return TMAP_OK;
}

static tmap_status open_gpu(tmap_cuda *c, int reps, mem_gpu *g, tmap_error *err)
{
    memset(g, 0, sizeof *g);
    g->cuda = c, g->reps = reps;
    tmap_status st = tmap_cuda_info(c, &g->info, err);
    if (!st) st = load_kernels(g, err);
    if (!st) st = pick_blocks(g, err);
    uint64_t strm = 0;
    for (size_t i = 0; i < NPROBES; i++)
        if (memprobes[i].kind != TMAP_MEM_CHASE && memprobes[i].bytes > strm)
            strm = memprobes[i].bytes;
    strm += 64ull * TMAP_MEM_BLOCK * g->blocks; /* a stream's rounds round up */
    if (!st) st = tmap_cuda_alloc(c, 1ull << 30, &g->big, err);
    if (!st) st = tmap_cuda_alloc(c, strm, &g->strm, err);
    if (!st) st = tmap_cuda_alloc(c, (1ull << 30) / TMAP_MEM_NODE_BYTES * 4, &g->next, err);
    size_t recs = g->blocks > g->cblocks ? g->blocks : g->cblocks;
    if (!st) st = tmap_cuda_alloc(c, recs * TMAP_MEM_RECORD_BYTES + 64, &g->out, err);
    return st;
}

static void close_gpu(mem_gpu *g)
{
    tmap_kernel_free(g->link), tmap_kernel_free(g->chase);
    tmap_kernel_free(g->stream), tmap_kernel_free(g->gather);
    tmap_kernel_free(g->cchase), tmap_kernel_free(g->ctput), tmap_kernel_free(g->lsweep);
    const uint64_t bufs[4] = {g->big, g->strm, g->next, g->out};
    for (int i = 0; i < 4; i++)
        if (bufs[i])
            tmap_cuda_free(g->cuda, bufs[i]);
}

/* Links a random cycle of `nodes` nodes TMAP_MEM_NODE_BYTES apart at buf. */
static tmap_status link_cycle(mem_gpu *g, uint64_t buf, uint32_t nodes, tmap_error *err)
{
    uint32_t *next = malloc((size_t)nodes * sizeof *next);
    if (!next)
        return tmap_fail(err, TMAP_ERR_NOMEM, "memory probes: out of memory for %u nodes", nodes);
    tmap_latency_cycle(next, nodes, nodes);
    tmap_status st = tmap_cuda_upload(g->cuda, g->next, next, (size_t)nodes * 4, err);
    free(next);
    uint32_t stride = TMAP_MEM_NODE_BYTES;
    void *args[4] = {&buf, &g->next, &nodes, &stride};
    tmap_launch l = {{(nodes + 255) / 256, 1, 1}, {256, 1, 1}, 0, args, 4};
    return st ? st : tmap_kernel_run(g->link, &l, err);
}

/* One chase of `steps` from node `node`: its clock64 cycles and ns. */
static tmap_status chase_once(mem_gpu *g, uint64_t buf, uint64_t node, uint32_t steps,
                              double *cycles, double *ns, tmap_error *err)
{
    uint64_t start = buf + node * TMAP_MEM_NODE_BYTES, rec[3];
    void *args[3] = {&g->out, &start, &steps};
    tmap_launch l = {{1, 1, 1}, {1, 1, 1}, 0, args, 3};
    tmap_status st = tmap_kernel_run(g->chase, &l, err);
    if (!st) st = tmap_cuda_download(g->cuda, rec, g->out, sizeof rec, err);
    *cycles = (double)rec[0], *ns = (double)rec[1];
    return st;
}

/* Stores the medians and spread of v[reps] (per launch) into r. */
static void keep_medians(tmap_latency_mem_result *r, double *v, double *ns, double *mhz, int reps)
{
    r->value = tmap_median(v, (size_t)reps);
    r->spread = r->value > 0 ? (v[reps - 1] - v[0]) / r->value : 0;
    r->ns = tmap_median(ns, (size_t)reps);
    r->mhz = tmap_median(mhz, (size_t)reps);
    r->reps = reps;
}

/* Reads the stream buffer once (5x the L2 of an H100), so that no node of
 * the 1 GiB chase is left in the L2 from linking it. */
static tmap_status flush_l2(mem_gpu *g, tmap_error *err)
{
    uint32_t passes = 1, magic = 0x9E3779B9u;
    uint64_t rounds = memprobes[0].bytes / (64ull * TMAP_MEM_BLOCK * g->blocks);
    uint32_t iters = rounds > 1 ? (uint32_t)rounds : 1;
    void *args[5] = {&g->out, &g->strm, &iters, &passes, &magic};
    tmap_launch l = {{g->blocks, 1, 1}, {TMAP_MEM_BLOCK, 1, 1}, 0, args, 5};
    return tmap_kernel_run(g->stream, &l, err);
}

/* Chases of TMAP_MEM_CHASE_SHORT and _LONG steps from fresh random nodes,
 * `reps` times after one untimed: cycles per load from the medians. */
static tmap_status run_chase(mem_gpu *g, tmap_latency_mem_result *r, double *v, tmap_error *err)
{
    uint32_t nodes = (uint32_t)(r->probe->bytes / TMAP_MEM_NODE_BYTES);
    uint64_t buf = r->probe->bytes >= (1ull << 30) ? g->big : g->strm, seed = 7;
    int reps = g->reps;
    double *t = v, *ns = v + 2 * reps, dummy[2];
    tmap_status st = link_cycle(g, buf, nodes, err);
    if (!st && buf == g->big)
        st = flush_l2(g, err);
    if (!st) st = chase_once(g, buf, splitmix(&seed) % nodes, TMAP_MEM_CHASE_SHORT, &dummy[0],
                             &dummy[1], err);
    for (int i = 0; !st && i < 2 * reps; i++)
        st = chase_once(g, buf, splitmix(&seed) % nodes,
                        i % 2 ? TMAP_MEM_CHASE_LONG : TMAP_MEM_CHASE_SHORT, &t[i / 2 + i % 2 * reps],
                        &ns[i / 2 + i % 2 * reps], err);
    if (st)
        return st;
    double steps = TMAP_MEM_CHASE_LONG - TMAP_MEM_CHASE_SHORT;
    double c[2] = {tmap_median(t, reps), tmap_median(t + reps, reps)};
    double n[2] = {tmap_median(ns, reps), tmap_median(ns + reps, reps)};
    r->value = (c[1] - c[0]) / steps;
    r->spread = r->value > 0 ? fmax(t[reps - 1] - t[0], t[2 * reps - 1] - t[reps]) /
                                   (c[1] - c[0]) : 0;
    r->ns = n[1] - n[0];
    r->mhz = r->ns > 0 ? (c[1] - c[0]) / r->ns * 1000 : 0;
    r->amount = steps, r->reps = reps;
    r->ok = c[0] > 0 && c[1] / c[0] > 1.5 && c[1] / c[0] < 2.5 && r->value > 1;
    if (!r->ok)
        snprintf(r->note, sizeof r->note, "%d steps took %.0f cycles, %d took %.0f: not "
                 "linear in the chain length", TMAP_MEM_CHASE_LONG, c[1], TMAP_MEM_CHASE_SHORT,
                 c[0]);
    return TMAP_OK;
}

/* One timed launch of stream or gather: *ns and *mhz from the records. */
static tmap_status timed_launch(mem_gpu *g, unsigned blocks, unsigned threads, tmap_kernel *k,
                                void **args, size_t nargs, double *ns, double *mhz,
                                tmap_error *err)
{
    size_t n = blocks, bytes = n * TMAP_MEM_RECORD_BYTES;
    uint64_t *rec = malloc(bytes);
    tmap_launch l = {{blocks, 1, 1}, {threads, 1, 1}, 0, args, nargs};
    tmap_status st = rec ? tmap_kernel_run(k, &l, err)
                         : tmap_fail(err, TMAP_ERR_NOMEM, "memory probes: out of memory");
    if (!st) st = tmap_cuda_download(g->cuda, rec, g->out, bytes, err);
    if (!st && !tmap_latency_span(rec, n, ns, mhz))
        *ns = *mhz = 0; /* a record running backwards: the check below says so */
    free(rec);
    return st;
}

/* The launch of stream or gather for r: rounds per thread, passes. */
static void plan_launch(const mem_gpu *g, tmap_latency_mem_result *r, uint32_t *iters,
                        uint32_t *passes)
{
    r->blocks = r->probe->one_sm ? 1 : g->blocks, r->threads = TMAP_MEM_BLOCK;
    double threads = (double)r->blocks * TMAP_MEM_BLOCK;
    if (r->probe->kind == TMAP_MEM_GATHER) { /* 4 loads a round, 1 sector each */
        *iters = 512, *passes = 1;
        r->amount = threads * 4 * *iters;
    } else { /* 64 bytes a round; about 1 ms at L2 speed, 8 passes of DRAM */
        double per_round = 64 * threads;
        *iters = (uint32_t)fmax(1, round((double)r->probe->bytes / per_round));
        double pass = per_round * *iters;
        *passes = pass > 64 * MIB ? 8 : (uint32_t)ceil(8e9 / pass);
        r->amount = pass * *passes;
    }
    r->passes = *passes;
}

/* The stream or gather probe: one untimed launch (warming the L2), then
 * `reps` timed ones; the value per SM cycle per SM. */
static tmap_status run_throughput(mem_gpu *g, tmap_latency_mem_result *r, double *v,
                                  tmap_error *err)
{
    uint32_t iters, passes, magic = 0x9E3779B9u, shift = 32;
    plan_launch(g, r, &iters, &passes);
    for (uint64_t w = r->probe->bytes / 4; w > 1; w >>= 1)
        shift--; /* words = 2^(32 - shift) */
    uint64_t buf = g->strm;
    void *args[6] = {&g->out, &buf, &iters, &passes, &magic, &shift};
    tmap_kernel *k = r->probe->kind == TMAP_MEM_GATHER ? g->gather : g->stream;
    size_t nargs = r->probe->kind == TMAP_MEM_GATHER ? 6 : 5;
    int reps = g->reps;
    double *ns = v + reps, *mhz = v + 2 * reps, dummy[2];
    int sms = r->probe->one_sm ? 1 : g->info.sms;
    tmap_status st = timed_launch(g, r->blocks, TMAP_MEM_BLOCK, k, args, nargs, &dummy[0],
                                  &dummy[1], err);
    for (int i = 0; !st && i < reps; i++) {
        st = timed_launch(g, r->blocks, TMAP_MEM_BLOCK, k, args, nargs, &ns[i], &mhz[i], err);
        v[i] = tmap_latency_per_sm_cycle(r->amount, ns[i], mhz[i], sms);
    }
    if (st)
        return st;
    keep_medians(r, v, ns, mhz, reps);
    r->ok = r->value > 0 && r->mhz >= 100 && r->mhz <= 5000 && r->ns >= 20000;
    if (!r->ok)
        snprintf(r->note, sizeof r->note, "the launch took %.0f ns at %.0f MHz (want >= 20 us, "
                 "100-5000 MHz, records in order)", r->ns, r->mhz);
    return TMAP_OK;
}

/* ------------------------------------------------- the constant cache */

double tmap_latency_idc_fill(const double *window, const double *cycles, size_t n,
                             double cache_bytes, double c0)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(window[i] > cache_bytes))
            continue;
        double m = 1 - cache_bytes / window[i];
        num += (cycles[i] - c0) * m * m, den += m * m * m * m;
    }
    return den > 0 ? num / den : 0;
}

/* Cycles an access of one thread's chain through n words
 * TMAP_MEM_CONST_LINE bytes apart: the median of reps launches. */
static tmap_status const_chase(mem_gpu *g, uint32_t n, double *cycles, double *v,
                               tmap_error *err)
{
    uint32_t stride = TMAP_MEM_CONST_LINE / 4, iters = TMAP_MEM_CONST_STEPS, zero = 0;
    uint64_t rec[2];
    void *args[5] = {&g->out, &stride, &n, &iters, &zero};
    tmap_launch l = {{1, 1, 1}, {1, 1, 1}, 0, args, 5};
    tmap_status st = TMAP_OK;
    for (int i = 0; !st && i < g->reps; i++) {
        st = tmap_kernel_run(g->cchase, &l, err);
        if (!st) st = tmap_cuda_download(g->cuda, rec, g->out, sizeof rec, err);
        v[i] = st ? 0 : (double)rec[0] / iters;
    }
    *cycles = st ? 0 : tmap_median(v, (size_t)g->reps);
    return st;
}

/* The cost of an access at size n (cycles; v: scratch of reps). */
typedef tmap_status (*step_cost)(mem_gpu *g, uint32_t n, double *cycles, double *v,
                                 tmap_error *err);

/* Where `cost` steps up: n doubled from `first` until an access costs 5%
 * more than at first, then bisected; *lo: the most n within 5% (*hi: the
 * least beyond, 0 when none up to `most`), *hit: the cost at first, *far:
 * at most. */
static tmap_status step_find(mem_gpu *g, step_cost cost, uint32_t first, uint32_t most,
                             uint32_t *lo, uint32_t *hi, double *hit, double *far, double *v,
                             tmap_error *err)
{
    double c = 0;
    *lo = first, *hi = 0;
    tmap_status st = cost(g, first, hit, v, err);
    for (uint32_t n = 2 * first; !st && !*hi && *lo < most; n = 2 * *lo < most ? 2 * *lo : most) {
        st = cost(g, n, &c, v, err);
        *(c > 1.05 * *hit ? hi : lo) = n;
    }
    while (!st && *hi && *hi - *lo > 1) {
        uint32_t mid = *lo + (*hi - *lo) / 2;
        st = cost(g, mid, &c, v, err);
        *(c > 1.05 * *hit ? hi : lo) = mid;
    }
    return st ? st : cost(g, most, far, v, err);
}

/* const.lines: the most lines of a cycle that still hit, in bytes. */
static tmap_status run_const_lines(mem_gpu *g, tmap_latency_mem_result *r, double *v,
                                   tmap_error *err)
{
    uint32_t most = TMAP_MEM_CTAB_WORDS * 4 / TMAP_MEM_CONST_LINE, lo, hi;
    double hit = 0;
    tmap_status st = step_find(g, const_chase, 1, most, &lo, &hi, &hit, &r->hi, v, err);
    if (st)
        return st;
    r->lo = hit, r->amount = lo, r->reps = g->reps;
    r->value = (double)lo * TMAP_MEM_CONST_LINE;
    r->ok = hi && hit > 0 && r->hi > 1.3 * hit;
    if (!r->ok)
        snprintf(r->note, sizeof r->note, "an access took %.1f cycles at one line and %.1f at "
                 "%u: no step in 56 KB", hit, r->hi, most);
    g->const_done = 1, g->const_bytes = r->ok ? r->value : 0;
    return TMAP_OK;
}

/* SM cycles per requested address, TMAP_MEM_CONST_K distinct words a
 * request at random in `bytes`: the median of reps launches after one
 * untimed; *mhz: the clock meanwhile. */
static tmap_status const_tput(mem_gpu *g, double bytes, double *cycles, double *mhz, double *v,
                              tmap_error *err)
{
    uint32_t iters = TMAP_MEM_CONST_ROUNDS, passes = 1, magic = 0x9E3779B9u, zero = 0;
    uint32_t words = (uint32_t)(bytes / 4), k = TMAP_MEM_CONST_K;
    uint64_t buf = g->strm;
    void *args[8] = {&g->out, &buf, &iters, &passes, &magic, &words, &k, &zero};
    double addresses = (double)g->cblocks * (TMAP_MEM_CONST_BLOCK / 32) * 4 * iters * k;
    double ns, *clk = v + g->reps;
    tmap_status st = timed_launch(g, g->cblocks, TMAP_MEM_CONST_BLOCK, g->ctput, args, 8, &ns,
                                  &clk[0], err);
    for (int i = 0; !st && i < g->reps; i++) {
        st = timed_launch(g, g->cblocks, TMAP_MEM_CONST_BLOCK, g->ctput, args, 8, &ns, &clk[i],
                          err);
        double per = tmap_latency_per_sm_cycle(addresses, ns, clk[i], g->info.sms);
        v[i] = per > 0 ? 1 / per : 0;
    }
    *mhz = st ? 0 : tmap_median(clk, (size_t)g->reps);
    *cycles = st ? 0 : tmap_median(v, (size_t)g->reps);
    return st;
}

/* The capacity const.idc and const.fill need, measured here if its probe
 * did not run; 0 when it failed. */
static tmap_status const_capacity(mem_gpu *g, double *v, tmap_error *err)
{
    tmap_latency_mem_result s = {0};
    s.probe = tmap_latency_memprobe_find("sm:const.cache_bytes");
    return g->const_done ? TMAP_OK : run_const_lines(g, &s, v, err);
}

static void const_needs(tmap_latency_mem_result *r, const char *what)
{
    r->ok = 0;
    snprintf(r->note, sizeof r->note, "needs %s, which was not measured (suspect)", what);
}

/* const.idc: the mean of the windows C/4, C/2, 3C/4 and C. */
static tmap_status run_const_idc(mem_gpu *g, tmap_latency_mem_result *r, double *v,
                                 tmap_error *err)
{
    tmap_status st = const_capacity(g, v, err);
    double C = g->const_bytes, sum = 0, y, mhz;
    g->idc_done = 1, g->idc = 0;
    if (st || !C) {
        const_needs(r, "sm:const.cache_bytes");
        return st;
    }
    r->lo = INFINITY, r->hi = 0;
    for (int q = 1; !st && q <= 4; q++) {
        st = const_tput(g, C * q / 4, &y, &mhz, v + 2 * g->reps, err);
        sum += y, r->lo = fmin(r->lo, y), r->hi = fmax(r->hi, y), r->mhz = mhz;
    }
    if (st)
        return st;
    r->value = sum / 4, r->amount = 4, r->reps = g->reps;
    r->blocks = g->cblocks, r->threads = TMAP_MEM_CONST_BLOCK, r->passes = TMAP_MEM_CONST_ROUNDS;
    r->ok = r->lo > 0 && r->hi < 1.5 * r->lo && r->mhz >= 100;
    if (!r->ok)
        snprintf(r->note, sizeof r->note, "%.2f to %.2f cycles per address within %g bytes: "
                 "not one rate", r->lo, r->hi, C);
    g->idc = r->ok ? r->value : 0;
    return TMAP_OK;
}

/* const.fill: c1 over the windows 1.25 C .. 24 C that fit the table. */
static tmap_status run_const_fill(mem_gpu *g, tmap_latency_mem_result *r, double *v,
                                  tmap_error *err)
{
    static const double times[] = {1.25, 1.5, 1.75, 2, 3, 4, 8, 24};
    tmap_latency_mem_result s = {0};
    s.probe = tmap_latency_memprobe_find("sm:const.idc_cycles");
    tmap_status st = g->idc_done ? TMAP_OK : run_const_idc(g, &s, v, err);
    if (st || !g->idc) {
        const_needs(r, g->const_bytes ? "sm:const.idc_cycles" : "sm:const.cache_bytes");
        return st;
    }
    double C = g->const_bytes, window[8], y[8], mhz;
    size_t n = 0;
    for (size_t i = 0; !st && i < 8 && C * times[i] <= TMAP_MEM_CTAB_WORDS * 4; i++, n++) {
        window[n] = C * times[i];
        st = const_tput(g, window[n], &y[n], &mhz, v + 2 * g->reps, err);
        r->mhz = mhz;
    }
    if (st)
        return st;
    r->value = tmap_latency_idc_fill(window, y, n, C, g->idc);
    r->lo = g->idc, r->hi = C, r->amount = (double)n, r->reps = g->reps;
    r->blocks = g->cblocks, r->threads = TMAP_MEM_CONST_BLOCK, r->passes = TMAP_MEM_CONST_ROUNDS;
    r->ok = n >= 3 && r->value > 0 && r->mhz >= 100;
    if (!r->ok)
        snprintf(r->note, sizeof r->note, "%zu windows past %g bytes fit the table; c1 %.2f", n,
                 C, r->value);
    return TMAP_OK;
}

/* ------------------------------------------------- the L1's local rows */

/* Cycles an access of the block's sweep of `words` words a thread (its
 * slowest warp's): the median of reps launches. */
static tmap_status local_sweep(mem_gpu *g, uint32_t words, double *cycles, double *v,
                               tmap_error *err)
{
    uint32_t passes = TMAP_MEM_LOCAL_PASSES, zero = 0;
    uint64_t rec[TMAP_MEM_LOCAL_THREADS / 32];
    void *args[4] = {&g->out, &words, &passes, &zero};
    tmap_launch l = {{1, 1, 1}, {TMAP_MEM_LOCAL_THREADS, 1, 1}, 0, args, 4};
    tmap_status st = TMAP_OK;
    for (int i = 0; !st && i < g->reps; i++) {
        st = tmap_kernel_run(g->lsweep, &l, err);
        if (!st) st = tmap_cuda_download(g->cuda, rec, g->out, sizeof rec, err);
        double most = 0;
        for (size_t w = 0; !st && w < sizeof rec / sizeof *rec; w++)
            most = fmax(most, (double)rec[w]);
        v[i] = most / ((double)passes * words);
    }
    *cycles = st ? 0 : tmap_median(v, (size_t)g->reps);
    return st;
}

/* l1.local: the most rows' bytes (128 threads x words x 4) that all hit,
 * from 16 words (8 KB of rows). */
static tmap_status run_l1_local(mem_gpu *g, tmap_latency_mem_result *r, double *v,
                                tmap_error *err)
{
    uint32_t lo, hi;
    double hit = 0;
    tmap_status st = step_find(g, local_sweep, 16, TMAP_MEM_LROW_BYTES / 4, &lo, &hi, &hit,
                               &r->hi, v, err);
    if (st)
        return st;
    r->lo = hit, r->amount = lo, r->reps = g->reps;
    r->blocks = 1, r->threads = TMAP_MEM_LOCAL_THREADS, r->passes = TMAP_MEM_LOCAL_PASSES;
    r->value = (double)lo * 4 * TMAP_MEM_LOCAL_THREADS;
    r->ok = hi && hit > 0 && r->hi > 1.3 * hit;
    if (!r->ok)
        snprintf(r->note, sizeof r->note, "an access took %.1f cycles at 8 KB of rows and %.1f "
                 "at %u: no step", hit, r->hi, TMAP_MEM_LOCAL_THREADS * TMAP_MEM_LROW_BYTES);
    return TMAP_OK;
}

static tmap_status run_probe(mem_gpu *g, tmap_latency_mem_result *r, double *v, tmap_error *err)
{
    switch (r->probe->kind) {
    case TMAP_MEM_CHASE: return run_chase(g, r, v, err);
    case TMAP_MEM_CONST_LINES: return run_const_lines(g, r, v, err);
    case TMAP_MEM_CONST_IDC: return run_const_idc(g, r, v, err);
    case TMAP_MEM_CONST_FILL: return run_const_fill(g, r, v, err);
    case TMAP_MEM_L1_LOCAL: return run_l1_local(g, r, v, err);
    default: return run_throughput(g, r, v, err);
    }
}

/* ------------------------------------------------------- the checks */

static tmap_latency_mem_result *result_of(tmap_latency_mem_result *r, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].ok && !strcmp(r[i].probe->key, key))
            return &r[i];
    return NULL;
}

/* Marks hi suspect unless it exceeds lo by `factor` (the buffer did not
 * stay in, or miss, the L2 as it should). */
static void check_order(tmap_latency_mem_result *hi, const tmap_latency_mem_result *lo,
                        double factor)
{
    if (!hi || !lo || hi->value > factor * lo->value)
        return;
    hi->ok = 0;
    snprintf(hi->note, sizeof hi->note, "%.2f is not %.2fx %s's %.2f: the buffer did not stay "
             "in (or miss) the L2", hi->value, factor, lo->probe->key, lo->value);
}

/* The DRAM stream against the peak the driver reports (memory clock x bus
 * width x 2, per SM cycle per SM at the measured clock). */
static void check_peak(tmap_latency_mem_result *d, const tmap_device_info *info)
{
    double peak = (double)info->mem_clock_khz * 1e3 * info->mem_bus_width_bits / 8 * 2;
    if (!d || !(peak > 0) || !(d->mhz > 0))
        return;
    double per = peak / (d->mhz * 1e6 * info->sms);
    if (d->value <= 1.05 * per)
        return;
    d->ok = 0;
    snprintf(d->note, sizeof d->note, "%.2f bytes per SM cycle per SM is above the DRAM's peak "
             "(%.2f: %.0f GB/s): the timing is wrong", d->value, per, peak / 1e9);
}

static void cross_check(tmap_latency_mem_result *r, size_t n, const tmap_device_info *info)
{
    tmap_latency_mem_result *dram_bw = result_of(r, n, "sm:dram.bytes_per_cycle");
    check_peak(dram_bw, info);
    check_order(result_of(r, n, "sm:l2.bytes_per_cycle"), dram_bw, 1.2);
    check_order(result_of(r, n, "sm:dram.latency"), result_of(r, n, "sm:l2.latency"), 1.2);
}

/* ---------------------------------------------------------- measuring */

/* Probe i runs: no list, or the list names it. */
static int selected(const tmap_latency_measure_opts *o, size_t i)
{
    if (!o || !o->only)
        return 1;
    for (size_t k = 0; k < o->nonly; k++)
        if (!strcmp(o->only[k], memprobes[i].key))
            return 1;
    return 0;
}

static void report_mem(const tmap_latency_measure_opts *o, size_t i, size_t total,
                       const tmap_latency_mem_result *r)
{
    if (!o || !o->progress)
        return;
    char line[400];
    if (r->ok && (r->probe->kind == TMAP_MEM_CONST_LINES || r->probe->kind == TMAP_MEM_L1_LOCAL))
        snprintf(line, sizeof line, "%s: %.0f %s (%.1f cycles an access within, %.1f past)",
                 r->probe->key, r->value, r->probe->unit, r->lo, r->hi);
    else if (r->ok && (r->probe->kind == TMAP_MEM_CONST_IDC ||
                       r->probe->kind == TMAP_MEM_CONST_FILL))
        snprintf(line, sizeof line, "%s: %.2f %s (%.0f MHz)", r->probe->key, r->value,
                 r->probe->unit, r->mhz);
    else if (r->ok)
        snprintf(line, sizeof line, "%s: %.2f %s (%.0f MHz; spread %.1f%%)", r->probe->key,
                 r->value, r->probe->unit, r->mhz, 100 * r->spread);
    else
        snprintf(line, sizeof line, "warning: %s is suspect and left out of the table: %s",
                 r->probe->key, r->note);
    o->progress(o->user, i, total, line);
}

tmap_status tmap_latency_measure_memory(tmap_cuda *c, const tmap_latency_measure_opts *o,
                                        tmap_latency_mem_result **results, size_t *count,
                                        tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, c, results, count);
    if (st)
        return st;
    *results = NULL, *count = 0;
    int reps = o && o->reps ? o->reps : 5;
    size_t total = 0, done = 0;
    for (size_t i = 0; i < NPROBES; i++)
        total += (size_t)selected(o, i);
    if (!total)
        return TMAP_OK;
    tmap_latency_mem_result *r = calloc(NPROBES, sizeof *r);
    double *v = malloc(4 * (size_t)reps * sizeof *v); /* const_tput's 2 reps at v + 2 reps */
    mem_gpu g;
    st = r && v ? open_gpu(c, reps, &g, err)
                : (memset(&g, 0, sizeof g), tmap_fail(err, TMAP_ERR_NOMEM, "out of memory"));
    for (size_t i = 0; !st && i < NPROBES; i++) {
        if (!selected(o, i))
            continue;
        r[done].probe = &memprobes[i];
        st = run_probe(&g, &r[done], v, err);
        if (st)
            tmap_error_prefix(err, "memory probe %s", memprobes[i].key);
        done++;
    }
    close_gpu(&g);
    free(v);
    if (st) {
        free(r);
        return st;
    }
    cross_check(r, done, &g.info);
    for (size_t i = 0; i < done; i++)
        report_mem(o, i, done, &r[i]);
    *results = r, *count = done;
    return TMAP_OK;
}

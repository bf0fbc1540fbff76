/*
 * measure.c -- runs the latency microbenchmarks on the GPU: for each
 * selected benchmark, loads its 128- and 256-step kernels, launches them
 * alternately `reps` times, takes the medians of the recorded cycles and
 * self-checks them (tmap_latency_check); then takes companions off.
 */
#include <stdlib.h>
#include <string.h>

#include "latency_tables/probe.h"

enum { DEFAULT_REPS = 5, MAX_REPS = 1001 };

/* The device buffers shared by every benchmark of one run. */
typedef struct lat_gpu {
    tmap_cuda *cuda;
    char arch[16];       /* "sm_90" */
    uint64_t in, out;    /* TMAP_LAT_IN_BYTES / TMAP_LAT_OUT_BYTES */
} lat_gpu;

/* (max - min) / median of sorted v[n]. */
static double spread_of(const double *sorted, int n, double med)
{
    return med > 0 ? (sorted[n - 1] - sorted[0]) / med : 0;
}

int tmap_latency_check(double t_short, double t_long, double *per_step, char *note,
                       size_t note_size)
{
    if (!per_step || (!note && note_size))
        return 0;
    const double steps = TMAP_LATENCY_LONG - TMAP_LATENCY_SHORT;
    *per_step = (t_long - t_short) / steps;
    if (!(t_short > 0) || !(t_long > 0)) {
        snprintf(note, note_size, "non-positive cycle counts (%.0f, %.0f)", t_short, t_long);
        return 0;
    }
    if (*per_step <= 0.5) {
        snprintf(note, note_size,
                 "only %.2f cycles more per step from %d to %d steps (%.0f -> %.0f cycles): "
                 "folded by the compiler, or not what it claims to measure",
                 *per_step, TMAP_LATENCY_SHORT, TMAP_LATENCY_LONG, t_short, t_long);
        return 0;
    }
    double ratio = t_long / t_short;
    if (ratio < 1.5 || ratio > 2.5) {
        snprintf(note, note_size,
                 "%d steps took %.2f times as long as %d (%.0f vs %.0f cycles; want 1.5-2.5): "
                 "not linear in the chain length",
                 TMAP_LATENCY_LONG, ratio, TMAP_LATENCY_SHORT, t_long, t_short);
        return 0;
    }
    return 1;
}

/* Fills the `in` buffer for benchmark b (layout: TMAP_LAT_IN_* in measure.h). */
static tmap_status upload_in(lat_gpu *g, const tmap_latency_probe *b, tmap_error *err)
{
    unsigned char img[TMAP_LAT_IN_BYTES] = {0};
    const uint64_t ops[5] = {b->a, b->b, b->c, b->d, b->e};
    const int offs[5] = {TMAP_LAT_IN_A, TMAP_LAT_IN_B, TMAP_LAT_IN_C, TMAP_LAT_IN_D,
                         TMAP_LAT_IN_E};
    for (int k = 0; k < 5; k++)
        memcpy(img + offs[k], &ops[k], 8); /* little-endian host and GPU */
    const uint32_t passes = 2;
    memcpy(img + TMAP_LAT_IN_PASSES, &passes, 4);
    const uint64_t self64 = g->in + TMAP_LAT_IN_CHASE64;
    memcpy(img + TMAP_LAT_IN_CHASE64, &self64, 8);
    const uint64_t self32 = g->in + TMAP_LAT_IN_CHASE32;
    const uint32_t lo = (uint32_t)self32, hi = (uint32_t)(self32 >> 32);
    memcpy(img + TMAP_LAT_IN_CHASE32, &lo, 4);
    memcpy(img + TMAP_LAT_IN_CHASE32_HI, &hi, 4);
    const uint32_t const_start = 4; /* tmap_lat_const[1] holds 4 */
    memcpy(img + TMAP_LAT_IN_CONST_START, &const_start, 4);
    tmap_status st = tmap_cuda_upload(g->cuda, g->in, img, sizeof img, err);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "latency benchmark %s", b->opcodes[0]);
    return st;
}

/* Sets tmap_lat_const[k] = 4k, so that a word holds its own byte offset. */
static tmap_status upload_const(lat_gpu *g, tmap_kernel *k, tmap_error *err)
{
    uint64_t p = 0;
    size_t bytes = 0;
    uint32_t words[16];
    for (uint32_t i = 0; i < 16; i++)
        words[i] = 4 * i;
    tmap_status st = tmap_kernel_global(k, TMAP_LATENCY_CONST, &p, &bytes, err);
    if (st == TMAP_OK && bytes < sizeof words)
        st = tmap_fail(err, TMAP_ERR_CUDA, "module variable %s is %zu bytes, want %zu",
                       TMAP_LATENCY_CONST, bytes, sizeof words);
    if (st == TMAP_OK)
        st = tmap_cuda_upload(g->cuda, p, words, sizeof words, err);
    return st;
}

/* Loads the `steps`-step kernel of b (and sets its constant memory). */
static tmap_status load_bench(lat_gpu *g, const tmap_latency_probe *b, unsigned steps,
                              tmap_kernel **k, tmap_error *err)
{
    *k = NULL;
    tmap_buf ptx = {0};
    tmap_status st = tmap_latency_probe_ptx(b, steps, g->arch, &ptx, err);
    if (st == TMAP_OK)
        st = tmap_kernel_load(g->cuda, ptx.data, TMAP_LATENCY_ENTRY, k, err);
    if (st == TMAP_OK && b->setup == TMAP_LAT_CONST)
        st = upload_const(g, *k, err);
    tmap_buf_free(&ptx);
    if (st != TMAP_OK) {
        tmap_kernel_free(*k);
        *k = NULL;
        tmap_error_prefix(err, "latency benchmark %s (%u steps)", b->opcodes[0], steps);
    }
    return st;
}

/* One launch of one block of `threads`; *cycles receives the recorded
 * timed region (of thread 0). */
static tmap_status run_once(lat_gpu *g, tmap_kernel *k, const tmap_latency_probe *b,
                            unsigned threads, double *cycles, tmap_error *err)
{
    void *args[2] = {&g->out, &g->in};
    tmap_launch l = {{1, 1, 1}, {threads, 1, 1}, 0, args, 2};
    uint64_t dt = 0;
    tmap_status st = tmap_cuda_zero(g->cuda, g->out, TMAP_LAT_OUT_BYTES, err);
    if (st == TMAP_OK)
        st = tmap_kernel_run(k, &l, err);
    if (st == TMAP_OK)
        st = tmap_cuda_download(g->cuda, &dt, g->out + TMAP_LAT_OUT_CYCLES, sizeof dt, err);
    if (st != TMAP_OK)
        tmap_error_prefix(err, "latency benchmark %s", b->opcodes[0]);
    *cycles = (double)dt;
    return st;
}

/* Launches both kernels alternately at `threads` (after one untimed
 * launch each): the medians of the short and the long chain and the
 * worse spread. */
static tmap_status time_pair(lat_gpu *g, tmap_kernel *ks, tmap_kernel *kl, int reps,
                             const tmap_latency_probe *b, unsigned threads, double t[2],
                             double *spread, tmap_error *err)
{
    double *ts = calloc((size_t)reps, sizeof *ts), *tl = calloc((size_t)reps, sizeof *tl);
    double unused;
    if (!ts || !tl) {
        free(ts), free(tl);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory timing %s", b->opcodes[0]);
    }
    tmap_status st = run_once(g, ks, b, threads, &unused, err);
    if (st == TMAP_OK)
        st = run_once(g, kl, b, threads, &unused, err);
    for (int i = 0; st == TMAP_OK && i < reps; i++) {
        st = run_once(g, ks, b, threads, &ts[i], err);
        if (st == TMAP_OK)
            st = run_once(g, kl, b, threads, &tl[i], err);
    }
    if (st == TMAP_OK) {
        t[0] = tmap_median(ts, reps);
        t[1] = tmap_median(tl, reps);
        double s1 = spread_of(ts, reps, t[0]), s2 = spread_of(tl, reps, t[1]);
        *spread = s1 > s2 ? s1 : s2;
    }
    free(ts), free(tl);
    return st;
}

/* The latency: one thread (or warp) alone. */
static tmap_status time_latency(lat_gpu *g, tmap_kernel *ks, tmap_kernel *kl, int reps,
                                tmap_latency_result *r, tmap_error *err)
{
    const tmap_latency_probe *b = r->bench;
    double t[2];
    tmap_status st = time_pair(g, ks, kl, reps, b, b->threads, t, &r->spread, err);
    if (st != TMAP_OK)
        return st;
    r->reps = reps;
    r->t_short = t[0], r->t_long = t[1];
    r->ok = tmap_latency_check(r->t_short, r->t_long, &r->per_step, r->note, sizeof r->note);
    r->latency = r->ok ? r->per_step / b->ops_per_step : 0;
    return TMAP_OK;
}

int tmap_latency_issue(double per_step, double per_step_full, unsigned ops_per_step,
                       double *issue, char *note, size_t note_size)
{
    if (!issue || !ops_per_step || (!note && note_size))
        return 0;
    *issue = 0;
    if (!(per_step > 0) || !(per_step_full > 0)) {
        snprintf(note, note_size, "not measured");
        return 0;
    }
    if (per_step_full < 1.25 * per_step) {
        snprintf(note, note_size, "latency-bound at %d warps per sub-partition (%.1f vs %.1f "
                 "cycles per step alone): at most %.2f", TMAP_LATENCY_FULL_WARPS_PER_SP,
                 per_step_full, per_step,
                 per_step_full / (TMAP_LATENCY_FULL_WARPS_PER_SP * ops_per_step));
        return 0;
    }
    *issue = per_step_full / (TMAP_LATENCY_FULL_WARPS_PER_SP * ops_per_step);
    return 1;
}

/* The issue interval of a register chain: the same kernels with every
 * sub-partition full (TMAP_LATENCY_FULL_THREADS threads). */
static tmap_status time_issue(lat_gpu *g, tmap_kernel *ks, tmap_kernel *kl, int reps,
                              tmap_latency_result *r, tmap_error *err)
{
    const tmap_latency_probe *b = r->bench;
    double t[2], spread;
    char note[200];
    if (!r->ok || b->setup != TMAP_LAT_REGS || b->threads != 1) {
        snprintf(r->issue_note, sizeof r->issue_note, "%s", r->ok ? "not a register chain of "
                 "one thread" : "the latency is suspect");
        return TMAP_OK;
    }
    tmap_status st = time_pair(g, ks, kl, reps, b, TMAP_LATENCY_FULL_THREADS, t, &spread, err);
    if (st != TMAP_OK)
        return st;
    if (!tmap_latency_check(t[0], t[1], &r->per_step_full, note, sizeof note)) {
        snprintf(r->issue_note, sizeof r->issue_note, "%.119s", note);
        r->per_step_full = 0;
        return TMAP_OK;
    }
    tmap_latency_issue(r->per_step, r->per_step_full, b->ops_per_step, &r->issue, r->issue_note,
                       sizeof r->issue_note);
    return TMAP_OK;
}

static tmap_status measure_one(lat_gpu *g, int reps, tmap_latency_result *r, tmap_error *err)
{
    tmap_kernel *ks = NULL, *kl = NULL;
    tmap_status st = upload_in(g, r->bench, err);
    if (st == TMAP_OK)
        st = load_bench(g, r->bench, TMAP_LATENCY_SHORT, &ks, err);
    if (st == TMAP_OK)
        st = load_bench(g, r->bench, TMAP_LATENCY_LONG, &kl, err);
    if (st == TMAP_OK)
        st = time_latency(g, ks, kl, reps, r, err);
    if (st == TMAP_OK)
        st = time_issue(g, ks, kl, reps, r, err);
    tmap_kernel_free(ks);
    tmap_kernel_free(kl);
    return st;
}

/* Takes the companion's latency off r[i] (a companion is measured before
 * its users).  Returns 1 when that made r[i] suspect: its companion is
 * suspect, or what is left is no more than a quarter cycle. */
static int apply_companion(tmap_latency_result *r, size_t n, size_t i)
{
    const char *comp = r[i].bench->companion;
    if (!comp || !r[i].ok)
        return 0;
    const tmap_latency_result *c = NULL;
    for (size_t j = 0; j < n; j++)
        if (r[j].bench == tmap_latency_find(comp))
            c = &r[j];
    if (!c || !c->ok) {
        r[i].ok = 0;
        snprintf(r[i].note, sizeof r[i].note,
                 "its companion %s was not measured or is suspect", comp);
        return 1;
    }
    r[i].latency -= c->latency;
    if (r[i].issue > 0 && c->issue > 0 && r[i].issue - c->issue > 0.1) {
        r[i].issue -= c->issue;
    } else if (r[i].issue > 0) {
        r[i].issue = 0;
        snprintf(r[i].issue_note, sizeof r[i].issue_note, "its companion %s's issue interval "
                 "was not measured, or taking it off leaves nothing", comp);
    }
    if (r[i].latency > 0.25)
        return 0;
    r[i].ok = 0;
    snprintf(r[i].note, sizeof r[i].note,
             "%.2f cycles per step minus %s's %.2f leaves %.2f: not measurable this way",
             r[i].per_step, comp, c->latency, r[i].latency);
    return 1;
}

/* Marks the benchmarks to run: all, or those reporting an opcode of
 * o->only plus their companions.  sel has one flag per listed benchmark. */
static tmap_status select_benches(const tmap_latency_measure_opts *o, const tmap_latency_probe *list,
                                  size_t n, unsigned char *sel, tmap_error *err)
{
    memset(sel, o && o->only ? 0 : 1, n);
    for (size_t i = 0; o && o->only && i < o->nonly; i++) {
        const tmap_latency_probe *b = tmap_latency_find(o->only[i]);
        if (!b && tmap_latency_memprobe_find(o->only[i]))
            continue; /* tmap_latency_measure_memory's */
        if (!b)
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "no latency benchmark for opcode '%s' (see threadmap latency --list)",
                             o->only[i]);
        sel[b - list] = 1;
        if (b->companion)
            sel[tmap_latency_find(b->companion) - list] = 1;
    }
    return TMAP_OK;
}

static void report(const tmap_latency_measure_opts *o, size_t i, size_t total,
                   const tmap_latency_result *r)
{
    if (!o || !o->progress)
        return;
    char line[512];
    if (r->ok)
        snprintf(line, sizeof line,
                 "%s%s%s: %.2f cycles per step (%d steps: %.0f, %d steps: %.0f cycles; "
                 "spread %.1f%%)",
                 r->bench->opcodes[0], r->bench->opcodes[1] ? " + " : "",
                 r->bench->opcodes[1] ? r->bench->opcodes[1] : "", r->per_step,
                 TMAP_LATENCY_SHORT, r->t_short, TMAP_LATENCY_LONG, r->t_long,
                 100 * r->spread);
    else
        snprintf(line, sizeof line,
                 "warning: %s is suspect and left out of the table (it falls back to "
                 "class:%s): %s",
                 r->bench->opcodes[0], r->bench->cls, r->note);
    o->progress(o->user, i, total, line);
}

static tmap_status open_buffers(tmap_cuda *c, lat_gpu *g, tmap_error *err)
{
    tmap_device_info info;
    memset(g, 0, sizeof *g);
    g->cuda = c;
    tmap_status st = tmap_cuda_info(c, &info, err);
    if (st != TMAP_OK)
        return st;
    snprintf(g->arch, sizeof g->arch, "sm_%d%d", info.cc_major, info.cc_minor);
    st = tmap_cuda_alloc(c, TMAP_LAT_IN_BYTES, &g->in, err);
    if (st == TMAP_OK)
        st = tmap_cuda_alloc(c, TMAP_LAT_OUT_BYTES, &g->out, err);
    return st;
}

static void close_buffers(lat_gpu *g)
{
    if (g->in)
        tmap_cuda_free(g->cuda, g->in);
    if (g->out)
        tmap_cuda_free(g->cuda, g->out);
}

tmap_status tmap_latency_measure_results(tmap_cuda *c, const tmap_latency_measure_opts *o,
                                         tmap_latency_result **results, size_t *count,
                                         tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, results, count);
    if (absent)
        return absent;
    *results = NULL;
    *count = 0;
    int reps = o && o->reps ? o->reps : DEFAULT_REPS;
    if (reps < 1 || reps > MAX_REPS)
        return tmap_fail(err, TMAP_ERR_INVALID, "latency: reps %d out of 1..%d", reps, MAX_REPS);
    size_t n = 0, total = 0;
    const tmap_latency_probe *list = tmap_latency_probes(&n);
    unsigned char *sel = malloc(n);
    tmap_latency_result *r = calloc(n, sizeof *r);
    if (!sel || !r) {
        free(sel), free(r);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    }
    tmap_status st = select_benches(o, list, n, sel, err);
    for (size_t i = 0; i < n; i++)
        total += sel[i];
    lat_gpu g;
    if (st == TMAP_OK)
        st = open_buffers(c, &g, err);
    else
        memset(&g, 0, sizeof g);
    size_t done = 0;
    for (size_t i = 0; st == TMAP_OK && i < n; i++) {
        if (!sel[i])
            continue;
        r[done].bench = &list[i];
        st = measure_one(&g, reps, &r[done], err);
        if (st == TMAP_OK)
            report(o, done, total, &r[done]);
        done++;
    }
    close_buffers(&g);
    free(sel);
    if (st != TMAP_OK) {
        free(r);
        return st;
    }
    for (size_t i = 0; i < done; i++)
        if (apply_companion(r, done, i))
            report(o, i, total, &r[i]);
    *results = r;
    *count = done;
    return TMAP_OK;
}

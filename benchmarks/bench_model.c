/*
 * bench_model.c -- how well the models rank regroupings, against the GPU.
 * For each manifest (default: every .json of benchmarks/suite), BBVs measured by
 * profiling the evaluation input (so the regression plays no part; with
 * --models DIR, predicted by DIR/NAME/model.txt, a `threadmap bench` run's
 * trained predictor, its residuals taken as the bench takes them), every
 * plan candidate applied and timed (tmap_evaluate, measure_all), then per
 * candidate the improvement 1 - t_c / t_original
 *   measured  -- from the kernel-only medians (layout transform or
 *                redirection, the kernel between its events) against the
 *                original kernel's median;
 *   scheduled -- the paper's BBV-weighted-scheduled (eq. 2-4, dynamic
 *                round robin);
 *   sm90      -- the SM model (model/sm.c) with SASS instruction counts as
 *                issue cycles where nvdisasm is found (else PTX counts).
 * Prints one row per candidate and, per model, the mean absolute error in
 * percentage points, the sign right on the candidates that move the
 * measured time by more than 5%, and the kernels whose predicted best is
 * within 5% of the measured best.
 *
 * With --dump DIR, each kernel's data is also written to DIR/NAME/, and
 * --from DIR prints the same table from such a folder on the CPU (no GPU):
 *   kernel.ptx  the PTX the evaluation ran
 *   sass.txt    `nvdisasm -gp` of it, assembled as tmap_sass_block_counts
 *               does (written by the caller; absent: PTX counts)
 *   meta.txt    "key value" lines: kernel, entry, nthreads, nblocks, block_size,
 *               nsms, blocks_per_sm, registers, local_bytes, shared_bytes,
 *               mechanism, device, sm_clock_khz, mem_clock_khz, original_ms;
 *               then per candidate "cand ALGO MEASURED_MS APPLY_MS GAIN"
 *   agg.bin     per candidate in that order, little-endian uint32: the
 *               tmap_warp_counts c, a (nwarps x nblocks each) and d (nwarps)
 *   const.bin   where the SM model takes constant keys (marching_cubes: its
 *               features), per candidate, doubles: ca (nwarps x nblocks) and
 *               const_ws (thread blocks); tmap_warp_counts_const
 * The SM model's parameters come from the latency table (--table, else the
 * default sm_90 table): tmap_sm_table_params.  TMAP_V=1 in the environment
 * adds the model's terms to each row (in ms at the SM clock) and the bound
 * as the bench calls it (SM issue and L2 estimated by the model, over the
 * measured time; DRAM is not in a dump), TMAP_V=2 each
 * CFG block's costs.  With --from, --scale F multiplies every count of
 * the dump (c and a, rounded; a kept at least c) by F before the models
 * run: how far the figures move when the counts do (a model whose error
 * moves far under F = 0.998 or 1.002 has found a tie, not the kernel).
 *   bench_model [--reps N] [--seed S] [--dump DIR] [--table TSV] [--models DIR] [MANIFEST.json...]
 *   bench_model --from DIR [--table TSV] [--scale F]
 */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <sys/stat.h>

#include "benchmarks/benchutil.h"
#include "common/base.h"

enum { M_SCHED, M_SM90, M_COUNT };
static const char *const model_name[M_COUNT] = {"scheduled", "sm90"};

typedef struct tally {
    double abs_err[M_COUNT];
    size_t n, moved, sign_ok[M_COUNT], kernels, best_ok[M_COUNT];
} tally;

/* One kernel's evaluation, from the GPU or from a dump. */
typedef struct kdata {
    char name[128], entry[256], mechanism[64];
    char *ptx, *sass;        /* sass: the listing, or NULL */
    size_t nthreads, nblocks, block_size, nsms, blocks_per_sm;
    double sm_clock_khz;
    size_t ncand;
    char algo[TMAP_ALGO_COUNT][32];
    double ms[TMAP_ALGO_COUNT], apply_ms[TMAP_ALGO_COUNT], gain[TMAP_ALGO_COUNT];
    tmap_warp_counts wc[TMAP_ALGO_COUNT];
} kdata;

static void kdata_free(kdata *k)
{
    free(k->ptx), free(k->sass);
    for (size_t i = 0; i < k->ncand; i++)
        tmap_warp_counts_free(&k->wc[i]);
}

/* ------------------------------------------------------------ the models */

typedef struct kmodel {
    tmap_ptx_module *m;
    tmap_cfg *cfg;
    double *lat;          /* the paper's lat[b] */
    tmap_sm_model sm;     /* the SM model */
    const char *issue_src;
} kmodel;

static void kmodel_free(kmodel *x)
{
    tmap_ptx_free(x->m);
    tmap_cfg_free(x->cfg);
    free(x->lat);
    tmap_sm_model_free(&x->sm);
}

static tmap_status kmodel_make(const kdata *k, const tmap_lat_table *t, kmodel *x,
                               tmap_error *err)
{
    memset(x, 0, sizeof *x);
    double *sass = malloc((k->nblocks + 1) * sizeof *sass);
    tmap_status st = sass ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    char name[256];
    if (!st) st = tmap_ptx_parse(k->ptx, strlen(k->ptx),
                                 tmap_ptx_describe(name, sizeof name, "PTX of %s", k->name), &x->m,
                                 err);
    if (!st) st = tmap_cfg_build(x->m, k->entry, &x->cfg, err);
    if (!st && x->cfg->nblocks != k->nblocks)
        st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: %zu CFG blocks, %zu counted", k->name,
                       x->cfg->nblocks, k->nblocks);
    if (!st) st = tmap_lat_blocks(t, x->cfg, &x->lat, NULL, err);
    x->issue_src = "SASS";
    tmap_error ignored = {0};
    if (!st && (k->sass ? tmap_sass_count_listing(k->sass, x->cfg, sass, NULL, &ignored)
                        : tmap_sass_block_counts(k->ptx, x->cfg, "sm_90", sass, NULL, &ignored))) {
        free(sass);
        sass = NULL;
        x->issue_src = "PTX";
    }
    if (!st)
        st = tmap_sm_model_make(t, x->m, k->entry, x->cfg, sass, k->nsms, k->blocks_per_sm,
                                k->block_size, !strcmp(k->mechanism, "redirection"), &x->sm, err);
    free(sass);
    if (st)
        kmodel_free(x);
    return st;
}

/* The paper's BBV-weighted-scheduled from the warp counts. */
static tmap_status sched_time(const kdata *k, const kmodel *x, const tmap_warp_counts *w,
                              double *cycles, tmap_error *err)
{
    size_t wpb = (k->block_size + 31) / 32, nb = (w->nwarps + wpb - 1) / wpb;
    double *tt = calloc(nb + 1, sizeof *tt);
    if (!tt)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t v = 0; v < w->nwarps; v++)
        for (size_t b = 0; b < w->nblocks; b++)
            tt[v / wpb] += x->lat[b] * w->c[v * w->nblocks + b];
    tmap_status st = tmap_sched_dynamic(tt, nb, k->nsms, k->blocks_per_sm, cycles, NULL, err);
    free(tt);
    return st;
}

static tmap_status model_times(const kdata *k, const kmodel *x, const tmap_warp_counts *w,
                               double t[M_COUNT], tmap_sm_time_parts *parts, tmap_error *err)
{
    tmap_status st = sched_time(k, x, w, &t[M_SCHED], err);
    if (!st)
        st = tmap_sm_time(w, x->sm.blocks, &x->sm.params, parts, err);
    t[M_SM90] = parts->cycles;
    return st;
}

static double pct(double orig, double cand) { return 100.0 * (1.0 - cand / orig); }

typedef struct mparams {
    const tmap_lat_table *table;
    int verbose;          /* 1: the SM model's terms per row; 2: and per CFG block */
    double scale;         /* --from: every count of the dump times this (1: as dumped) */
} mparams;

/* Rows of one kernel; adds to the tally. */
static tmap_status report_kernel(const kdata *k, const mparams *mp, tally *t, tmap_error *err)
{
    kmodel x;
    tmap_status st = kmodel_make(k, mp->table, &x, err);
    if (st)
        return st;
    double t0[M_COUNT], best_meas = INFINITY, best_pred[M_COUNT], ms0 = k->ms[0];
    size_t arg_pred[M_COUNT] = {0};
    for (int m = 0; m < M_COUNT; m++)
        best_pred[m] = INFINITY;
    if (mp->verbose > 1)
        for (size_t b = 0; b < k->nblocks; b++) {
            uint32_t cmax = 0;
            for (size_t v = 0; v < k->wc[0].nwarps; v++)
                if (k->wc[0].c[v * k->nblocks + b] > cmax)
                    cmax = k->wc[0].c[v * k->nblocks + b];
            const tmap_sm_block *q = &x.sm.blocks[b];
            printf("#   block %2zu line %4u ptx %3u: issue %6.1f latency %6.1f lat %6.1f | aff %g/%gB "
                   "data %g gather %g unif %g const %g | walk %.1f base %.1f q %.3f | max c %u | "
                   "parent %d\n",
                   b, x.cfg->blocks[b].line, x.cfg->blocks[b].ninstr, q->issue, q->latency,
                   x.lat[b], q->affine_n, q->affine_bytes, q->data_n, q->gather_n, q->uniform_n,
                   q->const_n, q->walk, q->walk_base, q->walk_q, cmax, (int)q->visit_parent - 1);
        }
    tmap_sm_time_parts parts;
    st = model_times(k, &x, &k->wc[0], t0, &parts, err);
    for (size_t i = 0; !st && i < k->ncand; i++) {
        double tc[M_COUNT], pred[M_COUNT];
        st = model_times(k, &x, &k->wc[i], tc, &parts, err);
        if (st)
            break;
        for (int m = 0; m < M_COUNT; m++)
            pred[m] = pct(t0[m], tc[m]);
        double meas = pct(ms0, k->ms[i]);
        printf("%-20s %-12s %9.4f %9.1f | %9.1f %9.1f | %s", k->name, k->algo[i], k->ms[i],
               meas, pred[M_SCHED], pred[M_SM90], x.issue_src);
        if (mp->verbose) /* the SM model's terms, in ms at the SM clock */
            printf("  ms: %.4f = max(issue %.4f + stalls %.4f, memory %.4f, constant %.4f)",
                   parts.cycles / k->sm_clock_khz, parts.issue / k->sm_clock_khz,
                   parts.latency / k->sm_clock_khz, parts.memory / k->sm_clock_khz,
                   parts.constant / k->sm_clock_khz);
        if (mp->verbose) { /* the bench's bound, without DRAM (not in a dump) */
            double cyc = k->ms[i] * k->sm_clock_khz;
            printf("  %s-bound (est.: SM issue %.0f%%, L2 %.0f%% of peak)",
                   parts.memory > parts.issue ? "memory" : "compute", 100 * parts.issue / cyc,
                   100 * parts.memory / cyc);
        }
        printf("\n");
        best_meas = fmin(best_meas, k->ms[i]);
        for (int m = 0; m < M_COUNT; m++)
            if (tc[m] < best_pred[m])
                best_pred[m] = tc[m], arg_pred[m] = i;
        if (i == 0)
            continue;
        t->n++;
        int moved = fabs(meas) > 5.0;
        t->moved += moved;
        for (int m = 0; m < M_COUNT; m++) {
            t->abs_err[m] += fabs(pred[m] - meas);
            t->sign_ok[m] += moved && (pred[m] > 0) == (meas > 0);
        }
    }
    if (!st) {
        t->kernels++;
        for (int m = 0; m < M_COUNT; m++)
            t->best_ok[m] += k->ms[arg_pred[m]] <= 1.05 * best_meas;
    }
    kmodel_free(&x);
    return st;
}

/* ------------------------------------------------------------ dump, load */

static tmap_status write_text(const char *path, const char *text, tmap_error *err)
{
    return tmap_file_write(path, text, strlen(text), err);
}

static size_t thread_blocks(const tmap_warp_counts *w)
{
    return (w->nthreads + w->block_size - 1) / w->block_size;
}

/* const.bin: each candidate's ca and const_ws, where the counts have them. */
static tmap_status dump_const(const char *dir, const kdata *k, tmap_error *err)
{
    if (!k->ncand || !k->wc[0].ca)
        return TMAP_OK;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/const.bin", dir, k->name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot write", path);
    tmap_status st = TMAP_OK;
    for (size_t i = 0; !st && i < k->ncand; i++) {
        const tmap_warp_counts *w = &k->wc[i];
        size_t n = w->nwarps * w->nblocks, nb = thread_blocks(w);
        if (fwrite(w->ca, 8, n, f) != n || fwrite(w->const_ws, 8, nb, f) != nb)
            st = tmap_fail(err, TMAP_ERR_IO, "%s: write failed", path);
    }
    if (fclose(f) && !st)
        st = tmap_fail(err, TMAP_ERR_IO, "%s: write failed", path);
    return st;
}

/* const.bin back into the counts, where the dump has one. */
static tmap_status read_const(const char *path, kdata *k, tmap_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return TMAP_OK;
    tmap_status st = TMAP_OK;
    for (size_t i = 0; !st && i < k->ncand; i++) {
        tmap_warp_counts *w = &k->wc[i];
        size_t n = w->nwarps * w->nblocks, nb = thread_blocks(w);
        w->ca = malloc(8 * n + 8), w->const_ws = malloc(8 * nb + 8);
        if (!w->ca || !w->const_ws)
            st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        else if (fread(w->ca, 8, n, f) != n || fread(w->const_ws, 8, nb, f) != nb)
            st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: short", path);
    }
    fclose(f);
    return st;
}

static tmap_status dump_kernel(const char *dir, const kdata *k, tmap_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, k->name);
    mkdir(dir, 0777);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/kernel.ptx", dir, k->name);
    tmap_status st = write_text(path, k->ptx, err);
    if (st)
        return st;
    snprintf(path, sizeof path, "%s/%s/meta.txt", dir, k->name);
    FILE *f = fopen(path, "w");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot write", path);
    fprintf(f, "kernel %s\nentry %s\nnthreads %zu\nnblocks %zu\nblock_size %zu\nnsms %zu\n"
            "blocks_per_sm %zu\nmechanism %s\nsm_clock_khz %.0f\n", k->name, k->entry,
            k->nthreads, k->nblocks, k->block_size, k->nsms, k->blocks_per_sm, k->mechanism,
            k->sm_clock_khz);
    for (size_t i = 0; i < k->ncand; i++)
        fprintf(f, "cand %s %.6f %.6f %.6f\n", k->algo[i], k->ms[i], k->apply_ms[i], k->gain[i]);
    fclose(f);
    snprintf(path, sizeof path, "%s/%s/agg.bin", dir, k->name);
    f = fopen(path, "wb");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot write", path);
    for (size_t i = 0; !st && i < k->ncand; i++) {
        const tmap_warp_counts *w = &k->wc[i];
        size_t n = w->nwarps * w->nblocks;
        if (fwrite(w->c, 4, n, f) != n || fwrite(w->a, 4, n, f) != n ||
            fwrite(w->d, 4, w->nwarps, f) != w->nwarps)
            st = tmap_fail(err, TMAP_ERR_IO, "%s: write failed", path);
    }
    if (fclose(f) && !st)
        st = tmap_fail(err, TMAP_ERR_IO, "%s: write failed", path);
    return st ? st : dump_const(dir, k, err);
}

static tmap_status read_meta(const char *path, kdata *k, tmap_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot open", path);
    char line[1024], key[64], val[512];
    unsigned ln = 0;
    tmap_status st = TMAP_OK;
    while (!st && fgets(line, sizeof line, f)) {
        ln++;
        if (sscanf(line, "%63s %511[^\n]", key, val) != 2)
            continue;
        if (!strcmp(key, "cand")) {
            if (k->ncand == TMAP_ALGO_COUNT ||
                sscanf(val, "%31s %lf %lf %lf", k->algo[k->ncand], &k->ms[k->ncand],
                       &k->apply_ms[k->ncand], &k->gain[k->ncand]) != 4)
                st = tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: bad candidate", path, ln);
            k->ncand++;
        }
        else if (!strcmp(key, "kernel")) snprintf(k->name, sizeof k->name, "%s", val);
        else if (!strcmp(key, "entry")) snprintf(k->entry, sizeof k->entry, "%s", val);
        else if (!strcmp(key, "mechanism")) snprintf(k->mechanism, sizeof k->mechanism, "%s", val);
        else if (!strcmp(key, "nthreads")) k->nthreads = strtoull(val, NULL, 10);
        else if (!strcmp(key, "nblocks")) k->nblocks = strtoull(val, NULL, 10);
        else if (!strcmp(key, "block_size")) k->block_size = strtoull(val, NULL, 10);
        else if (!strcmp(key, "nsms")) k->nsms = strtoull(val, NULL, 10);
        else if (!strcmp(key, "blocks_per_sm")) k->blocks_per_sm = strtoull(val, NULL, 10);
        else if (!strcmp(key, "sm_clock_khz")) k->sm_clock_khz = atof(val);
    }
    fclose(f);
    if (!st && (!k->ncand || !k->nthreads || !k->nblocks || !k->block_size || !k->nsms ||
                !k->blocks_per_sm || !k->entry[0]))
        st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: a key is missing", path);
    return st;
}

/* w's counts times scale, rounded, a at least c. */
static void scale_counts(tmap_warp_counts *w, double scale)
{
    for (size_t j = 0; scale != 1 && j < w->nwarps * w->nblocks; j++) {
        w->c[j] = (uint32_t)floor(w->c[j] * scale + 0.5);
        w->a[j] = (uint32_t)floor(w->a[j] * scale + 0.5);
        if (w->a[j] < w->c[j])
            w->a[j] = w->c[j];
    }
}

static tmap_status read_counts(const char *path, kdata *k, double scale, tmap_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot open", path);
    size_t wpb = (k->block_size + 31) / 32;
    size_t nw = k->nthreads / k->block_size * wpb + (k->nthreads % k->block_size + 31) / 32;
    size_t n = nw * k->nblocks;
    tmap_status st = TMAP_OK;
    for (size_t i = 0; !st && i < k->ncand; i++) {
        tmap_warp_counts *w = &k->wc[i];
        *w = (tmap_warp_counts){k->nthreads, k->block_size, nw, k->nblocks, malloc(4 * n + 4),
                                malloc(4 * n + 4), malloc(4 * nw + 4), NULL, NULL};
        if (!w->c || !w->a || !w->d)
            st = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
        else if (fread(w->c, 4, n, f) != n || fread(w->a, 4, n, f) != n ||
                 fread(w->d, 4, nw, f) != nw)
            st = tmap_fail(err, TMAP_ERR_FORMAT, "%s: short", path);
        else
            scale_counts(w, scale);
    }
    fclose(f);
    return st;
}

static tmap_status load_kernel(const char *dir, kdata *k, double scale, tmap_error *err)
{
    char path[4096];
    memset(k, 0, sizeof *k);
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    tmap_status st = read_meta(path, k, err);
    snprintf(path, sizeof path, "%s/kernel.ptx", dir);
    if (!st) st = tmap_file_read(path, &k->ptx, NULL, err);
    snprintf(path, sizeof path, "%s/sass.txt", dir);
    tmap_error ignored = {0};
    if (!st && tmap_file_read(path, &k->sass, NULL, &ignored))
        k->sass = NULL;
    snprintf(path, sizeof path, "%s/agg.bin", dir);
    if (!st) st = read_counts(path, k, scale, err);
    snprintf(path, sizeof path, "%s/const.bin", dir);
    if (!st) st = read_const(path, k, err);
    return st;
}

/* ------------------------------------------------------------ on the GPU */

static tmap_status from_eval(const char *name, const tmap_eval *e, const char *ptx, kdata *k,
                             tmap_error *err)
{
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->entry, sizeof k->entry, "%s", e->entry);
    snprintf(k->mechanism, sizeof k->mechanism, "%s", tmap_mechanism_name(e->mechanism));
    k->ptx = strdup(ptx);
    k->nthreads = e->bbv.nthreads, k->nblocks = e->bbv.nblocks;
    k->block_size = e->params.block_size, k->nsms = e->params.nsms;
    k->blocks_per_sm = e->params.blocks_per_sm, k->sm_clock_khz = e->device.clock_khz;
    tmap_status st = k->ptx ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < e->plan.n; i++) {
        const tmap_candidate *c = &e->plan.cand[i];
        double ms = i ? e->measured_ms[i] : e->original_ms; /* the identity: as written */
        if (!c->available || !isfinite(ms))
            continue;
        size_t j = k->ncand;
        snprintf(k->algo[j], sizeof k->algo[j], "%s", tmap_algo_name(c->algo));
        k->ms[j] = ms, k->apply_ms[j] = i ? e->measured_apply_ms[i] : 0, k->gain[j] = c->gain;
        st = tmap_warp_counts_make(&e->bbv, i ? c->perm : NULL, k->block_size, &k->wc[j], err);
        if (!st && e->sm.noise) /* as tmap_sm_model_time takes predictions */
            st = tmap_noise_warp_counts(e->sm.noise, &e->bbv, e->sm.group, i ? c->perm : NULL,
                                        &k->wc[j], err);
        if (!st && e->sm.group && tmap_sm_model_const_keyed(&e->sm) &&
            (e->sm.params.idc_cycles > 0 || e->sm.params.idc_fill_cycles > 0)) /* as the model */
            st = tmap_warp_counts_const(&k->wc[j], &e->bbv, i ? c->perm : NULL, e->sm.group,
                                        e->sm.ngroups, (double)e->sm.const_bytes, k->nsms,
                                        k->blocks_per_sm, err);
        k->ncand += !st;
    }
    return st;
}

static tmap_status one(tmap_cuda *c, const char *path, uint64_t seed, int reps, const char *dump,
                       const char *models, const mparams *mp, tally *t, tmap_error *err)
{
    char model[4096];
    tmap_manifest *m = NULL;
    char *ptx = NULL, *entry = NULL;
    tmap_eval e;
    kdata k;
    memset(&k, 0, sizeof k);
    int have = 0;
    tmap_eval_opts o = {.seed = seed, .warmup = 3, .reps = reps, .threshold = 0.05,
                        .groupsize = 32, .scope = -1, .mechanism = -1, .measure_all = 1,
                        .launches = 1};
    tmap_status st = tmap_manifest_load(path, &m, err);
    if (!st && models) {
        snprintf(model, sizeof model, "%s/%s/model.txt", models, tmap_manifest_name(m));
        o.model_path = model;
    }
    if (!st) st = tmap_manifest_ptx(m, NULL, &ptx, &entry, err);
    if (!st) st = tmap_evaluate(c, m, &o, &e, err);
    have = st == TMAP_OK;
    if (!st) st = from_eval(tmap_manifest_name(m), &e, ptx, &k, err);
    if (have)
        tmap_eval_free(&e);
    if (!st && dump) st = dump_kernel(dump, &k, err);
    if (!st) st = report_kernel(&k, mp, t, err);
    kdata_free(&k);
    free(ptx), free(entry);
    tmap_manifest_free(m);
    return st;
}

/* ------------------------------------------------------------ main */

static void header(int reps, uint64_t seed, const char *models)
{
    if (reps)
        printf("# improvement = 1 - t / t_original, in %%; BBVs %s on seed %llu; %d reps\n",
               models ? "predicted (--models)" : "measured", (unsigned long long)seed, reps);
    printf("%-20s %-12s %9s %9s | %9s %9s | issue\n", "kernel", "candidate", "kernel_ms",
           "measured", model_name[0], model_name[1]);
}

static void footer(const tally *t)
{
    for (int m = 0; m < M_COUNT; m++)
        printf("# %-9s: mean absolute error %.1f pp over %zu regroupings; sign right on %zu of "
               "%zu that move the time > 5%%; best within 5%% of the measured best on %zu of "
               "%zu kernels\n", model_name[m], t->n ? t->abs_err[m] / t->n : NAN, t->n,
               t->sign_ok[m], t->moved, t->best_ok[m], t->kernels);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int from_dir(const char *dir, const mparams *mp)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "bench_model: %s: cannot open\n", dir);
        return 1;
    }
    char *names[256];
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d)) && n < 256;)
        if (de->d_name[0] != '.')
            names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    printf("# from %s (bench_model --dump), models on the CPU", dir);
    if (mp->scale != 1)
        printf("; every count times %g", mp->scale);
    printf("\n");
    header(0, 0, NULL);
    tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        kdata k;
        tmap_error e = {0};
        if (load_kernel(path, &k, mp->scale, &e) || report_kernel(&k, mp, &t, &e))
            printf("%-20s failed: %s\n", names[i], e.message);
        kdata_free(&k);
        free(names[i]);
    }
    footer(&t);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"reps", 1, 0, 'r'}, {"seed", 1, 0, 's'},
                                       {"dump", 1, 0, 'd'}, {"from", 1, 0, 'f'},
                                       {"table", 1, 0, 't'}, {"scale", 1, 0, 'x'},
                                       {"models", 1, 0, 'm'}, {"help", 0, 0, 'h'}, {0}};
    int reps = 10;
    uint64_t seed = 7;
    const char *dump = NULL, *from = NULL, *table = NULL, *models = NULL;
    double scale = 1;
    for (int ch; (ch = getopt_long(argc, argv, "h", lo, NULL)) != -1;) {
        if (ch == 'r' && atoi(optarg) > 0)
            reps = atoi(optarg);
        else if (ch == 's')
            seed = strtoull(optarg, NULL, 10);
        else if (ch == 'd')
            dump = optarg;
        else if (ch == 'f')
            from = optarg;
        else if (ch == 't')
            table = optarg;
        else if (ch == 'm')
            models = optarg;
        else if (ch == 'x' && (scale = strtod(optarg, NULL)) > 0)
            continue;
        else {
            fprintf(stderr, "usage: bench_model [--reps N] [--seed S] [--dump DIR] "
                            "[--table TSV] [--models DIR] [MANIFEST.json...]\n"
                            "       bench_model --from DIR [--table TSV] [--scale F]\n"
                            "  --scale F: with --from, every count times F (> 0) before the "
                            "models\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    if (scale != 1 && !from) {
        fprintf(stderr, "bench_model: --scale needs --from\n");
        return 2;
    }
    tmap_error err = {0};
    char path[4096];
    tmap_lat_table *lt = NULL;
    if ((!table && tmap_lat_default_path("sm_90", path, sizeof path, &err)) ||
        tmap_lat_load(table ? table : path, &lt, &err)) {
        fprintf(stderr, "bench_model: %s\n", err.message);
        return 1;
    }
    mparams mp = {lt, getenv("TMAP_V") ? atoi(getenv("TMAP_V")) : 0, scale};
    if (from) {
        int rc = from_dir(from, &mp);
        tmap_lat_free(lt);
        return rc;
    }
    size_t n = 0;
    char **list = bench_manifests(argc, argv, optind, TMAP_SOURCE_DIR "/benchmarks/suite", &n);
    tmap_cuda *c = NULL;
    tmap_device_info d;
    if (tmap_cuda_open(0, &c, &err) || tmap_cuda_info(c, &d, &err))
        return bench_gpu_failed("bench_model", &err);
    bench_banner(stdout, &d, "# ");
    header(reps, seed, models);
    tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < n; i++) {
        tmap_error e = {0};
        if (one(c, list[i], seed, reps, dump, models, &mp, &t, &e))
            printf("%-20s failed: %s\n", list[i], e.message);
        free(list[i]);
    }
    free(list);
    footer(&t);
    tmap_cuda_close(c);
    tmap_lat_free(lt);
    return 0;
}

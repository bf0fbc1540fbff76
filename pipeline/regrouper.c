/*
 * regrouper.c -- regroup() on the GPU with measured feedback: the
 * candidates (the original launch; Sorting over the grid or per thread
 * block and bin-and-deal, each by layout transform and, given a redirected
 * kernel, by redirection) each run the first few real launches, timed with
 * events read later without waiting; the fastest is kept if it beats the
 * original by the threshold (trial.c decides).  A regrouped launch is key
 * (the caller's), device sort, fused gather, the kernel on the copies,
 * fused scatter, all on the caller's stream (with a model's key, Sorting
 * and bin-and-deal make key, sort and deal one graph launch: by_graph);
 * the remap cache skips key and
 * sort, and the persistent layout the gather, while the input's signature
 * is unchanged.  With overlap, the next input's key and sort run on the
 * GPU regroup path's own stream beside the current kernel (take_prepared,
 * fork_next).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "pipeline/trial.h"
#include "threadmap/pipeline.h"

#define MAX_TIMERS (TMAP_TRIAL_MAX_CAND * TMAP_TRIAL_MAX_REPS)

/* A candidate: an algorithm, applied by moving the arrays (layout
 * transform) or by the redirected kernel reading the permutation. */
typedef struct choice {
    tmap_regrouper_cand algo;
    int redirect;
    int key;                    /* 0: the key; 1: the alternative model's */
    char name[96];
} choice;

struct tmap_regrouper {
    tmap_cuda *cuda;
    tmap_launch launch;         /* the caller's, args copied into `args` */
    void **args;
    uint64_t *orig;             /* [narrays] the caller's array pointers */
    uint64_t *vals;             /* [narrays] what the kernel gets this launch */
    size_t narrays, nthreads, block_size;
    tmap_layout *layout;
    tmap_gpu_regroup *gpu, *alt; /* the sort's scratch and the key's model; alt's for
                                    the alternative key (NULL without one) */
    tmap_gpu_classes *classes;   /* value classes' scratch (grid scope), or NULL */
    uint32_t class_size[TMAP_REGROUPER_CLASSES];
    uint32_t *runs;              /* [2 * TMAP_REGROUP_MAX_RUNS] with Greedy asked for */
    uint64_t key, perm, sorted; /* device: double [n], u32 [n], u32 [n] */
    tmap_regrouper_opts opts;   /* model and lat: the caller's, read at create */
    choice cand[TMAP_TRIAL_MAX_CAND]; /* trial index -> candidate */
    tmap_trial trial;
    tmap_timer *timer[MAX_TIMERS];
    int timer_cand[MAX_TIMERS];  /* trial index of a pending timer, -1: free */
    int now, now_timer;          /* this launch: trial index, timer or -1 */
    int perm_for;                /* trial index the permutation was made for, -1: none */
    uint64_t signature;          /* of the input the permutation was made for */
    int gathered;                /* the copies hold the arrays in perm's order */
    int alone;                   /* this launch left alone (overlap: late, no permutation) */
    uint64_t next;               /* overlap: device u32 [n], made on the side stream */
    uint64_t want_sig;           /* announced by tmap_regrouper_prepare, 0: none */
    uint64_t pending_sig;        /* what `next` is (being) made for, 0: none */
    int side_used;               /* work was ever enqueued on the side stream */
    size_t used, late;           /* prepared permutations taken; found not done */
    char why[512];
};

static const char *const names[TMAP_REGROUPER_COUNT] = {
    "original", "sorting (grid)", "sorting (thread block)", "bin-and-deal",
    "greedy (classes)", "greedy-max (classes)", "lam"};

/* The candidates on the key's value classes (tmap_gpu_classes). */
static int on_classes(int c)
{
    return c == TMAP_REGROUPER_GREEDY || c == TMAP_REGROUPER_GREEDY_MAX ||
           c == TMAP_REGROUPER_LAM;
}

const char *tmap_regrouper_cand_name(tmap_regrouper_cand c)
{
    return c < TMAP_REGROUPER_COUNT ? names[c] : "?";
}

static void add(tmap_regrouper *r, int *n, tmap_regrouper_cand algo, int redirect, int key)
{
    choice *c = &r->cand[(*n)++];
    c->algo = algo, c->redirect = redirect, c->key = key;
    snprintf(c->name, sizeof c->name, "%s%s%s%.40s", names[algo], redirect ? ", redirected" : "",
             key ? ", by " : "", key && r->opts.alt_name ? r->opts.alt_name : key ? "alt" : "");
}

/* The candidates this launch, scope and the mechanisms given allow, the
 * original first; each algorithm by layout transform (with arrays to
 * move) and by redirection (with a redirected kernel); those on value
 * classes by the first key only, while the trial has room. */
static unsigned wanted(const tmap_regrouper_opts *o)
{
    return o->candidates ? o->candidates | 1u
                         : ~((1u << TMAP_REGROUPER_GREEDY) | (1u << TMAP_REGROUPER_GREEDY_MAX));
}

static int candidates(tmap_regrouper *r)
{
    unsigned want = wanted(&r->opts);
    int bs_ok = r->block_size >= 32 && r->block_size <= 1024;
    int deal_ok = r->block_size % 32 == 0 && r->nthreads % r->block_size == 0;
    int grid = r->opts.scope == TMAP_REGROUP_GRID, n = 0;
    add(r, &n, TMAP_REGROUPER_ORIGINAL, 0, 0);
    /* pass 0: by every key; pass 1: on value classes, by the first key */
    for (int pass = 0; pass < 2; pass++)
        for (int key = 0; key <= (!pass && r->alt != NULL); key++)
            for (int redirect = 0; redirect < 2; redirect++) {
                if (redirect ? !r->opts.redirected : !r->narrays)
                    continue;
                for (int c = 1; c < TMAP_REGROUPER_COUNT; c++) {
                    int ok = (c == TMAP_REGROUPER_SORT_GRID && grid) ||
                             (c == TMAP_REGROUPER_SORT_BLOCK && bs_ok) ||
                             (c == TMAP_REGROUPER_BIN_DEAL && grid && deal_ok) ||
                             (on_classes(c) && grid);
                    if (ok && on_classes(c) == pass && (want & (1u << c)) &&
                        n < TMAP_TRIAL_MAX_CAND)
                        add(r, &n, (tmap_regrouper_cand)c, redirect, key);
                }
            }
    return n;
}

static tmap_status check_opts(const tmap_launch *l, const tmap_regrouper_opts *o,
                              size_t narrays, tmap_error *err)
{
    if (!l || !o || (!narrays && !o->redirected))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_create: %s",
                         l && o ? "no per-thread arrays to move and no redirected kernel"
                                : "the launch or the options are NULL");
    if (!o->key == !o->model || (o->model && (!o->lat || !o->features || !o->model->coef)) ||
        (o->alt_model && (!o->model || !o->alt_lat || !o->alt_model->coef ||
                          o->alt_model->nfeatures != o->model->nfeatures)))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_create: give the key as a "
                         "function, or as a model with its block latencies and device features");
    if (o->scope != TMAP_REGROUP_GRID && o->scope != TMAP_REGROUP_BLOCK)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_create: unknown scope %d",
                         (int)o->scope);
    if (o->trial_launches < 0 || o->trial_launches > TMAP_TRIAL_MAX_REPS)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_create: trial_launches %d "
                         "(0 to %d)", o->trial_launches, TMAP_TRIAL_MAX_REPS);
    return TMAP_OK;
}

/* A sort's scratch, with the model it evaluates the key by (if any). */
static tmap_status keyed(tmap_regrouper *r, const tmap_predictor *model, const double *lat,
                         tmap_gpu_regroup **g, tmap_error *err)
{
    tmap_status st = tmap_gpu_regroup_create(r->cuda, r->nthreads, g, err);
    if (!st && model)
        st = tmap_gpu_regroup_model(*g, model->coef, lat, model->nblocks, model->nfeatures, err);
    return st;
}

/* Device buffers and the caller's launch, copied. */
static tmap_status make(tmap_regrouper *r, tmap_cuda *c, const tmap_launch *l,
                        const tmap_thread_array *arrays, size_t narrays, tmap_error *err)
{
    r->cuda = c, r->launch = *l, r->narrays = narrays;
    r->nthreads = (size_t)tmap_launch_threads(l), r->block_size = tmap_launch_block_size(l);
    r->args = calloc(l->nargs ? l->nargs : 1, sizeof *r->args);
    r->orig = calloc(narrays ? narrays : 1, sizeof *r->orig); /* none: redirection only */
    r->vals = calloc(narrays ? narrays : 1, sizeof *r->vals);
    if (!r->args || !r->orig || !r->vals)
        return tmap_fail(err, TMAP_ERR_NOMEM, "tmap_regrouper_create: out of memory");
    memcpy(r->args, l->args, l->nargs * sizeof *r->args);
    r->launch.args = r->args;
    for (size_t i = 0; i < narrays; i++) {
        if (arrays[i].arg >= l->nargs)
            return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_create: array %zu is "
                             "argument %u of %zu", i, arrays[i].arg, l->nargs);
        memcpy(&r->orig[i], l->args[arrays[i].arg], sizeof r->orig[i]);
        r->args[arrays[i].arg] = &r->vals[i];
    }
    tmap_status st = narrays ? tmap_layout_create(c, l, arrays, narrays, &r->layout, err) : TMAP_OK;
    if (!st)
        st = keyed(r, r->opts.model, r->opts.lat, &r->gpu, err);
    if (!st && r->opts.alt_model)
        st = keyed(r, r->opts.alt_model, r->opts.alt_lat, &r->alt, err);
    if (!st && r->opts.key) /* the caller's function writes the key here */
        st = tmap_cuda_alloc(c, r->nthreads * sizeof(double), &r->key, err);
    if (!st)
        st = tmap_cuda_alloc(c, r->nthreads * sizeof(uint32_t), &r->perm, err);
    if (!st)
        st = tmap_cuda_alloc(c, r->nthreads * sizeof(uint32_t), &r->sorted, err);
    if (!st && r->opts.overlap)
        st = tmap_cuda_alloc(c, r->nthreads * sizeof(uint32_t), &r->next, err);
    unsigned want = wanted(&r->opts);
    if (!st && r->opts.scope == TMAP_REGROUP_GRID && (want & ((1u << TMAP_REGROUPER_GREEDY) |
                                                             (1u << TMAP_REGROUPER_GREEDY_MAX) |
                                                             (1u << TMAP_REGROUPER_LAM))))
        st = tmap_gpu_classes_create(c, r->nthreads, &r->classes, err);
    if (!st && r->classes && (want & ((1u << TMAP_REGROUPER_GREEDY) |
                                      (1u << TMAP_REGROUPER_GREEDY_MAX))) &&
        !(r->runs = malloc(2 * TMAP_REGROUP_MAX_RUNS * sizeof *r->runs)))
        st = tmap_fail(err, TMAP_ERR_NOMEM, "tmap_regrouper_create: out of memory");
    if (!st && r->opts.redirected) /* it reads D from r->perm at every launch */
        st = tmap_redirect_set(r->opts.redirected, r->perm, err);
    return st;
}

tmap_status tmap_regrouper_create(tmap_cuda *c, const tmap_launch *l,
                                  const tmap_thread_array *arrays, size_t narrays,
                                  const tmap_regrouper_opts *o, tmap_regrouper **out,
                                  tmap_error *err)
{
    if (out)
        *out = NULL;
    if (!c || !out || (!arrays && narrays))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_create: an argument is NULL");
    tmap_status st = check_opts(l, o, narrays, err);
    if (st)
        return st;
    tmap_regrouper *r = calloc(1, sizeof *r);
    if (!r)
        return tmap_fail(err, TMAP_ERR_NOMEM, "tmap_regrouper_create: out of memory");
    r->opts = *o;
    r->perm_for = -1, r->now_timer = -1;
    for (int i = 0; i < MAX_TIMERS; i++)
        r->timer_cand[i] = -1;
    st = make(r, c, l, arrays, narrays, err);
    int n = st ? 0 : candidates(r);
    if (!st)
        st = tmap_trial_init(&r->trial, n, o->trial_launches ? o->trial_launches : 3,
                             o->threshold > 0 ? o->threshold : 0.03, err);
    for (int i = 0; !st && i < n * r->trial.reps; i++)
        st = tmap_timer_create(c, &r->timer[i], err);
    if (st) {
        tmap_regrouper_free(r);
        return st;
    }
    snprintf(r->why, sizeof r->why, "on trial: %d candidates, %d timed launches each", n,
             r->trial.reps);
    *out = r;
    return TMAP_OK;
}

void tmap_regrouper_free(tmap_regrouper *r)
{
    if (!r)
        return;
    if (r->side_used) /* nothing freed while the side stream may use it */
        tmap_gpu_regroup_sync(r->gpu, tmap_gpu_regroup_side(r->gpu), NULL);
    for (int i = 0; i < MAX_TIMERS; i++)
        tmap_timer_free(r->timer[i]);
    uint64_t bufs[] = {r->key, r->perm, r->sorted, r->next};
    for (size_t i = 0; i < 4; i++)
        if (bufs[i])
            tmap_cuda_free(r->cuda, bufs[i]);
    tmap_gpu_regroup_free(r->gpu);
    tmap_gpu_regroup_free(r->alt);
    tmap_gpu_classes_free(r->classes);
    free(r->runs);
    tmap_layout_free(r->layout);
    free(r->args);
    free(r->orig);
    free(r->vals);
    free(r);
}

/* The decision in words, once the trial is over. */
static void explain(tmap_regrouper *r)
{
    const tmap_trial *t = &r->trial;
    int n = snprintf(r->why, sizeof r->why, "%s: ", r->cand[t->chosen].name);
    for (int c = 0; c < t->ncand && n < (int)sizeof r->why; c++)
        n += snprintf(r->why + n, sizeof r->why - n, "%s%s %.3f ms", c ? "; " : "",
                      r->cand[c].name, t->median_ms[c]);
    if (n < (int)sizeof r->why)
        snprintf(r->why + n, sizeof r->why - n,
                 " (median of %d launches each, regrouping counted whole); %s", t->reps,
                 t->chosen ? "regroup every launch"
                           : "none beats the original by the threshold: leave launches alone");
}

tmap_status tmap_regrouper_poll(tmap_regrouper *r, int wait, void *stream, tmap_error *err)
{
    if (!r)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_poll: NULL regrouper");
    tmap_status st = wait ? tmap_gpu_regroup_sync(r->gpu, stream, err) : TMAP_OK;
    if (!st && wait && r->side_used)
        st = tmap_gpu_regroup_sync(r->gpu, tmap_gpu_regroup_side(r->gpu), err);
    /* Every timed launch of the trial handed out: wait for their times, so
     * that the trial ends at its last timed launch however far the host
     * runs ahead of the GPU (one wait per trial). */
    int ending = r->trial.chosen < 0 && r->trial.handed == r->trial.ncand * r->trial.reps;
    for (int i = 0; !st && i < MAX_TIMERS; i++) {
        int ready = 0;
        float ms = 0;
        if (r->timer_cand[i] < 0 || i == r->now_timer)
            continue;
        if (ending)
            st = tmap_timer_wait(r->timer[i], &ms, err), ready = !st;
        else
            st = tmap_timer_poll(r->timer[i], &ready, &ms, err);
        if (!st && ready) {
            tmap_trial_record(&r->trial, r->timer_cand[i], ms);
            r->timer_cand[i] = -1;
            if (r->trial.chosen >= 0)
                explain(r);
        }
    }
    return st;
}

/* Greedy or Greedy-Max: the class table (the host waits for it), the
 * algorithm's runs on the host, expanded on the GPU. */
static tmap_status by_table(tmap_regrouper *r, int i, uint64_t key, uint64_t out, void *stream,
                            tmap_error *err)
{
    size_t nruns = 0;
    tmap_algo algo = r->cand[i].algo == TMAP_REGROUPER_GREEDY ? TMAP_ALGO_GREEDY
                                                              : TMAP_ALGO_GREEDY_MAX;
    tmap_status st = tmap_gpu_classes_table(r->classes, key, TMAP_REGROUPER_CLASSES,
                                            r->class_size, stream, err);
    if (!st)
        st = tmap_regroup_class_runs(algo, r->class_size, TMAP_REGROUPER_CLASSES, 32, r->runs,
                                     &nruns, err);
    return st ? st : tmap_gpu_classes_expand(r->classes, r->runs, nruns, out, stream, err);
}

/* Sorting and bin-and-deal by the model's key: key and sort (and deal) as
 * one graph launch of the key's own scratch (cached per argument set, so
 * the trial's turns capture each once). */
static tmap_status by_graph(tmap_regrouper *r, int i, uint64_t out, void *stream,
                            tmap_error *err)
{
    tmap_gpu_regroup *m = r->cand[i].key ? r->alt : r->gpu;
    if (r->cand[i].algo == TMAP_REGROUPER_BIN_DEAL)
        return tmap_gpu_regroup_run_deal(m, r->opts.features, r->block_size, out, stream, err);
    size_t scope = r->cand[i].algo == TMAP_REGROUPER_SORT_BLOCK ? r->block_size : 0;
    return tmap_gpu_regroup_run(m, r->opts.features, 1, scope, out, stream, err);
}

static int sorting(tmap_regrouper_cand c)
{
    return c == TMAP_REGROUPER_SORT_GRID || c == TMAP_REGROUPER_SORT_BLOCK ||
           c == TMAP_REGROUPER_BIN_DEAL;
}

/* The permutation for trial index i on the current input, into out. */
static tmap_status permute(tmap_regrouper *r, int i, uint64_t out, void *stream, tmap_error *err)
{
    uint64_t key = r->key;
    if (r->opts.model && sorting(r->cand[i].algo))
        return by_graph(r, i, out, stream, err);
    if (r->opts.model) {
        tmap_gpu_regroup *m = r->cand[i].key ? r->alt : r->gpu;
        tmap_status st = tmap_gpu_regroup_cost(m, r->opts.features, stream, err);
        if (st)
            return st;
        key = tmap_gpu_regroup_cost_ptr(m);
    } else if (r->opts.key(r->opts.key_user, key, stream)) {
        return tmap_fail(err, TMAP_ERR_CUDA, "tmap_regrouper: the key function failed");
    }
    switch (r->cand[i].algo) {
    case TMAP_REGROUPER_SORT_GRID:
        return tmap_gpu_regroup_sort(r->gpu, key, 1, 0, out, stream, err);
    case TMAP_REGROUPER_SORT_BLOCK:
        return tmap_gpu_regroup_sort(r->gpu, key, 1, r->block_size, out, stream, err);
    case TMAP_REGROUPER_BIN_DEAL: {
        tmap_status st = tmap_gpu_regroup_sort(r->gpu, key, 1, 0, r->sorted, stream, err);
        return st ? st : tmap_gpu_regroup_deal(r->gpu, r->sorted, r->block_size, out, stream,
                                               err);
    }
    case TMAP_REGROUPER_LAM:
        return tmap_gpu_classes_lam(r->classes, key, TMAP_REGROUPER_CLASSES, out, stream, err);
    case TMAP_REGROUPER_GREEDY:
    case TMAP_REGROUPER_GREEDY_MAX: return by_table(r, i, key, out, stream, err);
    default: return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper: bad candidate");
    }
}

/* Overlap: the permutation prepared beside the last launch for this
 * signature, if done (*took); if not done, the launch goes ahead with the
 * permutation it has, or alone without one, and is counted late. */
static tmap_status take_prepared(tmap_regrouper *r, uint64_t signature, void *stream, int *took,
                                 tmap_error *err)
{
    int done = 0;
    *took = 0;
    if (!r->pending_sig || signature != r->pending_sig ||
        (r->perm_for == r->now && signature == r->signature))
        return TMAP_OK;
    tmap_status st = tmap_gpu_regroup_done(r->gpu, &done, err);
    if (st)
        return st;
    *took = 1;
    if (!done) {
        r->late++;
        r->alone = r->perm_for != r->now;
        r->signature = 0, r->gathered = 0; /* perm is not this input's: no cache hit on it */
        return TMAP_OK;
    }
    r->used++, r->pending_sig = 0;
    st = tmap_gpu_regroup_join(r->gpu, stream, err);
    if (!st)
        st = tmap_gpu_regroup_copy(r->gpu, r->perm, r->next, r->nthreads * sizeof(uint32_t),
                                   stream, err);
    if (!st)
        r->perm_for = r->now, r->signature = signature, r->gathered = 0;
    return st;
}

/* Overlap: the input tmap_regrouper_prepare announced, keyed and sorted
 * into r->next on the side stream after what `stream` holds so far (this
 * launch's own use of the scratch), so beside the kernel that follows. */
static tmap_status fork_next(tmap_regrouper *r, void *stream, tmap_error *err)
{
    uint64_t sig = r->want_sig;
    r->want_sig = 0;
    if (!sig)
        return TMAP_OK;
    tmap_status st = tmap_gpu_regroup_fork(r->gpu, stream, err);
    if (!st)
        st = permute(r, r->now, r->next, tmap_gpu_regroup_side(r->gpu), err);
    if (!st)
        st = tmap_gpu_regroup_mark(r->gpu, err);
    if (!st)
        r->pending_sig = sig, r->side_used = 1;
    return st;
}

/* A regrouped launch's preparation: key and sort unless cached or
 * prepared; by layout transform, the gather unless the copies are already
 * in this order. */
static tmap_status prepare_launch(tmap_regrouper *r, uint64_t signature, void *stream,
                                  tmap_error *err)
{
    int took = 0;
    tmap_status st = r->opts.overlap ? take_prepared(r, signature, stream, &took, err) : TMAP_OK;
    if (!st && !took && (r->perm_for != r->now || !signature || signature != r->signature)) {
        r->perm_for = -1, r->gathered = 0;
        if (r->side_used) /* the scratch: after the side stream's work */
            st = tmap_gpu_regroup_join(r->gpu, stream, err);
        if (!st)
            st = permute(r, r->now, r->perm, stream, err);
        if (st)
            return st;
        r->perm_for = r->now, r->signature = signature;
    }
    if (!st && r->opts.overlap)
        st = fork_next(r, stream, err);
    if (st || r->alone)
        return st;
    if (r->cand[r->now].redirect) {
        r->gathered = 0; /* the kernel updates the caller's arrays */
        memcpy(r->vals, r->orig, r->narrays * sizeof *r->vals);
        return TMAP_OK;
    }
    if (!r->gathered)
        st = tmap_layout_gather(r->layout, r->perm, stream, err);
    r->gathered = !st;
    for (size_t i = 0; i < r->narrays; i++)
        r->vals[i] = tmap_layout_copy_ptr(r->layout, i);
    return st;
}

/* This launch runs a regrouping (not the original, not left alone). */
static int regrouped(const tmap_regrouper *r)
{
    return r->cand[r->now].algo != TMAP_REGROUPER_ORIGINAL && !r->alone;
}

static int free_timer(const tmap_regrouper *r)
{
    for (int i = 0; i < MAX_TIMERS; i++)
        if (r->timer[i] && r->timer_cand[i] < 0)
            return i;
    return -1;
}

static tmap_status begin(tmap_regrouper *r, uint64_t signature, void *stream, tmap_error *err)
{
    tmap_status st = tmap_regrouper_poll(r, 0, stream, err);
    int timed = 0;
    if (st)
        return st;
    r->now = tmap_trial_next(&r->trial, &timed);
    r->now_timer = timed ? free_timer(r) : -1;
    r->alone = 0;
    if (r->now_timer >= 0) {
        r->timer_cand[r->now_timer] = r->now;
        st = tmap_timer_start(r->timer[r->now_timer], stream, err);
    }
    if (!st && r->cand[r->now].algo != TMAP_REGROUPER_ORIGINAL)
        st = prepare_launch(r, signature, stream, err);
    if (st || regrouped(r))
        return st;
    r->gathered = 0; /* the kernel updates the caller's arrays: the copies go stale */
    memcpy(r->vals, r->orig, r->narrays * sizeof *r->vals);
    return st;
}

tmap_status tmap_regrouper_begin(tmap_regrouper *r, uint64_t signature, void *stream,
                                 tmap_error *err)
{
    if (!r)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_begin: NULL regrouper");
    if (r->opts.redirected)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_begin: with a redirected "
                         "kernel, launch through tmap_regrouper_launch");
    return begin(r, signature, stream, err);
}

uint64_t tmap_regrouper_ptr(const tmap_regrouper *r, size_t i)
{
    return r && i < r->narrays ? r->vals[i] : 0;
}

tmap_status tmap_regrouper_end(tmap_regrouper *r, void *stream, tmap_error *err)
{
    if (!r)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_end: NULL regrouper");
    tmap_status st = TMAP_OK;
    if (regrouped(r) && !r->cand[r->now].redirect)
        st = tmap_layout_scatter(r->layout, r->perm, stream, err);
    if (!st && r->now_timer >= 0)
        st = tmap_timer_stop(r->timer[r->now_timer], stream, err);
    r->now_timer = -1;
    return st;
}

tmap_status tmap_regrouper_launch(tmap_regrouper *r, tmap_kernel *k, uint64_t signature,
                                  void *stream, tmap_error *err)
{
    if (!r || !k)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_launch: %s is NULL",
                         r ? "the kernel" : "the regrouper");
    tmap_status st = begin(r, signature, stream, err);
    if (!st)
        st = tmap_kernel_enqueue(regrouped(r) && r->cand[r->now].redirect ? r->opts.redirected
                                                                          : k,
                                 &r->launch, stream, err);
    return st ? st : tmap_regrouper_end(r, stream, err);
}

int tmap_regrouper_chosen(const tmap_regrouper *r)
{
    return r && r->trial.chosen >= 0 ? (int)r->cand[r->trial.chosen].algo : -1;
}

const char *tmap_regrouper_chosen_name(const tmap_regrouper *r)
{
    return r && r->trial.chosen >= 0 ? r->cand[r->trial.chosen].name : "";
}

const char *tmap_regrouper_why(const tmap_regrouper *r) { return r ? r->why : ""; }

void tmap_regrouper_medians(const tmap_regrouper *r, double *original_ms, double *chosen_ms)
{
    int decided = r && r->trial.chosen >= 0;
    if (original_ms)
        *original_ms = decided ? r->trial.median_ms[0] : NAN;
    if (chosen_ms)
        *chosen_ms = decided ? r->trial.median_ms[r->trial.chosen] : NAN;
}

tmap_status tmap_regrouper_prepare(tmap_regrouper *r, uint64_t signature, void *stream,
                                   tmap_error *err)
{
    if (!r)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_prepare: NULL regrouper");
    if (!r->opts.overlap)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_regrouper_prepare: the regrouper was "
                         "made without overlap (tmap_regrouper_opts.overlap)");
    if (!signature || r->trial.chosen <= 0) /* on trial, or launches left alone */
        return TMAP_OK;
    tmap_status st = tmap_gpu_regroup_fork(r->gpu, stream, err);
    if (!st)
        r->want_sig = signature;
    return st;
}

void tmap_regrouper_overlap_counts(const tmap_regrouper *r, size_t *used, size_t *late)
{
    if (used)
        *used = r ? r->used : 0;
    if (late)
        *late = r ? r->late : 0;
}

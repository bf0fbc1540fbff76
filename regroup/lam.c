/*
 * lam.c -- LAM, label-assign-move (zhang2010 sec. 4.2): a linear-time
 * regrouping that moves only the threads that must move.  The key's range
 * is cut into R equal-width value classes; each warp segment (groupsize
 * consecutive slots) gets a label, a class, while that class's quota
 * (its full segments' worth of threads) lasts; a labelled segment's
 * threads of other classes leave, and threads of the label's class take
 * their slots.  Readings of the paper's pseudo-code (docs/regroup.md):
 *   - pure segments (every thread in one class) are labelled first, so
 *     their threads never move; then the others in slot order, each with
 *     its most covered class (ties: the lowest), MIXED when its quota is
 *     spent (no second choice, as in the paper);
 *   - a partial last segment is never labelled;
 *   - "no destination" is its own value, not location 0 (perm starts as
 *     the identity and only moved slots are written).
 */
#include "threadmap/regroup.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "regroup/part.h"

#define MIXED UINT32_MAX

uint32_t tmap_regroup_value_class(double x, double lo, double hi, size_t nclasses)
{
    double w = hi * 0.5 - lo * 0.5;
    if (!(w > 0) || nclasses < 2)
        return 0;
    double d = x * 0.5 - lo * 0.5, q = d / w, r = q * (double)nclasses;
    if (!(r > 0))
        return 0;
    return r >= (double)nclasses ? (uint32_t)nclasses - 1 : (uint32_t)r;
}

/* One problem's working state. */
typedef struct lam {
    size_t n, gs, nseg, R;   /* threads, group size, full segments, classes */
    uint8_t *cls;            /* [n] class of each thread */
    uint32_t *label;         /* [nseg + 1] class, or MIXED (the partial one) */
    uint32_t *left;          /* [R] quota: full segments still to label */
    uint32_t *hole_at;       /* [R + 1] class l's holes: hole[hole_at[l] ..] */
    uint32_t *hole;          /* slots of labelled segments whose thread leaves */
    uint32_t *cur;           /* [R] holes of each class filled so far */
} lam;

static void lam_free(lam *s)
{
    free(s->cls), free(s->label), free(s->left), free(s->hole_at), free(s->hole), free(s->cur);
}

/* Classes of the keys; left[l] = floor(n_l / groupsize). */
static void label_classes(lam *s, const double *key)
{
    double lo = key[0], hi = key[0];
    for (size_t t = 1; t < s->n; t++)
        lo = key[t] < lo ? key[t] : lo, hi = key[t] > hi ? key[t] : hi;
    for (size_t t = 0; t < s->n; t++) {
        s->cls[t] = (uint8_t)tmap_regroup_value_class(key[t], lo, hi, s->R);
        s->left[s->cls[t]]++;
    }
    for (size_t l = 0; l < s->R; l++)
        s->left[l] /= (uint32_t)s->gs;
}

/* Segment g's most covered class (ties: the lowest); *pure when it is all. */
static uint32_t segment_class(const lam *s, size_t g, uint32_t *count, int *pure)
{
    const uint8_t *c = s->cls + g * s->gs;
    memset(count, 0, s->R * sizeof *count);
    for (size_t i = 0; i < s->gs; i++)
        count[c[i]]++;
    uint32_t best = 0;
    for (uint32_t l = 1; l < s->R; l++)
        best = count[l] > count[best] ? l : best;
    *pure = count[best] == s->gs;
    return best;
}

/* LABEL: pure segments first (they fit their quota: n_l >= pure * gs),
 * then the others in slot order while their class's quota lasts. */
static int label_segments(lam *s)
{
    uint32_t *count = malloc(s->R * sizeof *count);
    if (!count)
        return -1;
    for (int pass = 0; pass < 2; pass++)
        for (size_t g = 0; g < s->nseg; g++) {
            int pure;
            uint32_t l = segment_class(s, g, count, &pure);
            if (pure != !pass)
                continue;
            assert(!pure || s->left[l] > 0);
            s->label[g] = s->left[l] ? l : MIXED;
            s->left[l] -= s->left[l] > 0;
        }
    free(count);
    s->label[s->nseg] = MIXED;
    return 0;
}

/* The holes of each class l, ascending: slots of l-labelled segments
 * whose thread is not of class l. */
static void find_holes(lam *s)
{
    for (size_t t = 0; t < s->nseg * s->gs; t++) {
        uint32_t l = s->label[t / s->gs];
        if (l != MIXED && s->cls[t] != l)
            s->hole_at[l + 1]++;
    }
    for (size_t l = 0; l < s->R; l++)
        s->hole_at[l + 1] += s->hole_at[l];
    for (size_t t = 0; t < s->nseg * s->gs; t++) {
        uint32_t l = s->label[t / s->gs];
        if (l != MIXED && s->cls[t] != l)
            s->hole[s->hole_at[l] + s->cur[l]++] = (uint32_t)t;
    }
    memset(s->cur, 0, s->R * sizeof *s->cur);
}

/* Slot of the next hole of class m, or MIXED when all are filled. */
static uint32_t next_hole(lam *s, uint32_t m)
{
    uint32_t i = s->hole_at[m] + s->cur[m];
    if (i == s->hole_at[m + 1])
        return MIXED;
    s->cur[m]++;
    return s->hole[i];
}

/* ASSIGN and MOVE into out (slot -> thread, the identity where nothing
 * moves): every leaving thread, by label class then slot, fills a hole of
 * its class, or waits in tomix (the holes then left are as many as the
 * waiting threads); threads of unlabelled segments fill the remaining
 * holes in slot order, each leaving its slot to the next waiting thread. */
static void assign(lam *s, uint32_t *out, uint32_t *tomix)
{
    size_t nmix = 0, k = 0, nholes = s->hole_at[s->R];
    for (size_t t = 0; t < s->n; t++)
        out[t] = (uint32_t)t;
    for (size_t h = 0; h < nholes; h++) {
        uint32_t t = s->hole[h], d = next_hole(s, s->cls[t]);
        if (d == MIXED)
            tomix[nmix++] = t;
        else
            out[d] = t;
    }
    for (size_t t = 0; t < s->n && k < nmix; t++) {
        if (s->label[t / s->gs] != MIXED)
            continue;
        uint32_t d = next_hole(s, s->cls[t]);
        if (d != MIXED)
            out[d] = (uint32_t)t, out[t] = tomix[k++];
    }
    assert(k == nmix);
    for (size_t l = 0; l < s->R; l++)
        assert(s->hole_at[l] + s->cur[l] == s->hole_at[l + 1]);
}

static tmap_status lam_part(const tmap_regroup_part *p, uint32_t *out, tmap_error *err)
{
    lam s = {.n = p->n, .gs = p->groupsize, .nseg = p->n / p->groupsize, .R = p->nclasses};
    s.cls = malloc(s.n);
    s.label = malloc((s.nseg + 1) * sizeof *s.label);
    s.left = calloc(s.R, sizeof *s.left);
    s.hole_at = calloc(s.R + 1, sizeof *s.hole_at);
    s.hole = malloc(s.n * sizeof *s.hole);
    s.cur = calloc(s.R, sizeof *s.cur);
    uint32_t *tomix = malloc(s.n * sizeof *tomix);
    int bad = !s.cls || !s.label || !s.left || !s.hole_at || !s.hole || !s.cur || !tomix;
    if (!bad) {
        label_classes(&s, p->key);
        bad = label_segments(&s);
    }
    if (!bad) {
        find_holes(&s);
        assign(&s, out, tomix);
    }
    free(tomix);
    lam_free(&s);
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "lam: %zu threads", p->n) : TMAP_OK;
}

tmap_status tmap_regroup_lam(const double *key, size_t nthreads, size_t nclasses,
                             const tmap_regroup_opts *opts, uint32_t *perm, tmap_error *err)
{
    if (!nclasses || nclasses > TMAP_REGROUP_LAM_MAX_CLASSES)
        return tmap_fail(err, TMAP_ERR_INVALID, "lam: %zu value classes (1 to %d)", nclasses,
                         TMAP_REGROUP_LAM_MAX_CLASSES);
    tmap_regroup_input in = {.key = key, .nthreads = nthreads, .nclasses = nclasses,
                             .need_key = 1, .name = "lam"};
    return tmap_regroup_run(lam_part, &in, opts, perm, err);
}

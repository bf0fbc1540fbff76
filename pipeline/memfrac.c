/*
 * memfrac.c -- zhang2011's adaptive optimization ratio (sec. 5.4, Fig. 8)
 * for partial duplication (threadmap/pipeline.h, docs/memory.md): online
 * profiling at r0, the paper's estimate of r (r0 T_org / (T_tr + T_sav),
 * serial too), then r adjusted from measured
 * launches: lowered a step on each failure, raised a step after two
 * successes while it has never been lowered, fixed after two successes
 * once it has been.  Serial: a launch fails when it is slower than the
 * best launch at a lower fraction (the original included).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/base.h"
#include "threadmap/pipeline.h"

enum phase { ORIGINAL, PROFILE, ADJUST, DONE };
enum { SEEN = 64 }; /* fractions remembered (beyond: the launch is not remembered) */

struct tmap_memfrac {
    double r0, step, r;
    int overlap, lowered, successes;
    enum phase phase;
    double t_org;                     /* the original kernel */
    double seen_r[SEEN], seen_ms[SEEN]; /* serial: each fraction tried, its least launch */
    int nseen;
    char why[256];
};

tmap_status tmap_memfrac_create(double r0, double step, int overlap, tmap_memfrac **out,
                                tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, out);
    if (st)
        return st;
    *out = NULL;
    r0 = r0 ? r0 : 0.1, step = step ? step : 0.1;
    if (!(r0 > 0 && r0 <= 1 && step > 0 && step <= 1))
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_memfrac_create: r0 %g and step %g: in "
                         "(0, 1]", r0, step);
    tmap_memfrac *f = calloc(1, sizeof *f);
    if (!f)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    *f = (tmap_memfrac){.r0 = r0, .step = step, .overlap = overlap, .phase = ORIGINAL};
    snprintf(f->why, sizeof f->why, "profiling: the original, then r0 = %g", r0);
    *out = f;
    return TMAP_OK;
}

void tmap_memfrac_free(tmap_memfrac *f) { free(f); }

double tmap_memfrac_next(const tmap_memfrac *f)
{
    return !f || f->phase == ORIGINAL ? 0 : f->phase == PROFILE ? f->r0 : f->r;
}

int tmap_memfrac_done(const tmap_memfrac *f) { return f && f->phase == DONE; }

const char *tmap_memfrac_why(const tmap_memfrac *f) { return f ? f->why : ""; }

static void finish(tmap_memfrac *f, double r, const char *fmt, double a, double b)
{
    f->r = r, f->phase = DONE;
    int len = snprintf(f->why, sizeof f->why, "r = %g: ", r);
    snprintf(f->why + len, sizeof f->why - (size_t)len, fmt, a, b);
}

/* Serial: the launch at fraction r remembered (the least per fraction). */
static void remember(tmap_memfrac *f, double r, double launch)
{
    int i = 0;
    while (i < f->nseen && fabs(f->seen_r[i] - r) > 1e-9)
        i++;
    if (i == SEEN)
        return;
    if (i == f->nseen)
        f->seen_r[f->nseen] = r, f->seen_ms[f->nseen++] = launch;
    else if (launch < f->seen_ms[i])
        f->seen_ms[i] = launch;
}

/* Serial: the least launch at the fractions below r (the original: 0). */
static double best_below(const tmap_memfrac *f, double r)
{
    double best = 1e300;
    for (int i = 0; i < f->nseen; i++)
        if (f->seen_r[i] < r - 1e-9 && f->seen_ms[i] < best)
            best = f->seen_ms[i];
    return best;
}

static void move(tmap_memfrac *f, double r)
{
    f->successes = 0;
    f->r = r > 1 ? 1 : r;
}

/* The profile at r0 (sec. 5.4's first two iterations) and the estimate. */
static void profile(tmap_memfrac *f, double kernel_ms, double transform_ms)
{
    double t_sav = f->t_org - kernel_ms, t_tr = transform_ms;
    if (t_tr > f->t_org)
        return finish(f, 0, "the transform at r0 (%.4g ms) outlasts the kernel (%.4g ms)", t_tr,
                      f->t_org);
    if (!f->overlap && t_sav <= t_tr)
        return finish(f, 0, "at r0 the kernel saves %.4g ms, the transform costs %.4g ms", t_sav,
                      t_tr);
    /* the paper's estimate in both settings: with the transform and the saving
     * proportional to r, T'_tr = T_org - T'_sav at r' = r0 T_org / (T_tr + T_sav);
     * the dynamic adjustment (Fig. 8) corrects it.  (Serial, a climb from r0 + step,
     * taken before on the belief that the saving is concave in r, stopped at MD 1M's
     * first local minimum, r = 0.1: its saving grows slowly up to 0.2, then fast.) */
    double est = f->r0 * f->t_org / (t_tr + (t_sav > 0 ? t_sav : 0));
    est = est < f->step ? f->step : est;
    remember(f, 0, f->t_org);
    remember(f, f->r0, kernel_ms + t_tr);
    f->phase = ADJUST;
    move(f, est);
    snprintf(f->why, sizeof f->why, "adjusting from r' = %.3g (T_org %.4g, T_tr %.4g, T_sav "
             "%.4g ms at r0)", f->r, f->t_org, t_tr, t_sav);
}

void tmap_memfrac_record(tmap_memfrac *f, float kernel_ms, float transform_ms)
{
    if (!f || f->phase == DONE)
        return;
    if (f->phase == ORIGINAL) {
        f->t_org = kernel_ms, f->phase = PROFILE;
        return;
    }
    if (f->phase == PROFILE)
        return profile(f, kernel_ms, transform_ms);
    double launch = (double)kernel_ms + transform_ms, below = best_below(f, f->r);
    int fail = f->overlap ? transform_ms > kernel_ms : launch > below;
    if (fail) {
        f->lowered = 1;
        if (f->r - f->step <= 1e-9)
            return finish(f, 0, "every fraction failed (the last launch %.4g ms, the best "
                          "below %.4g ms)", launch, f->overlap ? kernel_ms : below);
        return move(f, f->r - f->step);
    }
    if (!f->overlap)
        remember(f, f->r, launch);
    if (++f->successes < 2)
        return;
    if (f->lowered || f->r >= 1 - 1e-9)
        return finish(f, f->r, "two successes (the launch %.4g ms, the best below %.4g ms)",
                      launch, below);
    move(f, f->r + f->step);
}

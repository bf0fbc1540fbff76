/*
 * timer.c -- the time of a stretch of a stream, between two CUDA events,
 * read later without waiting: a measurement that costs the stream nothing
 * but two event records.
 */
#include <stdlib.h>

#include "common/base.h"
#include "runtime/cuda.h"

struct tmap_timer {
    tmap_cuda *cuda;
    CUevent e[2];   /* start, stop */
    int state;      /* 0 idle, 1 started, 2 stopped (pending a read) */
};

tmap_status tmap_timer_create(tmap_cuda *c, tmap_timer **out, tmap_error *err)
{
    if (out)
        *out = NULL;
    if (!c || !out)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_timer_create: an argument is NULL");
    tmap_timer *t = calloc(1, sizeof *t);
    if (!t)
        return tmap_fail(err, TMAP_ERR_NOMEM, "tmap_timer_create: out of memory");
    t->cuda = c;
    tmap_status st = tmap_cuda_check(c, c->api.ctx_set_current(c->ctx), "cuCtxSetCurrent", err);
    for (int i = 0; i < 2 && !st; i++)
        st = tmap_cuda_check(c, c->api.event_create(&t->e[i], CU_EVENT_DEFAULT), "cuEventCreate",
                             err);
    if (st) {
        tmap_timer_free(t);
        return st;
    }
    *out = t;
    return TMAP_OK;
}

void tmap_timer_free(tmap_timer *t)
{
    if (!t)
        return;
    for (int i = 0; i < 2; i++)
        if (t->e[i])
            t->cuda->api.event_destroy(t->e[i]);
    free(t);
}

static tmap_status mark(tmap_timer *t, int i, void *stream, tmap_error *err)
{
    if (!t)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_timer: NULL timer");
    if (t->state != i)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_timer: %s", i ? "stop without a start"
                                                                    : "started twice");
    tmap_status st = tmap_cuda_check(t->cuda, t->cuda->api.event_record(t->e[i], (CUstream)stream),
                                     "cuEventRecord", err);
    if (!st)
        t->state = i + 1;
    return st;
}

tmap_status tmap_timer_start(tmap_timer *t, void *stream, tmap_error *err)
{
    return mark(t, 0, stream, err);
}

tmap_status tmap_timer_stop(tmap_timer *t, void *stream, tmap_error *err)
{
    return mark(t, 1, stream, err);
}

tmap_status tmap_timer_poll(tmap_timer *t, int *ready, float *ms, tmap_error *err)
{
    if (!t || !ready || !ms)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_timer_poll: an argument is NULL");
    *ready = 0;
    if (t->state != 2)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_timer_poll: the timer was not stopped");
    CUresult r = t->cuda->api.event_query(t->e[1]);
    if (r == CUDA_ERROR_NOT_READY)
        return TMAP_OK;
    tmap_status st = tmap_cuda_check(t->cuda, r, "cuEventQuery", err);
    if (!st)
        st = tmap_cuda_check(t->cuda, t->cuda->api.event_elapsed_time(ms, t->e[0], t->e[1]),
                             "cuEventElapsedTime", err);
    t->state = 0;
    *ready = !st;
    return st;
}

tmap_status tmap_timer_wait(tmap_timer *t, float *ms, tmap_error *err)
{
    if (!t || !ms)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_timer_wait: an argument is NULL");
    if (t->state != 2)
        return tmap_fail(err, TMAP_ERR_INVALID, "tmap_timer_wait: the timer was not stopped");
    tmap_status st = tmap_cuda_check(t->cuda, t->cuda->api.event_synchronize(t->e[1]),
                                     "cuEventSynchronize", err);
    int ready = 0;
    if (!st)
        st = tmap_timer_poll(t, &ready, ms, err);
    return st ? st : ready ? TMAP_OK : tmap_fail(err, TMAP_ERR_CUDA, "tmap_timer_wait: the stop "
                                                 "event is not done after cuEventSynchronize");
}

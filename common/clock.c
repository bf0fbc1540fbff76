/*
 * clock.c -- the monotonic clock that times CPU-side work (the algorithms,
 * prediction, whole pipeline steps).
 */
#include "common/base.h"

#include <time.h>

double tmap_clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

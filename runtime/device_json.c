/*
 * device_json.c -- the GPU's description as every output of threadmap gives
 * it: name, architecture, SMs, clocks and driver, as one JSON object.
 */
#include "threadmap/runtime.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

char *tmap_device_json(const tmap_device_info *d)
{
    if (!d)
        return NULL;
    char cc[16], drv[16];
    snprintf(cc, sizeof cc, "sm_%d%d", d->cc_major, d->cc_minor);
    snprintf(drv, sizeof drv, "%d.%d", d->driver_version / 1000, (d->driver_version % 1000) / 10);
    json_t *o = json_pack("{s:s, s:s, s:i, s:i, s:i, s:s}", "name", d->name, "arch", cc, "sms",
                          d->sms, "sm_clock_mhz", d->clock_khz / 1000, "mem_clock_mhz",
                          d->mem_clock_khz / 1000, "driver", drv);
    char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return s;
}

/*
 * func_clone.h -- giving a kernel its own copy of every .func it shares
 * with another kernel (private to instrument/), so that a pass that
 * rewrites the functions a kernel reaches (the counters, the redirection)
 * changes no other kernel.
 */
#ifndef TMAP_INSTRUMENT_FUNC_CLONE_H
#define TMAP_INSTRUMENT_FUNC_CLONE_H

#include "instrument/ptx.h"

/* Clones each .func that `kernel` and another kernel of m both reach (the
 * clone is named NAME_tmap_KERNEL, its labels get the same suffix) and
 * points the direct calls of the functions `kernel` reaches at the clones.
 * Fails, saying what to do, when a shared .func is still reached after
 * that (through a function pointer). */
tmap_status tmap_func_clone_shared(tmap_ptx_module *m, const char *kernel, tmap_error *err);

#endif

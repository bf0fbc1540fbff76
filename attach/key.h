/*
 * key.h (attach) -- what key.c's CUDA back end of the expression parser
 * (runtime/expr.h) shares with the feature specs of options.c.  Private
 * to attach/.
 */
#ifndef TMAP_ATTACH_KEY_H
#define TMAP_ATTACH_KEY_H

#include "threadmap/attach.h"
#include "runtime/expr.h"

/* REF node r of x as a launch's array: argK (K <= 4096), of TYPE when
 * ":TYPE" is given (i32 when not), indexed.  Fills f's arg, type,
 * elem_size and offset (not its name); errors name r's column. */
tmap_status tmap_attach_key_arg(const tmap_expr *x, const tmap_expr_node *r,
                                tmap_attach_feature *f, tmap_error *err);

#endif

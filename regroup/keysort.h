/*
 * keysort.h -- stable sort of (u64 key, u32 id) pairs by key, for the
 * sorting algorithms: sort_key.c (a thread's key) and sort_bbv.c (a row's
 * leading words).
 */
#ifndef TMAP_REGROUP_KEYSORT_H
#define TMAP_REGROUP_KEYSORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts key[0..n) ascending, id[] along; equal keys keep their order.
 * 0, or -1 (no memory: key and id unchanged). */
int tmap_regroup_keysort(uint64_t *key, uint32_t *id, size_t n);

#endif

/*
 * classes.h -- the distinct BBV rows ("classes") of a problem, with their
 * members in thread order.  Identical threads are interchangeable for every
 * algorithm except for tie-breaking by thread index, so the fast algorithms
 * work on classes and take a class's members in ascending thread order.
 */
#ifndef TMAP_REGROUP_CLASSES_H
#define TMAP_REGROUP_CLASSES_H

#include "regroup/part.h"

typedef struct tmap_regroup_classes {
    size_t n;          /* threads */
    size_t count;      /* classes, numbered in order of first member */
    uint32_t *of;      /* [n] class of each thread */
    uint32_t *first;   /* [count] lowest thread of each class, ascending */
    uint32_t *size;    /* [count] members of each class */
    uint32_t *start;   /* [count + 1], NULL after classes_find */
    uint32_t *member;  /* [n]: class c is member[start[c] .. start[c+1]),
                          ascending; NULL after classes_find */
} tmap_regroup_classes;

/* n, count, of[], first[] and size[]: one pass over the rows. */
tmap_status tmap_regroup_classes_find(const tmap_regroup_part *p,
                                      tmap_regroup_classes *c,
                                      tmap_error *err);
/* All of it: find, then the members by a counting sort. */
tmap_status tmap_regroup_classes_build(const tmap_regroup_part *p,
                                       tmap_regroup_classes *c,
                                       tmap_error *err);
void tmap_regroup_classes_free(tmap_regroup_classes *c);

/* The row of class k. */
static inline const uint32_t *tmap_regroup_class_row(
    const tmap_regroup_part *p, const tmap_regroup_classes *c, size_t k)
{
    return p->rows + (size_t)c->first[k] * p->nblocks;
}

#endif

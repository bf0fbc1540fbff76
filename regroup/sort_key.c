/*
 * sort_key.c -- regrouping by a user key per thread (row length, sequence
 * length, material id...), the baseline of CUB binning, JDS SpMV and
 * CUDASW++.  Stable LSD radix sort, four 16-bit digits of the key's bits
 * mapped so that unsigned order is the requested double order: O(N).
 */
#include "threadmap/regroup.h"

#include <stdlib.h>
#include <string.h>

#include "instrument/base.h"
#include "regroup/part.h"

/* Unsigned image of x, increasing with x; -0.0 and +0.0 map alike. */
static uint64_t order_bits(double x, int descending)
{
    uint64_t u;
    if (x == 0)
        x = 0.0;
    memcpy(&u, &x, sizeof u);
    u = (u >> 63) ? ~u : u ^ (1ULL << 63);
    return descending ? ~u : u;
}

#define DIGITS 65536

/* One stable counting pass on digit d: (ks, is) -> (kd, id). */
static void pass(const uint64_t *ks, const uint32_t *is, uint64_t *kd,
                 uint32_t *id, size_t n, unsigned shift, size_t *count)
{
    memset(count, 0, DIGITS * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[(ks[i] >> shift) & 0xffff]++;
    size_t sum = 0;
    for (size_t d = 0; d < DIGITS; d++) {
        size_t c = count[d];
        count[d] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = count[(ks[i] >> shift) & 0xffff]++;
        kd[j] = ks[i];
        id[j] = is[i];
    }
}

typedef struct keyed {
    uint64_t key;
    uint32_t i;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Below this size a comparison sort beats four passes over 64 Ki counters
 * (block scope runs one small problem per thread block). */
#define RADIX_MIN 65536

static tmap_status small_part(const tmap_regroup_part *p, uint32_t *out,
                              tmap_error *err)
{
    keyed *k = malloc(p->n * sizeof *k);
    if (!k)
        return tmap_fail(err, TMAP_ERR_NOMEM, "sort_key: %zu threads", p->n);
    for (size_t i = 0; i < p->n; i++)
        k[i] = (keyed){order_bits(p->key[i], p->descending), (uint32_t)i};
    qsort(k, p->n, sizeof *k, cmp_keyed); /* index breaks ties: stable */
    for (size_t i = 0; i < p->n; i++)
        out[i] = k[i].i;
    free(k);
    return TMAP_OK;
}

static tmap_status key_part(const tmap_regroup_part *p, uint32_t *out,
                            tmap_error *err)
{
    size_t n = p->n;
    if (n < RADIX_MIN)
        return small_part(p, out, err);
    uint64_t *k0 = malloc(n * sizeof *k0), *k1 = malloc(n * sizeof *k1);
    uint32_t *i1 = malloc(n * sizeof *i1);
    size_t *count = malloc(DIGITS * sizeof *count);
    tmap_status st = TMAP_OK;
    if (!k0 || !k1 || !i1 || !count) {
        st = tmap_fail(err, TMAP_ERR_NOMEM, "sort_key: %zu threads", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        k0[i] = order_bits(p->key[i], p->descending);
        out[i] = (uint32_t)i;
    }
    /* four passes: the result ends in (k0, out) */
    pass(k0, out, k1, i1, n, 0, count);
    pass(k1, i1, k0, out, n, 16, count);
    pass(k0, out, k1, i1, n, 32, count);
    pass(k1, i1, k0, out, n, 48, count);
done:
    free(k0);
    free(k1);
    free(i1);
    free(count);
    return st;
}

tmap_status tmap_regroup_sort_key(const double *key, size_t nthreads,
                                  int descending,
                                  const tmap_regroup_opts *opts,
                                  uint32_t *perm, tmap_error *err)
{
    tmap_regroup_input in = {.key = key, .nthreads = nthreads,
                             .descending = descending, .need_key = 1,
                             .name = "sort_key"};
    return tmap_regroup_run(key_part, &in, opts, perm, err);
}

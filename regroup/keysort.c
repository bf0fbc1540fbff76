/*
 * keysort.c -- stable sort of (u64 key, u32 id) pairs: LSD radix sort on
 * four 16-bit digits, O(n), or below RADIX_MIN pairs a comparison sort with
 * the position as the last key.
 */
#include "regroup/keysort.h"

#include <stdlib.h>
#include <string.h>

#define DIGITS 65536
/* Below this size a comparison sort beats four passes over 64 Ki counters
 * (block scope runs one small problem per thread block). */
#define RADIX_MIN 65536

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
    uint32_t id;
    uint32_t at;  /* position before sorting (< RADIX_MIN): breaks ties */
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int small_sort(uint64_t *key, uint32_t *id, size_t n)
{
    keyed *k = malloc(n * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < n; i++)
        k[i] = (keyed){key[i], id[i], (uint32_t)i};
    qsort(k, n, sizeof *k, cmp_keyed);
    for (size_t i = 0; i < n; i++) {
        key[i] = k[i].key;
        id[i] = k[i].id;
    }
    free(k);
    return 0;
}

int tmap_regroup_keysort(uint64_t *key, uint32_t *id, size_t n)
{
    if (n < RADIX_MIN)
        return small_sort(key, id, n);
    uint64_t *k1 = malloc(n * sizeof *k1);
    uint32_t *i1 = malloc(n * sizeof *i1);
    size_t *count = malloc(DIGITS * sizeof *count);
    int bad = !k1 || !i1 || !count;
    if (!bad) { /* four passes: the result ends in (key, id) */
        pass(key, id, k1, i1, n, 0, count);
        pass(k1, i1, key, id, n, 16, count);
        pass(key, id, k1, i1, n, 32, count);
        pass(k1, i1, key, id, n, 48, count);
    }
    free(k1);
    free(i1);
    free(count);
    return bad ? -1 : 0;
}

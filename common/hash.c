/*
 * hash.c -- FNV-1a 64 of a byte string: predictor files' checksum, the
 * keys of feature rows.
 */
#include "common/base.h"

uint64_t tmap_fnv1a(const void *data, size_t n)
{
    uint64_t h = 14695981039346656037ull; /* the offset basis */
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull; /* the FNV prime */
    return h;
}

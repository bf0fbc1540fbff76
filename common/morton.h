/*
 * morton.h (common) -- the Morton code of a point, one definition for the
 * CPU (regroup/mem_order.c) and the GPU (runtime/gpu_memorder.cu), so that
 * both give the same codes bit for bit.
 */
#ifndef TMAP_COMMON_MORTON_H
#define TMAP_COMMON_MORTON_H

#include <stdint.h>

#ifdef __CUDACC__
#define TMAP_HOST_DEVICE __host__ __device__
#else
#define TMAP_HOST_DEVICE
#endif

/* x's low 21 bits spread to every third bit. */
static inline TMAP_HOST_DEVICE uint64_t tmap_morton_spread(uint64_t x)
{
    x &= 0x1fffff;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}

/* p's code in the box lo..hi: each coordinate quantized to 21 bits in
 * double arithmetic (a subtraction, a division, a multiplication: nothing
 * a compiler may contract), interleaved x lowest. */
static inline TMAP_HOST_DEVICE uint64_t tmap_morton_code(const float *p, const double *lo,
                                                         const double *hi)
{
    uint64_t c = 0;
    for (int d = 0; d < 3; d++) {
        double span = hi[d] - lo[d];
        uint64_t q = span > 0 ? (uint64_t)((p[d] - lo[d]) / span * 2097151.0) : 0;
        c |= tmap_morton_spread(q) << d;
    }
    return c;
}

#endif

/*
 * gpu_warp.cuh -- the distinct keys of a warp's lanes, shared by the
 * sector count (gpu_sectors.cu) and the layouts that rank requests by it
 * (gpu_memre.cu).  Every lane of the warp must call it (full mask).
 */
#ifndef TMAP_RUNTIME_GPU_WARP_CUH
#define TMAP_RUNTIME_GPU_WARP_CUH

/* A key no lane's real sector or element can equal (they are < 2^44). */
__device__ static inline unsigned long long tmap_idle_key(unsigned lane)
{
    return (1ull << 63) | lane;
}

/* Distinct keys among the warp's active lanes; *first: this lane holds the
 * lowest lane of its key. */
__device__ static inline unsigned tmap_warp_distinct(unsigned long long key, bool active,
                                                     bool *first)
{
    unsigned lane = threadIdx.x % 32;
    unsigned same = __match_any_sync(0xffffffffu, active ? key : tmap_idle_key(lane));
    *first = active && (unsigned)(__ffs(same) - 1) == lane;
    return __popc(__ballot_sync(0xffffffffu, *first));
}

#endif

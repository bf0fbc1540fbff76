/*
 * gpu_none.h -- what runtime/gpu_*_none.c say where the library was built
 * without its GPU path (runtime/gpu_*.cu: CUB's sorts): TMAP_GPU_REGROUP=OFF,
 * TMAP_CUDA=OFF or no nvcc, or scripts/build.sh on a machine without a GPU.
 */
#ifndef TMAP_RUNTIME_GPU_NONE_H
#define TMAP_RUNTIME_GPU_NONE_H

#define TMAP_GPU_NONE_WHY                                                                      \
    "threadmap was built without its GPU path (runtime/gpu_*.cu; scripts/build.sh leaves it out "  \
    "where it finds no GPU): rebuild with nvcc and -DTMAP_GPU_REGROUP=ON, or "                 \
    "TMAP_CUDA_ARCHS set for scripts/build.sh"

#endif

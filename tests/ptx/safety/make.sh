#!/bin/sh
# Regenerates the PTX of tests/kernels/safety_*.cu, with nvcc's default options (-O3) and -G:
#   nvcc -ptx -arch=sm_90 [-G] -o tests/ptx/safety/NAME[_G].ptx tests/kernels/NAME.cu
# (generated from this project's own sources; test_safety asserts the same verdict for both).
set -e
cd "$(dirname "$0")/../../.."
for cu in tests/kernels/safety_*.cu; do
    name=$(basename "$cu" .cu)
    nvcc -ptx -arch=sm_90 -o "tests/ptx/safety/$name.ptx" "$cu"
    nvcc -ptx -arch=sm_90 -G -o "tests/ptx/safety/${name}_G.ptx" "$cu"
done

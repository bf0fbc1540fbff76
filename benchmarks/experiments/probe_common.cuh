// probe_common.cuh -- what the small probes share (stretch.cu, sw_warps.cu,
// store_drag.cu, walk_unit.cu; not built by CMake): the error check and the
// device banner every result carries.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

/* Prints "# device: NAME (sm_XY), N SMs, SM clock M MHz"; *sms and *clk_khz
 * get the SM count and the SM clock in kHz. */
static void probe_banner(int *sms, int *clk_khz)
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    CK(cudaDeviceGetAttribute(clk_khz, cudaDevAttrClockRate, 0));
    *sms = prop.multiProcessorCount;
    printf("# device: %s (sm_%d%d), %d SMs, SM clock %d MHz\n", prop.name, prop.major, prop.minor,
           *sms, *clk_khz / 1000);
}

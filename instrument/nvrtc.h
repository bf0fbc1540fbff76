/*
 * nvrtc.h -- private helpers of the NVRTC front end (tmap_compile is public).
 */
#ifndef TMAP_INSTRUMENT_NVRTC_H
#define TMAP_INSTRUMENT_NVRTC_H

/* Virtual architecture used when neither the caller nor a GPU gives one. */
#define TMAP_DEFAULT_ARCH "compute_90"

/* The highest PTX ISA version a driver of cuDriverGetVersion() = v loads. */
void tmap_ptx_version_for_driver(int driver_version, int *major, int *minor);


#endif

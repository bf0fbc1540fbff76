/*
 * ptx_input.h -- reading a PTX file given on the command line into a module.
 */
#ifndef TMAP_CLI_PTX_INPUT_H
#define TMAP_CLI_PTX_INPUT_H

#include "threadmap.h"

/* Reads and parses path; a .cu file is refused (TMAP_ERR_UNSUPPORTED) until
 * the NVRTC front end is in this build. */
tmap_status tmap_cli_load_ptx(const char *path, tmap_ptx_module **m, tmap_error *err);

#endif

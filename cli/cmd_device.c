/*
 * cmd_device.c -- `threadmap device`: the GPU threadmap would use, with the
 * facts every measurement must carry (name, arch, SMs, clocks, driver).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"

static const char usage[] =
    "usage: threadmap device [--device N] [--json]\n\n"
    "Prints the GPU's name, architecture, SM count, clocks, driver and the highest\n"
    "PTX ISA version the driver loads.  Exit code 3 when there is no GPU or driver\n"
    "(so scripts can test for one).\n";

int tmap_cmd_device(int argc, char **argv)
{
    long ordinal = 0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            if (tmap_cli_long(argv[++i], 0, 1024, &ordinal))
                return tmap_cli_usage(usage);
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return TMAP_EXIT_OK;
        } else
            return tmap_cli_usage(usage);
    }
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_device_info d;
    tmap_status st = tmap_cuda_open((int)ordinal, &c, &err);
    if (!st)
        st = tmap_cuda_info(c, &d, &err);
    tmap_cuda_close(c);
    if (st)
        return tmap_cli_fail("device", &err);
    if (json)
        return tmap_cli_print_json("device", tmap_cli_device_json(&d));
    printf("%s: sm_%d%d, %d SMs, SM clock %d MHz, memory clock %d MHz, driver CUDA %d.%d "
           "(PTX ISA up to %d.%d)\n",
           d.name, d.cc_major, d.cc_minor, d.sms, d.clock_khz / 1000, d.mem_clock_khz / 1000,
           d.driver_version / 1000, d.driver_version % 1000 / 10, d.ptx_major, d.ptx_minor);
    return TMAP_EXIT_OK;
}

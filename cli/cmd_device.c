/*
 * cmd_device.c -- `threadmap device`: the GPU threadmap would use, with the
 * facts every measurement must carry (name, arch, SMs, clocks, driver).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cliutil.h"
#include "cli/commands.h"

static void usage(FILE *f)
{
    fputs("usage: threadmap device [--device N] [--json] [-q]\n\n"
          "Prints the GPU's name, architecture, SM count, clocks, driver and the highest\n"
          "PTX ISA version the driver loads.  Exit code 3 when there is no GPU or driver\n"
          "(so scripts can test for one).\n\n"
          "  -d, --device N   GPU ordinal (default 0)\n"
          "  --json           print {\"name\", \"cc\", \"sms\", \"sm_clock_mhz\",\n"
          "                   \"mem_clock_mhz\", \"driver\"}\n"
          "  -q, --quiet      print nothing: only the exit code says whether there is a GPU\n"
          "  -h, --help       this text\n\n"
          "example: threadmap device -q && threadmap profile m.json -o prof\n", f);
}

int tmap_cmd_device(int argc, char **argv)
{
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'},
                                          TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON, {0}};
    long ordinal = 0;
    tmap_args a;
    tmap_args_init(&a, "device", usage, argc, argv, opts, "d:hq");
    for (int c; (c = tmap_args_next(&a)) != 0;)
        if (c < 0 || tmap_args_long(&a, 0, 1024, &ordinal))
            return a.rc;
    if (tmap_args_operands(&a, 0, 0))
        return a.rc;
    tmap_error err = {0};
    tmap_cuda *c = NULL;
    tmap_device_info d;
    tmap_status st = tmap_cuda_open((int)ordinal, &c, &err);
    if (!st)
        st = tmap_cuda_info(c, &d, &err);
    tmap_cuda_close(c);
    if (st)
        return tmap_cli_fail("device", &err);
    if (a.json)
        return tmap_cli_print_json("device", tmap_cli_device_json(&d));
    if (a.quiet)
        return TMAP_EXIT_OK;
    printf("%s: sm_%d%d, %d SMs, SM clock %d MHz, memory clock %d MHz, driver CUDA %d.%d "
           "(PTX ISA up to %d.%d)\n",
           d.name, d.cc_major, d.cc_minor, d.sms, d.clock_khz / 1000, d.mem_clock_khz / 1000,
           d.driver_version / 1000, d.driver_version % 1000 / 10, d.ptx_major, d.ptx_minor);
    return TMAP_EXIT_OK;
}

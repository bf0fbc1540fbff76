/*
 * cmd_version.c -- `threadmap version` (also --version and -V): the
 * version, as a line or as JSON.
 */
#include <jansson.h>
#include <stdio.h>

#include "cli/args.h"
#include "cli/cliutil.h"
#include "cli/commands.h"

static void usage(FILE *f)
{
    fputs("usage: threadmap version [--json]    (also threadmap --version, -V)\n\n"
          "Prints the version of threadmap: `threadmap MAJOR.MINOR.PATCH`.\n\n"
          "  --json         print {\"version\": \"MAJOR.MINOR.PATCH\"}\n"
          "  -q, --quiet    print nothing (the exit code says the tool runs)\n"
          "  -h, --help     this text\n\n"
          "example: threadmap version --json\n", f);
}

int tmap_cmd_version(int argc, char **argv)
{
    static const struct option opts[] = {TMAP_ARGS_HELP, TMAP_ARGS_QUIET, TMAP_ARGS_JSON, {0}};
    tmap_args a;
    tmap_args_init(&a, "version", usage, argc, argv, opts, "hq");
    if (tmap_args_next(&a) || tmap_args_operands(&a, 0, 0))
        return a.rc;
    char v[64];
    snprintf(v, sizeof v, "%d.%d.%d", TMAP_VERSION_MAJOR, TMAP_VERSION_MINOR,
             TMAP_VERSION_PATCH);
    if (a.json)
        return tmap_cli_print_json("version", json_pack("{s:s}", "version", v));
    if (!a.quiet)
        printf("threadmap %s\n", v);
    return TMAP_EXIT_OK;
}

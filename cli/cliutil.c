/*
 * cliutil.c -- failures in one line, device descriptions and JSON printing
 * shared by the subcommands.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cliutil.h"
#include "cli/commands.h"

json_t *tmap_cli_device_json(const tmap_device_info *d)
{
    char *s = tmap_device_json(d);
    json_t *o = s ? json_loads(s, 0, NULL) : NULL;
    free(s);
    return o;
}

json_t *tmap_cli_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *tmap_cli_json_str(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

int tmap_cli_print_json(const char *cmd, json_t *root)
{
    char *s = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    int ok = s && puts(s) >= 0 && fflush(stdout) == 0;
    free(s);
    json_decref(root);
    if (ok)
        return TMAP_EXIT_OK;
    fprintf(stderr, "threadmap %s: writing the JSON output failed\n", cmd);
    return TMAP_EXIT_FAIL;
}

/* The first line after the first of msg that says "error", trimmed. */
static const char *first_error(const char *msg, int *len)
{
    for (const char *p = strchr(msg, '\n'); p; p = strchr(p + 1, '\n')) {
        const char *line = p + 1, *end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        const char *e = strstr(line, "error");
        if (e && e < line + n) {
            while (*line == ' ' && n > 0)
                line++, n--;
            *len = n;
            return line;
        }
    }
    return NULL;
}

int tmap_cli_fail_v(const char *cmd, const tmap_error *err, int verbose)
{
    const char *m = err->message, *nl = strchr(m, '\n');
    int rc = err->status == TMAP_ERR_NO_DEVICE ? TMAP_EXIT_NO_GPU : TMAP_EXIT_FAIL;
    size_t more = 0;
    for (const char *p = nl; p && p[1]; p = strchr(p + 1, '\n'))
        more++;
    if (verbose || !more) {
        fprintf(stderr, "threadmap %s: %.*s\n", cmd, nl && !more ? (int)(nl - m) : (int)strlen(m), m);
        return rc;
    }
    int elen = 0;
    const char *e = first_error(m, &elen);
    int head = (int)(nl - m);
    if (head > 0 && m[head - 1] == ':')
        head--;
    fprintf(stderr, "threadmap %s: %.*s%s%.*s (%zu more lines: -v prints them)\n", cmd, head, m,
            e ? ": " : "", elen, e ? e : "", more);
    return rc;
}

int tmap_cli_fail(const char *cmd, const tmap_error *err)
{
    return tmap_cli_fail_v(cmd, err, 0);
}

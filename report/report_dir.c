/*
 * report_dir.c -- all four forms of a report into one folder:
 * DIR/report.txt, report.md, report.json, report.html.  Each is rendered
 * in memory and written to a temporary; the four replace the old ones
 * only once all are written (a failure leaves the folder as it was).
 */
#include <stdio.h>
#include <stdlib.h>

#include "threadmap/report.h"
#include "common/base.h"
#include "report/report_priv.h"

typedef tmap_status (*tmap_report_writer)(const tmap_report *, FILE *, tmap_error *);

static tmap_status write_one(const tmap_report *r, const char *dir, const char *name,
                             tmap_report_writer w, tmap_file_set *set, tmap_error *err)
{
    char *data = NULL, path[4096];
    size_t len = 0;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: path too long", dir);
    FILE *m = open_memstream(&data, &len);
    if (!m)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    tmap_status s = w(r, m, err);
    if (fclose(m) != 0 && !s)
        s = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", path);
    if (!s)
        s = tmap_file_set_add(set, path, data, len, err);
    free(data);
    return s;
}

static tmap_status report_write_dir_c(const tmap_report *r, const char *dir, tmap_error *err)
{
    static const struct {
        const char *name;
        tmap_report_writer w;
    } forms[] = {{"report.txt", tmap_report_text},
                 {"report.md", tmap_report_markdown},
                 {"report.json", tmap_report_json},
                 {"report.html", tmap_report_html}};
    tmap_file_set set = {0};
    tmap_status s = tmap_report_check(r, err);
    if (!s)
        s = tmap_dir_make(dir, err);
    for (size_t i = 0; !s && i < sizeof forms / sizeof forms[0]; i++)
        s = write_one(r, dir, forms[i].name, forms[i].w, &set, err);
    if (!s)
        s = tmap_file_set_commit(&set, err);
    tmap_file_set_abort(&set);
    return s;
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_report_write_dir(const tmap_report *r, const char *dir, tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = report_write_dir_c(r, dir, err);
    tmap_locale_restore(old);
    return st;
}

/*
 * bench_write.c -- a bench run's folder: summarizes the run, then writes
 * results.csv, results.json, report.md and the six SVG plots.  Each file
 * is written whole or the call fails naming it.
 */
#include <errno.h>
#include <string.h>

#include "common/base.h"
#include "threadmap/report.h"

typedef struct out_file {
    const char *name;
    int kind;       /* 0 csv, 1 json, 2 markdown, 3 scatter, 4 speedup */
    int arg;        /* metric, or with_overhead */
} out_file;

static tmap_status write_one(tmap_bench_run *r, const tmap_bench_summary *s, const char *dir,
                             const out_file *o, tmap_error *err)
{
    tmap_buf path = {0};
    tmap_buf_printf(&path, "%s/%s", dir, o->name);
    if (!path.data)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    FILE *f = fopen(path.data, "w");
    tmap_status st = TMAP_OK;
    if (!f)
        st = tmap_fail(err, TMAP_ERR_IO, "%s: %s", path.data, strerror(errno));
    else if (o->kind == 0) st = tmap_bench_csv(r, f, err);
    else if (o->kind == 1) st = tmap_bench_json(r, s, f, err);
    else if (o->kind == 2) st = tmap_bench_markdown(r, s, f, err);
    else if (o->kind == 3) st = tmap_bench_svg_scatter(r, (tmap_bench_metric)o->arg, f, err);
    else st = tmap_bench_svg_speedup(r, o->arg, f, err);
    if (f && st)
        tmap_error_prefix(err, "%s", path.data);
    if (f && fclose(f) && !st)
        st = tmap_fail(err, TMAP_ERR_IO, "%s: %s", path.data, strerror(errno));
    tmap_buf_free(&path);
    return st;
}

static tmap_status bench_write_dir_c(tmap_bench_run *r, const char *dir, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, r, dir);
    if (absent)
        return absent;
    tmap_bench_summary s;
    tmap_bench_summarize(r, &s);
    tmap_status st = tmap_dir_make(dir, err);
    char scatter[TMAP_BM_COUNT][64];
    out_file files[3 + TMAP_BM_COUNT + 2] = {{"results.csv", 0, 0}, {"results.json", 1, 0},
                                             {"report.md", 2, 0}};
    size_t n = 3;
    for (int m = 0; m < TMAP_BM_COUNT; m++) {
        tmap_bench_scatter_file((tmap_bench_metric)m, scatter[m], sizeof scatter[m]);
        files[n++] = (out_file){scatter[m], 3, m};
    }
    files[n++] = (out_file){tmap_bench_speedup_file(0), 4, 0};
    files[n++] = (out_file){tmap_bench_speedup_file(1), 4, 1};
    for (size_t i = 0; !st && i < n; i++)
        st = write_one(r, &s, dir, &files[i], err);
    return st;
}

/* In the "C" locale: numbers print with '.' whatever the host's. */
tmap_status tmap_bench_write_dir(tmap_bench_run *r, const char *dir, tmap_error *err)
{
    locale_t old = tmap_locale_c();
    tmap_status st = bench_write_dir_c(r, dir, err);
    tmap_locale_restore(old);
    return st;
}

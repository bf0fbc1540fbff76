/*
 * table_text.c -- formats measured latencies as the latency table (TSV):
 * header comments naming the GPU, one line per opcode of each benchmark that
 * passed its self-checks, `# suspect:` comments for those that did not, and
 * class:NAME defaults, each the median of the measured opcodes the model
 * puts in that class (model/latency.c decides classes, so the table and its
 * reader agree).  With a base table, its entries for opcodes and classes
 * that were not measured are kept, marked as such.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "latency_tables/probe.h"
#include "threadmap/model.h"

static void put_header(tmap_buf *out, const tmap_device_info *info, const char *date)
{
    char now[32];
    if (!date) {
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
        date = now;
    }
    tmap_buf_puts(out, "# threadmap latency table: opcode, latency (cycles), issue interval "
                       "(cycles, - = not measured), source\n");
    if (info) {
        tmap_buf_printf(out, "# arch: sm_%d%d\n# device: %s\n# sm_clock_mhz: %d\n",
                        info->cc_major, info->cc_minor, info->name, info->clock_khz / 1000);
        tmap_buf_printf(out, "# driver: %d.%d\n", info->driver_version / 1000,
                        info->driver_version % 1000 / 10);
    }
    tmap_buf_printf(out, "# measured_by: threadmap latency --measure\n# date: %s\n", date);
}

/* The `source` column of an ok result. */
static void put_source(tmap_buf *out, const tmap_latency_result *r)
{
    const tmap_latency_probe *b = r->bench;
    tmap_buf_printf(out, "measured: dependent chain, %d vs %d steps, median of %d",
                    TMAP_LATENCY_LONG, TMAP_LATENCY_SHORT, r->reps);
    if (b->ops_per_step == 2)
        tmap_buf_printf(out, "; half of a %s + %s pair (%.1f per pair)", b->opcodes[0],
                        b->opcodes[1] ? b->opcodes[1] : b->opcodes[0], r->per_step);
    if (b->companion)
        tmap_buf_printf(out, "; step with %s, minus its %.1f", b->companion,
                        r->per_step - r->latency);
    if (r->issue > 0)
        tmap_buf_printf(out, "; issue: %d threads in one block (%d warps per sub-partition), "
                        "%.1f cycles per step", TMAP_LATENCY_FULL_THREADS,
                        TMAP_LATENCY_FULL_WARPS_PER_SP, r->per_step_full);
    else if (r->issue_note[0])
        tmap_buf_printf(out, "; issue not measured: %s", r->issue_note);
}

/* The issue column: the measured interval, or '-'. */
static void put_issue(tmap_buf *out, double issue)
{
    if (issue > 0)
        tmap_buf_printf(out, "%.2f", issue);
    else
        tmap_buf_puts(out, "-");
}

static void put_results(tmap_buf *out, const tmap_latency_result *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < 2 && r[i].ok; j++) {
            if (!r[i].bench->opcodes[j])
                continue;
            tmap_buf_printf(out, "%s\t%.1f\t", r[i].bench->opcodes[j], r[i].latency);
            put_issue(out, r[i].issue);
            tmap_buf_puts(out, "\t");
            put_source(out, &r[i]);
            tmap_buf_puts(out, "\n");
        }
        if (!r[i].ok)
            tmap_buf_printf(out, "# suspect, left out: %s: %s\n", r[i].bench->opcodes[0],
                            r[i].note);
    }
}

/* The median latency of the measured opcodes of class cls (each opcode
 * once, so a pair counts twice); 0 when none.  names lists them. */
static size_t class_median(const tmap_latency_result *r, size_t n, const char *cls, double *v,
                           double *med, double *issue, tmap_buf *names)
{
    size_t m = 0, k = 0;
    double *w = v + 2 * n;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 2 && r[i].ok; j++) {
            const char *op = r[i].bench->opcodes[j];
            if (!op || strchr(op, ':') || strcmp(tmap_lat_class_of(op), cls)) /* sm:... */
                continue;
            v[m++] = r[i].latency;
            if (r[i].issue > 0)
                w[k++] = r[i].issue;
            tmap_buf_printf(names, "%s%s", m > 1 ? ", " : "", op);
        }
    if (m)
        *med = tmap_median(v, m);
    *issue = k ? tmap_median(w, k) : 0;
    return m;
}

static const char *base_source(const struct tmap_lat_table *base, const char *key,
                               double *lat, double *issue)
{
    for (size_t i = 0; base && i < tmap_lat_num_entries(base); i++) {
        const char *k, *src;
        tmap_lat_entry(base, i, &k, lat, issue, &src);
        if (!strcmp(k, key))
            return src;
    }
    return NULL;
}

static void put_base_line(tmap_buf *out, const char *key, double lat, double issue,
                          const char *src)
{
    tmap_buf_printf(out, "%s\t%g\t", key, lat);
    if (issue > 0)
        tmap_buf_printf(out, "%g", issue);
    else
        tmap_buf_puts(out, "-");
    static const char kept[] = "not measured, kept from the base table: ";
    /* a line the base kept from its own base says so once */
    tmap_buf_printf(out, "\t%s%s\n", kept, strncmp(src, kept, sizeof kept - 1) ? src
                                                                   : src + sizeof kept - 1);
}

/* class:NAME lines for every class the model knows: measured medians, else
 * the base table's line, else nothing (the model falls back further). */
static void put_classes(tmap_buf *out, const tmap_latency_result *r, size_t n,
                        const struct tmap_lat_table *base)
{
    double *v = malloc((4 * n + 1) * sizeof *v); /* latencies, then issue intervals */
    if (!v) {
        out->oom = 1;
        return;
    }
    for (size_t k = 0; k < tmap_lat_num_classes(); k++) {
        const char *cls = tmap_lat_class_name(k);
        char key[64];
        double med = 0, med_issue = 0, lat, issue;
        tmap_buf names = {0};
        snprintf(key, sizeof key, "class:%s", cls);
        const char *src = base_source(base, key, &lat, &issue);
        if (class_median(r, n, cls, v, &med, &med_issue, &names)) {
            tmap_buf_printf(out, "%s\t%.1f\t", key, med);
            put_issue(out, med_issue);
            tmap_buf_printf(out, "\tderived: median of %s\n", names.data);
        } else if (src) {
            put_base_line(out, key, lat, issue, src);
        } else {
            tmap_buf_printf(out, "# %s: nothing measured\n", key);
        }
        out->oom |= names.oom;
        tmap_buf_free(&names);
    }
    free(v);
}

static int measured(const tmap_latency_result *r, size_t n, const char *op)
{
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 2; j++)
            if (r[i].ok && r[i].bench->opcodes[j] && !strcmp(r[i].bench->opcodes[j], op))
                return 1;
    return 0;
}

/* The base table's opcode lines for opcodes that were not measured. */
static void put_base_opcodes(tmap_buf *out, const tmap_latency_result *r, size_t n,
                             const struct tmap_lat_table *base)
{
    for (size_t i = 0; base && i < tmap_lat_num_entries(base); i++) {
        const char *key, *src;
        double lat, issue;
        tmap_lat_entry(base, i, &key, &lat, &issue, &src);
        if (strncmp(key, "class:", 6) && !measured(r, n, key))
            put_base_line(out, key, lat, issue, src);
    }
}

void tmap_latency_table_format(const tmap_device_info *info, const char *date,
                               const tmap_latency_result *r, size_t n,
                               const struct tmap_lat_table *base, tmap_buf *out)
{
    locale_t old = tmap_locale_c();
    put_header(out, info, date);
    put_results(out, r, n);
    put_base_opcodes(out, r, n, base);
    put_classes(out, r, n, base);
    tmap_locale_restore(old);
}

tmap_status tmap_latency_measure(tmap_cuda *c, const tmap_latency_measure_opts *o,
                                 char **table_text, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, c, table_text);
    if (absent)
        return absent;
    tmap_device_info info;
    tmap_buf b = {0};
    tmap_latency_result *r = NULL;
    size_t n = 0;
    tmap_status st = tmap_cuda_info(c, &info, err);
    if (st == TMAP_OK)
        st = tmap_latency_measure_results(c, o, &r, &n, err);
    if (st != TMAP_OK)
        return st;
    tmap_latency_table_format(&info, o ? o->date : NULL, r, n, o ? o->base : NULL, &b);
    free(r);
    if (b.oom || !b.data) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory formatting the latency table");
    }
    *table_text = b.data;
    return TMAP_OK;
}

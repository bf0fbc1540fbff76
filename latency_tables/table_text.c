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

static int measured(const tmap_latency_result *r, size_t n, const tmap_latency_mem_result *mr,
                    size_t mn, const char *op)
{
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 2; j++)
            if (r[i].ok && r[i].bench->opcodes[j] && !strcmp(r[i].bench->opcodes[j], op))
                return 1;
    for (size_t i = 0; i < mn; i++)
        if (mr[i].ok && !strcmp(mr[i].probe->key, op))
            return 1;
    return 0;
}

/* The base table's opcode (and sm:) lines for what was not measured. */
static void put_base_opcodes(tmap_buf *out, const tmap_latency_result *r, size_t n,
                             const tmap_latency_mem_result *mr, size_t mn,
                             const struct tmap_lat_table *base)
{
    for (size_t i = 0; base && i < tmap_lat_num_entries(base); i++) {
        const char *key, *src;
        double lat, issue;
        tmap_lat_entry(base, i, &key, &lat, &issue, &src);
        if (strncmp(key, "class:", 6) && !measured(r, n, mr, mn, key))
            put_base_line(out, key, lat, issue, src);
    }
}

/* The source column of a memory probe: what ran and the numbers behind
 * the value. */
static void put_mem_source(tmap_buf *out, const tmap_latency_mem_result *m)
{
    const tmap_latency_memprobe *p = m->probe;
    tmap_buf_printf(out, "measured: %s; ", p->how);
    if (p->kind == TMAP_MEM_CONST_LINES)
        tmap_buf_printf(out, "%d steps, median of %d: %.1f cycles an access at one line, "
                        "%.1f at %d; %.0f lines of %d bytes within 5%% of one",
                        TMAP_MEM_CONST_STEPS, m->reps, m->lo, m->hi,
                        TMAP_MEM_CTAB_WORDS * 4 / TMAP_MEM_CONST_LINE, m->amount,
                        TMAP_MEM_CONST_LINE);
    else if (p->kind == TMAP_MEM_CONST_IDC)
        tmap_buf_printf(out, "%u blocks of %u threads, 4 ld.const.u32 chains a thread, %u "
                        "rounds, windows of 1/4 to 4/4 of the cache: %.2f to %.2f cycles, "
                        "their mean (each the median of %d) at %.0f MHz",
                        m->blocks, m->threads, m->passes, m->lo, m->hi, m->reps, m->mhz);
    else if (p->kind == TMAP_MEM_CONST_FILL)
        tmap_buf_printf(out, "the same launch in %.0f windows of 1.25 to 24 times the cache "
                        "(%.0f bytes), at most the table's %d: (cycles - %.2f) = c1 m^2, "
                        "m = 1 - cache / window, c1 by least squares, at %.0f MHz",
                        m->amount, m->hi, TMAP_MEM_CTAB_WORDS * 4, m->lo, m->mhz);
    else if (p->kind == TMAP_MEM_L1_LOCAL)
        tmap_buf_printf(out, "%u threads, ld.local.u32 chains, %u passes, median of %d: %.1f "
                        "cycles an access at 8 KB of rows, %.1f at %d; %.0f words a thread "
                        "within 5%% of 8 KB's", m->threads, m->passes, m->reps, m->lo, m->hi,
                        TMAP_MEM_LOCAL_THREADS * TMAP_MEM_LROW_BYTES, m->amount);
    else if (p->kind == TMAP_MEM_CHASE)
        tmap_buf_printf(out, "ld.global.cg.u64, %d vs %d steps, median of %d: %.0f cycles "
                        "more = %.0f ns (globaltimer) at %.0f MHz",
                        TMAP_MEM_CHASE_LONG, TMAP_MEM_CHASE_SHORT, m->reps,
                        m->value * m->amount, m->ns, m->mhz);
    else
        tmap_buf_printf(out, "%u blocks of %u threads, %s, %u passes: %.4g %s in %.1f us "
                        "(globaltimer, median of %d) at %.0f MHz (clock64 over globaltimer, "
                        "median over the blocks); spread %.1f%%",
                        m->blocks, m->threads, p->kind == TMAP_MEM_GATHER
                            ? "4 x 32-bit ld.global per round, a random word per lane"
                            : "4 x 128-bit ld.global.cg per round, coalesced",
                        m->passes, m->amount, p->kind == TMAP_MEM_GATHER ? "sectors" : "bytes",
                        m->ns / 1000, m->reps, m->mhz, 100 * m->spread);
}

static void put_mem_results(tmap_buf *out, const tmap_latency_mem_result *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!m[i].ok) {
            tmap_buf_printf(out, "# suspect, left out: %s: %s\n", m[i].probe->key, m[i].note);
            continue;
        }
        tmap_memprobe_kind k = m[i].probe->kind;
        tmap_buf_printf(out, "%s\t%.*f\t-\t", m[i].probe->key,
                        k == TMAP_MEM_CONST_LINES || k == TMAP_MEM_L1_LOCAL ? 0 :
                        k == TMAP_MEM_CHASE ? 1 :
                        k == TMAP_MEM_CONST_IDC || k == TMAP_MEM_CONST_FILL ? 2 : 3, m[i].value);
        put_mem_source(out, &m[i]);
        tmap_buf_puts(out, "\n");
    }
}

void tmap_latency_table_format(const tmap_device_info *info, const char *date,
                               const tmap_latency_result *r, size_t n,
                               const tmap_latency_mem_result *mr, size_t mn,
                               const struct tmap_lat_table *base, tmap_buf *out)
{
    locale_t old = tmap_locale_c();
    put_header(out, info, date);
    put_results(out, r, n);
    put_mem_results(out, mr, mn);
    put_base_opcodes(out, r, n, mr, mn, base);
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
    tmap_latency_mem_result *mr = NULL;
    size_t n = 0, mn = 0;
    tmap_status st = tmap_cuda_info(c, &info, err);
    if (st == TMAP_OK)
        st = tmap_latency_measure_results(c, o, &r, &n, err);
    if (st == TMAP_OK)
        st = tmap_latency_measure_memory(c, o, &mr, &mn, err);
    if (st != TMAP_OK) {
        free(r);
        return st;
    }
    tmap_latency_table_format(&info, o ? o->date : NULL, r, n, mr, mn, o ? o->base : NULL, &b);
    free(r), free(mr);
    if (b.oom || !b.data) {
        tmap_buf_free(&b);
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory formatting the latency table");
    }
    *table_text = b.data;
    return TMAP_OK;
}

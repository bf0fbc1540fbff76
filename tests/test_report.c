/*
 * test_report.c -- the performance-estimate report: each form written from
 * plans on a two-class BBV (text, Markdown, JSON read back exactly, HTML
 * well-formed and escaped), the folder of all four, `threadmap report` run
 * end to end, and (when Chromium is installed) the HTML page rendered.
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/testutil.h"
#include "threadmap/model.h"
#include "threadmap/report.h"
#include "report/report_priv.h"
#include "threadmap/regroup.h"

/* Two blocks: an entry run once by every thread, a loop run `trips` times
 * by odd threads only (every warp of the original launch diverges). */
static void two_class(tmap_bbv *b, size_t n, uint32_t trips)
{
    TMAP_CHECK(tmap_bbv_create(b, n, 2, err));
    for (size_t t = 0; t < n; t++) {
        b->counts[t * 2] = 1;
        b->counts[t * 2 + 1] = (t & 1) ? trips : 0;
    }
}

static const double lat[2] = {10, 20};
static const char *const block_names[2] = {"k/entry", "k/loop_with_a_rather_long_label"};
static const tmap_model_params params = {.block_size = 256, .nsms = 4, .blocks_per_sm = 2};

/* A plan and the report built from it, as `threadmap report` builds it. */
typedef struct fixture {
    tmap_bbv bbv;
    tmap_plan plan;
    tmap_report_row rows[TMAP_ALGO_COUNT + 1];
    tmap_report r;
} fixture;

static tmap_plan_opts plan_opts(void)
{
    tmap_plan_opts o = {0};
    o.model = params;
    o.regroup.groupsize = 32;
    o.regroup.scope = TMAP_REGROUP_GRID;
    o.threshold = 0.05;
    return o;
}

static fixture *make_fixture(const char *kernel)
{
    fixture *fx = calloc(1, sizeof *fx);
    two_class(&fx->bbv, 4096, 100);
    tmap_plan_opts o = plan_opts();
    TMAP_CHECK(tmap_plan_make(&fx->bbv, lat, NULL, &o, &fx->plan, err));
    for (size_t i = 0; i < fx->plan.n; i++) {
        const tmap_candidate *c = &fx->plan.cand[i];
        fx->rows[i] = (tmap_report_row){i ? tmap_algo_name(c->algo) : "original", c->available,
                                        c->note, c->available ? &c->m : NULL, c->gain,
                                        i ? c->algo_ms : NAN, NAN, NAN, -1,
                                        (int)i == fx->plan.chosen};
    }
    fx->r = (tmap_report){kernel, "synthetic two-class BBV", NULL, &fx->bbv, lat, block_names,
                          &params, NULL, NULL, fx->plan.n, fx->rows, fx->plan.why, NULL, "",
                          NULL};
    return fx;
}

static void free_fixture(fixture *fx)
{
    tmap_plan_free(&fx->plan);
    tmap_bbv_free(&fx->bbv);
    free(fx);
}

/* Runs one writer into a string (caller frees). */
static char *render(tmap_status (*w)(const tmap_report *, FILE *, tmap_error *),
                    const tmap_report *r)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    assert_non_null(f);
    tmap_error e = {0};
    tmap_status s = w(r, f, &e);
    fclose(f);
    if (s)
        fail_msg("writer failed: %s", e.message);
    return data;
}

/* "nan" as a word of its own, in any case. */
static int has_nan(const char *s)
{
    for (const char *p = s; (p = strpbrk(p, "nN")); p++)
        if (!strncasecmp(p, "nan", 3) && (p == s || !isalpha((unsigned char)p[-1])) &&
            !isalpha((unsigned char)p[3]))
            return 1;
    return 0;
}

static size_t count_of(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void text_has_rows_and_decision(void **state)
{
    fixture *fx = make_fixture("k");
    char *t = render(tmap_report_text, &fx->r);
    for (size_t i = 0; i < fx->plan.n; i++)
        assert_non_null(strstr(t, fx->rows[i].name));
    assert_non_null(strstr(t, "decision:  "));
    assert_non_null(strstr(t, fx->plan.why));
    /* the chosen row carries the marker at the start of its line */
    char marker[64];
    snprintf(marker, sizeof marker, "\n* %s ", fx->rows[fx->plan.chosen].name);
    assert_int_not_equal(fx->plan.chosen, 0);
    assert_non_null(strstr(t, marker));
    assert_false(has_nan(t));
    /* no CFG: divergent branches and SIMD efficiency show as "-" */
    assert_non_null(strstr(t, "fallback opcodes: none"));
    free(t);
    free_fixture(fx);
}

static void unavailable_rows_say_why(void **state)
{
    fixture *fx = make_fixture("k");
    fx->rows[fx->r.nrows] = (tmap_report_row){"greedy-literal", 0, "too many distinct rows",
                                              NULL, NAN, NAN, NAN, NAN, -1, 0};
    fx->r.nrows++;
    char *t = render(tmap_report_text, &fx->r);
    assert_non_null(strstr(t, "greedy-literal: not computed: too many distinct rows"));
    assert_false(has_nan(t));
    free(t);
    char *j = render(tmap_report_json, &fx->r);
    json_error_t je;
    json_t *root = json_loads(j, 0, &je);
    assert_non_null(root);
    json_t *last = json_array_get(json_object_get(root, "rows"), fx->r.nrows - 1);
    assert_true(json_is_false(json_object_get(last, "available")));
    assert_true(json_is_null(json_object_get(last, "bbv_weighted_scheduled_cycles")));
    assert_string_equal(json_string_value(json_object_get(last, "note")),
                        "too many distinct rows");
    json_decref(root);
    free(j);
    free_fixture(fx);
}

/* The JSON value of a metric: exactly v, or null when v is NAN. */
static void assert_num(json_t *o, const char *key, double v)
{
    json_t *j = json_object_get(o, key);
    assert_non_null(j);
    if (isnan(v)) {
        if (!json_is_null(j))
            fail_msg("%s: expected null", key);
        return;
    }
    if (!json_is_number(j) || json_number_value(j) != v)
        fail_msg("%s: %.17g in JSON, %.17g in the metrics", key, json_number_value(j), v);
}

/* The keys renamed for their units are gone, and nothing names a bound. */
static void assert_no_old_keys(json_t *o)
{
    static const char *const old[] = {"bbv_weighted", "bbv_weighted_scheduled",
                                      "zero_divergence_bound", "divergent_warp_ratio",
                                      "simd_efficiency", "gain"};
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
        if (json_object_get(o, old[i]))
            fail_msg("the old key '%s' is still written", old[i]);
}

/* Every number of rows[i] is in JSON row j exactly, under the new keys. */
static void assert_row(json_t *j, const tmap_report_row *row)
{
    const tmap_metrics *m = row->m;
    assert_string_equal(json_string_value(json_object_get(j, "name")), row->name);
    assert_num(j, "bbv_weighted_cycles", m->bbv_weighted);
    assert_num(j, "bbv_weighted_scheduled_cycles", m->bbv_weighted_scheduled);
    assert_num(j, "divergent_warps_pct", m->divergent_warps_pct);
    assert_num(j, "divergent_branches", m->divergent_branches);
    assert_num(j, "simd_active_threads_per_inst", m->simd_active_threads_per_inst);
    assert_num(j, "simd_efficiency_pct", NAN); /* no CFG */
    assert_num(j, "gain_frac", row->gain);
    assert_num(j, "algo_ms", row->algo_ms);
    assert_num(j, "measured_ms", row->measured_ms);
    assert_num(j, "apply_ms", row->apply_ms);
    assert_int_equal(json_is_true(json_object_get(j, "chosen")), row->chosen);
    assert_null(json_object_get(j, "zero_divergence_cycles")); /* per kernel, not per row */
    assert_no_old_keys(j);
}

static void json_reads_back_exactly(void **state)
{
    fixture *fx = make_fixture("k");
    fx->rows[0].measured_ms = 2.5;
    fx->rows[1].measured_ms = 1.25;
    fx->rows[1].apply_ms = 0.125;
    fx->rows[1].outputs_equal = 1;
    char *j = render(tmap_report_json, &fx->r);
    assert_false(has_nan(j));
    json_error_t je;
    json_t *root = json_loads(j, 0, &je);
    if (!root)
        fail_msg("JSON does not parse: %s (line %d)", je.text, je.line);
    assert_string_equal(json_string_value(json_object_get(root, "kernel")), "k");
    assert_int_equal(json_integer_value(json_object_get(root, "threads")), 4096);
    assert_int_equal(json_integer_value(json_object_get(root, "blocks")), 2);
    json_t *p = json_object_get(root, "params");
    assert_int_equal(json_integer_value(json_object_get(p, "block_size")), 256);
    assert_int_equal(json_integer_value(json_object_get(p, "sms")), 4);
    assert_int_equal(json_integer_value(json_object_get(p, "blocks_per_sm")), 2);
    /* once per kernel: the original at mean counts, 2 rounds of 8080 cycles */
    assert_num(root, "zero_divergence_cycles", 16160);
    assert_int_equal(json_integer_value(json_object_get(root, "warps")), 128);
    assert_no_old_keys(root);
    json_t *rows = json_object_get(root, "rows");
    assert_int_equal(json_array_size(rows), fx->r.nrows);
    for (size_t i = 0; i < fx->r.nrows; i++)
        assert_row(json_array_get(rows, i), &fx->rows[i]);
    assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "outputs_equal")));
    assert_true(json_is_true(json_object_get(json_array_get(rows, 1), "outputs_equal")));
    assert_string_equal(json_string_value(json_object_get(root, "decision")), fx->plan.why);
    assert_true(json_is_null(json_object_get(root, "mechanism")));
    assert_true(json_is_null(json_object_get(root, "latency_table")));
    assert_int_equal(json_array_size(json_object_get(root, "fallbacks")), 0);
    json_decref(root);
    free(j);
    free_fixture(fx);
}

static void markdown_has_a_row_per_grouping(void **state)
{
    fixture *fx = make_fixture("k_main");
    char *md = render(tmap_report_markdown, &fx->r);
    assert_non_null(strstr(md, "# Performance estimate: k\\_main\n"));
    for (size_t i = 0; i < fx->r.nrows; i++) {
        char row[64];
        const char *name = fx->rows[i].name;
        if (fx->rows[i].chosen)
            snprintf(row, sizeof row, "\n| **%s** (chosen) |", name);
        else
            snprintf(row, sizeof row, "\n| %s |", name);
        if (!strstr(md, row))
            fail_msg("no table row '%s' in:\n%s", row + 1, md);
    }
    assert_false(has_nan(md));
    free(md);
    free_fixture(fx);
}

static void html_is_self_contained_and_escaped(void **state)
{
    fixture *fx = make_fixture("k<&>\"x\"");
    fx->rows[0].measured_ms = 2.0;
    fx->rows[fx->plan.chosen].measured_ms = 1.1;
    char *h = render(tmap_report_html, &fx->r);
    assert_int_equal(strncmp(h, "<!DOCTYPE html>", 15), 0);
    assert_null(strstr(h, "http://"));
    assert_null(strstr(h, "https://"));
    assert_null(strstr(h, "<script"));
    assert_null(strstr(h, "k<&>"));
    assert_non_null(strstr(h, "k&lt;&amp;&gt;&quot;x&quot;"));
    /* three figures: warps, blocks, predicted against measured */
    assert_int_equal(count_of(h, "<svg"), 3);
    assert_int_equal(count_of(h, "</svg>"), 3);
    assert_int_equal(count_of(h, "<figure>"), count_of(h, "</figure>"));
    assert_int_equal(count_of(h, "<table"), count_of(h, "</table>"));
    assert_non_null(strstr(h, "k/loop_with_a_rathe..."));
    assert_false(has_nan(h));
    assert_non_null(strstr(h, "</html>\n"));
    free(h);
    /* without measured times the third figure is a note */
    fx->rows[0].measured_ms = fx->rows[fx->plan.chosen].measured_ms = NAN;
    h = render(tmap_report_html, &fx->r);
    assert_int_equal(count_of(h, "<svg"), 2);
    assert_non_null(strstr(h, "nothing was measured"));
    free(h);
    free_fixture(fx);
}

/* Per block, lat x sum over warps of the max count adds up to the
 * original's warp costs (eq. 3 summed over all warps). */
static void block_breakdown_adds_up(void **state)
{
    fixture *fx = make_fixture("k");
    tmap_report_block *bl;
    TMAP_CHECK(tmap_report_blocks(&fx->r, &bl, err));
    double blocks = 0, warps = 0;
    for (size_t b = 0; b < fx->bbv.nblocks; b++)
        blocks += bl[b].lat * bl[b].max_sum;
    for (size_t w = 0; w < fx->rows[0].m->nwarps; w++)
        warps += fx->rows[0].m->warp_cost[w];
    assert_true(fabs(blocks - warps) <= 1e-9 * warps);
    /* the loop (block 1) is the costliest: 50 odd threads of 100 trips */
    assert_int_equal(bl[0].index, 1);
    assert_true(bl[0].execs == 2048.0 * 100);
    assert_true(bl[0].max_sum == 128.0 * 100);
    assert_true(bl[0].mean_sum == 128.0 * 50);
    free(bl);
    free_fixture(fx);
}

static void a_report_without_rows_is_refused(void **state)
{
    fixture *fx = make_fixture("k");
    fx->r.nrows = 0;
    tmap_error e = {0};
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(tmap_report_text(&fx->r, f, &e), TMAP_ERR_INVALID);
    assert_int_equal(tmap_report_html(&fx->r, f, &e), TMAP_ERR_INVALID);
    fclose(f);
    free_fixture(fx);
}

static char *temp_dir(void)
{
    char *d = strdup("/tmp/tmap_report_XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static void remove_tree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static long file_size(const char *dir, const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void write_dir_writes_four_files(void **state)
{
    fixture *fx = make_fixture("k");
    char *tmp = temp_dir(), dir[512];
    snprintf(dir, sizeof dir, "%s/a/b", tmp);
    TMAP_CHECK(tmap_report_write_dir(&fx->r, dir, err));
    static const char *const files[] = {"report.txt", "report.md", "report.json", "report.html"};
    for (int i = 0; i < 4; i++)
        assert_true(file_size(dir, files[i]) > 100);
    remove_tree(tmp);
    free(tmp);
    free_fixture(fx);
}

/* Runs the threadmap binary with `args`; returns its exit status. */
static int run_threadmap(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/threadmap' %s >/dev/null 2>&1", TMAP_BINARY_DIR, args);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static json_t *load_json(const char *dir, const char *name)
{
    char path[512];
    json_error_t je;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        fail_msg("%s: %s", path, je.text);
    return j;
}

static void cli_writes_the_report(void **state)
{
    fixture *fx = make_fixture("k");
    char *tmp = temp_dir(), bbv[512], latp[512], args[2048];
    snprintf(bbv, sizeof bbv, "%s/run0.bbv.npy", tmp);
    snprintf(latp, sizeof latp, "%s/lat.npy", tmp);
    size_t dim[2] = {2, 1};
    TMAP_CHECK(tmap_bbv_save(bbv, &fx->bbv, block_names, err));
    TMAP_CHECK(tmap_npy_save_f64(latp, lat, 1, dim, err));
    snprintf(args, sizeof args,
             "report --bbv '%s' --block-latency '%s' --sms 4 --block-size 256 "
             "--blocks-per-sm 2 --original-ms 2.0 --apply-ms 0.01 --format json -o '%s/out'",
             bbv, latp, tmp);
    assert_int_equal(run_threadmap(args), 0);
    char out[512];
    snprintf(out, sizeof out, "%s/out", tmp);
    json_t *root = load_json(out, "report.json");
    /* the kernel's name comes from the sidecar's block names */
    assert_string_equal(json_string_value(json_object_get(root, "kernel")), "k");
    json_t *rows = json_object_get(root, "rows");
    assert_int_equal(json_array_size(rows), fx->plan.n);
    for (size_t i = 0; i < fx->plan.n; i++) {
        json_t *j = json_array_get(rows, i);
        const tmap_metrics *m = &fx->plan.cand[i].m;
        assert_num(j, "bbv_weighted_cycles", m->bbv_weighted);
        assert_num(j, "bbv_weighted_scheduled_cycles", m->bbv_weighted_scheduled);
        assert_num(j, "divergent_warps_pct", m->divergent_warps_pct);
        assert_num(j, "divergent_branches", NAN);
        assert_num(j, "gain_frac", fx->plan.cand[i].gain);
        assert_no_old_keys(j);
        assert_num(j, "measured_ms", i ? NAN : 2.0);
        assert_num(j, "apply_ms", i ? 0.01 : NAN);
    }
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "name")),
                        "original");
    assert_num(root, "zero_divergence_cycles", fx->plan.cand[0].m.zero_divergence);
    assert_no_old_keys(root);
    json_decref(root);
    static const char *const files[] = {"report.txt", "report.md", "report.html"};
    for (int i = 0; i < 3; i++)
        assert_true(file_size(out, files[i]) > 100);
    /* usage errors exit 2, failures 1 */
    assert_int_equal(run_threadmap("report --bbv x.npy"), 2);
    assert_int_equal(run_threadmap("report --bbv x.npy --block-latency y.npy --format pdf"), 2);
    snprintf(args, sizeof args, "report --bbv '%s/missing.npy' --block-latency '%s'", tmp, latp);
    assert_int_equal(run_threadmap(args), 1);
    assert_int_equal(run_threadmap("report --help"), 0);
    remove_tree(tmp);
    free(tmp);
    free_fixture(fx);
}

/* The first of the names that is an executable on PATH, or NULL. */
static const char *find_chromium(char *buf, size_t size)
{
    static const char *const names[] = {"chromium", "chromium-browser"};
    const char *path = getenv("PATH");
    for (int i = 0; path && i < 2; i++) {
        for (const char *p = path; *p;) {
            size_t n = strcspn(p, ":");
            snprintf(buf, size, "%.*s/%s", (int)n, p, names[i]);
            if (n && access(buf, X_OK) == 0)
                return buf;
            p += n + (p[n] == ':');
        }
    }
    return NULL;
}

static void chromium_renders_the_page(void **state)
{
    char chrome[1024];
    if (!find_chromium(chrome, sizeof chrome)) {
        print_message("[  SKIPPED ] Chromium is absent (neither chromium nor "
                      "chromium-browser is on PATH)\n");
        skip();
    }
    fixture *fx = make_fixture("k");
    char *tmp = temp_dir(), cmd[4096];
    TMAP_CHECK(tmap_report_write_dir(&fx->r, tmp, err));
    snprintf(cmd, sizeof cmd,
             "'%s' --headless --no-sandbox --disable-gpu --screenshot='%s/report.png' "
             "--window-size=1200,1600 'file://%s/report.html' >/dev/null 2>&1",
             chrome, tmp, tmp);
    assert_int_equal(system(cmd), 0);
    assert_true(file_size(tmp, "report.png") > 1000);
    remove_tree(tmp);
    free(tmp);
    free_fixture(fx);
}

/* The model's caveat (tmap_sm_model_const_blind) in every form: 3 varying
 * constant loads from 4096 bytes against a 2048-byte cache; none with 1024
 * bytes (JSON null, no line). */
static void model_caveat_in_every_form(void **state)
{
    fixture *fx = make_fixture("k");
    tmap_sm_model sm = {.params = {.const_cache_bytes = 2048}, .const_loads = 3,
                        .const_bytes = 4096};
    tmap_model_params p = params;
    p.sm = &sm;
    fx->r.params = &p;
    char *t = render(tmap_report_text, &fx->r), *md = render(tmap_report_markdown, &fx->r);
    char *h = render(tmap_report_html, &fx->r), *j = render(tmap_report_json, &fx->r);
    char *et = render(tmap_report_estimate_text, &fx->r);
    const char *what = "3 __constant__ loads at addresses that vary over a warp, from 4096 bytes";
    assert_non_null(strstr(t, "model caveat: the SM model cannot see the constant cache"));
    assert_non_null(strstr(t, what));
    assert_non_null(strstr(et, what));
    assert_non_null(strstr(md, "## Model caveat"));
    assert_non_null(strstr(md, "3 \\_\\_constant\\_\\_ loads"));
    assert_non_null(strstr(h, "<strong>Model caveat:</strong> the SM model cannot see the constant "
                              "cache&#39;s capacity here: 3 __constant__ loads"));
    json_error_t je;
    json_t *root = json_loads(j, 0, &je);
    assert_non_null(root);
    assert_non_null(strstr(json_string_value(json_object_get(root, "model_caveat")), what));
    json_decref(root);
    free(t), free(md), free(h), free(j), free(et);
    sm.const_bytes = 1024;
    t = render(tmap_report_text, &fx->r), j = render(tmap_report_json, &fx->r);
    assert_null(strstr(t, "model caveat"));
    root = json_loads(j, 0, &je);
    assert_true(json_is_null(json_object_get(root, "model_caveat")));
    json_decref(root);
    free(t), free(j);
    free_fixture(fx);
}

/* The caveat of a model whose issue cycles are PTX counts (sass NULL to
 * tmap_sm_model_make): alone, with the constant cache's, and none with SASS
 * counts. */
static void ptx_counts_caveat(void **state)
{
    fixture *fx = make_fixture("k");
    tmap_sm_model sm = {.params = {.const_cache_bytes = 2048}, .nblocks = 1};
    tmap_model_params p = params;
    p.sm = &sm;
    fx->r.params = &p;
    char *t = render(tmap_report_text, &fx->r);
    assert_non_null(strstr(t, "model caveat: the SM model's issue cycles are PTX instruction "
                              "counts, not SASS ones"));
    assert_null(strstr(t, "constant cache"));
    free(t);
    sm.const_loads = 3, sm.const_bytes = 4096;
    t = render(tmap_report_text, &fx->r);
    assert_non_null(strstr(t, "removes instructions; the SM model cannot see the constant cache"));
    free(t);
    sm.const_loads = 0, sm.issue_sass = 1;
    t = render(tmap_report_text, &fx->r);
    assert_null(strstr(t, "model caveat"));
    free(t);
    free_fixture(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ptx_counts_caveat),
        cmocka_unit_test(text_has_rows_and_decision),
        cmocka_unit_test(unavailable_rows_say_why),
        cmocka_unit_test(json_reads_back_exactly),
        cmocka_unit_test(model_caveat_in_every_form),
        cmocka_unit_test(markdown_has_a_row_per_grouping),
        cmocka_unit_test(html_is_self_contained_and_escaped),
        cmocka_unit_test(block_breakdown_adds_up),
        cmocka_unit_test(a_report_without_rows_is_refused),
        cmocka_unit_test(write_dir_writes_four_files),
        cmocka_unit_test(cli_writes_the_report),
        cmocka_unit_test(chromium_renders_the_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_suite.c -- the benchmark suite (the manifests in benchmarks/suite): every
 * manifest loads with its thread count a multiple of its block (no tail
 * threads), its kernel compiles with NVRTC, its arrays generate and its
 * features evaluate to finite values, its instrumented PTX passes ptxas, and
 * the safety analysis allows the layout transform.  Real-data manifests are
 * skipped, saying so, until benchmarks/suite/data/prepare.sh has run.
 */
#include <dirent.h>
#include <jansson.h>
#include <math.h>

#include "tests/testutil.h"
#include "runtime/manifest.h"

#define SUITE TMAP_SOURCE_DIR "/benchmarks/suite"

/* Every manifest of the suite; suite_is_complete checks the folder has no other. */
static const char *const suite[] = {
    "marching_cubes", "sw_synthetic", "sw_swissprot", "error_correct", "nw_synthetic",
    "nw_embl", "mummer_match", "sound_localization", "stereo_match", "spmv_csr",
    "bfs_topdown", "escape_time", "path_trace", "uniform_control",
};
#define NSUITE (sizeof suite / sizeof suite[0])

/* A raw file the manifest needs and that is missing (static buffer), or NULL. */
static const char *missing_raw(const tmap_manifest *m)
{
    static char path[4096];
    for (size_t i = 0; i < m->narrays; i++) {
        if (m->arrays[i].init != TMAP_INIT_RAW)
            continue;
        snprintf(path, sizeof path, "%s/%s", m->dir, m->arrays[i].file);
        if (access(path, R_OK) != 0)
            return path;
    }
    return NULL;
}

static long json_threads(const char *path)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    json_t *t = json_object_get(root, "threads");
    long v = json_is_integer(t) ? (long)json_integer_value(t) : -1;
    json_decref(root);
    return v;
}

static void check_instrumented_ptxas(const char *ptx, const char *entry, const char *name)
{
    if (!test_have_ptxas()) {
        print_message("[  NOTE    ] no ptxas at %s: %s not assembled\n", TMAP_PTXAS_DEFAULT, name);
        return;
    }
    tmap_ptx_module *pm;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), name, &pm, err));
    tmap_cfg *cfg = NULL;
    TMAP_CHECK(tmap_bbv_instrument(pm, entry, &cfg, err));
    assert_true(cfg->nblocks > 1); /* every suite kernel branches */
    char *inst;
    TMAP_CHECK(tmap_ptx_print(pm, &inst, err));
    char log[8192];
    if (test_ptxas(inst, "sm_90", log, sizeof log) != 0)
        fail_msg("ptxas rejected the instrumented PTX of %s:\n%s", name, log);
    free(inst);
    tmap_cfg_free(cfg);
    tmap_ptx_free(pm);
}

static void check_safety(const char *ptx, const char *entry, const char *name)
{
    tmap_ptx_module *pm;
    TMAP_CHECK(tmap_ptx_parse(ptx, strlen(ptx), name, &pm, err));
    tmap_safety s;
    TMAP_CHECK(tmap_safety_analyze(pm, entry, &s, err));
    if (!s.layout_ok || s.scope != TMAP_SAFE_GRID || s.tid_as_value || s.barriers ||
        s.shared_memory || s.warp_collectives || s.atomics)
        fail_msg("%s: layout_ok %d, scope %s; reasons:\n%s", name, s.layout_ok,
                 tmap_scope_advice_name(s.scope), s.reasons);
    assert_true(s.redirect_ok);
    tmap_ptx_free(pm);
}

/* Roles: at least one per-thread output; every per-thread array has a role. */
static void check_roles(const tmap_manifest *m)
{
    int outputs = 0;
    for (size_t i = 0; i < m->narrays; i++) {
        const tmap_marray *a = &m->arrays[i];
        outputs += a->is_output && a->per_thread;
        if (a->per_thread)
            assert_true(a->is_input || a->is_output);
        if (a->is_output)
            assert_false(a->is_input); /* no inout: re-launches see the same input */
    }
    if (!outputs)
        fail_msg("%s: no per-thread output array", m->path);
    tmap_thread_array *ta;
    size_t n;
    TMAP_CHECK(tmap_manifest_thread_arrays(m, &ta, &n, err));
    assert_true(n >= 2);
    free(ta);
}

static void check_one(void **state)
{
    const char *name = *state;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", SUITE, name);
    tmap_manifest *m;
    TMAP_CHECK(tmap_manifest_load(path, &m, err));
    const char *raw = missing_raw(m);
    if (raw) {
        print_message("[  SKIPPED ] %s: %s is missing; run benchmarks/suite/data/prepare.sh\n",
                      name, raw);
        tmap_manifest_free(m);
        skip();
    }
    /* no tail threads: the launch has exactly the threads asked for */
    assert_int_equal((long)m->threads, json_threads(path));
    assert_non_null(m->key);
    check_roles(m);

    char *ptx, *entry;
    TMAP_CHECK(tmap_manifest_ptx(m, NULL, &ptx, &entry, err));
    check_instrumented_ptxas(ptx, entry, name);
    check_safety(ptx, entry, name);

    TMAP_CHECK(tmap_manifest_generate(m, 11, err));
    double *f;
    size_t n, p;
    const char *const *names;
    TMAP_CHECK(tmap_manifest_features(m, &f, &n, &p, &names, err));
    assert_int_equal(n, m->threads);
    double lo = INFINITY, hi = -INFINITY;
    size_t key = p;
    for (size_t j = 0; j < p; j++)
        if (!strcmp(names[j], m->key))
            key = j;
    assert_true(key < p);
    for (size_t t = 0; t < n; t++) {
        for (size_t j = 0; j < p; j++)
            assert_true(isfinite(f[t * p + j]));
        lo = f[t * p + key] < lo ? f[t * p + key] : lo;
        hi = f[t * p + key] > hi ? f[t * p + key] : hi;
    }
    if (!(hi > lo))
        fail_msg("%s: the key %s is constant (%g)", name, m->key, lo);
    free(f);
    free(ptx);
    free(entry);
    tmap_manifest_free(m);
}

/* The generated structures hold: starts are the scans of the lengths. */
static void starts_are_scans(void **state)
{
    static const struct { const char *manifest, *start, *len; } pairs[] = {
        {"spmv_csr", "rowstart", "rowlen"}, {"bfs_topdown", "edgestart", "degree"},
        {"sw_synthetic", "seqstart", "seqlen"}, {"nw_synthetic", "bstart", "blen"},
        {"error_correct", "rstart", "rlen"},
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.json", SUITE, pairs[k].manifest);
        tmap_manifest *m;
        TMAP_CHECK(tmap_manifest_load(path, &m, err));
        TMAP_CHECK(tmap_manifest_generate(m, 5, err));
        const int32_t *s = m->arrays[tmap_manifest_find(m, pairs[k].start)].host;
        const int32_t *l = m->arrays[tmap_manifest_find(m, pairs[k].len)].host;
        int64_t sum = 0;
        for (size_t t = 0; t < m->threads; t++) {
            if (s[t] != sum)
                fail_msg("%s: %s[%zu] = %d, expected %lld", pairs[k].manifest, pairs[k].start, t,
                         s[t], (long long)sum);
            assert_true(l[t] >= 1);
            sum += l[t];
        }
        tmap_manifest_free(m);
    }
}

/* Every .json of the folder is in the list above (so it is tested). */
static void suite_is_complete(void **state)
{
    DIR *d = opendir(SUITE);
    assert_non_null(d);
    struct dirent *e;
    size_t found = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        int known = 0;
        for (size_t i = 0; i < NSUITE; i++)
            known |= strlen(suite[i]) == len - 5 && !strncmp(suite[i], e->d_name, len - 5);
        if (!known)
            fail_msg("benchmarks/suite/%s is not in tests/test_suite.c's list", e->d_name);
        found++;
    }
    closedir(d);
    assert_int_equal(found, NSUITE);
}

int main(void)
{
    struct CMUnitTest tests[NSUITE + 2];
    for (size_t i = 0; i < NSUITE; i++)
        tests[i] = (struct CMUnitTest){suite[i], check_one, NULL, NULL, (void *)suite[i]};
    tests[NSUITE] = (struct CMUnitTest)cmocka_unit_test(starts_are_scans);
    tests[NSUITE + 1] = (struct CMUnitTest)cmocka_unit_test(suite_is_complete);
    return _cmocka_run_group_tests("suite", tests, NSUITE + 2, NULL, NULL);
}

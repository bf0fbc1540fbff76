/*
 * test_api_edges.c -- the C API's edges (issue 14 item 16): every public
 * function that returns a tmap_status, given NULL for each pointer, fails
 * with TMAP_ERR_INVALID and a message instead of crashing; every public free
 * function accepts NULL.  Each call runs in a child process, so that one
 * crash names its call and the others still run.
 */
#include <locale.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/base.h"
#include "threadmap.h"

static int failures;

/* In a child: crashes kill it (cmocka's handlers would carry on). */
static void child_defaults(void)
{
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        signal(sigs[i], SIG_DFL);
}

/* Waits for the child that ran `call`: it exits 0 when the call did as it
 * should. */
static void judge(const char *call, pid_t pid)
{
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        fail_msg("fork or wait failed for %s", call);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return;
    failures++;
    if (WIFSIGNALED(st))
        print_message("CRASH (signal %d): %s\n", WTERMSIG(st), call);
    else if (WEXITSTATUS(st) == 99)
        print_message("no message: %s\n", call);
    else
        print_message("status %d, not TMAP_ERR_INVALID: %s\n", WEXITSTATUS(st) - 100, call);
}

/* expr, a tmap_status, must be TMAP_ERR_INVALID (or `alt`) with a message. */
#define CALL(expr) CALL_OR(expr, TMAP_ERR_INVALID)
#define CALL_OR(expr, alt)                                                           \
    do {                                                                             \
        fflush(NULL);                                                                \
        pid_t pid_ = fork();                                                         \
        if (pid_ == 0) {                                                             \
            tmap_error e_ = {0}, *e = &e_;                                           \
            (void)e;                                                                 \
            child_defaults();                                                        \
            tmap_status s_ = (expr);                                                 \
            int ok_ = s_ == TMAP_ERR_INVALID || s_ == (alt);                         \
            _exit(!ok_ ? 100 + (int)s_ : e_.message[0] ? 0 : 99);                    \
        }                                                                            \
        judge(#expr, pid_);                                                          \
    } while (0)

/* expr, a tmap_status of a function without an error argument, must be
 * TMAP_ERR_INVALID. */
#define CALL_NOERR(expr)                                                             \
    do {                                                                             \
        fflush(NULL);                                                                \
        pid_t pid_ = fork();                                                         \
        if (pid_ == 0) {                                                             \
            child_defaults();                                                        \
            tmap_status s_ = (expr);                                                 \
            _exit(s_ != TMAP_ERR_INVALID ? 100 + (int)s_ : 0);                       \
        }                                                                            \
        judge(#expr, pid_);                                                          \
    } while (0)

/* expr, a free function's call, must return. */
#define FREE(expr)                                                                   \
    do {                                                                             \
        fflush(NULL);                                                                \
        pid_t pid_ = fork();                                                         \
        if (pid_ == 0) {                                                             \
            child_defaults();                                                        \
            expr;                                                                    \
            _exit(0);                                                                \
        }                                                                            \
        judge(#expr, pid_);                                                          \
    } while (0)

static void test_null_arguments(void **state)
{
    (void)state;
    failures = 0;
    CALL(tmap_bbv_create(NULL, 0, 0, e));
    CALL(tmap_npy_parse(NULL, 0, NULL, NULL, e));
    CALL(tmap_npy_read(NULL, NULL, e));
    CALL(tmap_npy_save(NULL, (tmap_npy_dtype)0, NULL, 0, NULL, e));
    CALL(tmap_npy_load_u32(NULL, (tmap_npy_rank)0, NULL, NULL, e));
    CALL(tmap_npy_load_i64(NULL, (tmap_npy_rank)0, NULL, NULL, e));
    CALL(tmap_npy_load_f64(NULL, (tmap_npy_rank)0, NULL, NULL, e));
    CALL(tmap_npy_save_u32(NULL, NULL, 0, NULL, e));
    CALL(tmap_npy_save_i32(NULL, NULL, 0, NULL, e));
    CALL(tmap_npy_save_i64(NULL, NULL, 0, NULL, e));
    CALL(tmap_npy_save_f64(NULL, NULL, 0, NULL, e));
    CALL(tmap_bbv_save(NULL, NULL, NULL, e));
    CALL(tmap_bbv_load(NULL, NULL, NULL, e));
    CALL(tmap_compile(NULL, NULL, NULL, NULL, e));
    CALL(tmap_ptx_parse(NULL, 0, NULL, NULL, e));
    CALL(tmap_ptx_print(NULL, NULL, e));
    CALL(tmap_cfg_build(NULL, NULL, NULL, e));
    CALL(tmap_sass_block_counts(NULL, NULL, NULL, NULL, NULL, e));
    CALL(tmap_sass_count_listing(NULL, NULL, NULL, NULL, e));
    CALL(tmap_sass_tool_find(NULL, NULL, 0, e));
    CALL(tmap_bbv_instrument(NULL, NULL, NULL, e));
    CALL(tmap_redirect_instrument(NULL, NULL, e));
    CALL(tmap_safety_analyze(NULL, NULL, NULL, e));
    CALL(tmap_latency_ptx(NULL, 0, NULL, NULL, e));
    CALL(tmap_latency_measure_results(NULL, NULL, NULL, NULL, e));
    CALL(tmap_latency_measure(NULL, NULL, NULL, e));
    CALL(tmap_lat_check(NULL, 0, NULL, e));
    CALL(tmap_lat_parse(NULL, 0, NULL, NULL, e));
    CALL(tmap_lat_load(NULL, NULL, e));
    CALL(tmap_lat_lookup_opcode(NULL, NULL, NULL, e));
    CALL(tmap_lat_blocks(NULL, NULL, NULL, NULL, e));
    CALL(tmap_lat_chains(NULL, NULL, NULL, NULL, 0, 0, NULL, e));
    CALL(tmap_lat_chains_dataflow(NULL, NULL, NULL, NULL, 0, 0, NULL, e));
    CALL(tmap_lat_default_path(NULL, NULL, 0, e));
    CALL(tmap_sched_dynamic(NULL, 0, 0, 0, NULL, NULL, e));
    CALL(tmap_sched_static(NULL, 0, 0, 0, NULL, NULL, e));
    CALL(tmap_metrics_compute(NULL, NULL, NULL, NULL, NULL, NULL, e));
    CALL(tmap_perm_check(NULL, 0, NULL, e));
    CALL(tmap_warp_counts_make(NULL, NULL, 0, NULL, e));
    CALL(tmap_sm_time(NULL, NULL, NULL, NULL, e));
    CALL(tmap_sm_blocks(NULL, NULL, NULL, NULL, NULL, 0, NULL, e));
    CALL(tmap_sm_model_make(NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, NULL, e));
    CALL(tmap_sm_model_time(NULL, NULL, NULL, NULL, e));
    CALL(tmap_access_list(NULL, NULL, NULL, NULL, e));
    CALL(tmap_access_const_bytes(NULL, NULL, e));
    CALL(tmap_regress_fit(NULL, 0, 0, NULL, NULL, NULL, NULL, e));
    CALL(tmap_regress_cv(NULL, 0, 0, 0, 0, NULL, e));
    CALL(tmap_predict(NULL, NULL, 0, NULL, e));
    CALL(tmap_predictor_save(NULL, NULL, e));
    CALL(tmap_predictor_load(NULL, NULL, 0, NULL, NULL, e));
    CALL(tmap_regroup_launch(NULL, NULL, (tmap_mechanism)0, 0, NULL, e));
    CALL(tmap_regroup(NULL, NULL, (tmap_mechanism)0, NULL, NULL, NULL, NULL, 0, NULL, NULL, e));
    CALL(tmap_evaluate(NULL, NULL, NULL, NULL, e));
    CALL(tmap_pipeline_profile(NULL, NULL, NULL, e));
    CALL(tmap_bench_kernel_run(NULL, NULL, NULL, NULL, 0, NULL, e));
    CALL(tmap_regroup_identity(0, NULL, e));
    CALL(tmap_regroup_sort(NULL, NULL, NULL, e));
    CALL(tmap_regroup_sort_key(NULL, 0, 0, NULL, NULL, e));
    CALL(tmap_regroup_greedy(NULL, NULL, NULL, NULL, e));
    CALL(tmap_regroup_greedy_max(NULL, NULL, NULL, NULL, e));
    CALL(tmap_regroup_check(NULL, 0, NULL, e));
    CALL(tmap_algo_run((tmap_algo)0, NULL, NULL, NULL, NULL, NULL, e));
    CALL(tmap_plan_make(NULL, NULL, NULL, NULL, NULL, e));
    CALL(tmap_report_text(NULL, NULL, e));
    CALL(tmap_report_markdown(NULL, NULL, e));
    CALL(tmap_report_json(NULL, NULL, e));
    CALL(tmap_report_html(NULL, NULL, e));
    CALL(tmap_report_estimate_text(NULL, NULL, e));
    CALL(tmap_report_estimate_json(NULL, NULL, e));
    CALL(tmap_report_plan_json(NULL, NULL, NULL, e));
    CALL(tmap_report_write_dir(NULL, NULL, e));
    CALL(tmap_bench_csv(NULL, NULL, e));
    CALL(tmap_bench_json(NULL, NULL, NULL, e));
    CALL(tmap_bench_markdown(NULL, NULL, NULL, e));
    CALL(tmap_bench_svg_scatter(NULL, (tmap_bench_metric)0, NULL, e));
    CALL(tmap_bench_svg_speedup(NULL, 0, NULL, e));
    CALL(tmap_bench_write_dir(NULL, NULL, e));
    CALL(tmap_cuda_open(0, NULL, e));
    CALL(tmap_cuda_info(NULL, NULL, e));
    CALL(tmap_cuda_alloc(NULL, 0, NULL, e));
    CALL(tmap_cuda_upload(NULL, 0, NULL, 0, e));
    CALL(tmap_cuda_download(NULL, NULL, 0, 0, e));
    CALL(tmap_cuda_copy(NULL, 0, 0, 0, e));
    CALL(tmap_cuda_zero(NULL, 0, 0, e));
    CALL(tmap_kernel_load(NULL, NULL, NULL, NULL, e));
    CALL(tmap_kernel_global(NULL, NULL, NULL, NULL, e));
    CALL(tmap_kernel_run(NULL, NULL, e));
    CALL(tmap_kernel_enqueue(NULL, NULL, NULL, e));
    CALL(tmap_kernel_time(NULL, NULL, 0, 0, NULL, e));
    CALL(tmap_kernel_stats_get(NULL, NULL, NULL, e));
    CALL(tmap_profile_run(NULL, NULL, NULL, NULL, 0, NULL, e));
    CALL(tmap_counting_load(NULL, NULL, NULL, NULL, 0, NULL, e));
    CALL(tmap_counting_reset(NULL, e));
    CALL(tmap_counting_read(NULL, NULL, e));
    CALL(tmap_manifest_load(NULL, NULL, e));
    CALL(tmap_manifest_ptx(NULL, NULL, NULL, NULL, e));
    CALL(tmap_manifest_generate(NULL, 0, e));
    CALL(tmap_manifest_bind(NULL, NULL, NULL, e));
    CALL(tmap_manifest_fetch(NULL, NULL, e));
    CALL_NOERR(tmap_manifest_array(NULL, 0, NULL));
    CALL(tmap_manifest_thread_arrays(NULL, NULL, NULL, e));
    CALL(tmap_manifest_features(NULL, NULL, NULL, NULL, NULL, e));
    CALL(tmap_layout_launch(NULL, NULL, NULL, 0, NULL, 0, NULL, e));
    CALL(tmap_layout_create(NULL, NULL, NULL, 0, NULL, e));
    CALL(tmap_layout_apply(NULL, NULL, NULL, 0, NULL, NULL, e));
    CALL(tmap_layout_gather(NULL, 0, NULL, e));
    CALL(tmap_layout_scatter(NULL, 0, NULL, e));
    /* a build without nvcc says so first */
    CALL_OR(tmap_gpu_regroup_create(NULL, 0, NULL, e), TMAP_ERR_UNSUPPORTED);
    CALL_OR(tmap_gpu_regroup_model(NULL, NULL, NULL, 0, 0, e), TMAP_ERR_UNSUPPORTED);
    CALL_OR(tmap_gpu_regroup_cost(NULL, 0, NULL, e), TMAP_ERR_UNSUPPORTED);
    CALL_OR(tmap_gpu_regroup_sort(NULL, 0, 0, 0, 0, NULL, e), TMAP_ERR_UNSUPPORTED);
    CALL_OR(tmap_gpu_regroup_run(NULL, 0, 0, 0, 0, NULL, e), TMAP_ERR_UNSUPPORTED);
    CALL_OR(tmap_gpu_regroup_sync(NULL, NULL, e), TMAP_ERR_UNSUPPORTED);
    CALL(tmap_redirect_load(NULL, NULL, NULL, NULL, e));
    CALL(tmap_redirect_set(NULL, 0, e));
    CALL(tmap_pipeline_check(NULL, 0, NULL, e));
    CALL(tmap_attach_feature_parse(NULL, NULL, e));
    CALL(tmap_attach_opts_check(NULL, e));
    CALL(tmap_attach_profile(NULL, NULL, NULL, e));
    CALL(tmap_attach_file_ptx(NULL, NULL, 0, NULL, NULL, e));
    CALL(tmap_attach_params(NULL, NULL, NULL, NULL, e));
    CALL(tmap_pipeline_open(NULL, 0, 0, NULL, e));
    CALL(tmap_check_print(NULL, 0, NULL, e));
    CALL(tmap_regrouper_create(NULL, NULL, NULL, 0, NULL, NULL, e));
    CALL(tmap_regrouper_begin(NULL, 0, NULL, e));
    CALL(tmap_regrouper_end(NULL, NULL, e));
    CALL(tmap_regrouper_launch(NULL, NULL, 0, NULL, e));
    CALL(tmap_regrouper_poll(NULL, 0, NULL, e));
    CALL(tmap_regroup_deal(NULL, 0, 0, 0, NULL, e));
    CALL(tmap_regroup_bin_deal(NULL, NULL, NULL, NULL, e));
    CALL(tmap_timer_create(NULL, NULL, e));
    CALL(tmap_timer_start(NULL, NULL, e));
    CALL(tmap_timer_stop(NULL, NULL, e));
    CALL(tmap_timer_poll(NULL, NULL, NULL, e));
    CALL_OR(tmap_gpu_regroup_deal(NULL, 0, 0, 0, NULL, e), TMAP_ERR_UNSUPPORTED);
    assert_int_equal(failures, 0);
}

static void test_free_null(void **state)
{
    (void)state;
    failures = 0;
    FREE(tmap_bbv_free(NULL));
    FREE(tmap_npy_array_free(NULL));
    FREE(tmap_names_free(NULL, 0));
    FREE(tmap_compiled_free(NULL));
    FREE(tmap_ptx_free(NULL));
    FREE(tmap_cfg_free(NULL));
    FREE(tmap_sass_splits_free(NULL));
    FREE(tmap_lat_free(NULL));
    FREE(tmap_lat_report_free(NULL));
    FREE(tmap_metrics_free(NULL));
    FREE(tmap_cv_result_free(NULL));
    FREE(tmap_predictor_free(NULL));
    FREE(tmap_eval_free(NULL));
    FREE(tmap_plan_free(NULL));
    FREE(tmap_cuda_free(NULL, 0));
    FREE(tmap_kernel_free(NULL));
    FREE(tmap_profile_free(NULL));
    FREE(tmap_counting_free(NULL));
    FREE(tmap_manifest_free(NULL));
    FREE(tmap_layout_free(NULL));
    FREE(tmap_gpu_regroup_free(NULL));
    FREE(tmap_regrouper_free(NULL));
    FREE(tmap_timer_free(NULL));
    assert_int_equal(failures, 0);
}

/* Functions that cannot fail, given NULL, return (a neutral value) and do
 * not crash. */
static void test_other_functions_null(void **state)
{
    (void)state;
    failures = 0;
    FREE((void)tmap_bbv_sidecar_path(NULL));
    FREE((void)tmap_nvrtc_version(NULL, NULL));
    FREE((void)tmap_compiled_lowered(NULL, NULL));
    FREE((void)tmap_ptx_num_kernels(NULL));
    FREE((void)tmap_ptx_kernel_name(NULL, 0));
    FREE(tmap_ptx_version(NULL, NULL, NULL));
    FREE(tmap_ptx_set_version(NULL, 0, 0));
    FREE((void)tmap_latency_probes(NULL));
    FREE((void)tmap_latency_find(NULL));
    FREE((void)tmap_latency_check(0, 0, NULL, NULL, 0));
    FREE((void)tmap_lat_arch(NULL));
    FREE((void)tmap_lat_device(NULL));
    FREE((void)tmap_lat_class_of(NULL));
    FREE((void)tmap_lat_num_entries(NULL));
    FREE(tmap_lat_entry(NULL, 0, NULL, NULL, NULL, NULL));
    FREE((void)tmap_cfg_hash(0, NULL));
    FREE((void)tmap_mechanism_choose(NULL, 0));
    FREE((void)tmap_bench_geomean(NULL, 0));
    FREE((void)tmap_bench_find(NULL, NULL));
    FREE(tmap_bench_derive(NULL, 0, 0));
    FREE(tmap_bench_summarize(NULL, NULL));
    FREE((void)tmap_algo_parse(NULL));
    FREE(tmap_run_report(NULL, NULL, NULL, NULL));
    FREE(tmap_bench_scatter_file(0, NULL, 0));
    FREE(tmap_cuda_close(NULL));
    FREE((void)tmap_device_json(NULL));
    FREE(tmap_cuda_arch(NULL, NULL, 0));
    FREE((void)tmap_launch_threads(NULL));
    FREE((void)tmap_launch_blocks(NULL));
    FREE((void)tmap_counting_kernel(NULL));
    FREE((void)tmap_counting_cfg(NULL));
    FREE((void)tmap_manifest_name(NULL));
    FREE((void)tmap_manifest_num_arrays(NULL));
    FREE((void)tmap_layout_copy_ptr(NULL, 0));
    FREE((void)tmap_gpu_regroup_cost_ptr(NULL));
    FREE((void)tmap_launch_block_size(NULL));
    FREE((void)tmap_regrouper_ptr(NULL, 0));
    FREE((void)tmap_regrouper_chosen(NULL));
    FREE((void)tmap_regrouper_why(NULL));
    assert_int_equal(failures, 0);
}

/* Switches the process to a comma-decimal locale (generated under the
 * build folder with localedef when the system lacks it); 0 if impossible. */
static int comma_locale(void)
{
    if (setlocale(LC_ALL, "de_DE.UTF-8"))
        return 1;
    const char *dir = TMAP_BINARY_DIR "/locale";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' "
                              ">/dev/null 2>&1", dir, dir);
    if (system(cmd) != 0)
        return 0;
    setenv("LOCPATH", dir, 1);
    return setlocale(LC_ALL, "de_DE.UTF-8") != NULL;
}

/* A host application in de_DE: tables and predictors read and write '.'
 * (issue 14 item 16: strtod read "4.5" as 4 and printf wrote "0,25"). */
static void test_comma_locale(void **state)
{
    (void)state;
    if (!comma_locale()) {
        print_message("[  SKIPPED ] no de_DE.UTF-8 locale and localedef could not make one\n");
        skip();
    }
    char probe[32];
    snprintf(probe, sizeof probe, "%.2f", 0.25);
    assert_string_equal(probe, "0,25"); /* the locale is in force */
    tmap_error e = {0};
    tmap_lat_table *t = NULL;
    const char *text = "add.s32\t4.5\t0.5\tsrc\nclass:default\t1\t-\tsrc\n";
    assert_int_equal(tmap_lat_parse(text, strlen(text), "t.tsv", &t, &e), TMAP_OK);
    tmap_lat_lookup how;
    assert_int_equal(tmap_lat_lookup_opcode(t, "add.s32", &how, &e), TMAP_OK);
    assert_true(how.latency == 4.5 && how.issue == 0.5);
    tmap_lat_free(t);
    tmap_attach_key key; /* run mode's key kernel: "2,5" would be C's comma operator */
    const char *expr = "arg0[t] * 2.5";
    assert_int_equal(tmap_attach_key_make(&expr, 1, NULL, 0, &key, &e), TMAP_OK);
    if (!strstr(key.source, ", hi0) * 2.5);"))
        fail_msg("%s", key.source);
    tmap_attach_key_free(&key);
    char *kb[] = {"k/b0"}, *fn[] = {"f0"};
    double coef[3] = {0.25, -1.5, 1e-3}, r2 = 0.5, rms = 0.125;
    size_t rank = 3;
    tmap_predictor p = {"k", 0, 1, kb, 1, fn, coef, &r2, &rms, &rank, {0}}, back;
    p.cfg_hash = tmap_cfg_hash(1, (const char *const *)kb);
    const char *path = TMAP_BINARY_DIR "/comma.model";
    assert_int_equal(tmap_predictor_save(path, &p, &e), TMAP_OK);
    char *saved = NULL;
    assert_int_equal(tmap_file_read(path, &saved, NULL, &e), TMAP_OK);
    assert_non_null(strstr(saved, "coef 0 0.25 -1.5 0.001"));
    free(saved);
    if (tmap_predictor_load(path, "k", 1, NULL, &back, &e))
        fail_msg("%s", e.message);
    assert_true(back.coef[0] == 0.25 && back.coef[1] == -1.5 && back.rms[0] == 0.125);
    tmap_predictor_free(&back);
    /* and the reports print '.' */
    tmap_bbv bbv;
    assert_int_equal(tmap_bbv_create(&bbv, 32, 1, &e), TMAP_OK);
    for (uint32_t i = 0; i < 32; i++)
        bbv.counts[i] = i < 16;
    double lat[1] = {1.5};
    tmap_model_params mp = {.block_size = 32, .nsms = 1, .blocks_per_sm = 1};
    tmap_metrics m;
    assert_int_equal(tmap_metrics_compute(&bbv, lat, NULL, NULL, &mp, &m, &e), TMAP_OK);
    tmap_report_row row = {.name = "original", .available = 1, .m = &m, .outputs_equal = -1};
    tmap_report r = {.bbv = &bbv, .lat = lat, .params = &mp, .nrows = 1, .rows = &row};
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_int_equal(tmap_report_estimate_text(&r, f, &e), TMAP_OK);
    fclose(f);
    if (!strstr(out, "1.5") || strstr(out, "1,5"))
        fail_msg("the estimate does not print 1.5:\n%s", out);
    free(out);
    tmap_metrics_free(&m);
    tmap_bbv_free(&bbv);
    setlocale(LC_ALL, "C");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_other_functions_null),
        cmocka_unit_test(test_comma_locale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

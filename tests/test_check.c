/*
 * test_check.c -- tmap_pipeline_check without a GPU: a clean manifest
 * (every step done, exact counts), one with two independent findings (both
 * kept, dependent steps skipped), one that does not load, and the printed
 * text and JSON of each.
 */
#include "tests/testutil.h"
#include "threadmap/pipeline.h"

#define DIR TMAP_SOURCE_DIR "/tests/manifests/"

static char *printed(const tmap_check *c, int json)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    TMAP_CHECK(tmap_check_print(c, json, f, err));
    fclose(f);
    return text;
}

static void clean_manifest(void **state)
{
    tmap_check *c = malloc(sizeof *c);
    TMAP_CHECK(tmap_pipeline_check(DIR "loop_small.json", 5, c, err));
    assert_true(c->loaded && c->compiled && c->generated && c->features_done && c->safety_done);
    assert_string_equal(c->entry, "loop_per_thread");
    assert_int_equal(c->threads, 5120);
    assert_int_equal(c->grid[0], 40);
    assert_int_equal(c->nargs, 3);
    assert_true(c->bytes == 2 * 5120 * 4);
    assert_int_equal(c->nfindings, 0);
    char *text = printed(c, 0), *json = printed(c, 1);
    assert_non_null(strstr(text, "= 5120 threads"));
    assert_non_null(strstr(text, "findings: 0\n"));
    assert_non_null(strstr(json, "\"ok\": true"));
    assert_non_null(strstr(json, "\"seed\": 5"));
    free(text), free(json), free(c);
}

/* PTX compiled from the manifest's source names that source, never a
 * made-up PTX file: the safety findings cite "<PTX of K compiled by NVRTC
 * from PATH>", its PTX line and (compiled with -lineinfo) the source line. */
static void findings_cite_the_source(void **state)
{
    tmap_check *c = malloc(sizeof *c);
    TMAP_CHECK(tmap_pipeline_check(DIR "vote_lineinfo.json", 1, c, err));
    assert_true(c->safety_done);
    const char *want = "<PTX of warp_vote compiled by NVRTC from " DIR "../kernels/warp_vote.cu>:";
    const char *at = strstr(c->safety.reasons, want);
    if (!at || !strstr(at, " (warp_vote.cu:5): `setp.ge.s32`"))
        fail_msg("%s", c->safety.reasons);
    assert_null(strstr(c->safety.reasons, "warp_vote:"));
    free(c);
}

static void findings_are_all_kept(void **state)
{
    tmap_check *c = malloc(sizeof *c);
    tmap_error e = {0};
    assert_int_equal(tmap_pipeline_check(DIR "check_bad_two.json", 1, c, &e), TMAP_ERR_INVALID);
    assert_non_null(strstr(e.message, "field 'args': 2 arguments"));
    assert_int_equal(c->nfindings, 2);
    assert_string_equal(c->findings[0].message, e.message);
    assert_non_null(strstr(c->findings[1].message, "features.next, thread 5119"));
    assert_true(c->loaded && !c->compiled && !c->safety_done && c->generated && !c->features_done);
    char *json = printed(c, 1);
    assert_non_null(strstr(json, "\"ok\": false"));
    assert_non_null(strstr(json, "\"safety\": null"));
    assert_non_null(strstr(json, "\"entry\": null"));
    free(json);
    assert_int_equal(tmap_pipeline_check("/nonexistent.json", 1, c, &e), TMAP_ERR_IO);
    assert_true(!c->loaded && c->nfindings == 1);
    char *text = printed(c, 0);
    assert_non_null(strstr(text, "findings: 1\n  /nonexistent.json"));
    free(text), free(c);
    assert_int_equal(tmap_pipeline_check(NULL, 1, NULL, &e), TMAP_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_manifest),
        cmocka_unit_test(findings_cite_the_source),
        cmocka_unit_test(findings_are_all_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

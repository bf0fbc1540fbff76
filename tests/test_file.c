/*
 * test_file.c -- whole-file writes (common/file.c): a replaced file keeps
 * its mode, the temporary name cannot collide with what is there, non-regular
 * files are written in place, and a file set replaces all its files or none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "common/base.h"

#define DIR TMAP_BINARY_DIR "/file_test/"

static void assert_content(const char *path, const char *want)
{
    char *text = NULL;
    tmap_error err = {0};
    assert_int_equal(tmap_file_read(path, &text, NULL, &err), TMAP_OK);
    assert_string_equal(text, want);
    free(text);
}

static void setup_dir(void)
{
    tmap_error err = {0};
    assert_int_equal(tmap_dir_make(DIR, &err), TMAP_OK);
}

static void test_mode_kept(void **state)
{
    (void)state;
    tmap_error err = {0};
    struct stat st;
    setup_dir();
    assert_int_equal(tmap_file_write(DIR "m.txt", "a", 1, &err), TMAP_OK);
    assert_int_equal(chmod(DIR "m.txt", 0640), 0);
    assert_int_equal(tmap_file_write(DIR "m.txt", "bc", 2, &err), TMAP_OK);
    assert_int_equal(stat(DIR "m.txt", &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_content(DIR "m.txt", "bc");
}

static void test_stale_temporary(void **state)
{
    (void)state;
    tmap_error err = {0};
    setup_dir();
    /* the fixed name the old writer used is taken (by a folder) */
    mkdir(DIR "t.txt.tmp~", 0777);
    assert_int_equal(tmap_file_write(DIR "t.txt", "x", 1, &err), TMAP_OK);
    assert_content(DIR "t.txt", "x");
}

static void test_not_regular(void **state)
{
    (void)state;
    tmap_error err = {0};
    struct stat st;
    assert_int_equal(tmap_file_write("/dev/null", "x", 1, &err), TMAP_OK);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void test_set_all_or_none(void **state)
{
    (void)state;
    tmap_error err = {0};
    tmap_file_set set = {0};
    setup_dir();
    assert_int_equal(tmap_file_write(DIR "s1.txt", "old1", 4, &err), TMAP_OK);
    assert_int_equal(tmap_file_set_add(&set, DIR "s1.txt", "new1", 4, &err), TMAP_OK);
    assert_int_not_equal(tmap_file_set_add(&set, DIR "no/such/s2.txt", "new2", 4, &err),
                         TMAP_OK);
    assert_non_null(strstr(err.message, "no/such/s2.txt"));
    tmap_file_set_abort(&set);
    assert_content(DIR "s1.txt", "old1");
    assert_int_equal(set.n, 0);
    assert_int_equal(tmap_file_set_add(&set, DIR "s1.txt", "new1", 4, &err), TMAP_OK);
    assert_int_equal(tmap_file_set_add(&set, DIR "s2.txt", "new2", 4, &err), TMAP_OK);
    assert_content(DIR "s1.txt", "old1"); /* nothing replaced before the commit */
    assert_int_equal(tmap_file_set_commit(&set, &err), TMAP_OK);
    assert_content(DIR "s1.txt", "new1");
    assert_content(DIR "s2.txt", "new2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_kept),
        cmocka_unit_test(test_stale_temporary),
        cmocka_unit_test(test_not_regular),
        cmocka_unit_test(test_set_all_or_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

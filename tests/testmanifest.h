/*
 * testmanifest.h -- what the manifest tests share: loading a manifest
 * written from a string into a temporary file.  Included after testutil.h
 * by test programs only.
 */
#ifndef TMAP_TESTS_TESTMANIFEST_H
#define TMAP_TESTS_TESTMANIFEST_H

#include "runtime/manifest.h"
#include "tests/testutil.h"

/* text in a new temporary file; the path is malloc'ed. */
static inline char *test_write_tmp(const char *text)
{
    static const char tmpl[] = "/tmp/tmap_manifest_XXXXXX";
    char *path = malloc(sizeof tmpl);
    memcpy(path, tmpl, sizeof tmpl);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* tmap_manifest_load of a manifest whose JSON is `text`. */
static inline tmap_status test_load_text(const char *text, tmap_manifest **m, tmap_error *e)
{
    char *path = test_write_tmp(text);
    tmap_status st = tmap_manifest_load(path, m, e);
    unlink(path);
    free(path);
    return st;
}

/* Fails unless loading `text` fails with a message containing `needle`. */
static inline void test_load_fails(const char *text, const char *needle)
{
    tmap_manifest *m = NULL;
    tmap_error e = {0};
    if (test_load_text(text, &m, &e) == TMAP_OK)
        fail_msg("accepted: %.200s", text);
    assert_null(m);
    if (!strstr(e.message, needle))
        fail_msg("'%s' does not mention '%s'", e.message, needle);
}

#endif

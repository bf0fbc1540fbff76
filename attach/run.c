/*
 * run.c (attach) -- `threadmap profile -- ./app`'s side: the application
 * started with libthreadmap_attach.so preloaded and the options in its
 * environment, waited for, and what the library reported back checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/env.h"
#include "attach/process.h"
#include "common/base.h"

/* The library: given, else $THREADMAP_ATTACH_LIB, else the one built beside
 * this library, else the installed one. */
static const char *library(const tmap_attach_opts *o)
{
    const char *env = getenv("THREADMAP_ATTACH_LIB");
    if (o->library)
        return o->library;
    if (env && *env)
        return env;
    return access(TMAP_ATTACH_LIB_BUILD, R_OK) == 0 ? TMAP_ATTACH_LIB_BUILD
                                                    : TMAP_ATTACH_LIB_INSTALL;
}

static tmap_status preload(const char *lib, tmap_error *err)
{
    if (access(lib, R_OK))
        return tmap_fail(err, TMAP_ERR_IO, "%s: the attach library is missing", lib);
    const char *old = getenv("LD_PRELOAD");
    tmap_buf b = {0};
    tmap_buf_printf(&b, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    int bad = b.oom || setenv("LD_PRELOAD", b.data, 1);
    tmap_buf_free(&b);
    return bad ? tmap_fail(err, TMAP_ERR_NOMEM, "cannot set LD_PRELOAD") : TMAP_OK;
}

static char *out_file(const char *dir, const char *name)
{
    tmap_buf b = {0};
    tmap_buf_printf(&b, "%s/%s", dir, name);
    return b.data;
}

/* The library's first failure (the first line of errors.txt), with `more`
 * after it; TMAP_OK when there is none. */
static tmap_status first_failure(const tmap_attach_opts *o, int more, tmap_error *err)
{
    char *errors = out_file(o->out, TMAP_ATTACH_ERRORS), *text = NULL;
    size_t n = 0;
    tmap_status st = TMAP_OK;
    if (errors && tmap_file_read(errors, &text, &n, NULL) == TMAP_OK && n) {
        text[strcspn(text, "\n")] = '\0';
        st = tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s%s%s%s", text, more ? " (all failures: " : "",
                       more ? errors : "", more ? ")" : "");
    }
    free(text);
    free(errors);
    return st;
}

/* "WHAT: no kernel launched matching 'REGEX'". */
static tmap_status nothing_selected(const tmap_attach_opts *o, const char *what, tmap_error *err)
{
    return tmap_fail(err, TMAP_ERR_INVALID, "%s: no kernel launched %s%s%s", what,
                     o->kernel_regex ? "matching '" : "", o->kernel_regex ? o->kernel_regex : "",
                     o->kernel_regex ? "'" : "at all (or only skipped ones)");
}

/* The library's report: its first failure, or that nothing was profiled. */
static tmap_status reported(const tmap_attach_opts *o, tmap_error *err)
{
    char *launches = out_file(o->out, TMAP_ATTACH_LAUNCHES);
    tmap_status st = first_failure(o, 1, err);
    if (st == TMAP_OK && launches && access(launches, R_OK))
        st = nothing_selected(o, "no launch was profiled", err);
    free(launches);
    return st;
}

static void clear_reports(const char *dir)
{
    const char *names[] = {TMAP_ATTACH_ERRORS, TMAP_ATTACH_LAUNCHES};
    for (size_t i = 0; i < 2; i++) {
        char *p = out_file(dir, names[i]);
        if (p)
            unlink(p);
        free(p);
    }
}

/* The application under the library, the options in its environment. */
static tmap_status run_app(const tmap_attach_opts *o, char *const argv[], int *app_exit,
                           tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, o, argv, app_exit);
    if (st)
        return st;
    *app_exit = 0;
    if (!argv[0])
        return tmap_fail(err, TMAP_ERR_INVALID, "no application to run after --");
    st = tmap_attach_opts_check(o, err);
    if (st == TMAP_OK)
        st = tmap_dir_make(o->out, err);
    if (st == TMAP_OK) {
        clear_reports(o->out);
        st = tmap_attach_env_set(o, err);
    }
    if (st == TMAP_OK)
        st = preload(library(o), err);
    if (st == TMAP_OK)
        st = tmap_process_wait(argv, app_exit, err);
    return st;
}

tmap_status tmap_attach_profile(const tmap_attach_opts *o, char *const argv[], int *app_exit,
                                tmap_error *err)
{
    tmap_status st = o && o->run ? tmap_fail(err, TMAP_ERR_INVALID, "tmap_attach_profile: the "
                                             "options are run mode's") : run_app(o, argv, app_exit, err);
    return st == TMAP_OK ? reported(o, err) : st;
}

/* Run mode's report: the summary, then the first kernel left alone. */
static tmap_status summarized(const tmap_attach_opts *o, char **summary, tmap_error *err)
{
    char *path = out_file(o->out, TMAP_ATTACH_SUMMARY);
    size_t n = 0;
    tmap_status st = path ? tmap_file_read(path, summary, &n, NULL) : TMAP_ERR_NOMEM;
    if (st != TMAP_OK)
        st = tmap_fail(err, TMAP_ERR_INVALID, "the application left no run summary (%s): it "
                       "made no CUDA call through the attach library", path ? path : "");
    if (st == TMAP_OK)
        st = first_failure(o, 0, err);
    if (st == TMAP_OK && strstr(*summary, "no selected kernel was launched"))
        st = nothing_selected(o, "nothing was regrouped", err);
    free(path);
    return st;
}

tmap_status tmap_attach_run(const tmap_attach_opts *o, char *const argv[], int *app_exit,
                            char **summary, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, o, summary);
    if (st)
        return st;
    *summary = NULL;
    tmap_attach_opts ro = *o;
    char tmp[] = "/tmp/threadmap-run-XXXXXX";
    ro.run = 1;
    if (!ro.out && !(ro.out = mkdtemp(tmp)))
        return tmap_fail(err, TMAP_ERR_IO, "cannot make a folder in /tmp for the run's reports");
    st = run_app(&ro, argv, app_exit, err);
    if (st == TMAP_OK)
        st = summarized(&ro, summary, err);
    if (!o->out) {
        clear_reports(ro.out);
        char *p = out_file(ro.out, TMAP_ATTACH_SUMMARY);
        if (p)
            unlink(p);
        free(p);
        rmdir(ro.out);
    }
    return st;
}

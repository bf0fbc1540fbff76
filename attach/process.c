/*
 * process.c (attach) -- posix_spawn with a pipe for captured output, and
 * waiting for a child's exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/process.h"
#include "common/base.h"

extern char **environ;

static tmap_status wait_for(pid_t pid, const char *name, int *code, tmap_error *err)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return tmap_fail(err, TMAP_ERR_IO, "%s: waitpid: %s", name, strerror(errno));
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return TMAP_OK;
}

static tmap_status spawn(pid_t *pid, char *const argv[], posix_spawn_file_actions_t *fa,
                         tmap_error *err)
{
    int e = posix_spawnp(pid, argv[0], fa, NULL, argv, environ);
    if (e)
        return tmap_fail(err, TMAP_ERR_IO, "%s: cannot run it: %s", argv[0], strerror(e));
    return TMAP_OK;
}

tmap_status tmap_process_wait(char *const argv[], int *code, tmap_error *err)
{
    pid_t pid;
    tmap_status st = spawn(&pid, argv, NULL, err);
    return st == TMAP_OK ? wait_for(pid, argv[0], code, err) : st;
}

static void drain(int fd, tmap_buf *b)
{
    char chunk[65536];
    for (ssize_t n; (n = read(fd, chunk, sizeof chunk)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        tmap_buf_put(b, chunk, (size_t)n);
    }
}

tmap_status tmap_process_capture(char *const argv[], char **out, tmap_error *err)
{
    int fd[2];
    *out = NULL;
    if (pipe(fd))
        return tmap_fail(err, TMAP_ERR_IO, "%s: pipe: %s", argv[0], strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    tmap_status st = spawn(&pid, argv, &fa, err);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    tmap_buf b = {0};
    int code = 0;
    if (st == TMAP_OK) {
        drain(fd[0], &b);
        st = wait_for(pid, argv[0], &code, err);
    }
    close(fd[0]);
    if (st == TMAP_OK && (code || b.oom))
        st = tmap_fail(err, TMAP_ERR_IO, "%s %s: %s", argv[0], argv[1],
                       b.oom ? "out of memory for its output" : "failed");
    if (st != TMAP_OK) {
        tmap_buf_free(&b);
        return st;
    }
    *out = b.data ? b.data : calloc(1, 1);
    return *out ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
}

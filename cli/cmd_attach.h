/*
 * cmd_attach.h -- `threadmap profile|run [options] -- ./app args...`:
 * profiling, or regrouping in, an unmodified application (cmd_attach.c);
 * cmd_profile.c and cmd_run.c hand over to it when their arguments hold
 * "--".
 */
#ifndef TMAP_CLI_CMD_ATTACH_H
#define TMAP_CLI_CMD_ATTACH_H

/* 1 when argv holds "--" (the attach form). */
int tmap_cmd_attach_wanted(int argc, char **argv);
/* argv[0] is "profile"; returns the exit code. */
int tmap_cmd_attach_profile(int argc, char **argv);
/* argv[0] is "run": `threadmap run [options] -- ./app args...`. */
int tmap_cmd_attach_run(int argc, char **argv);

#endif

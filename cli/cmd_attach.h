/*
 * cmd_attach.h -- `threadmap profile [options] -- ./app args...`: profiling
 * an unmodified application (cmd_attach.c); cmd_profile.c hands over to it
 * when its arguments hold "--".
 */
#ifndef TMAP_CLI_CMD_ATTACH_H
#define TMAP_CLI_CMD_ATTACH_H

/* 1 when argv holds "--" (the attach form). */
int tmap_cmd_attach_wanted(int argc, char **argv);
/* argv[0] is "profile"; returns the exit code. */
int tmap_cmd_attach_profile(int argc, char **argv);

#endif

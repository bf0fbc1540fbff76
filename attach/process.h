/*
 * process.h (attach) -- running programs: one whose standard output is
 * captured (cuobjdump), and the application under attach, waited for.
 * Private to attach/.
 */
#ifndef TMAP_ATTACH_PROCESS_H
#define TMAP_ATTACH_PROCESS_H

#include "threadmap/attach.h"

/* Runs argv (argv[0] looked up in PATH when it has no '/'), its stdout into
 * *out (malloc'ed, NUL-terminated), stderr discarded; TMAP_ERR_IO when it
 * cannot start or exits other than 0. */
tmap_status tmap_process_capture(char *const argv[], char **out, tmap_error *err);

/* Runs argv with the environment as it is and waits: *code receives its exit
 * status, or 128 + the signal that ended it. */
tmap_status tmap_process_wait(char *const argv[], int *code, tmap_error *err);

#endif

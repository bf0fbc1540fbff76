/*
 * loop_dlopen.c -- an application whose kernel lives in a shared library it
 * loads at run time: loop_dlopen LIB.so [N] calls LIB's loop_lib_run(N) and
 * prints the checksum (the same with and without threadmap).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
    void *f = lib ? dlsym(lib, "loop_lib_run") : NULL;
    if (!f) {
        fprintf(stderr, "usage: loop_dlopen LIB.so [N] (%s)\n", dlerror());
        return 2;
    }
    unsigned long long (*run)(int);
    *(void **)&run = f;
    unsigned long long sum = run(argc > 2 ? atoi(argv[2]) : 4096);
    printf("checksum %llu\n", sum);
    return sum ? 0 : 1;
}

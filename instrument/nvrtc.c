/*
 * nvrtc.c -- the NVRTC front end: CUDA source to PTX, with kernel names
 * resolved through name expressions, and the PTX ISA version a driver takes.
 * libnvrtc is loaded with dlopen when a call needs it, not linked: its 100 MB
 * and 200,000 relocations would otherwise be paid by every process start
 * (seconds where the page cache is cold), compiling or not.
 */
#include <dlfcn.h>
#include <nvrtc.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/instrument.h"
#include "common/base.h"
#include "common/dl.h"
#include "instrument/nvrtc.h"

/* The NVRTC entry points threadmap calls, loaded by nvrtc_open. */
typedef struct nvrtc_api {
    void *lib;
    const char *(*error_string)(nvrtcResult);
    nvrtcResult (*version)(int *, int *);
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int,
                          const char *const *, const char *const *);
    nvrtcResult (*destroy)(nvrtcProgram *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
    nvrtcResult (*ptx)(nvrtcProgram, char *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*add_name)(nvrtcProgram, const char *);
    nvrtcResult (*lowered_name)(nvrtcProgram, const char *, const char **);
} nvrtc_api;

#define F(field, name) TMAP_DL_SYM(nvrtc_api, field, name, NULL)
static const tmap_dl_sym nvrtc_symbols[] = {
    F(error_string, "nvrtcGetErrorString"), F(version, "nvrtcVersion"),
    F(create, "nvrtcCreateProgram"), F(destroy, "nvrtcDestroyProgram"),
    F(compile, "nvrtcCompileProgram"), F(ptx_size, "nvrtcGetPTXSize"),
    F(ptx, "nvrtcGetPTX"), F(log_size, "nvrtcGetProgramLogSize"),
    F(log, "nvrtcGetProgramLog"), F(add_name, "nvrtcAddNameExpression"),
    F(lowered_name, "nvrtcGetLoweredName"),
};
#undef F

#ifndef TMAP_NVRTC_SONAME
#define TMAP_NVRTC_SONAME "libnvrtc.so"
#endif
#ifndef TMAP_NVRTC_LIBRARY
#define TMAP_NVRTC_LIBRARY TMAP_NVRTC_SONAME
#endif

/* $THREADMAP_LIBNVRTC alone where set; else the toolkit's libnvrtc found at
 * configure time, then the dynamic linker's search for its soname.
 * RTLD_NODELETE keeps it mapped after nvrtc_close, so a process that
 * compiles many kernels loads it once. */
static tmap_status nvrtc_open(nvrtc_api *a, const char *file, tmap_error *err)
{
    memset(a, 0, sizeof *a);
    const char *env = getenv("THREADMAP_LIBNVRTC");
    const char *names[] = {env ? env : TMAP_NVRTC_LIBRARY, env ? NULL : TMAP_NVRTC_SONAME};
    for (size_t i = 0; i < 2 && names[i] && !a->lib; i++)
        a->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!a->lib)
        return tmap_fail(err, TMAP_ERR_NVRTC, "%s: cannot load NVRTC (%s)", file, dlerror());
    const char *missing = tmap_dl_resolve(
        a->lib, nvrtc_symbols, sizeof nvrtc_symbols / sizeof nvrtc_symbols[0], a);
    if (missing) {
        dlclose(a->lib);
        a->lib = NULL;
        return tmap_fail(err, TMAP_ERR_NVRTC, "%s: the NVRTC library loaded has no %s", file,
                         missing);
    }
    return TMAP_OK;
}

static void nvrtc_close(nvrtc_api *a)
{
    if (a->lib)
        dlclose(a->lib);
    a->lib = NULL;
}

/* The option strings NVRTC gets: --gpu-architecture, -I..., user options,
 * and -default-device so kernels need no __global__ decoration quirks.
 * Invariant: every entry of opts->v is malloc'ed and owned here. */
typedef struct optlist {
    char **v;
    size_t n, cap;
} optlist;

static int opt_add(optlist *o, const char *a, const char *b)
{
    if (tmap_grow(&o->v, &o->cap, o->n + 1, sizeof *o->v))
        return -1;
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    char *s = malloc(la + lb + 1);
    if (!s)
        return -1;
    memcpy(s, a, la);
    if (b)
        memcpy(s + la, b, lb);
    s[la + lb] = '\0';
    o->v[o->n++] = s;
    return 0;
}

static void opt_free(optlist *o)
{
    for (size_t i = 0; i < o->n; i++)
        free(o->v[i]);
    free(o->v);
}

/* The toolkit's include folders, ':'-separated (CMakeLists.txt lists them,
 * cccl/ included): so that kernels may include <cuda_fp16.h>,
 * <cooperative_groups.h>... */
static int add_toolkit_includes(optlist *o, const char *dirs)
{
    char dir[4096];
    for (const char *p = dirs; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, p, n);
            dir[n] = '\0';
            if (opt_add(o, "-I", dir))
                return -1;
        }
        p += n + (p[n] == ':');
    }
    return 0;
}

static int build_options(const tmap_compile_opts *opts, optlist *o)
{
    const char *arch = opts && opts->arch ? opts->arch : TMAP_DEFAULT_ARCH;
    if (opt_add(o, "--gpu-architecture=", arch))
        return -1;
    if (opts) {
        for (size_t i = 0; i < opts->ninclude_dirs; i++)
            if (opt_add(o, "-I", opts->include_dirs[i]))
                return -1;
        for (size_t i = 0; i < opts->noptions; i++)
            if (opt_add(o, opts->options[i], NULL))
                return -1;
    }
#ifdef TMAP_CUDA_INCLUDE_DEFAULT
    if (add_toolkit_includes(o, TMAP_CUDA_INCLUDE_DEFAULT))
        return -1;
#endif
    return 0;
}

static char *program_log(const nvrtc_api *a, nvrtcProgram prog)
{
    size_t n = 0;
    if (a->log_size(prog, &n) != NVRTC_SUCCESS || n == 0)
        return strdup("");
    char *log = malloc(n + 1);
    if (!log)
        return NULL;
    if (a->log(prog, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    log[n] = '\0';
    /* NVRTC ends the log with a newline; messages are one line each. */
    while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\0'))
        log[--n] = '\0';
    return log;
}

static tmap_status nvrtc_fail(const nvrtc_api *a, tmap_error *err, const char *file,
                              const char *call, nvrtcResult r)
{
    return tmap_fail(err, TMAP_ERR_NVRTC, "%s: %s: %s", file, call, a->error_string(r));
}

static tmap_status fetch_ptx(const nvrtc_api *a, nvrtcProgram prog, const char *file, tmap_compiled *out,
                             tmap_error *err)
{
    size_t n = 0;
    nvrtcResult r = a->ptx_size(prog, &n);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(a, err, file, "nvrtcGetPTXSize", r);
    out->ptx = malloc(n + 1);
    if (!out->ptx)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory for PTX", file);
    r = a->ptx(prog, out->ptx);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(a, err, file, "nvrtcGetPTX", r);
    out->ptx[n] = '\0';
    return TMAP_OK;
}

static tmap_status fetch_names(const nvrtc_api *a, nvrtcProgram prog, const char *file,
                               const tmap_compile_opts *opts, tmap_compiled *out,
                               tmap_error *err)
{
    size_t n = opts ? opts->nnames : 0;
    if (n == 0)
        return TMAP_OK;
    out->names = calloc(n, sizeof *out->names);
    out->lowered = calloc(n, sizeof *out->lowered);
    if (!out->names || !out->lowered)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", file);
    out->nnames = n;
    for (size_t i = 0; i < n; i++) {
        const char *low = NULL;
        nvrtcResult r = a->lowered_name(prog, opts->names[i], &low);
        if (r != NVRTC_SUCCESS)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: no kernel named '%s' (%s)",
                             file, opts->names[i], a->error_string(r));
        if (!low)
            return tmap_fail(err, TMAP_ERR_NVRTC, "%s: NVRTC gave no lowered name for kernel '%s'",
                             file, opts->names[i]);
        out->names[i] = strdup(opts->names[i]);
        out->lowered[i] = strdup(low);
        if (!out->names[i] || !out->lowered[i])
            return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", file);
    }
    return TMAP_OK;
}

/* Name expressions are added as "&name" so that both extern "C" kernels
 * and C++ (templated, namespaced) ones resolve. */
static tmap_status add_names(const nvrtc_api *a, nvrtcProgram prog, const char *file,
                             const tmap_compile_opts *opts, tmap_error *err)
{
    for (size_t i = 0; opts && i < opts->nnames; i++) {
        nvrtcResult r = a->add_name(prog, opts->names[i]);
        if (r != NVRTC_SUCCESS)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: kernel name '%s': %s", file,
                             opts->names[i], a->error_string(r));
    }
    return TMAP_OK;
}

/* NVRTC takes a 0xFF byte (EOF as a char) for the end of the source, even
 * in a comment: what follows, kernels included, would be lost unsaid. */
static tmap_status check_bytes(const char *source, const char *file, tmap_error *err)
{
    const char *ff = strchr(source, '\xff');
    if (!ff)
        return TMAP_OK;
    unsigned line = 1;
    for (const char *p = source; p < ff; p++)
        line += *p == '\n';
    return tmap_fail(err, TMAP_ERR_INVALID,
                     "%s:%u: byte 0xFF: NVRTC would take it for the end of the source and "
                     "drop the rest", file, line);
}

tmap_status tmap_compile(const char *source, const char *filename,
                         const tmap_compile_opts *opts, tmap_compiled *out,
                         tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, source, out);
    if (absent)
        return absent;
    const char *file = filename ? filename : "<source>";
    memset(out, 0, sizeof *out);
    if (!source)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: no source given", file);
    tmap_status bytes = check_bytes(source, file, err);
    if (bytes)
        return bytes;
    nvrtc_api a;
    tmap_status st = nvrtc_open(&a, file, err);
    if (st != TMAP_OK)
        return st;
    nvrtcProgram prog;
    nvrtcResult r = a.create(&prog, source, file, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        st = nvrtc_fail(&a, err, file, "nvrtcCreateProgram", r);
        nvrtc_close(&a);
        return st;
    }
    optlist o = {0};
    if (build_options(opts, &o)) {
        st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", file);
        goto done;
    }
    if ((st = add_names(&a, prog, file, opts, err)) != TMAP_OK)
        goto done;
    r = a.compile(prog, (int)o.n, (const char *const *)o.v);
    out->log = program_log(&a, prog);
    if (r != NVRTC_SUCCESS) {
        st = tmap_fail(err, TMAP_ERR_NVRTC, "%s: compilation failed (%s):\n%s", file,
                       a.error_string(r), out->log ? out->log : "");
        goto done;
    }
    if ((st = fetch_ptx(&a, prog, file, out, err)) != TMAP_OK)
        goto done;
    st = fetch_names(&a, prog, file, opts, out, err);
done:
    opt_free(&o);
    a.destroy(&prog);
    nvrtc_close(&a);
    if (st != TMAP_OK)
        tmap_compiled_free(out);
    return st;
}

const char *tmap_compiled_lowered(const tmap_compiled *c, const char *name)
{
    if (!c || !name)
        return NULL;
    for (size_t i = 0; i < c->nnames; i++)
        if (!strcmp(c->names[i], name))
            return c->lowered[i];
    return NULL;
}

void tmap_compiled_free(tmap_compiled *c)
{
    if (!c)
        return;
    free(c->ptx);
    free(c->log);
    for (size_t i = 0; i < c->nnames; i++) {
        if (c->names)
            free(c->names[i]);
        if (c->lowered)
            free(c->lowered[i]);
    }
    free(c->names);
    free(c->lowered);
    memset(c, 0, sizeof *c);
}

/* PTX ISA version per CUDA release (the minimum driver for each), from the
 * PTX ISA release notes: 8.0..8.5 = 12.0..12.5, 12.6 kept 8.5, 8.6 = 12.7,
 * 8.7 = 12.8, 8.8 = 12.9, 9.0 = 13.0, 9.1 = 13.1.  Drivers newer than the
 * table get its last row. */
void tmap_ptx_version_for_driver(int driver_version, int *major, int *minor)
{
    static const struct { int cuda, major, minor; } rows[] = {
        {11080, 7, 8}, {12000, 8, 0}, {12010, 8, 1}, {12020, 8, 2}, {12030, 8, 3},
        {12040, 8, 4}, {12050, 8, 5}, {12060, 8, 5}, {12070, 8, 6}, {12080, 8, 7},
        {12090, 8, 8}, {13000, 9, 0}, {13010, 9, 1},
    };
    size_t best = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (driver_version >= rows[i].cuda)
            best = i;
    *major = rows[best].major;
    *minor = rows[best].minor;
}

int tmap_nvrtc_version(int *major, int *minor)
{
    nvrtc_api a;
    if (!major || !minor || nvrtc_open(&a, "nvrtc", NULL) != TMAP_OK)
        return -1;
    int rc = a.version(major, minor) == NVRTC_SUCCESS ? 0 : -1;
    nvrtc_close(&a);
    return rc;
}

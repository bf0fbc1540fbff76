/*
 * nvrtc.c -- the NVRTC front end: CUDA source to PTX, with kernel names
 * resolved through name expressions, and the PTX ISA version a driver takes.
 */
#include <nvrtc.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/instrument.h"
#include "common/base.h"
#include "instrument/nvrtc.h"

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

static char *program_log(nvrtcProgram prog)
{
    size_t n = 0;
    if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0)
        return strdup("");
    char *log = malloc(n + 1);
    if (!log)
        return NULL;
    if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    log[n] = '\0';
    /* NVRTC ends the log with a newline; messages are one line each. */
    while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\0'))
        log[--n] = '\0';
    return log;
}

static tmap_status nvrtc_fail(tmap_error *err, const char *file, const char *call,
                              nvrtcResult r)
{
    return tmap_fail(err, TMAP_ERR_NVRTC, "%s: %s: %s", file, call,
                     nvrtcGetErrorString(r));
}

static tmap_status fetch_ptx(nvrtcProgram prog, const char *file, tmap_compiled *out,
                             tmap_error *err)
{
    size_t n = 0;
    nvrtcResult r = nvrtcGetPTXSize(prog, &n);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(err, file, "nvrtcGetPTXSize", r);
    out->ptx = malloc(n + 1);
    if (!out->ptx)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory for PTX", file);
    r = nvrtcGetPTX(prog, out->ptx);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(err, file, "nvrtcGetPTX", r);
    out->ptx[n] = '\0';
    return TMAP_OK;
}

static tmap_status fetch_names(nvrtcProgram prog, const char *file,
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
        nvrtcResult r = nvrtcGetLoweredName(prog, opts->names[i], &low);
        if (r != NVRTC_SUCCESS)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: no kernel named '%s' (%s)",
                             file, opts->names[i], nvrtcGetErrorString(r));
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
static tmap_status add_names(nvrtcProgram prog, const char *file,
                             const tmap_compile_opts *opts, tmap_error *err)
{
    for (size_t i = 0; opts && i < opts->nnames; i++) {
        nvrtcResult r = nvrtcAddNameExpression(prog, opts->names[i]);
        if (r != NVRTC_SUCCESS)
            return tmap_fail(err, TMAP_ERR_INVALID, "%s: kernel name '%s': %s", file,
                             opts->names[i], nvrtcGetErrorString(r));
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
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, file, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(err, file, "nvrtcCreateProgram", r);
    optlist o = {0};
    tmap_status st = TMAP_OK;
    if (build_options(opts, &o)) {
        st = tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", file);
        goto done;
    }
    if ((st = add_names(prog, file, opts, err)) != TMAP_OK)
        goto done;
    r = nvrtcCompileProgram(prog, (int)o.n, (const char *const *)o.v);
    out->log = program_log(prog);
    if (r != NVRTC_SUCCESS) {
        st = tmap_fail(err, TMAP_ERR_NVRTC, "%s: compilation failed (%s):\n%s", file,
                       nvrtcGetErrorString(r), out->log ? out->log : "");
        goto done;
    }
    if ((st = fetch_ptx(prog, file, out, err)) != TMAP_OK)
        goto done;
    st = fetch_names(prog, file, opts, out, err);
done:
    opt_free(&o);
    nvrtcDestroyProgram(&prog);
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
    return nvrtcVersion(major, minor) == NVRTC_SUCCESS ? 0 : -1;
}

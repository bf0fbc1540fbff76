/*
 * session.c (attach) -- the injected library's state in one process: the
 * module images and the names of function handles (a hash table keyed by
 * handle), the selection (kernel regex on the mangled or demangled name,
 * launch skip and count, as Nsight Compute counts them: over the launches
 * of matching kernels), and profiling a selected launch: its PTX found in
 * its module's image (or in the process's binaries), launched
 * instrumented, recorded.  One lock guards it all; launches that cannot
 * be selected any more pass without taking it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "attach/env.h"
#include "attach/image.h"
#include "attach/session.h"
#include "runtime/cuda.h"

typedef struct handle {
    void *key;     /* CUmodule, CUlibrary, CUfunction or CUkernel; NULL: free */
    long image;    /* index in images, -1: none */
    char *name;    /* functions and kernels: the mangled kernel name */
    int match;     /* -1 not yet known, 0 or 1: the regex's verdict */
} handle;

typedef struct kernel_record {
    char *entry;
    void *summary; /* json_t *: its profile.json */
    /* run mode */
    tmap_attach_regroup *rg;   /* NULL until made, or when refused */
    int refused;               /* the note says why */
    tmap_attach_run_stats stats;
} kernel_record;

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

struct tmap_session {
    tmap_attach_env env;
    tmap_session_driver drv;
    regex_t re;
    int has_re;
    demangle_fn demangle;           /* __cxa_demangle: the program's, else libstdc++'s */
    void *libstdcxx;                /* libstdc++ when loaded for it (dlclose at the end) */
    pthread_mutex_t lock;
    handle *table;                  /* open addressing, cap a power of two */
    size_t cap, used;
    tmap_image *images;
    size_t nimages, capimages;
    long matched;                   /* launches of matching kernels so far */
    int done;                       /* launch count reached */
    tmap_cuda *cuda;                /* the application's context, on first use */
    tmap_device_info dev;
    kernel_record *kernels;
    size_t nkernels, capkernels;
};

/* ------------------------------------------------------------ handles */

static size_t slot_of(const tmap_session *s, const void *key)
{
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 7) & (s->cap - 1);
    while (s->table[i].key && s->table[i].key != key)
        i = (i + 1) & (s->cap - 1);
    return i;
}

static handle *find(tmap_session *s, const void *key)
{
    if (!s->cap)
        return NULL;
    handle *h = &s->table[slot_of(s, key)];
    return h->key ? h : NULL;
}

static int rehash(tmap_session *s)
{
    size_t old = s->cap;
    handle *t = s->table;
    s->cap = old ? old * 2 : 256;
    if (!(s->table = calloc(s->cap, sizeof *s->table))) {
        s->table = t;
        s->cap = old;
        return -1;
    }
    for (size_t i = 0; i < old; i++)
        if (t[i].key)
            s->table[slot_of(s, t[i].key)] = t[i];
    free(t);
    return 0;
}

/* The entry of key, added (image -1, no name) when new; NULL: no memory. */
static handle *insert(tmap_session *s, void *key)
{
    handle *h = find(s, key);
    if (h)
        return h;
    if ((s->used + 1) * 2 > s->cap && rehash(s))
        return NULL;
    h = &s->table[slot_of(s, key)];
    *h = (handle){.key = key, .image = -1, .match = -1};
    s->used++;
    return h;
}

void tmap_session_image(tmap_session *s, void *key, const void *image)
{
    tmap_error err = {0};
    pthread_mutex_lock(&s->lock);
    handle *h = tmap_grow(&s->images, &s->capimages, s->nimages + 1, sizeof *s->images)
                    ? NULL : insert(s, key);
    if (h) {
        tmap_image *img = &s->images[s->nimages];
        memset(img, 0, sizeof *img);
        if (tmap_image_scan(img, image, 0, &err) != TMAP_OK)
            tmap_session_trace(s, "module %p: %s", key, err.message);
        h->image = (long)s->nimages++;
        tmap_session_trace(s, "module %p: %zu PTX, %zu SASS, %zu unread", key, img->nptx,
                           img->nsass, img->nopaque);
    }
    pthread_mutex_unlock(&s->lock);
}

void tmap_session_alias(tmap_session *s, void *key, void *parent)
{
    pthread_mutex_lock(&s->lock);
    handle *p = find(s, parent);
    long image = p ? p->image : -1;
    handle *h = insert(s, key);
    if (h)
        h->image = image;
    pthread_mutex_unlock(&s->lock);
}

void tmap_session_function(tmap_session *s, void *key, void *parent, const char *name)
{
    pthread_mutex_lock(&s->lock);
    handle *p = find(s, parent);
    long image = p ? p->image : -1;
    const char *pname = p && !name ? p->name : name;
    char *copy = pname ? strdup(pname) : NULL;
    handle *h = insert(s, key);
    if (h && copy) {
        free(h->name);
        *h = (handle){.key = key, .image = image, .name = copy, .match = -1};
    } else
        free(copy);
    pthread_mutex_unlock(&s->lock);
}

/* ---------------------------------------------------------- selection */

/* __cxa_demangle, for selecting kernels by their C++ names: the process's
 * when it links libstdc++, else from libstdc++ loaded for it (*lib, to be
 * closed): a CUDA program linked with --as-needed (Ubuntu's default) often
 * has none.  NULL when neither is there: the regex sees mangled names only. */
static demangle_fn find_demangle(void **lib)
{
    demangle_fn f = NULL;
    *lib = NULL;
    *(void **)&f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!f && (*lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL)))
        *(void **)&f = dlsym(*lib, "__cxa_demangle");
    return f;
}

static int matches(tmap_session *s, const char *name)
{
    if (!s->has_re)
        return 1;
    if (!regexec(&s->re, name, 0, NULL, 0))
        return 1;
    int status = -1;
    char *d = s->demangle ? s->demangle(name, NULL, NULL, &status) : NULL;
    int m = d && !status && !regexec(&s->re, d, 0, NULL, 0);
    free(d);
    return m;
}

/* The handle's kernel name, asking the driver for handles loaded unseen. */
static handle *named(tmap_session *s, void *key)
{
    handle *h = find(s, key);
    const char *name = NULL;
    if ((!h || !h->name) && s->drv.func_get_name &&
        s->drv.func_get_name(&name, (CUfunction)key) == CUDA_SUCCESS && name &&
        (h = insert(s, key)) && !(h->name = strdup(name)))
        return NULL;
    return h && h->name ? h : NULL;
}

/* Is this launch selected?  Counts it when its kernel matches. */
static int selected(tmap_session *s, handle *h)
{
    if (h->match < 0)
        h->match = matches(s, h->name);
    if (!h->match)
        return 0;
    long i = s->matched++;
    const tmap_attach_opts *o = &s->env.opts;
    if (o->launch_count >= 0 && i + 1 >= o->launch_skip + o->launch_count)
        __atomic_store_n(&s->done, 1, __ATOMIC_RELAXED);
    return i >= o->launch_skip &&
           (o->launch_count < 0 || i < o->launch_skip + o->launch_count);
}

int tmap_session_active(const tmap_session *s)
{
    return s && !__atomic_load_n(&s->done, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ the PTX */

static const char *cuobjdump_tool(void)
{
    const char *env = getenv("THREADMAP_CUOBJDUMP");
    if (env && *env)
        return env;
    return access(TMAP_CUOBJDUMP_DEFAULT, X_OK) == 0 ? TMAP_CUOBJDUMP_DEFAULT : "cuobjdump";
}

/* The PTX of `entry` in the program's binaries: the executable, then every
 * shared library mapped (the first that defines it). */
static char *ptx_in_binaries(const char *entry, unsigned arch)
{
    char *maps = NULL, *ptx = NULL;
    size_t n = 0;
    const char *tool = cuobjdump_tool();
    if (tmap_attach_file_ptx("/proc/self/exe", entry, arch, tool, &ptx, NULL) == TMAP_OK)
        return ptx;
    if (tmap_file_read("/proc/self/maps", &maps, &n, NULL) != TMAP_OK)
        return NULL;
    const char *last = "";
    char *save = NULL;
    for (char *line = strtok_r(maps, "\n", &save); line && !ptx;
         line = strtok_r(NULL, "\n", &save)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, ".so") || !strcmp(path, last))
            continue;
        last = path;
        if (tmap_attach_file_ptx(path, entry, arch, tool, &ptx, NULL) != TMAP_OK)
            ptx = NULL;
    }
    free(maps);
    return ptx;
}

/* The kernel's PTX (malloc'ed): from its module's image, else from the
 * binaries; else the reason, from the image when there is one. */
static tmap_status find_ptx(tmap_session *s, const handle *h, char **ptx, tmap_error *err)
{
    unsigned arch = (unsigned)(s->dev.cc_major * 10 + s->dev.cc_minor);
    tmap_image *img = h->image >= 0 ? &s->images[h->image] : NULL;
    const char *found = img ? tmap_image_find(img, h->name, arch) : NULL;
    if (found)
        return (*ptx = strdup(found)) ? TMAP_OK : tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    if (!img || img->nopaque || !img->nsass)
        if ((*ptx = ptx_in_binaries(h->name, arch)))
            return TMAP_OK;
    if (img)
        return tmap_image_missing(img, h->name, "the module loaded", arch, err);
    return tmap_fail(err, TMAP_ERR_INVALID, "kernel '%s': its module was loaded unseen and no "
                     "binary of the process holds its PTX", h->name);
}

/* ---------------------------------------------------------- profiling */

static kernel_record *record_of(tmap_session *s, const char *entry)
{
    for (size_t i = 0; i < s->nkernels; i++)
        if (!strcmp(s->kernels[i].entry, entry))
            return &s->kernels[i];
    if (tmap_grow(&s->kernels, &s->capkernels, s->nkernels + 1, sizeof *s->kernels))
        return NULL;
    kernel_record *k = &s->kernels[s->nkernels];
    memset(k, 0, sizeof *k);
    if (!(k->entry = strdup(entry)))
        return NULL;
    snprintf(k->stats.kernel, sizeof k->stats.kernel, "%s", entry);
    k->stats.original_ms = k->stats.chosen_ms = NAN;
    s->nkernels++;
    return k;
}

/* "HEAD: why" into errors.txt and on stderr. */
static void report_failure(tmap_session *s, const char *head, const tmap_error *e)
{
    tmap_buf path = {0};
    tmap_buf_printf(&path, "%s/%s", s->env.opts.out, TMAP_ATTACH_ERRORS);
    FILE *f = path.data ? fopen(path.data, "a") : NULL;
    if (f) {
        fprintf(f, "%s: %s\n", head, e->message);
        fclose(f);
    }
    tmap_buf_free(&path);
    fprintf(stderr, "threadmap: %s: %s\n", head, e->message);
}

static tmap_status open_cuda(tmap_session *s, tmap_error *err)
{
    if (s->cuda)
        return TMAP_OK;
    tmap_status st = tmap_cuda_open_current(&s->cuda, err);
    if (st == TMAP_OK)
        st = tmap_cuda_info(s->cuda, &s->dev, err);
    return st;
}

static tmap_status not_captured(tmap_session *s, const tmap_attach_call *c, tmap_error *err)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if (s->drv.stream_is_capturing && s->drv.stream_is_capturing(c->stream, &cs) == CUDA_SUCCESS &&
        cs != CU_STREAM_CAPTURE_STATUS_NONE)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "the launch is being captured into a CUDA "
                         "graph; graph launches are not profiled");
    return TMAP_OK;
}

static int profile(tmap_session *s, const handle *h, const tmap_attach_call *c, long launch,
                   CUresult *cu)
{
    tmap_error err = {0};
    tmap_attach_result r = {0};
    char *ptx = NULL;
    int launched = 0;
    kernel_record *k = record_of(s, h->name);
    tmap_status st = k ? not_captured(s, c, &err) : tmap_fail(&err, TMAP_ERR_NOMEM, "out of memory");
    if (st == TMAP_OK)
        st = open_cuda(s, &err);
    if (st == TMAP_OK)
        st = find_ptx(s, h, &ptx, &err);
    if (st == TMAP_OK)
        st = tmap_attach_launch(s->cuda, ptx, h->name, c, s->env.features, s->env.opts.nfeatures,
                                &r, &launched, cu, &err);
    if (st == TMAP_OK)
        st = tmap_attach_record(s->env.opts.out, h->name, ptx, c, &r, &s->env.opts, &s->dev,
                                launch, &k->summary, &err);
    if (st == TMAP_OK && !s->env.opts.quiet)
        fprintf(stderr, "threadmap: profiled launch %ld of %s: %zu threads x %zu blocks -> %s/\n",
                launch, h->name, r.bbv.nthreads, r.bbv.nblocks, s->env.opts.out);
    if (st != TMAP_OK) {
        char head[512];
        snprintf(head, sizeof head, "launch %ld of %s not profiled", launch, h->name);
        report_failure(s, head, &err);
    }
    tmap_attach_result_free(&r);
    free(ptx);
    return launched;
}

/* ------------------------------------------------------------ run mode */

/* The launch's stream; for a _ptsz entry point, stream 0 is the thread's. */
static void *stream_of(const tmap_attach_call *c)
{
    return c->stream || !c->per_thread_stream ? (void *)c->stream : (void *)CU_STREAM_PER_THREAD;
}

/* The kernel's regrouper, made at its first selected launch; NULL (and
 * the reason recorded once) when it cannot be. */
static tmap_attach_regroup *regrouper_of(tmap_session *s, const handle *h, kernel_record *k,
                                         const tmap_attach_call *c)
{
    tmap_error err = {0};
    char *ptx = NULL;
    if (k->rg || k->refused)
        return k->rg;
    char arch[16];
    tmap_attach_regroup_opts o = {.entry = h->name, .key = s->env.opts.key,
                                  .predictor = s->env.opts.predictor, .arch = arch,
                                  .features = s->env.features,
                                  .nfeatures = s->env.opts.nfeatures,
                                  .trial_launches = s->env.opts.trial_launches,
                                  .threshold = s->env.opts.threshold,
                                  .range = s->drv.mem_get_address_range};
    double t0 = tmap_clock_seconds();
    tmap_status st = open_cuda(s, &err);
    snprintf(arch, sizeof arch, "sm_%d%d", s->dev.cc_major, s->dev.cc_minor);
    if (st == TMAP_OK)
        st = find_ptx(s, h, &ptx, &err);
    if (st == TMAP_OK)
        st = tmap_attach_regroup_create(s->cuda, ptx, c, &o, &k->rg, &err);
    if (st == TMAP_OK)
        k->stats.setup_ms = 1e3 * (tmap_clock_seconds() - t0);
    if (st != TMAP_OK) {
        k->refused = 1;
        snprintf(k->stats.note, sizeof k->stats.note, "%s", err.message);
        char head[512];
        snprintf(head, sizeof head, "%s not regrouped", h->name);
        report_failure(s, head, &err);
    }
    free(ptx);
    return k->rg;
}

/* A selected launch in run mode: 1 when launched through the regrouper. */
static int regroup(tmap_session *s, const handle *h, const tmap_attach_call *c, CUresult *cu)
{
    tmap_error err = {0};
    kernel_record *k = record_of(s, h->name);
    if (!k)
        return 0;
    k->stats.seen++;
    tmap_attach_regroup *g = regrouper_of(s, h, k, c);
    int launched = 0;
    if (!g)
        return 0;
    tmap_status st = c->nattrs || !tmap_attach_regroup_fits(g, c) ? TMAP_ERR_UNSUPPORTED
                                                                    : not_captured(s, c, &err);
    if (st == TMAP_OK)
        st = tmap_attach_regroup_launch(g, c, stream_of(c), &k->stats, &launched, &err);
    if (st != TMAP_OK)
        k->stats.alone++;
    if (st != TMAP_OK && err.message[0])
        tmap_session_trace(s, "launch of %s left alone: %s", h->name, err.message);
    tmap_attach_regroup_stats(g, &k->stats);
    *cu = CUDA_SUCCESS;
    return launched;
}

void tmap_session_finish(tmap_session *s)
{
    if (!s || !s->env.opts.run)
        return;
    tmap_attach_run_stats *st = calloc(s->nkernels ? s->nkernels : 1, sizeof *st);
    tmap_buf path = {0};
    tmap_buf_printf(&path, "%s/%s", s->env.opts.out, TMAP_ATTACH_SUMMARY);
    FILE *f = st && path.data ? fopen(path.data, "w") : NULL;
    for (size_t i = 0; st && i < s->nkernels; i++)
        st[i] = s->kernels[i].stats;
    if (f) {
        tmap_attach_regroup_summary(st, s->nkernels, f);
        fclose(f);
    }
    tmap_buf_free(&path);
    free(st);
}

int tmap_session_launch(tmap_session *s, const tmap_attach_call *c, CUresult *cu)
{
    pthread_mutex_lock(&s->lock);
    int done = 0;
    handle *h = named(s, c->function);
    long launch = s->matched;
    if (!h)
        tmap_session_trace(s, "launch of %p: a kernel never named, not selectable", c->function);
    if (h && selected(s, h))
        done = s->env.opts.run ? regroup(s, h, c, cu) : profile(s, h, c, launch, cu);
    pthread_mutex_unlock(&s->lock);
    return done;
}

/* ------------------------------------------------------------ session */

void tmap_session_trace(const tmap_session *s, const char *fmt, ...)
{
    if (!s || !s->env.trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("threadmap trace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

tmap_status tmap_session_create(const tmap_session_driver *drv, tmap_session **out,
                                tmap_error *err)
{
    *out = NULL;
    tmap_session *s = calloc(1, sizeof *s);
    if (!s)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    s->drv = *drv;
    tmap_status st = tmap_attach_env_get(&s->env, err);
    if (st == TMAP_OK && s->env.opts.kernel_regex) {
        s->has_re = !regcomp(&s->re, s->env.opts.kernel_regex, REG_EXTENDED | REG_NOSUB);
        if (!s->has_re)
            st = tmap_fail(err, TMAP_ERR_INVALID, "bad kernel regex");
    }
    if (st != TMAP_OK) {
        tmap_session_free(s);
        return st;
    }
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->lock, &a);
    pthread_mutexattr_destroy(&a);
    s->demangle = find_demangle(&s->libstdcxx);
    *out = s;
    return TMAP_OK;
}

void tmap_session_free(tmap_session *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->cap; i++)
        free(s->table[i].name);
    for (size_t i = 0; i < s->nimages; i++)
        tmap_image_free(&s->images[i]);
    for (size_t i = 0; i < s->nkernels; i++) {
        tmap_attach_regroup_free(s->kernels[i].rg);
        free(s->kernels[i].entry);
        json_decref(s->kernels[i].summary);
    }
    if (s->has_re)
        regfree(&s->re);
    tmap_cuda_close(s->cuda);
    tmap_attach_env_free(&s->env);
    if (s->libstdcxx)
        dlclose(s->libstdcxx);
    free(s->table);
    free(s->images);
    free(s->kernels);
    free(s);
}

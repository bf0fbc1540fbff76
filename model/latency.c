/*
 * latency.c -- per-architecture latency tables (latency_tables/ARCH.tsv) and
 * the block latencies lat[b] of Liang et al. section IV-B1: the sum of the
 * table latencies of a block's instructions.
 *
 * Table lines: opcode<TAB>latency<TAB>issue-or-"-"<TAB>source; '#' starts a
 * comment; "# arch: X" / "# device: X" are header fields; "class:NAME" keys
 * hold class defaults.  A lookup walks the fallback chain documented in
 * docs/model.md (exact, normalized, op+type, op, class, parent class,
 * class:default) and says where it stopped.
 */
#include "threadmap/model.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base.h"

typedef struct lat_entry {
    char *key;
    char *source; /* where the number came from (4th column) */
    double latency, issue;
    unsigned line;
} lat_entry;

struct tmap_lat_table {
    char arch[64];
    char device[256];
    size_t n;
    lat_entry *e; /* sorted by key; keys unique */
};

/* Class names a table may define, each with the class it falls back to. */
static const struct { const char *name, *parent; } lat_classes[] = {
    {"int", "default"},       {"int.mul", "int"},       {"int.div", "int"},
    {"fp16", "default"},      {"fp32", "default"},      {"fp32.div", "fp32"},
    {"fp64", "default"},      {"fp64.div", "fp64"},     {"sfu", "default"},
    {"convert", "default"},   {"move", "default"},      {"warp", "default"},
    {"mem.global", "default"}, {"mem.shared", "default"}, {"mem.local", "default"},
    {"mem.const", "default"}, {"mem.param", "default"}, {"mem.texture", "default"},
    {"atomic", "default"},    {"control", "default"},   {"sync", "default"},
    {"other", "default"},     {"default", NULL},
};
#define LAT_NCLASSES (sizeof lat_classes / sizeof lat_classes[0])

static const char *lat_class_parent(const char *cls)
{
    for (size_t i = 0; i < LAT_NCLASSES; i++)
        if (!strcmp(lat_classes[i].name, cls))
            return lat_classes[i].parent;
    return NULL;
}

static int lat_class_known(const char *cls)
{
    for (size_t i = 0; i < LAT_NCLASSES; i++)
        if (!strcmp(lat_classes[i].name, cls))
            return 1;
    return 0;
}

const char *tmap_lat_match_name(tmap_lat_match m)
{
    switch (m) {
    case TMAP_LAT_EXACT: return "exact";
    case TMAP_LAT_NORMALIZED: return "normalized";
    case TMAP_LAT_ROOT_TYPE: return "op+type";
    case TMAP_LAT_ROOT: return "op";
    case TMAP_LAT_CLASS: return "class";
    case TMAP_LAT_DEFAULT: return "default";
    }
    return "?";
}

/* ------------------------------------------------------------ parsing */

static int lat_cmp_entry(const void *a, const void *b)
{
    const lat_entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static void lat_trim(char **s, char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* Copies the trimmed value of a "# field: value" header into dst. */
static void lat_header(const char *s, const char *e, char *dst, size_t size)
{
    char *a = (char *)s, *b = (char *)e;
    lat_trim(&a, &b);
    size_t n = (size_t)(b - a) < size - 1 ? (size_t)(b - a) : size - 1;
    memcpy(dst, a, n);
    dst[n] = '\0';
}

static int lat_key_valid(const char *k)
{
    if (!*k)
        return 0;
    for (const char *p = k; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != ':')
            return 0;
    return 1;
}

/* Parses a number field that must be the whole field. */
static int lat_number(const char *s, double *v)
{
    char *end;
    if (!*s)
        return 0;
    *v = tmap_strtod(s, &end);
    return *end == '\0' && isfinite(*v);
}

/* Parses one data line (NUL-terminated, no newline) into *e. */
static tmap_status lat_parse_line(char *line, const char *name, unsigned lineno,
                                  lat_entry *e, tmap_error *err)
{
    char *f[5];
    size_t nf = 0;
    for (char *p = line;; p++) {
        if (nf < 5)
            f[nf] = p;
        nf++;
        p = strchr(p, '\t');
        if (!p)
            break;
        *p = '\0';
    }
    if (nf != 4)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s:%u: expected 4 tab-separated columns (opcode, latency, issue, "
                         "source), found %zu",
                         name, lineno, nf);
    for (size_t i = 0; i < 4; i++) {
        char *a = f[i], *b = f[i] + strlen(f[i]);
        lat_trim(&a, &b);
        *b = '\0';
        f[i] = a;
    }
    if (!lat_key_valid(f[0]))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: bad opcode key '%s'", name, lineno, f[0]);
    if (!strncmp(f[0], "class:", 6) && !lat_class_known(f[0] + 6))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: unknown class '%s'", name, lineno, f[0]);
    if (!lat_number(f[1], &e->latency))
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: latency '%s' is not a number", name,
                         lineno, f[1]);
    if (e->latency < 0 || e->latency > TMAP_LAT_MAX)
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: latency %g is not in [0, %g] cycles",
                         name, lineno, e->latency, TMAP_LAT_MAX);
    if (!strcmp(f[2], "-"))
        e->issue = -1;
    else if (!lat_number(f[2], &e->issue) || e->issue <= 0 || e->issue > TMAP_LAT_MAX)
        return tmap_fail(err, TMAP_ERR_FORMAT,
                         "%s:%u: issue interval '%s' is not a positive number or '-'", name,
                         lineno, f[2]);
    if (!*f[3])
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: empty source column", name, lineno);
    e->key = strdup(f[0]);
    e->source = strdup(f[3]);
    e->line = lineno;
    if (!e->key || !e->source)
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s:%u: out of memory", name, lineno);
    return TMAP_OK;
}

/* Handles one line: comment/header, blank, or entry (appended to t). */
static tmap_status lat_line(tmap_lat_table *t, size_t *cap, char *s, char *e,
                            const char *name, unsigned lineno, tmap_error *err)
{
    char *a = s, *b = e;
    lat_trim(&a, &b);
    if (a == b)
        return TMAP_OK;
    if (*a == '#') {
        const char *p = a + 1;
        while (p < b && (*p == ' ' || *p == '\t'))
            p++;
        if ((size_t)(b - p) >= 5 && !strncmp(p, "arch:", 5))
            lat_header(p + 5, b, t->arch, sizeof t->arch);
        else if ((size_t)(b - p) >= 7 && !strncmp(p, "device:", 7))
            lat_header(p + 7, b, t->device, sizeof t->device);
        return TMAP_OK;
    }
    if (tmap_grow(&t->e, cap, t->n + 1, sizeof *t->e))
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", name);
    *e = '\0';
    tmap_status st = lat_parse_line(s, name, lineno, &t->e[t->n], err);
    if (st)
        return st;
    t->n++;
    return TMAP_OK;
}

tmap_status tmap_lat_parse(const char *text, size_t len, const char *name,
                           tmap_lat_table **out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, text, name, out);
    if (absent)
        return absent;
    tmap_lat_table *t = calloc(1, sizeof *t);
    char *copy = malloc(len + 1);
    if (!t || !copy) {
        free(t);
        free(copy);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", name);
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    if (memchr(copy, '\0', len)) {
        free(copy);
        free(t);
        return tmap_fail(err, TMAP_ERR_FORMAT, "%s: binary data (NUL byte) in a text table", name);
    }
    size_t cap = 0;
    unsigned lineno = 0;
    tmap_status s = TMAP_OK;
    for (char *p = copy; !s && p <= copy + len;) {
        char *nl = memchr(p, '\n', (size_t)(copy + len - p));
        char *e = nl ? nl : copy + len;
        lineno++;
        s = lat_line(t, &cap, p, e, name, lineno, err);
        p = e + 1;
    }
    free(copy);
    if (!s && t->n > 1) {
        qsort(t->e, t->n, sizeof *t->e, lat_cmp_entry);
        for (size_t i = 1; !s && i < t->n; i++)
            if (!strcmp(t->e[i].key, t->e[i - 1].key))
                s = tmap_fail(err, TMAP_ERR_FORMAT, "%s:%u: duplicate key '%s' (first on line %u)",
                              name, t->e[i].line, t->e[i].key, t->e[i - 1].line);
    }
    if (s) {
        tmap_lat_free(t);
        return s;
    }
    *out = t;
    return TMAP_OK;
}

tmap_status tmap_lat_load(const char *path, tmap_lat_table **out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, path, out);
    if (absent)
        return absent;
    char *text;
    size_t len;
    tmap_status s = tmap_file_read(path, &text, &len, err);
    if (s)
        return s;
    s = tmap_lat_parse(text, len, path, out, err);
    free(text);
    return s;
}

void tmap_lat_free(tmap_lat_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->e[i].key), free(t->e[i].source);
    free(t->e);
    free(t);
}

const char *tmap_lat_arch(const tmap_lat_table *t) { return t ? t->arch : NULL; }
const char *tmap_lat_device(const tmap_lat_table *t) { return t ? t->device : NULL; }

tmap_status tmap_lat_default_path(const char *arch, char *buf, size_t size,
                                  tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, arch, buf);
    if (absent)
        return absent;
    const char *dirs[3] = {getenv("THREADMAP_DATA"), NULL, NULL};
#ifdef TMAP_DATADIR_BUILD
    dirs[1] = TMAP_DATADIR_BUILD;
#endif
#ifdef TMAP_DATADIR_INSTALL
    dirs[2] = TMAP_DATADIR_INSTALL;
#endif
    for (size_t i = 0; i < 3; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        int n = snprintf(buf, size, "%s/%s.tsv", dirs[i], arch);
        if (n > 0 && (size_t)n < size && access(buf, R_OK) == 0)
            return TMAP_OK;
    }
    return tmap_fail(err, TMAP_ERR_IO,
                     "no latency table %s.tsv in $THREADMAP_DATA, the build tree or the "
                     "install tree (give one with --table)",
                     arch);
}

/* ----------------------------------------------------- opcode analysis */

#define LAT_MAXPARTS 16

/* An opcode split at the dots: parts[0] is the operation. */
typedef struct lat_opcode {
    char buf[96];
    size_t n;
    char *parts[LAT_MAXPARTS];
    size_t ntype;      /* trailing parts that are types */
    const char *space; /* normalized state space or NULL */
} lat_opcode;

static int lat_is_type(const char *p)
{
    static const char *types[] = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                                  "b8", "b16", "b32", "b64", "b128", "f16", "f16x2", "bf16",
                                  "bf16x2", "tf32", "f32", "f64", "pred", "e4m3", "e5m2",
                                  "e4m3x2", "e5m2x2", "s16x2", "u16x2"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(p, types[i]))
            return 1;
    return 0;
}

/* The state space named by a part ("shared::cta" is "shared"), or NULL. */
static const char *lat_space(const char *p)
{
    static const char *spaces[] = {"global", "shared", "local", "const", "param", "tex"};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) {
        size_t n = strlen(spaces[i]);
        if (!strncmp(p, spaces[i], n) && (p[n] == '\0' || (p[n] == ':' && p[n + 1] == ':')))
            return spaces[i];
    }
    return NULL;
}

/* Modifiers that do not change latency and are dropped when normalizing:
 * non-coherent/uniform hints, IEEE rounding modes, flush-to-zero, saturate,
 * vector widths, cache operators, and every "::" qualifier but state
 * spaces (L1::evict_last, L2::128B ...). */
static int lat_neutral(const char *p)
{
    static const char *drop[] = {"nc", "uni", "rn", "rz", "rm", "rp", "rna", "rni", "rzi",
                                 "rmi", "rpi", "ftz", "sat", "v2", "v4", "v8", "ca", "cg",
                                 "cs", "lu", "cv", "wb", "wt", "aligned"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        if (!strcmp(p, drop[i]))
            return 1;
    return strstr(p, "::") && !lat_space(p);
}

static tmap_status lat_split(const char *opcode, lat_opcode *o, tmap_error *err)
{
    size_t len = strlen(opcode);
    if (!len || len >= sizeof o->buf || !lat_key_valid(opcode) || opcode[0] == '.' ||
        opcode[len - 1] == '.' || strstr(opcode, ".."))
        return tmap_fail(err, TMAP_ERR_INVALID, "malformed opcode '%s'", opcode);
    memcpy(o->buf, opcode, len + 1);
    o->n = 0;
    for (char *p = o->buf; p; ) {
        if (o->n == LAT_MAXPARTS)
            return tmap_fail(err, TMAP_ERR_INVALID, "opcode '%s' has too many parts", opcode);
        o->parts[o->n++] = p;
        p = strchr(p, '.');
        if (p)
            *p++ = '\0';
    }
    o->ntype = 0;
    while (o->ntype + 1 < o->n && lat_is_type(o->parts[o->n - 1 - o->ntype]))
        o->ntype++;
    o->space = NULL;
    for (size_t i = 1; i < o->n - o->ntype && !o->space; i++)
        o->space = lat_space(o->parts[i]);
    return TMAP_OK;
}

static int lat_in(const char *op, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(op, list[i]))
            return 1;
    return 0;
}
#define LAT_IN(op, ...)                                                                  \
    lat_in(op, (const char *const[]){__VA_ARGS__},                                       \
           sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static int lat_has_part(const lat_opcode *o, const char *part)
{
    for (size_t i = 1; i < o->n; i++)
        if (!strcmp(o->parts[i], part))
            return 1;
    return 0;
}

/* The arithmetic class of a value type: fp16, fp32, fp64 or int. */
static const char *lat_type_class(const char *type)
{
    if (!type)
        return "int";
    if (LAT_IN(type, "f16", "f16x2", "bf16", "bf16x2"))
        return "fp16";
    if (LAT_IN(type, "f32", "tf32"))
        return "fp32";
    if (!strcmp(type, "f64"))
        return "fp64";
    return "int";
}

/* The class of an opcode (docs/model.md lists the rules). */
static const char *lat_classify(const lat_opcode *o)
{
    const char *op = o->parts[0];
    const char *type = o->ntype ? o->parts[o->n - 1] : NULL;
    const char *tc = lat_type_class(type);
    if (LAT_IN(op, "bra", "brx", "call", "ret", "exit", "trap", "brkpt", "nanosleep"))
        return "control";
    if (LAT_IN(op, "bar", "barrier", "membar", "fence", "griddepcontrol", "mbarrier"))
        return "sync";
    if (LAT_IN(op, "atom", "red"))
        return "atomic";
    if (LAT_IN(op, "tex", "tld4", "txq", "suld", "sust", "sured", "suq"))
        return "mem.texture";
    if (LAT_IN(op, "ld", "ldu", "st", "prefetch", "prefetchu")) {
        if (!o->space || !strcmp(o->space, "global"))
            return "mem.global"; /* generic addressing: assume global */
        static const char *const name[5] = {"mem.shared", "mem.local", "mem.const",
                                            "mem.param", "mem.texture"};
        static const char *const sp[5] = {"shared", "local", "const", "param", "tex"};
        for (size_t i = 0; i < 5; i++)
            if (!strcmp(o->space, sp[i]))
                return name[i];
        return "mem.global";
    }
    if (LAT_IN(op, "cp"))
        return "mem.global";
    if (LAT_IN(op, "shfl", "vote", "match", "activemask", "redux", "elect"))
        return "warp";
    if (LAT_IN(op, "mov"))
        return "move";
    if (LAT_IN(op, "cvt"))
        return "convert";
    if (LAT_IN(op, "sin", "cos", "ex2", "lg2", "rsqrt", "sqrt", "rcp", "tanh"))
        return !strcmp(tc, "fp64") ? "fp64.div" : "sfu";
    if (LAT_IN(op, "div", "rem")) {
        if (!strcmp(tc, "fp32"))
            return lat_has_part(o, "approx") || lat_has_part(o, "full") ? "sfu" : "fp32.div";
        if (!strcmp(tc, "fp64"))
            return "fp64.div";
        return !strcmp(tc, "fp16") ? "fp16" : "int.div";
    }
    if (LAT_IN(op, "mul", "mad", "mul24", "mad24", "fma", "sad", "madc"))
        return !strcmp(tc, "int") ? "int.mul" : tc;
    if (LAT_IN(op, "wmma", "mma", "wgmma", "tcgen05", "ldmatrix", "stmatrix"))
        return "other";
    if (LAT_IN(op, "add", "sub", "min", "max", "abs", "neg", "setp", "set", "selp", "slct",
               "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "popc", "clz", "bfe",
               "bfi", "brev", "bfind", "prmt", "lop3", "copysign", "testp", "fns", "dp4a",
               "dp2a", "addc", "subc", "cvta", "isspacep", "szext", "bmsk"))
        return tc;
    return "other";
}

/* --------------------------------------------------------------- lookup */

static const lat_entry *lat_find(const tmap_lat_table *t, const char *key)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) { /* invariant: the key, if present, is in [lo, hi) */
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->e[mid].key, key);
        if (!c)
            return &t->e[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Tries one key; fills *out and returns 1 on a hit. */
static int lat_try(const tmap_lat_table *t, const char *key, tmap_lat_match m,
                   tmap_lat_lookup *out)
{
    const lat_entry *e = lat_find(t, key);
    if (!e)
        return 0;
    out->latency = e->latency;
    out->issue = e->issue;
    out->match = m;
    snprintf(out->key, sizeof out->key, "%s", key);
    return 1;
}

/* Appends ".part" to a key buffer. */
static void lat_append(char *k, size_t size, const char *part)
{
    size_t n = strlen(k);
    snprintf(k + n, size - n, "%s%s", n ? "." : "", part);
}

/* Integer types with signedness dropped: s32/b32 -> u32; else NULL. */
static const char *lat_unsigned(const char *type)
{
    static const char *from[] = {"s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64"};
    static const char *to[] = {"u8", "u16", "u32", "u64", "u8", "u16", "u32", "u64"};
    for (size_t i = 0; i < 8; i++)
        if (!strcmp(type, from[i]))
            return to[i];
    return NULL;
}

/* The op+type keys (step 3), then the op key (step 4). */
static int lat_try_root(const tmap_lat_table *t, const lat_opcode *o, tmap_lat_lookup *out)
{
    char root[96] = "", k[96];
    lat_append(root, sizeof root, o->parts[0]);
    if (o->space)
        lat_append(root, sizeof root, o->space);
    if (o->ntype) {
        snprintf(k, sizeof k, "%s", root);
        for (size_t i = o->n - o->ntype; i < o->n; i++)
            lat_append(k, sizeof k, o->parts[i]);
        if (lat_try(t, k, TMAP_LAT_ROOT_TYPE, out))
            return 1;
        snprintf(k, sizeof k, "%s", root);
        int changed = 0;
        for (size_t i = o->n - o->ntype; i < o->n; i++) {
            const char *u = lat_unsigned(o->parts[i]);
            changed |= u != NULL;
            lat_append(k, sizeof k, u ? u : o->parts[i]);
        }
        if (changed && lat_try(t, k, TMAP_LAT_ROOT_TYPE, out))
            return 1;
    }
    return lat_try(t, root, TMAP_LAT_ROOT, out);
}

tmap_status tmap_lat_lookup_opcode(const tmap_lat_table *t, const char *opcode,
                                   tmap_lat_lookup *out, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, t, opcode, out);
    if (absent)
        return absent;
    lat_opcode o;
    tmap_status s = lat_split(opcode, &o, err);
    if (s)
        return s;
    if (strncmp(opcode, "class:", 6) && lat_try(t, opcode, TMAP_LAT_EXACT, out))
        return TMAP_OK;
    char k[96] = "";
    for (size_t i = 0; i < o.n; i++)
        if (i == 0 || !lat_neutral(o.parts[i]))
            lat_append(k, sizeof k, o.parts[i]);
    if (strcmp(k, opcode) && lat_try(t, k, TMAP_LAT_NORMALIZED, out))
        return TMAP_OK;
    if (lat_try_root(t, &o, out))
        return TMAP_OK;
    /* Class chain: the class, its parents, then class:default. */
    for (const char *c = lat_classify(&o); c; c = lat_class_parent(c)) {
        snprintf(k, sizeof k, "class:%s", c);
        if (lat_try(t, k, strcmp(c, "default") ? TMAP_LAT_CLASS : TMAP_LAT_DEFAULT, out))
            return TMAP_OK;
    }
    return tmap_fail(err, TMAP_ERR_INVALID,
                     "no latency for '%s': the table has no entry for it, its class (%s) or "
                     "class:default",
                     opcode, lat_classify(&o));
}

/* ------------------------------------------------------ block latencies */

/* Adds one fallback occurrence to the report (deduplicated by opcode). */
static int lat_report_add(tmap_lat_report *r, size_t *cap, const char *opcode,
                          const tmap_lat_lookup *how)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->items[i].opcode, opcode)) {
            r->items[i].count++;
            return 0;
        }
    if (tmap_grow(&r->items, cap, r->n + 1, sizeof *r->items))
        return -1;
    tmap_lat_fallback *f = &r->items[r->n];
    f->opcode = strdup(opcode);
    if (!f->opcode)
        return -1;
    f->how = *how;
    f->count = 1;
    r->n++;
    return 0;
}

static int lat_cmp_fallback(const void *a, const void *b)
{
    return strcmp(((const tmap_lat_fallback *)a)->opcode, ((const tmap_lat_fallback *)b)->opcode);
}

tmap_status tmap_lat_check(const double *lat, size_t n, const char *name, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, lat, name);
    if (absent)
        return absent;
    for (size_t b = 0; b < n; b++)
        if (!(lat[b] >= 0 && lat[b] <= TMAP_LAT_MAX))
            return tmap_fail(err, TMAP_ERR_INVALID,
                             "%s: block latency %zu = %g is not in [0, %g] cycles", name, b,
                             lat[b], TMAP_LAT_MAX);
    return TMAP_OK;
}

tmap_status tmap_lat_blocks(const tmap_lat_table *t, const tmap_cfg *cfg, double **lat,
                            tmap_lat_report *report, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, t, cfg, lat);
    if (absent)
        return absent;
    tmap_lat_report r = {0};
    size_t cap = 0;
    double *v = calloc(cfg->nblocks ? cfg->nblocks : 1, sizeof *v);
    if (!v)
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory for %zu block latencies",
                         cfg->nblocks);
    for (size_t b = 0; b < cfg->nblocks; b++) {
        const tmap_cfg_block *blk = &cfg->blocks[b];
        for (uint32_t i = 0; i < blk->ninstr; i++) {
            tmap_lat_lookup how;
            tmap_status s = tmap_lat_lookup_opcode(t, blk->opcodes[i], &how, err);
            if (!s && how.match != TMAP_LAT_EXACT && lat_report_add(&r, &cap, blk->opcodes[i], &how))
                s = tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
            if (s) {
                tmap_error_prefix(err, "block %zu (%s, PTX line %u)", b,
                                  blk->name ? blk->name : "?", blk->line);
                free(v);
                tmap_lat_report_free(&r);
                return s;
            }
            v[b] += how.latency;
        }
    }
    tmap_status s = tmap_lat_check(v, cfg->nblocks, "the latency table's block sums", err);
    if (s) {
        free(v);
        tmap_lat_report_free(&r);
        return s;
    }
    if (r.n > 1)
        qsort(r.items, r.n, sizeof *r.items, lat_cmp_fallback);
    if (report)
        *report = r;
    else
        tmap_lat_report_free(&r);
    *lat = v;
    return TMAP_OK;
}

void tmap_lat_report_free(tmap_lat_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->items[i].opcode);
    free(r->items);
    memset(r, 0, sizeof *r);
}

const char *tmap_lat_class_of(const char *opcode)
{
    if (!opcode)
        return "default";
    lat_opcode o;
    if (lat_split(opcode, &o, NULL) != TMAP_OK)
        return "default";
    return lat_classify(&o);
}

size_t tmap_lat_num_classes(void) { return LAT_NCLASSES; }
const char *tmap_lat_class_name(size_t i) { return i < LAT_NCLASSES ? lat_classes[i].name : NULL; }

size_t tmap_lat_num_entries(const tmap_lat_table *t) { return t ? t->n : 0; }

void tmap_lat_entry(const tmap_lat_table *t, size_t i, const char **key, double *latency,
                    double *issue, const char **source)
{
    if (!t || i >= t->n || !key || !latency || !issue || !source)
        return;
    const lat_entry *e = &t->e[i];
    *key = e->key;
    *latency = e->latency;
    *issue = e->issue;
    *source = e->source;
}

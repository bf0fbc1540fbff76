/*
 * seq2raw.c -- turns flat-file sequence databases (SwissProt/EMBL: the lines
 * after "SQ", GenBank: after "ORIGIN", each entry ending at "//") into the raw
 * little-endian arrays the suite's manifests read:
 *   PREFIX.res    CAP bytes: the residues (upper-case ASCII) of the records, back
 *                 to back, zero padded; CAP must be a power of two (kernels wrap
 *                 with CAP - 1)
 *   PREFIX.start  N i32: where thread t's record starts in PREFIX.res
 *   PREFIX.len    N i32: its length
 *   PREFIX.query  Q bytes (with -q Q): the first Q residues of record 0
 * Thread t gets record (t + SHIFT) mod R of the R records, so N threads cycle
 * through the data.  With -d MOTIF each sequence is first cut after every
 * occurrence of MOTIF (an in-silico restriction digest: real fragment lengths);
 * with -m MAX records are truncated to MAX residues, and shorter than -l MIN
 * dropped.  Prints the record count and length statistics.
 *
 * usage: seq2raw -n N -c CAP [-s SHIFT] [-d MOTIF] [-m MAX] [-l MIN] [-q Q] PREFIX FILE...
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct opts {
    long n, cap, shift, max, min, q;
    const char *motif;
} opts;

typedef struct recs {
    unsigned char *res; /* cap bytes */
    long used, cap;
    int full;           /* the buffer filled up: later residues are dropped */
    int32_t *start, *len;
    long count, alloc;
} recs;

static void die(const char *what)
{
    fprintf(stderr, "seq2raw: %s\n", what);
    exit(1);
}

static void add_record(recs *r, const opts *o, long from, long len)
{
    if (o->max > 0 && len > o->max)
        len = o->max;
    if (len < o->min || len <= 0)
        return;
    if (r->count == r->alloc) {
        r->alloc = r->alloc ? 2 * r->alloc : 1024;
        r->start = realloc(r->start, r->alloc * sizeof *r->start);
        r->len = realloc(r->len, r->alloc * sizeof *r->len);
        if (!r->start || !r->len)
            die("out of memory");
    }
    r->start[r->count] = (int32_t)from;
    r->len[r->count++] = (int32_t)len;
}

/* One whole sequence sits at res[from, used): cut it (or not) into records. */
static void close_sequence(recs *r, const opts *o, long from)
{
    long end = r->used, ml = o->motif ? (long)strlen(o->motif) : 0, piece = from;
    if (ml > 0)
        for (long i = from; i + ml <= end; i++)
            if (!memcmp(r->res + i, o->motif, (size_t)ml)) {
                add_record(r, o, piece, i + ml - piece);
                piece = i + ml;
            }
    add_record(r, o, piece, end - piece);
}

/* Reads one flat file; returns -1 when it cannot be opened. */
static int read_file(recs *r, const opts *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "seq2raw: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[65536];
    int in_seq = 0;
    long from = 0;
    while (!r->full && fgets(line, sizeof line, f)) {
        if (!in_seq) {
            if (!strncmp(line, "SQ", 2) || !strncmp(line, "ORIGIN", 6)) {
                in_seq = 1;
                from = r->used;
            }
            continue;
        }
        if (!strncmp(line, "//", 2)) {
            close_sequence(r, o, from);
            in_seq = 0;
            continue;
        }
        for (const char *p = line; *p && !r->full; p++) {
            if (!isalpha((unsigned char)*p))
                continue;
            if (r->used == r->cap)
                r->full = 1;
            else
                r->res[r->used++] = (unsigned char)toupper((unsigned char)*p);
        }
    }
    if (in_seq)
        close_sequence(r, o, from);
    fclose(f);
    return 0;
}

static void write_file(const char *prefix, const char *ext, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%s", prefix, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "seq2raw: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static long number(const char *s, const char *flag)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "seq2raw: %s needs a non-negative integer, not '%s'\n", flag, s);
        exit(2);
    }
    return v;
}

static int is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

int main(int argc, char **argv)
{
    opts o = {0};
    int c;
    while ((c = getopt(argc, argv, "n:c:s:d:m:l:q:")) != -1) {
        switch (c) {
        case 'n': o.n = number(optarg, "-n"); break;
        case 'c': o.cap = number(optarg, "-c"); break;
        case 's': o.shift = number(optarg, "-s"); break;
        case 'd': o.motif = optarg; break;
        case 'm': o.max = number(optarg, "-m"); break;
        case 'l': o.min = number(optarg, "-l"); break;
        case 'q': o.q = number(optarg, "-q"); break;
        default: return 2;
        }
    }
    if (o.n < 1 || o.cap < 1 || (o.cap & (o.cap - 1)) || o.cap > (1L << 30) || optind + 2 > argc) {
        fprintf(stderr, "usage: seq2raw -n N -c CAP(power of two) [-s SHIFT] [-d MOTIF] [-m MAX] "
                        "[-l MIN] [-q Q] PREFIX FILE...\n");
        return 2;
    }
    if (!is_little_endian())
        die("this host is big-endian; the arrays must be little-endian");
    recs r = {0};
    r.cap = o.cap;
    if (!(r.res = calloc((size_t)o.cap, 1)))
        die("out of memory");
    for (int i = optind + 1; i < argc; i++)
        if (read_file(&r, &o, argv[i]) != 0)
            return 1;
    if (r.count == 0)
        die("no sequence records found");
    int32_t *start = malloc((size_t)o.n * sizeof *start), *len = malloc((size_t)o.n * sizeof *len);
    if (!start || !len)
        die("out of memory");
    long total = 0, lo = r.len[0], hi = r.len[0];
    for (long i = 0; i < r.count; i++) {
        total += r.len[i];
        lo = r.len[i] < lo ? r.len[i] : lo;
        hi = r.len[i] > hi ? r.len[i] : hi;
    }
    for (long t = 0; t < o.n; t++) {
        long k = (t + o.shift) % r.count;
        start[t] = r.start[k];
        len[t] = r.len[k];
    }
    const char *prefix = argv[optind];
    write_file(prefix, "res", r.res, (size_t)o.cap);
    write_file(prefix, "start", start, (size_t)o.n * sizeof *start);
    write_file(prefix, "len", len, (size_t)o.n * sizeof *len);
    if (o.q > 0) {
        unsigned char *q = calloc((size_t)o.q, 1);
        if (!q)
            die("out of memory");
        memcpy(q, r.res + r.start[0], (size_t)(r.len[0] < o.q ? r.len[0] : o.q));
        write_file(prefix, "query", q, (size_t)o.q);
        free(q);
    }
    printf("%s: %ld records (lengths %ld..%ld, mean %.1f), %ld residues of %ld%s, %ld threads\n",
           prefix, r.count, lo, hi, (double)total / (double)r.count, r.used, o.cap,
           r.full ? " (full: the rest was dropped)" : "", o.n);
    free(start), free(len), free(r.res), free(r.start), free(r.len);
    return 0;
}

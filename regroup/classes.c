/*
 * classes.c -- distinct rows by hashing, in one streaming pass over the
 * matrix; members by a counting sort.  With several CPU threads, each
 * classifies a contiguous span of threads, then the spans' classes are
 * merged (one hash partition per CPU thread) and numbered in order of
 * first member, so that the result does not depend on the thread count.
 */
#include "regroup/classes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "threadmap/regroup.h"
#include "common/base.h"
#include "regroup/rowset.h"

/* Rows this many bytes ahead are prefetched: while a row is hashed, the
 * hardware prefetcher alone leaves memory bandwidth unused. */
#define AHEAD 4096
/* The hint cache: direct-mapped, from the hash of a row's first HINT_WORDS
 * words to the first member (+ 1, 0 = empty) of the last class seen with
 * that hash, tagged with the hash's high half.  A hint is only a guess,
 * checked against the whole row, so a stale or colliding one costs one
 * comparison and never names a wrong class; the tag spares most of those
 * comparisons, each a likely cache miss on an old row, when rows rarely
 * repeat.  On a miss the exact set (rowset.h) decides.  Rows of different
 * classes nearly always differ in their first cache line, so the whole row
 * is hashed only for the first thread of each class (64 blocks: a quarter
 * of the multiplies).  Rows that share their first words fall back to the
 * set each time: one short hash and one comparison more than without. */
typedef struct hint_slot {
    uint32_t first; /* first member + 1, 0 = empty */
    uint32_t tag;   /* the high half of the prefix hash */
} hint_slot;
#define HINT_WORDS 16
#define HINT_SLOTS 4096 /* 32 KiB: stays in L1/L2 */
/* Spans of fewer threads are not worth a CPU thread of their own. */
#define TMAP_REGROUP_MIN_SPAN 8192
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

void tmap_regroup_classes_free(tmap_regroup_classes *c)
{
    free(c->of);
    free(c->first);
    free(c->size);
    free(c->start);
    free(c->member);
    memset(c, 0, sizeof *c);
}

/* Appends thread t as the first member of class c->count (cap: the room
 * in first[] and in size[]).  0 or -1 (no memory). */
static int new_class(tmap_regroup_classes *c, size_t cap[2], uint32_t t)
{
    if (tmap_grow(&c->first, &cap[0], c->count + 1, sizeof *c->first) ||
        tmap_grow(&c->size, &cap[1], c->count + 1, sizeof *c->size))
        return -1;
    c->first[c->count] = t;
    c->size[c->count++] = 0;
    return 0;
}

/* Whether hint g, for prefix hash ph, names row r's class. */
static inline int hint_names(const hint_slot *g, uint64_t ph, const uint32_t *rows,
                             const uint32_t *r, size_t nb)
{
    return g->first && g->tag == (uint32_t)(ph >> 32) &&
           tmap_regroup_same(rows + (size_t)(g->first - 1) * nb, r, nb);
}

/* The threads [begin, end) of a problem, classified by one CPU thread into
 * classes of their own: c.first[] holds thread indices; c.of[] is the
 * problem's and receives ids local to the span until remap_run() maps
 * them to the problem's (map[local]).  The set names rows by thread. */
typedef struct span {
    const tmap_regroup_part *p;
    size_t begin, end;
    tmap_regroup_classes c;
    size_t cap[3];
    uint64_t *hash;     /* [c.count] each class's row hash */
    uint32_t *rep;      /* [c.count] the row's first thread in the problem */
    uint32_t *map;      /* [c.count] the problem's class id */
    int bad;            /* out of memory */
    struct span *all;   /* the problem's spans, for the merge */
    size_t nspan, part; /* spans; the hash partition this thread merges */
    pthread_t tid;
} span;

/* Records the hash of the span's newest class, for the merge. */
static int keep_hash(span *s, uint64_t h)
{
    if (tmap_grow(&s->hash, &s->cap[2], s->c.count, sizeof *s->hash))
        return -1;
    s->hash[s->c.count - 1] = h;
    return 0;
}

static void find_span(span *s)
{
    const tmap_regroup_part *p = s->p;
    tmap_regroup_classes *c = &s->c;
    size_t nb = p->nblocks, hw = nb < HINT_WORDS ? nb : HINT_WORDS;
    size_t rb = nb * sizeof *p->rows, total = s->end * rb;
    tmap_regroup_rowset set = {0}; /* freeable if init is not reached */
    hint_slot *hint = calloc(HINT_SLOTS, sizeof *hint);
    s->bad = !hint || tmap_regroup_rowset_init(&set, nb);
    /* the set names a class by its first member, translated through of[] */
    for (size_t t = s->begin; t < s->end && !s->bad; t++) {
        const uint32_t *r = p->rows + t * nb;
        if (t * rb + AHEAD + rb <= total)
            for (size_t o = 0; o < rb; o += 64)
                PREFETCH((const char *)r + AHEAD + o);
        /* inside a run of equal rows (a warp's threads often take one
         * path), compare with the previous row before hashing */
        uint32_t k;
        if (t >= s->begin + 2 && c->of[t - 1] == c->of[t - 2] &&
            tmap_regroup_same(r, r - nb, nb)) {
            k = c->of[t - 1];
        } else {
            uint64_t ph = tmap_regroup_hash(r, hw);
            hint_slot *guess = &hint[ph & (HINT_SLOTS - 1)];
            if (hint_names(guess, ph, p->rows, r, nb)) {
                k = c->of[guess->first - 1];
            } else {
                /* tmap_regroup_hash(r, nb) == ph when the prefix is the row */
                uint64_t h = hw == nb ? ph : tmap_regroup_hash(r, nb);
                uint32_t first;
                int added = tmap_regroup_rowset_add(&set, p->rows, r, h,
                                                    (uint32_t)t, &first);
                if (added < 0 || (added && new_class(c, s->cap, (uint32_t)t)) ||
                    (added && s->nspan > 1 && keep_hash(s, h))) {
                    s->bad = 1;
                    break;
                }
                k = added ? (uint32_t)c->count - 1 : c->of[first];
                *guess = (hint_slot){first + 1, (uint32_t)(ph >> 32)};
            }
        }
        c->of[t] = k;
        c->size[k]++;
    }
    tmap_regroup_rowset_free(&set);
    free(hint);
}

static void *find_run(void *arg)
{
    find_span(arg);
    return NULL;
}

/* The merge, one hash partition per CPU thread: rep[] of every span's
 * classes whose hash falls in this thread's partition, visiting the spans
 * in order, so that the first span to hold a row names its first thread. */
static void *rep_run(void *arg)
{
    span *me = arg;
    const tmap_regroup_part *p = me->p;
    tmap_regroup_rowset set;
    if (tmap_regroup_rowset_init(&set, p->nblocks)) {
        me->bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < me->nspan && !me->bad; i++) {
        span *s = &me->all[i];
        for (size_t j = 0; j < s->c.count; j++) {
            if ((s->hash[j] >> 40) % me->nspan != me->part)
                continue;
            uint32_t t = s->c.first[j];
            if (tmap_regroup_rowset_add(&set, p->rows, p->rows + (size_t)t * p->nblocks,
                                        s->hash[j], t, &s->rep[j]) < 0) {
                me->bad = 1;
                break;
            }
        }
    }
    tmap_regroup_rowset_free(&set);
    return NULL;
}

static void *remap_run(void *arg)
{
    span *s = arg;
    for (size_t t = s->begin; t < s->end; t++)
        s->c.of[t] = s->map[s->c.of[t]];
    return NULL;
}

/* fn on every span, the first on the calling thread; a span whose thread
 * cannot start runs on the calling thread after the others. */
static void run_spans(span *s, size_t ns, void *(*fn)(void *))
{
    int started[TMAP_REGROUP_MAX_THREADS] = {0};
    for (size_t i = 1; i < ns; i++)
        started[i] = !pthread_create(&s[i].tid, NULL, fn, &s[i]);
    fn(&s[0]);
    for (size_t i = 1; i < ns; i++) {
        if (started[i])
            pthread_join(s[i].tid, NULL);
        else
            fn(&s[i]);
    }
}

/* Numbers the classes in order of first thread: the spans in order, each
 * one's classes in order, a class whose row an earlier span holds taking
 * that class's number (its rep lies in that span, whose map is done). */
static int number(span *s, size_t ns, size_t len, tmap_regroup_classes *c)
{
    size_t cap[2] = {0, 0};
    for (size_t i = 0; i < ns; i++) {
        if (!(s[i].map = malloc(s[i].c.count * sizeof *s[i].map)))
            return -1;
        for (size_t j = 0; j < s[i].c.count; j++) {
            uint32_t t = s[i].c.first[j], rep = s[i].rep[j], g;
            if (rep == t) {
                if (new_class(c, cap, t))
                    return -1;
                g = (uint32_t)c->count - 1;
            } else {
                g = s[rep / len].map[c->of[rep]];
            }
            s[i].map[j] = g;
            c->size[g] += s[i].c.size[j];
        }
    }
    return 0;
}

/* The classes of p by ns CPU threads, each over a span of len threads:
 * find, merge by hash partition, number, remap.  0 or -1 (no memory). */
static int find_parallel(const tmap_regroup_part *p, size_t ns, size_t len,
                         span *s, tmap_regroup_classes *c)
{
    int bad = 0;
    for (size_t i = 0; i < ns; i++)
        s[i] = (span){.p = p, .begin = i * len, .all = s, .nspan = ns, .part = i,
                      .end = i + 1 < ns ? (i + 1) * len : p->n, .c.of = c->of};
    run_spans(s, ns, find_run);
    for (size_t i = 0; i < ns && !bad; i++)
        bad = s[i].bad || !(s[i].rep = malloc((s[i].c.count ? s[i].c.count : 1) *
                                              sizeof *s[i].rep));
    if (!bad)
        run_spans(s, ns, rep_run);
    for (size_t i = 0; i < ns; i++)
        bad |= s[i].bad;
    if (bad || number(s, ns, len, c))
        return -1;
    run_spans(s, ns, remap_run);
    return 0;
}

tmap_status tmap_regroup_classes_find(const tmap_regroup_part *p,
                                      tmap_regroup_classes *c,
                                      tmap_error *err)
{
    size_t ns = p->threads ? p->threads : 1, most = p->n / TMAP_REGROUP_MIN_SPAN;
    if (ns > most)
        ns = most ? most : 1;
    size_t len = (p->n + ns - 1) / ns;
    span s[TMAP_REGROUP_MAX_THREADS] = {{0}};
    memset(c, 0, sizeof *c);
    c->n = p->n;
    int bad = !(c->of = malloc(p->n * sizeof *c->of));
    if (!bad && ns == 1) { /* the span's classes are the problem's */
        s[0] = (span){.p = p, .begin = 0, .end = p->n, .c = *c};
        find_span(&s[0]);
        *c = s[0].c;
        bad = s[0].bad;
        free(s[0].hash);
    } else if (!bad) {
        bad = find_parallel(p, ns, len, s, c);
        for (size_t i = 0; i < ns; i++) {
            free(s[i].c.first);
            free(s[i].c.size);
            free(s[i].hash);
            free(s[i].rep);
            free(s[i].map);
        }
    }
    if (bad) {
        tmap_regroup_classes_free(c);
        return tmap_fail(err, TMAP_ERR_NOMEM, "regroup: class table");
    }
    return TMAP_OK;
}

tmap_status tmap_regroup_classes_build(const tmap_regroup_part *p,
                                       tmap_regroup_classes *c,
                                       tmap_error *err)
{
    tmap_status st = tmap_regroup_classes_find(p, c, err);
    if (st != TMAP_OK)
        return st;
    c->start = calloc(c->count + 1, sizeof *c->start);
    c->member = malloc(c->n * sizeof *c->member);
    if (!c->start || !c->member) {
        tmap_regroup_classes_free(c);
        return tmap_fail(err, TMAP_ERR_NOMEM, "regroup: class table");
    }
    for (size_t k = 0; k < c->count; k++)
        c->start[k + 1] = c->start[k] + c->size[k];
    /* start[k] runs ahead while class k is filled, then is restored */
    for (size_t t = 0; t < c->n; t++)
        c->member[c->start[c->of[t]]++] = (uint32_t)t;
    for (size_t k = c->count; k > 0; k--)
        c->start[k] = c->start[k - 1];
    c->start[0] = 0;
    return TMAP_OK;
}

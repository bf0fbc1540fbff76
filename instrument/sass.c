/*
 * sass.c -- SASS instructions per execution of each CFG block.  The PTX is
 * assembled by ptxas (-lineinfo, loop unrolling off) and disassembled by
 * nvdisasm -gp, whose listing names the PTX line of each SASS instruction;
 * each SASS basic block counts for the block holding most of its lines.  Both tools come
 * with the CUDA toolkit (docs/model.md, "SIMD efficiency").
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "threadmap/instrument.h"
#include "common/base.h"
#include "instrument/sass_flow.h"

extern char **environ;

#ifndef TMAP_PTXAS_DEFAULT
#define TMAP_PTXAS_DEFAULT "/usr/local/cuda/bin/ptxas"
#endif

static int executable(const char *p) { return p && *p && access(p, X_OK) == 0; }

/* dir/name into out if executable. */
static int try_dir(const char *dir, size_t dirlen, const char *name, char *out, size_t size)
{
    if (!dir || !dirlen)
        return 0;
    int n = snprintf(out, size, "%.*s/%s", (int)dirlen, dir, name);
    return n > 0 && (size_t)n < size && executable(out);
}

tmap_status tmap_sass_tool_find(const char *name, char *path, size_t size, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, name, path);
    if (absent)
        return absent;
    char env[64];
    snprintf(env, sizeof env, "TMAP_%s", name);
    for (char *c = env; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    const char *given = getenv(env);
    if (given && *given) {
        if (executable(given) && strlen(given) < size) {
            snprintf(path, size, "%s", given);
            return TMAP_OK;
        }
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s=%s is not an executable", env, given);
    }
    const char *homes[2] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
    char bin[1024];
    for (int k = 0; k < 2; k++)
        if (homes[k] && snprintf(bin, sizeof bin, "%s/bin", homes[k]) < (int)sizeof bin &&
            try_dir(bin, strlen(bin), name, path, size))
            return TMAP_OK;
    const char *built = strrchr(TMAP_PTXAS_DEFAULT, '/');
    if (built && try_dir(TMAP_PTXAS_DEFAULT, (size_t)(built - TMAP_PTXAS_DEFAULT), name, path,
                         size))
        return TMAP_OK;
    for (const char *p = getenv("PATH"); p && *p;) {
        size_t n = strcspn(p, ":");
        if (try_dir(p, n, name, path, size))
            return TMAP_OK;
        p += n + (p[n] == ':');
    }
    return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                     "%s not found: set %s, or CUDA_HOME, or put the CUDA toolkit's bin on PATH%s",
                     name, env,
                     strcmp(name, "nvdisasm") ? ""
                                              : " (the PyPI package nvidia-cuda-nvdisasm has it)");
}

/* Seconds a tool may run: $TMAP_TOOL_TIMEOUT when a positive number, else
 * TMAP_TOOL_TIMEOUT_DEFAULT. */
#define TMAP_TOOL_TIMEOUT_DEFAULT 120.0

static double tool_timeout(void)
{
    const char *env = getenv("TMAP_TOOL_TIMEOUT");
    char *end;
    double t = env ? strtod(env, &end) : 0;
    return env && *env && !*end && t > 0 && t < 1e9 ? t : TMAP_TOOL_TIMEOUT_DEFAULT;
}

/* Waits for pid (its own process group) until `limit` seconds have passed,
 * then kills the group: 1 finished (*status set), 0 killed, -1 wait failed. */
static int wait_bounded(pid_t pid, double limit, int *status)
{
    double end = tmap_clock_seconds() + limit;
    long nap = 1000000; /* ns, doubling to 50 ms */
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (tmap_clock_seconds() >= end) {
            kill(-pid, SIGKILL);
            waitpid(pid, status, 0);
            return 0;
        }
        struct timespec ts = {0, nap};
        nanosleep(&ts, NULL);
        nap = nap < 50000000 ? 2 * nap : nap;
    }
}

/* Runs argv with stdout to out_path (NULL: the log) and stderr to a log
 * that is quoted in the error when the tool fails or runs past its time. */
static tmap_status run_tool(char *const argv[], const char *out_path, tmap_error *err)
{
    char log[] = "/tmp/tmap_sass_log_XXXXXX";
    int lfd = mkstemp(log);
    if (lfd < 0)
        return tmap_fail(err, TMAP_ERR_IO, "temporary file: %s", strerror(errno));
    close(lfd);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    /* one open file for stdout and stderr when both go to the log, so that
     * neither overwrites the other */
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out_path)
        posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    else
        posix_spawn_file_actions_adddup2(&fa, 2, 1);
    posix_spawnattr_t at; /* its own process group: a timeout kills all of it */
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    int status = 0, done = 0;
    double limit = tool_timeout();
    tmap_status st = TMAP_OK;
    if (rc != 0)
        st = tmap_fail(err, TMAP_ERR_IO, "cannot run %s: %s", argv[0], strerror(rc));
    else if ((done = wait_bounded(pid, limit, &status)) == 0)
        st = tmap_fail(err, TMAP_ERR_IO,
                       "%s did not finish in %g s and was stopped (TMAP_TOOL_TIMEOUT sets the "
                       "limit in seconds)", argv[0], limit);
    else if (done < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char *text = NULL;
        tmap_file_read(log, &text, NULL, NULL);
        st = tmap_fail(err, TMAP_ERR_IO, "%s failed: %.1500s", argv[0], text ? text : "");
        free(text);
    }
    unlink(log);
    return st;
}

/* ------------------------------------------------------ listing parser */

/* An instruction of a function of the CFG, in listing order. */
typedef struct sass_insn {
    size_t block;      /* CFG block of its PTX line; SIZE_MAX: not counted */
    int64_t loop_from; /* a backward branch: the index it jumps to, else -1 */
    int leads;         /* a label or a function starts here */
    int ends;          /* how it may transfer control (sass_flow.h), or
                          SASS_NONE: it does not */
    int guarded;       /* predicated ("@P0 ...") */
    int cond;          /* guarded, or a branch on a predicate operand */
    int func;          /* the CFG function of its code */
    char target[128];  /* BRA, CALL: the label named, else "" */
} sass_insn;

typedef struct sass_label {
    char name[128];
    size_t at;         /* index of the instruction it labels */
} sass_label;

typedef struct listing_state {
    const tmap_cfg *cfg;
    int func;            /* CFG function whose code this is, -1: none (a
                            section or subroutine outside the CFG) */
    uint32_t line;       /* PTX line of the following instructions, 0: none yet */
    char label[128];     /* label just before the current instruction, or "" */
    sass_insn *insn;
    size_t ninsn, cap;
    sass_label *labels;  /* the labels (unique in a listing), sorted by
                            (name, at) once the listing is read */
    size_t nlabels, lcap;
    int oom;
} listing_state;

static int cfg_func(const tmap_cfg *cfg, const char *name, size_t len)
{
    for (size_t f = 0; f < cfg->nfuncs; f++)
        if (strlen(cfg->funcs[f].name) == len && !strncmp(cfg->funcs[f].name, name, len))
            return (int)f;
    return -1;
}

/* The block of function f holding PTX line `line`: the last block starting
 * at or before it (blocks are in text order); lines before the first block
 * (the function's header) belong to the first. */
static size_t line_block(const tmap_cfg *cfg, int f, uint32_t line)
{
    const tmap_cfg_func *fn = &cfg->funcs[f];
    size_t lo = fn->first_block + 1, hi = fn->first_block + fn->nblocks;
    while (lo < hi) { /* blocks [.., lo) start at or before line, [hi, ..) after */
        size_t mid = lo + (hi - lo) / 2;
        if (cfg->blocks[mid].line <= line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* How the instruction (s: its text, a predicate first if any) may leave
 * its SASS basic block or change which threads run on (branches, calls,
 * returns, exits and the reconvergence barriers' waits), or SASS_NONE. */
static int transfers(const char *s)
{
    if (*s == '@')
        s = skip_space(s + strcspn(s, " \t"));
    static const struct {
        const char *op;
        int end;
    } ops[] = {{"BRA", SASS_BRA},   {"BRX", SASS_LOST},       {"JMP", SASS_LOST},
               {"JMX", SASS_LOST},  {"CALL", SASS_CALL},      {"RET", SASS_RET},
               {"EXIT", SASS_EXIT}, {"BSYNC", SASS_SYNC},     {"BREAK", SASS_FALL},
               {"KILL", SASS_EXIT}, {"WARPSYNC", SASS_SYNC},  {"BPT", SASS_EXIT}};
    size_t n = strcspn(s, " .;");
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (strlen(ops[k].op) == n && !strncmp(s, ops[k].op, n))
            return ops[k].end;
    return SASS_NONE;
}

/* The label named by a branch or call in s ("BRA `(.L_x_3) ;") into in,
 * and whether an operand precedes a branch's ("BRA P1, `(...)":
 * conditional). */
static void branch_target(sass_insn *in, const char *s)
{
    in->target[0] = '\0';
    const char *t = strstr(s, "`(");
    if (!t || (in->ends != SASS_BRA && in->ends != SASS_CALL))
        return;
    const char *op = s + (*s == '@' ? strcspn(s, " \t") : 0);
    op = skip_space(op);
    op += strcspn(op, " \t");
    in->cond |= in->ends == SASS_BRA && skip_space(op) < t;
    size_t n = strcspn(t + 2, ")");
    if (n < sizeof in->target)
        snprintf(in->target, sizeof in->target, "%.*s", (int)n, t + 2);
}

/* One SASS instruction (the text after its address comment). */
static void on_instruction(listing_state *st, const char *s)
{
    if (st->func < 0)
        return;
    if (tmap_grow(&st->insn, &st->cap, st->ninsn + 1, sizeof *st->insn)) {
        st->oom = 1;
        return;
    }
    sass_insn *in = &st->insn[st->ninsn++];
    in->block = line_block(st->cfg, st->func, st->line);
    in->leads = st->label[0] != '\0';
    in->ends = transfers(s);
    in->guarded = in->cond = *s == '@';
    in->func = st->func;
    branch_target(in, s);
    /* not counted: NOPs, and the padding loop "L: BRA `(L)" after the last
     * instruction */
    if (!strncmp(s, "NOP", 3) && (s[3] == ' ' || s[3] == ';'))
        in->block = SIZE_MAX;
    if (st->label[0] && !strncmp(s, "BRA `(", 6)) {
        size_t n = strlen(st->label);
        if (!strncmp(s + 6, st->label, n) && s[6 + n] == ')')
            in->block = SIZE_MAX;
    }
}

static void on_label(listing_state *st, const char *s, size_t n)
{
    /* a function symbol starts that function's code: the kernel's own, a
     * .func ptxas placed after it ("$kernel$func"), or one of ptxas's
     * subroutines (a division's slow path), not counted; local labels
     * (.L_x_N) keep the state */
    if (s[0] != '.') {
        st->func = cfg_func(st->cfg, s, n);
        const char *d = s[0] == '$' ? memchr(s + 1, '$', n - 1) : NULL;
        if (st->func < 0 && d)
            st->func = cfg_func(st->cfg, d + 1, n - (size_t)(d + 1 - s));
        st->line = 0;
    }
    snprintf(st->label, sizeof st->label, "%.*s", (int)n, s);
    if (st->func < 0 || n >= sizeof st->labels->name)
        return;
    if (tmap_grow(&st->labels, &st->lcap, st->nlabels + 1, sizeof *st->labels)) {
        st->oom = 1;
        return;
    }
    sass_label *l = &st->labels[st->nlabels++];
    snprintf(l->name, sizeof l->name, "%.*s", (int)n, s);
    l->at = st->ninsn;
}

static void on_line(listing_state *st, const char *s)
{
    s = skip_space(s);
    if (!strncmp(s, ".section", 8) && strstr(s, ".text.")) {
        st->func = -1;
        st->line = 0;
        st->label[0] = '\0';
        return;
    }
    const char *ann = "//## File ";
    if (!strncmp(s, ann, strlen(ann))) {
        const char *l = strstr(s, ", line ");
        if (l)
            st->line = (uint32_t)strtoul(l + 7, NULL, 10);
        return;
    }
    if (s[0] == '/' && s[1] == '*') {
        const char *e = strstr(s, "*/");
        if (e) {
            on_instruction(st, skip_space(e + 2));
            st->label[0] = '\0';
        }
        return;
    }
    size_t n = strcspn(s, ": \t");
    if (n && s[n] == ':' && s[n + 1] == '\0')
        on_label(st, s, n);
}

static int cmp_label(const void *a, const void *b)
{
    const sass_label *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* The instruction the label `name` (the first of that name) leads, or -1;
 * the labels are sorted. */
static int64_t label_at(const listing_state *st, const char *name)
{
    size_t lo = 0, hi = st->nlabels; /* the first label not below name */
    while (*name && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(st->labels[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return *name && lo < st->nlabels && !strcmp(st->labels[lo].name, name)
               ? (int64_t)st->labels[lo].at
               : -1;
}

/* Once the listing is read: sorts the labels, and marks each backward
 * branch (its label at or before it) with the instruction it jumps to. */
static void index_labels(listing_state *st)
{
    if (st->nlabels) /* labels is NULL without any */
        qsort(st->labels, st->nlabels, sizeof *st->labels, cmp_label);
    for (size_t i = 0; i < st->ninsn; i++) {
        sass_insn *in = &st->insn[i];
        int64_t at = in->ends == SASS_BRA ? label_at(st, in->target) : -1;
        in->loop_from = at >= 0 && (size_t)at <= i ? at : -1;
    }
}

/* The CFG block with the most instructions i in [s, e) whose vote[i] >=
 * level (the first to reach that number), or SIZE_MAX if none; tally[] is
 * zero before and after. */
static size_t most_votes(const listing_state *st, const unsigned char *vote, size_t s, size_t e,
                         int level, size_t *tally)
{
    size_t owner = SIZE_MAX, most = 0;
    for (size_t i = s; i < e; i++) {
        size_t b = st->insn[i].block;
        if (vote[i] >= level && ++tally[b] > most) {
            most = tally[b];
            owner = b;
        }
    }
    for (size_t i = s; i < e; i++)
        if (vote[i] >= level)
            tally[st->insn[i].block] = 0;
    return owner;
}

/* The SASS block of each instruction's target label (SIZE_MAX: none or
 * unknown), with blk[k] begun at instruction first[k]. */
static void resolve_targets(const listing_state *st, const size_t *block_of,
                            tmap_sass_block *blk, const size_t *first, size_t nblk)
{
    for (size_t k = 0; k < nblk; k++) {
        size_t last = (k + 1 < nblk ? first[k + 1] : st->ninsn) - 1;
        int64_t at = label_at(st, st->insn[last].target);
        blk[k].target = at >= 0 && (size_t)at < st->ninsn ? block_of[at] : SIZE_MAX;
        if (blk[k].end == SASS_BRA && blk[k].target != SIZE_MAX)
            blk[blk[k].target].branched_to = 1;
    }
}

/* counts[b] = the SASS instructions that run once per execution of b.
 * - An instruction is b's own if its PTX line is in b and it is at the
 *   deepest SASS loop level that any of b's instructions is at (a loop is
 *   the span from a backward branch's target to the branch): ptxas hoists
 *   loop invariants, and a rotated loop's first test, out of b's loop.
 * - The instructions of a SASS basic block (from a label, or after a
 *   control transfer, to the next) all run equally often, with the same
 *   threads.  All of them count for one CFG block: the one with the most
 *   own instructions there that are not predicated (or are a branch), the
 *   first to reach that number; failing those, the most own instructions.
 *   Predicated ones are mostly a small branch's body that ptxas
 *   if-converted into its surroundings, whose block runs less often than
 *   the SASS block does.  A SASS block without an own instruction counts
 *   for none.  So an instruction that ptxas moved into a neighbouring
 *   block (hoisted, sunk below an exit, predicated) runs as often as its
 *   new block.
 * The SASS blocks go to blk[], begun at first[], their number to *nblk;
 * block_of[i] is instruction i's. */
static tmap_status count_blocks(const listing_state *st, tmap_sass_block *blk, size_t *first,
                                size_t *block_of, size_t *nblk, tmap_error *err)
{
    size_t n = st->ninsn, nb = st->cfg->nblocks;
    int64_t *depth = calloc(n + 1, sizeof *depth);
    int64_t *deepest = malloc((nb ? nb : 1) * sizeof *deepest);
    size_t *tally = calloc(nb ? nb : 1, sizeof *tally);
    unsigned char *vote = malloc(n ? n : 1);
    if (!depth || !deepest || !tally || !vote) {
        free(depth);
        free(deepest);
        free(tally);
        free(vote);
        return tmap_fail(err, TMAP_ERR_NOMEM, "sass: %zu instructions", n);
    }
    for (size_t i = 0; i < n; i++)
        if (st->insn[i].loop_from >= 0) {
            depth[st->insn[i].loop_from]++;
            depth[i + 1]--;
        }
    for (size_t i = 1; i <= n; i++)
        depth[i] += depth[i - 1];
    for (size_t b = 0; b < nb; b++)
        deepest[b] = -1;
    for (size_t i = 0; i < n; i++) {
        size_t b = st->insn[i].block;
        if (b != SIZE_MAX && depth[i] > deepest[b])
            deepest[b] = depth[i];
    }
    /* vote: 0 not own, 1 own and predicated, 2 own otherwise */
    for (size_t i = 0; i < n; i++) {
        const sass_insn *in = &st->insn[i];
        vote[i] = in->block == SIZE_MAX || depth[i] != deepest[in->block] ? 0
                  : in->guarded && !in->ends                               ? 1
                                                                           : 2;
    }
    *nblk = 0;
    for (size_t s = 0, e; s < n; s = e, ++*nblk) {
        for (e = s + 1; e < n && !st->insn[e].leads && !st->insn[e - 1].ends; e++)
            ;
        size_t owner = most_votes(st, vote, s, e, 2, tally);
        if (owner == SIZE_MAX)
            owner = most_votes(st, vote, s, e, 1, tally);
        uint32_t counted = 0;
        for (size_t i = s; i < e; i++) {
            counted += st->insn[i].block != SIZE_MAX;
            block_of[i] = *nblk;
        }
        const sass_insn *last = &st->insn[e - 1];
        first[*nblk] = s;
        blk[*nblk] = (tmap_sass_block){owner, counted, last->ends, last->cond, SIZE_MAX,
                                       last->func, 0};
    }
    free(depth);
    free(deepest);
    free(tally);
    free(vote);
    return TMAP_OK;
}

/* A BSYNC alone in its block runs once for each thread that waits there.
 * When every thread that runs the next block comes through it (no branch
 * goes to the next block), that is the next block's threads, whatever PTX
 * line ptxas gave it (warp_shuffle: the join after the range check's load,
 * which all threads pass).  Later ones first, for a chain of them. */
static void own_syncs(tmap_sass_block *blk, const size_t *first, size_t nblk)
{
    for (size_t k = nblk; k-- > 1;) {
        size_t j = k - 1;
        int lone = blk[j].end == SASS_SYNC && first[j] + 1 == first[k];
        if (lone && !blk[k].branched_to && blk[k].func == blk[j].func && blk[k].owner != SIZE_MAX)
            blk[j].owner = blk[k].owner;
    }
}

/* count_blocks, then the splits (splits may be NULL). */
static tmap_status count_all(const listing_state *st, double *counts, tmap_sass_splits *splits,
                             tmap_error *err)
{
    size_t n = st->ninsn, nb = st->cfg->nblocks, m = n ? n : 1, nblk = 0;
    tmap_sass_block *blk = malloc(m * sizeof *blk);
    size_t *first = malloc(m * sizeof *first), *block_of = malloc(m * sizeof *block_of);
    tmap_status s = !blk || !first || !block_of
                        ? tmap_fail(err, TMAP_ERR_NOMEM, "sass: %zu instructions", n)
                        : count_blocks(st, blk, first, block_of, &nblk, err);
    if (!s) {
        resolve_targets(st, block_of, blk, first, nblk);
        own_syncs(blk, first, nblk);
        memset(counts, 0, nb * sizeof *counts);
        for (size_t k = 0; k < nblk; k++) {
            if (blk[k].owner == SIZE_MAX)
                blk[k].ninstr = 0;
            else
                counts[blk[k].owner] += blk[k].ninstr;
        }
        size_t kernel_first = 0;
        while (kernel_first < nblk && blk[kernel_first].func != 0)
            kernel_first++;
        if (splits)
            s = tmap_sass_find_splits(blk, nblk, kernel_first, splits, err);
    }
    free(blk);
    free(first);
    free(block_of);
    return s;
}

tmap_status tmap_sass_count_listing(const char *listing, const tmap_cfg *cfg, double *counts,
                                    tmap_sass_splits *splits, tmap_error *err)
{
    if (splits)
        memset(splits, 0, sizeof *splits);
    if (!listing || !cfg || !counts)
        return tmap_fail(err, TMAP_ERR_INVALID, "sass: NULL argument");
    listing_state st = {.cfg = cfg, .func = -1};
    char line[4096];
    for (const char *p = listing; *p && !st.oom;) {
        size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        on_line(&st, line);
        p += n + (p[n] == '\n');
    }
    if (!st.oom)
        index_labels(&st);
    tmap_status s = st.oom ? tmap_fail(err, TMAP_ERR_NOMEM, "sass: listing")
                           : count_all(&st, counts, splits, err);
    free(st.insn);
    free(st.labels);
    if (s)
        return s;
    double total = 0;
    for (size_t b = 0; b < cfg->nblocks; b++)
        total += counts[b];
    if (total == 0) {
        tmap_sass_splits_free(splits);
        return tmap_fail(err, TMAP_ERR_PARSE,
                         "sass: the listing has no instruction of kernel %s (is it nvdisasm -gp "
                         "output of this PTX?)", cfg->funcs[0].name);
    }
    return TMAP_OK;
}

/* ------------------------------------------------------ ptxas, nvdisasm */

/* The PTX with a module-scope .pragma "nounroll" appended to the
 * .address_size line, so that line numbers stay those of the input. */
static tmap_status nounroll(const char *ptx, tmap_buf *out, tmap_error *err)
{
    const char *d = strstr(ptx, ".address_size");
    if (!d)
        return tmap_fail(err, TMAP_ERR_UNSUPPORTED,
                         "sass: the PTX has no .address_size directive");
    const char *eol = d + strcspn(d, "\n");
    const char *cmt = strstr(d, "//");
    if (cmt && cmt < eol)
        eol = cmt;
    tmap_buf_put(out, ptx, (size_t)(eol - ptx));
    tmap_buf_puts(out, " .pragma \"nounroll\"; ");
    tmap_buf_puts(out, eol);
    return out->oom ? tmap_fail(err, TMAP_ERR_NOMEM, "sass: PTX copy") : TMAP_OK;
}

tmap_status tmap_sass_block_counts(const char *ptx, const tmap_cfg *cfg, const char *arch,
                                   double *counts, tmap_sass_splits *splits, tmap_error *err)
{
    tmap_status absent = TMAP_NEED(err, ptx, cfg, arch, counts);
    if (absent)
        return absent;
    char ptxas[1024], nvdisasm[1024];
    tmap_status st = tmap_sass_tool_find("ptxas", ptxas, sizeof ptxas, err);
    if (!st)
        st = tmap_sass_tool_find("nvdisasm", nvdisasm, sizeof nvdisasm, err);
    if (st)
        return st;
    char dir[] = "/tmp/tmap_sass_XXXXXX";
    if (!mkdtemp(dir))
        return tmap_fail(err, TMAP_ERR_IO, "temporary directory: %s", strerror(errno));
    char in[64], cubin[64], lst[64], archopt[64];
    snprintf(in, sizeof in, "%s/k.ptx", dir);
    snprintf(cubin, sizeof cubin, "%s/k.cubin", dir);
    snprintf(lst, sizeof lst, "%s/k.sass", dir);
    /* ptxas assembles for a real arch: compute_XY (tmap_cuda_arch's, NVRTC's)
     * is sm_XY there */
    if (!strncmp(arch, "compute_", 8))
        snprintf(archopt, sizeof archopt, "-arch=sm_%s", arch + 8);
    else
        snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    tmap_buf text = {0};
    char *listing = NULL;
    st = nounroll(ptx, &text, err);
    if (!st)
        st = tmap_file_write(in, text.data, text.len, err);
    char *as[] = {ptxas, archopt, "-lineinfo", "-o", cubin, in, NULL};
    char *dis[] = {nvdisasm, "-gp", "-c", cubin, NULL};
    if (!st)
        st = run_tool(as, NULL, err);
    if (!st)
        st = run_tool(dis, lst, err);
    if (!st)
        st = tmap_file_read(lst, &listing, NULL, err);
    if (!st)
        st = tmap_sass_count_listing(listing, cfg, counts, splits, err);
    free(listing);
    tmap_buf_free(&text);
    unlink(in);
    unlink(cubin);
    unlink(lst);
    rmdir(dir);
    return st;
}

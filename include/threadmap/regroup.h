/*
 * threadmap/regroup.h -- the regroup stage (stable): the thread regrouping
 * algorithms (Liang et al., TCAD 2016, sec. V), the sort-by-key baselines,
 * and the plan.  docs/regroup.md explains the choices made where the
 * paper's pseudo-code is ambiguous.
 *
 * A regrouping is a permutation D of the N threads: slot i runs original
 * thread D[i].  Slots are cut into groups of `groupsize` consecutive slots
 * (K = ceil(N / groupsize) groups; the last may be partial).
 *
 * Common arguments and rules of every tmap_regroup_* function below:
 *   - bbv: the per-thread basic block vectors, N = bbv->nthreads rows of
 *     bbv->nblocks u32 counts; 1 <= N <= UINT32_MAX, nblocks >= 1.
 *   - lat: bbv->nblocks block latencies in cycles, each finite and in
 *     [0, 1e15] (the gain is a signed sum of lat * count; the bound keeps it
 *     finite).
 *   - perm: caller-allocated, N entries; on success a permutation of 0..N-1.
 *     On failure its content is unspecified.
 *   - opts: groupsize is a positive multiple of 32.  With
 *     TMAP_REGROUP_BLOCK, block_size (threads per CUDA thread block) must be
 *     a positive multiple of groupsize: the algorithm then runs separately
 *     on each run of block_size consecutive threads (the last thread block
 *     may be partial), slots of a thread block only receive threads of the
 *     same thread block, and groups never straddle thread blocks.
 *   - Results are deterministic: every tie is broken by thread index.
 *
 * The plan -- choosing a regrouping before a launch (Liang et al. sec. VI-B):
 * run the candidate algorithms on the (predicted) BBVs, score each with the
 * model (BBV-weighted-scheduled), add what applying it costs, and pick the
 * best only if it beats the unregrouped launch by a threshold; otherwise
 * say why the launch is left alone.
 */
#ifndef THREADMAP_REGROUP_H
#define THREADMAP_REGROUP_H

#include "threadmap/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tmap_regroup_scope {
    TMAP_REGROUP_GRID = 0,  /* one problem over all N threads            */
    TMAP_REGROUP_BLOCK = 1  /* one problem per thread block of block_size */
} tmap_regroup_scope;

typedef struct tmap_regroup_opts {
    size_t groupsize;          /* threads per group, a multiple of 32     */
    tmap_regroup_scope scope;
    size_t block_size;         /* TMAP_REGROUP_BLOCK only: threads per
                                  thread block, a multiple of groupsize   */
    size_t threads;            /* CPU threads that find the distinct rows
                                  (0 or 1: the caller's alone; at most
                                  TMAP_REGROUP_MAX_THREADS); results do not
                                  depend on it */
} tmap_regroup_opts;
#define TMAP_REGROUP_MAX_THREADS 64

/* D[i] = i. */
tmap_status tmap_regroup_identity(size_t nthreads, uint32_t *perm,
                                  tmap_error *err);

/* Sorting (sec. V-A): threads in ascending lexicographic order of their
 * BBV rows; threads with equal rows keep their thread order (stable). */
tmap_status tmap_regroup_sort(const tmap_bbv *bbv,
                              const tmap_regroup_opts *opts, uint32_t *perm,
                              tmap_error *err);

/* Sort by a user key (key[t], one finite double per thread), ascending or
 * (descending != 0) descending, stable: what CUB segment binning, JDS SpMV
 * and CUDASW++ length partitions do with a row or sequence length. */
tmap_status tmap_regroup_sort_key(const double *key, size_t nthreads,
                                  int descending,
                                  const tmap_regroup_opts *opts,
                                  uint32_t *perm, tmap_error *err);

/* Greedy (Algorithm 1, eq. 6-10): repeatedly merge the pair of groups of
 * maximal Gain = Benefit - Cost; a merge reaching groupsize emits its first
 * groupsize threads as a finished group.  Fast exact version: works on
 * distinct (min, max) vector pairs; fails with TMAP_ERR_UNSUPPORTED when a
 * problem (the grid, or one thread block) needs more than
 * TMAP_REGROUP_GREEDY_MAX_TYPES of them (all-distinct rows at large N). */
#define TMAP_REGROUP_GREEDY_MAX_TYPES 4096
tmap_status tmap_regroup_greedy(const tmap_bbv *bbv, const double *lat,
                                const tmap_regroup_opts *opts, uint32_t *perm,
                                tmap_error *err);

/* Greedy-Max's cost grows with the square of the distinct BBV rows of a
 * problem (the grid, or one thread block); past this many it fails with
 * TMAP_ERR_UNSUPPORTED rather than run for minutes (measured on an H200
 * host: about 8 s for 2^17 threads with a few thousand distinct rows). */
#define TMAP_REGROUP_GREEDY_MAX_CLASSES 8192

/* Greedy-Max (Algorithm 2, eq. 11): groups are built one after the other,
 * each started from the remaining thread of maximal Lat_t and filled with a
 * thread identical to a member if one remains, else with the thread of
 * maximal Gain(g, t).  Groups come out in non-increasing Lat of their
 * first thread. */
tmap_status tmap_regroup_greedy_max(const tmap_bbv *bbv, const double *lat,
                                    const tmap_regroup_opts *opts,
                                    uint32_t *perm, tmap_error *err);


/* The value class of x among R equal-width ranges over [lo, hi] (lo <= x
 * <= hi): floor((x/2 - lo/2) / (hi/2 - lo/2) * R), each step rounded once
 * (halves: no overflow), R - 1 at hi, 0 when lo == hi.  LAM's labels,
 * computed the same way by the GPU (runtime/gpu_classes.cu). */
uint32_t tmap_regroup_value_class(double x, double lo, double hi, size_t nclasses);

/* LAM, label-assign-move (zhang2010 sec. 4.2; docs/regroup.md): each
 * thread's key falls into one of `nclasses` (1..TMAP_REGROUP_LAM_MAX_CLASSES)
 * equal-width value classes over the problem's [min, max]; warp segments
 * (groupsize slots) already pure keep their threads, the others are
 * labelled with their most covered class while its quota of full segments
 * lasts, and only the threads that do not fit their segment's label move.
 * Linear time; moves no more threads than it must for those labels. */
#define TMAP_REGROUP_LAM_MAX_CLASSES 256
tmap_status tmap_regroup_lam(const double *key, size_t nthreads, size_t nclasses,
                             const tmap_regroup_opts *opts, uint32_t *perm, tmap_error *err);

/* Bin-and-deal (threadmap's own; docs/regroup.md): `sorted`, an order of
 * all nthreads threads, heaviest first, is cut into groups of groupsize
 * consecutive threads, and group g goes to thread block g mod B (of the
 * B = nthreads / block_size blocks) as its group g / B: every block gets a
 * balanced share of the work, the lower blocks (dispatched first) the
 * heavier group of each round.  Inside a group threads are in ascending
 * index.  TMAP_ERR_UNSUPPORTED unless every thread block is full and
 * holds whole groups.  sorted and perm must not overlap. */
tmap_status tmap_regroup_deal(const uint32_t *sorted, size_t nthreads, size_t block_size,
                              size_t groupsize, uint32_t *perm, tmap_error *err);

/* Bin-and-deal from BBVs: threads ordered by Lat_t (eq. 11), heaviest
 * first (stable), then dealt.  Needs grid scope and opts->block_size (the
 * launch's threads per block, in either scope). */
tmap_status tmap_regroup_bin_deal(const tmap_bbv *bbv, const double *lat,
                                  const tmap_regroup_opts *opts, uint32_t *perm,
                                  tmap_error *err);

/* Checks that perm (nthreads entries) is a permutation of 0..nthreads-1 that
 * respects opts->scope; TMAP_ERR_INVALID naming the first fault otherwise. */
tmap_status tmap_regroup_check(const uint32_t *perm, size_t nthreads,
                               const tmap_regroup_opts *opts,
                               tmap_error *err);

/* ------------------------------------------- memory transformations */

/*
 * Data layouts and thread orders for an irregular reference A[P[t*k + j]]
 * (tmap_memref, threadmap/model.h; zhang2011, wu2013; docs/memory.md says
 * what each does and what was chosen where the papers are vague).  Each
 * returns a tmap_memre: the new array A' (as the element of A each of its
 * nout slots holds), the new index Q and the thread order, such that slot
 * s runs thread perm[s] and its request j reads A'[Q[perm[s]*k + j]], the
 * element A[P[perm[s]*k + j]] the original read: the kernel computes the
 * same results.  tmap_sectors_count(ref with nelems = nout, Q, perm)
 * counts the new sectors.  Elements are numbered with 32 bits.
 */
#define TMAP_MEMRE_EMPTY UINT32_MAX  /* a slot of A' that holds no element */
typedef struct tmap_memre {
    uint32_t *from;      /* [nout]: A'[x] = A[from[x]] (TMAP_MEMRE_EMPTY: padding);
                            NULL: A' is A */
    size_t nout;         /* elements of A' */
    uint32_t *index;     /* Q: [nthreads * k] */
    uint32_t *perm;      /* [nthreads] slot -> thread; NULL: the identity */
} tmap_memre;

void tmap_memre_free(tmap_memre *m);
/* A' in bytes (nout x elem_bytes at out): element from[x] of a, zeros in
 * padding. */
void tmap_memre_gather(const tmap_memre *m, const void *a, size_t elem_bytes, void *out);

/* Duplication (zhang2011 sec. 4.1, wu2013): one copy of the element for
 * every access, so each request reads consecutive elements: access (t, j)
 * of warp w (L lanes, lane l) goes to slot w*32*k + j*L + l (with k = 1,
 * A'[t] = A[P[t]], Q the identity).  nout = nthreads * k.  Reads only. */
tmap_status tmap_memre_duplicate(const tmap_memref *r, const uint32_t *index, tmap_memre *out,
                                 tmap_error *err);
/* Data reordering (zhang2011 sec. 3.2.1): A relocated, one copy per element,
 * P redirected to Q.  An element goes to the slot duplication gives its
 * first access (the least), when that slot is inside A; the other
 * elements read, in the order of that slot, then those nobody reads, fill
 * the free slots in order. */
tmap_status tmap_memre_reorder(const tmap_memref *r, const uint32_t *index, tmap_memre *out,
                               tmap_error *err);
/* A relabeling: A'[x] = A[order[x]] (order a permutation of the nelems
 * elements: a locality order), Q[i] = its inverse at P[i]; with
 * permute_threads (nthreads == nelems, thread t owns element t: a row, a
 * particle) the threads follow, perm = order. */
tmap_status tmap_memre_relabel(const tmap_memref *r, const uint32_t *index, const uint32_t *order,
                               int permute_threads, tmap_memre *out, tmap_error *err);
/* Padding (wu2013 sec. 3.3.2, Fig. 3; k = 1, reads only): elements sorted
 * by access frequency (most first, ties by first thread), threads sorted
 * by their element's place, then each warp's distinct elements packed into
 * segments of sector_bytes: appended when the warp's whole working set
 * fits in what remains of the current segment, else the segment is padded
 * and the set starts the next one (elements already in the current
 * segment are not appended again). */
tmap_status tmap_memre_pad(const tmap_memref *r, const uint32_t *index, tmap_memre *out,
                           tmap_error *err);
/* Partial duplication (zhang2011 sec. 5.3's fraction r of the data
 * transformed; wu2013's partial duplication): the warp requests ranked by
 * the sectors duplication saves them (their sectors less the sectors of
 * their lanes' copies packed; most first, ties by request w * k + j),
 * requests that save none left out; the first ceil(fraction x requests)
 * are duplicated.  A' is A (from[x] = x), padding to a segment (EMPTY),
 * then the chosen requests' copies in request order, each request's lanes
 * consecutive; Q sends the chosen accesses to their copies, the others to
 * A.  fraction 1 duplicates every request that gains; 0 copies nothing.
 * Reads only; accesses and elements below 2^31. */
tmap_status tmap_memre_partial(const tmap_memref *r, const uint32_t *index, double fraction,
                               tmap_memre *out, tmap_error *err);

/* Sharing (wu2013 sec. 3.4): thread block b (slots [b * block_size, ...),
 * slot s running thread perm[s], perm NULL: s; perm is the clustering,
 * e.g. a locality order) stages its working set U_b, the distinct elements
 * its threads read, ascending, in shared memory.  A' is U_0 U_1 ...:
 * from[x] the element, *start (nblocks + 1 entries, malloc'ed) where each
 * block's list begins; Q[i] is access i's position in A' (the kernel reads
 * shared[Q[i] - start[b]]).  out->perm is a copy of perm.  A block whose
 * U_b exceeds smem_bytes: TMAP_ERR_UNSUPPORTED naming it.  Reads only;
 * block_size a multiple of the warp. */
tmap_status tmap_memre_share(const tmap_memref *r, const uint32_t *index, const uint32_t *perm,
                             size_t block_size, size_t smem_bytes, tmap_memre *out,
                             uint32_t **start, tmap_error *err);
/* The staged loads' sectors: block b's warps read A[from[x]] for x in
 * [start[b], start[b + 1]), 32 consecutive x a request (footprint and
 * block_sectors: the blocks' footprints summed: a block loads its list once). */
tmap_status tmap_memre_share_sectors(const tmap_memref *r, const tmap_memre *m,
                                     const uint32_t *start, size_t block_size,
                                     tmap_sector_counts *out, tmap_error *err);

/* Job swapping (zhang2011 sec. 4.1): jobs in categories by the segments
 * they read (with k accesses, the tuple of the k segments; categories in
 * lexicographic order, so neighbouring residues share their first
 * segments); each category fills whole warps with its first jobs,
 * the residues are packed largest first, topped up from the smallest;
 * buckets go to the warps they share most jobs with, and jobs already in
 * their bucket's warp keep their slot.  Data does not move (from NULL, Q =
 * P).  block_size > 0: jobs move only within thread blocks of that many
 * threads (a multiple of the warp). */
tmap_status tmap_memre_swap(const tmap_memref *r, const uint32_t *index, size_t block_size,
                            tmap_memre *out, tmap_error *err);
/* Job swapping as a sort (what tmap_gpu_memre_swap builds on the GPU):
 * the jobs sorted by category (the tuple of segments, as above; ties by
 * job), then, stably, each category's whole warps before the residues,
 * so that the residues lie together in category order.  Unlike
 * tmap_memre_swap, the residues are not packed largest first and topped
 * up from the smallest, buckets are not matched to the warps they share
 * most jobs with, and jobs do not keep their slots: all three are
 * sequential greedy steps.  Data does not move; block_size as above. */
tmap_status tmap_memre_swap_sorted(const tmap_memref *r, const uint32_t *index,
                                   size_t block_size, tmap_memre *out, tmap_error *err);
/* The hybrid (zhang2011 sec. 3.2.3): data reordering for swapping (an
 * element whose accesses, all k of each thread counted, make up the
 * remainder of its segment's accesses beyond whole warps moves, by exchange with an element nobody
 * reads, into a segment whose remainder it completes to a warp), then job
 * swapping on the new layout. */
tmap_status tmap_memre_hybrid(const tmap_memref *r, const uint32_t *index, size_t block_size,
                              tmap_memre *out, tmap_error *err);

/* Locality orders, the baselines every transformation must beat: order[x]
 * = the old label of new label x.  Reverse Cuthill-McKee of a graph or
 * symmetric sparse matrix in CSR (rowptr[n + 1], col[rowptr[n]]; self
 * loops ignored): each connected component from a pseudo-peripheral vertex
 * (George and Liu), breadth first, neighbours by ascending degree (ties by
 * label), the whole order reversed. */
tmap_status tmap_memre_rcm(const uint32_t *rowptr, const uint32_t *col, size_t n, uint32_t *order,
                           tmap_error *err);
/* The same order computed level by level, as the GPU builds it
 * (tmap_gpu_memre_rcm, threadmap/runtime.h): from the same start, level
 * L+1 is sorted by (the least label of its vertices' neighbours in level
 * L, degree, label), which is the order the serial queue gives; the
 * reference the GPU is checked against, and a check of that claim. */
tmap_status tmap_memre_rcm_levels(const uint32_t *rowptr, const uint32_t *col, size_t n,
                                  uint32_t *order, tmap_error *err);
/* Morton (Z) order of n points (x, y, z at xyz[i*stride]): coordinates
 * scaled to 21 bits over the bounding box, bits interleaved (x lowest),
 * sorted stably. */
tmap_status tmap_memre_morton(const float *xyz, size_t stride, size_t n, uint32_t *order,
                              tmap_error *err);

/* Choosing a layout (issue 19 item 4; zhang2011 sec. 5, wu2013 sec. 3.5,
 * zheng2020's remap cache).  Each candidate is predicted by the transaction
 * model (tmap_sectors_count): its requests' sectors (the L1's wavefronts)
 * times l1_sector_ns, plus its thread blocks' distinct sectors (what the
 * L1s pass to the L2: block_sectors, reuse across the warps of a block,
 * plus the reuse the L1 cannot hold when the resident blocks' sectors
 * exceed it: tmap_memre_l1_keeps) times the cost of an L2 sector, an L2 hit when the launch's footprint
 * fits in L2, a DRAM sector otherwise; plus, when the data moves, the
 * gather of A' (its own sectors, DRAM) before every launch if A changes
 * between launches, else once; plus the build, once.  The layout is reused
 * over `launches` launches (the index unchanged), so total = launch x
 * launches + once. */
typedef enum tmap_memre_kind {
    TMAP_MEMRE_ORIGINAL,
    TMAP_MEMRE_DUPLICATE,
    TMAP_MEMRE_REORDER,
    TMAP_MEMRE_PAD,
    TMAP_MEMRE_SWAP,
    TMAP_MEMRE_HYBRID,
    TMAP_MEMRE_LOCALITY, /* tmap_memre_relabel by the given order (RCM, Morton) */
    TMAP_MEMRE_SHARE,    /* tmap_memre_share over the locality layout (its clustering) */
    TMAP_MEMRE_PARTIAL,  /* tmap_memre_partial at partial_fraction (e.g. tmap_memfrac's) */
    TMAP_MEMRE_SYMMETRIC, /* a matrix's rows and columns renumbered together by the
                            locality order (A' = P A P^T, the vectors in the new
                            numbering): the caller's (bench_memirr_apps builds it on the
                            GPU); tmap_memre_build and the proposal have no builder for it */
    TMAP_MEMRE_KINDS
} tmap_memre_kind;

/* "original", "duplicate", "reorder", "pad", "swap", "hybrid", "locality", "share",
 * "partial", "symmetric". */
const char *tmap_memre_kind_name(tmap_memre_kind k);

typedef struct tmap_memre_costs {
    uint64_t l2_bytes;      /* the device's L2; 0: 50 MiB (H100) */
    double l2_sector_ns;    /* a sector served by L2; 0: 0.0095 (H100, fitted) */
    double dram_sector_ns;  /* a sector from DRAM; 0: 0.0235 (H100, fitted) */
    double l1_sector_ns;    /* an L1 wavefront (a request's sector); 0: 1 / (132 SMs x
                               1.98 GHz), one a cycle per SM (H100 SXM, not fitted) */
    double launches;        /* launches that reuse one layout; below 1: 1 */
    int data_changes;       /* A changes between launches (CG's x): A' is gathered
                               before each; 0: once */
    double build_ms[TMAP_MEMRE_KINDS]; /* computing each layout (e.g. measured on the
                               GPU); 0: the CPU time it takes here */
    size_t block_size;      /* swapping and the hybrid within thread blocks; 0: grid */
    const uint32_t *order;  /* a locality order of A; NULL: no such candidate */
    int permute_threads;    /* the threads follow order (tmap_memre_relabel) */
    double threshold;       /* the fraction of the original's total to beat */
    size_t share_block;     /* sharing: threads per block (a multiple of the warp);
                               0: no sharing candidate */
    size_t smem_bytes;      /* sharing: a block's shared memory for its working set */
    double partial_fraction; /* partial duplication at this fraction (0 to 1; e.g. where
                               tmap_memfrac settled); 0: no partial candidate */
    uint64_t l1_bytes;      /* an SM's L1, for the reuse it keeps; 0: 256 KiB (H100) */
    unsigned sm_threads;    /* threads resident on an SM; 0: 2048 (sm_90) */
    unsigned keep;          /* kinds (bit 1u << kind) proposed whatever the model
                               predicts: layouts measured to pay already (a fraction
                               tmap_memfrac settled above 0); they still go on trial */
} tmap_memre_costs;

typedef struct tmap_memre_choice {
    tmap_memre layout;         /* ORIGINAL: empty */
    uint32_t *start;           /* SHARE: where each block's list begins in A' (nblocks + 1) */
    tmap_memre_kind kind;
    tmap_sector_counts counts; /* the reference's sectors in this layout */
    int fits_l2;               /* its footprint fits in l2_bytes */
    double build_ms;           /* computing the layout */
    double launch_ms;          /* predicted per launch: sectors, the gather if per launch */
    double once_ms;            /* the build, the gather if once */
    double total_ms;           /* launch_ms x launches + once_ms */
} tmap_memre_choice;

/* Builds and scores every layout that applies (those whose builder
 * refuses the reference, for k or writes, are left out) and proposes
 * out[0] = the original, then the layouts whose total beats the original's
 * by the threshold, and those c->keep names, least total first (ties by
 * kind); *n of at most TMAP_MEMRE_KINDS.  Nothing pays: *n = 1.  A layout
 * whose given build_ms alone reaches that bar cannot pay and is not built
 * (unless kept).  Partial duplication (with partial_fraction) keeps A in
 * place at the head of A': its gather is its copies only.  Sharing (with
 * share_block) stages each block's working set of the locality layout's A'
 * (of A without an order): its sectors are the staged loads'
 * (tmap_memre_share_sectors), its gather the locality layout's; its
 * layout's from is composed to name elements of A.  The measured choice
 * over the first launches is the pipeline's tmap_memchooser. */
tmap_status tmap_memre_propose(const tmap_memref *r, const uint32_t *index,
                               const tmap_memre_costs *c, tmap_memre_choice *out, size_t *n,
                               tmap_error *err);
/* The model's times of a layout built elsewhere (on the GPU): v->kind,
 * v->counts (its sectors; block_sectors 0: taken as sectors, no reuse
 * across warps) and v->build_ms given; gather_sectors: the sectors of one
 * gather of its A' (reads and writes; 0: the data does not move).  Sets
 * fits_l2, launch_ms = 1e-6 x (sectors x l1_sector_ns + passed x
 * (fits_l2 ? l2_sector_ns : dram_sector_ns)) [+ the gather], once_ms and
 * total_ms, where passed = block_sectors + (1 - tmap_memre_l1_keeps) x
 * (sectors - block_sectors): the reuse the L1 cannot hold goes to the L2. */
void tmap_memre_score(const tmap_memref *r, const tmap_memre_costs *c, uint64_t gather_sectors,
                      tmap_memre_choice *v);
/* The share of the reuse across a thread block's warps (its requests'
 * sectors beyond its distinct ones) that the L1 keeps: 1 when the distinct
 * sectors of the blocks resident on an SM (block_sectors over the blocks,
 * times sm_threads / block of them, at least one) fit in l1_bytes, else
 * l1_bytes / that working set (a reuse finds its sector with the chance
 * the L1 holds it).  The L2's term of tmap_memre_score is then
 * block_sectors + (1 - keeps) x (sectors - block_sectors). */
double tmap_memre_l1_keeps(const tmap_memref *r, const tmap_memre_costs *c,
                           const tmap_sector_counts *s);
/* The proposal among scored choices v[0..n) (v[0] the original): v[0],
 * then those whose total beats the original's by c->threshold or whose
 * kind c->keep names, least total first (ties by kind); the others are
 * freed.  Returns how many. */
size_t tmap_memre_rank(tmap_memre_choice *v, size_t n, const tmap_memre_costs *c);
void tmap_memre_choices_free(tmap_memre_choice *v, size_t n);
/* Builds one layout kind (not the original) with c's block_size, order,
 * partial_fraction and sharing (SHARE: from composed to elements of A, so slot s's request
 * j reads A'[Q[...]] as every layout does; the block starts are dropped);
 * TMAP_ERR_UNSUPPORTED or TMAP_ERR_INVALID when it does not apply (k,
 * writes, no order, no share_block, a working set beyond smem_bytes, no
 * partial_fraction). */
tmap_status tmap_memre_build(tmap_memre_kind kind, const tmap_memref *r, const uint32_t *index,
                             const tmap_memre_costs *c, tmap_memre *out, tmap_error *err);

/* ---------------------------------------------------------------- the plan */

typedef enum tmap_algo {
    TMAP_ALGO_IDENTITY,
    TMAP_ALGO_SORTING,
    TMAP_ALGO_GREEDY,
    TMAP_ALGO_GREEDY_MAX,
    TMAP_ALGO_KEY,       /* sort by a user key, descending (CUB binning, JDS...) */
    TMAP_ALGO_BIN_DEAL,  /* Lat_t order dealt across thread blocks (grid scope) */
    TMAP_ALGO_COUNT
} tmap_algo;

const char *tmap_algo_name(tmap_algo a);
/* "identity", "sorting", "greedy", "greedy-max", "key", "bin-and-deal";
 * -1 if unknown. */
int tmap_algo_parse(const char *name);

/* Runs one algorithm: perm (caller's, nthreads entries). key: one value per
 * thread, needed by TMAP_ALGO_KEY only. */
tmap_status tmap_algo_run(tmap_algo a, const tmap_bbv *bbv, const double *lat,
                          const double *key, const tmap_regroup_opts *opts, uint32_t *perm,
                          tmap_error *err);

/* Greedy or Greedy-Max (algo) on a table of value classes, the GPU path's
 * host step (docs/regroup.md): size[c] threads of class c (nclasses <=
 * TMAP_REGROUP_LAM_MAX_CLASSES), in class-sorted order (class ascending,
 * then thread index: position j), each a one-block BBV row of count c + 1
 * at latency 1.  The algorithm's permutation of positions, grid scope,
 * groups of groupsize, is written as runs: slot runs[2r] and the slots up
 * to runs[2r + 2] (or the end) take the consecutive positions from
 * runs[2r + 1]; runs has room for 2 * TMAP_REGROUP_MAX_RUNS entries.
 * TMAP_ERR_UNSUPPORTED when more runs are needed.  Greedy-Max: O(R), the
 * classes highest first; Greedy: O(R log R + runs), from the sizes alone
 * (docs/regroup.md); both equal the CPU algorithms on the rows.
 * groupsize: a multiple of 32. */
#define TMAP_REGROUP_MAX_RUNS 65536
tmap_status tmap_regroup_class_runs(tmap_algo algo, const uint32_t *size, size_t nclasses,
                                    size_t groupsize, uint32_t *runs, size_t *nruns,
                                    tmap_error *err);

typedef struct tmap_plan_opts {
    tmap_model_params model;   /* launch shape for the scheduling model */
    tmap_regroup_opts regroup; /* group size and scope */
    const double *key;         /* per-thread key for TMAP_ALGO_KEY; NULL: no such candidate */
    unsigned algos;            /* candidates, bit (1u << algo); 0: all available */
    double threshold;          /* required gain over the original, e.g. 0.05 */
    double original_ms;        /* measured time of the unregrouped launch; 0: unknown */
    double apply_ms;           /* time to apply a permutation (gather/scatter or the
                                  redirection's extra work), per launch */
    double launches;           /* launches that reuse one permutation (same input, e.g.
                                  an iterative solver): the algorithm's time is spread
                                  over them; 0 or 1: it runs before every launch */
} tmap_plan_opts;

typedef struct tmap_candidate {
    int available;         /* 0: did not run; `note` says why */
    tmap_algo algo;
    char note[200];
    uint32_t *perm;        /* [nthreads], malloc'ed when available */
    tmap_metrics m;        /* the model under this grouping */
    double algo_ms;        /* CPU time of the algorithm (it runs before each launch) */
    double gain;           /* 1 - t / t(identity), t the SM model's time when the
                              plan was given one (model.sm), else the paper's
                              BBV-weighted-scheduled */
    double total_ms;       /* with original_ms: predicted kernel + algo + apply; else NAN */
} tmap_candidate;

typedef struct tmap_plan {
    size_t n;
    tmap_candidate cand[TMAP_ALGO_COUNT];  /* cand[0] is identity */
    int chosen;            /* index into cand of the winner, or 0 (identity):
                              leave the launch alone */
    char why[512];         /* the decision in words */
} tmap_plan;

tmap_status tmap_plan_make(const tmap_bbv *bbv, const double *lat, const tmap_cfg *cfg,
                           const tmap_plan_opts *opts, tmap_plan *out, tmap_error *err);
void tmap_plan_free(tmap_plan *p);

#ifdef __cplusplus
}
#endif

#endif /* THREADMAP_REGROUP_H */

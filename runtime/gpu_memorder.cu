/*
 * gpu_memorder.cu -- the memory layouts that follow an order, built on the
 * GPU (threadmap/runtime.h): relabeling by an order, Morton order and
 * wu2013's padding, bit for bit regroup's tmap_memre_relabel,
 * tmap_memre_morton and tmap_memre_pad with warps of 32.  Each enqueues
 * its work on `stream` (scratch from cudaMallocAsync on it, freed on it)
 * and waits for nothing.  The relabeling's pass over the index (Q =
 * where[P], 55M accesses for MD at 1M particles) reads and writes four
 * entries a thread, streamed past the L2 (evict-first), which keeps the
 * inverse order that every access reads at random.
 *
 * Reverse Cuthill-McKee (tmap_gpu_memre_rcm) is level-synchronous: a BFS
 * level at a time, each level's vertices claimed by atomics and then put
 * in order by a CUB radix sort on (the least label among their parents in
 * the previous level, degree, vertex), which is the order the serial
 * queue gives (regroup's tmap_memre_rcm), so the two are equal.  The
 * pseudo-peripheral search's sweeps run 64 levels between waits; the
 * numbering knows its levels' sizes from the root's sweep (a BFS's levels
 * do not depend on the order within them) and does not wait.  Where the
 * device launches cooperative kernels (its attribute says so), a
 * sweep is one kernel with a grid barrier per level (its appends
 * aggregated over the lanes that run together: one atomic for them), and
 * so is a component's numbering when no row exceeds 32 entries: the
 * parents rank their own children and a scan of their counts places
 * them, no sort, one grid barrier a level (the section "one kernel per
 * BFS").  There every sweep after a component's first runs inside the
 * numbering's kernel from the current root, under the same barriers, on
 * its own stamps: the numbering is kept when the sweep confirms the root
 * (tmap_memre_rcm's search stops there), else discarded.
 * tmap_gpu_memre_rcm_timed times the steps and measures their floors.
 *
 * Padding's one sequential step: where a warp's working set starts
 * depends on where the warps before it ended (the padding), so one block
 * walks the per-warp summaries (distinct elements, whether the first is
 * the previous warp's last) in order; everything per thread is parallel.
 */
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "threadmap/runtime.h"
#include "runtime/gpu_util.cuh"
extern "C" {
#include "common/base.h"
}
#include "common/morton.h"

namespace cg = cooperative_groups;

namespace {

enum { THREADS = 256, WARP = 32, WALK = 1024 };
const unsigned EMPTY = 0xffffffffu;
typedef unsigned long long u64;

unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

__device__ u64 global_id() { return blockIdx.x * (u64)THREADS + threadIdx.x; }

__device__ unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }

/* Appends through one counter, aggregated over the lanes that arrive
 * together (cooperative groups' coalesced threads): one atomicAdd for
 * them all, each lane's c slots after the lanes of lower rank.  Returns
 * this lane's first slot.  The order within a level does not matter to
 * those that append (a BFS level is a set; the numbering ranks its own). */
__device__ unsigned take_slots(unsigned *cnt, unsigned c)
{
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned incl = cg::inclusive_scan(g, c), first = 0, last = g.size() - 1;
    if (g.thread_rank() == last && incl)
        first = atomicAdd(cnt, incl);
    return g.shfl(first, last) + incl - c;
}

/* One device allocation cut into aligned pieces: a first pass (base
 * NULL) only counts the bytes. */
struct carver {
    char *base;
    size_t used;
    template <typename T> T *take(size_t n)
    {
        size_t at = (used + 255) & ~(size_t)255;
        used = at + n * sizeof(T);
        return base ? (T *)(base + at) : NULL;
    }
};

/* ------------------------------------------------------------ relabeling */

__global__ void inverse_kernel(const unsigned *order, unsigned ne, unsigned *where)
{
    u64 x = global_id();
    if (x < ne)
        where[order[x]] = (unsigned)x;
}

__global__ void redirect_kernel(const unsigned *index, u64 m, const unsigned *where, unsigned *q)
{
    u64 i = global_id();
    if (i < m)
        q[i] = where[index[i]];
}

/* The same, four accesses a thread (index and q 16-byte aligned): the
 * index streamed through with evict-first loads and stores, so that the
 * L2 keeps `where`, which every access reads at random. */
__global__ void redirect4_kernel(const uint4 *index, u64 m4, const unsigned *where, uint4 *q)
{
    u64 i = global_id();
    if (i >= m4)
        return;
    uint4 v = __ldcs(index + i);
    v.x = where[v.x], v.y = where[v.y], v.z = where[v.z], v.w = where[v.w];
    __stcs(q + i, v);
}

/* q = where[index] over m accesses: four at a time where both arrays are
 * 16-byte aligned, the last m % 4 one at a time. */
void redirect(const unsigned *index, u64 m, const unsigned *where, unsigned *q, cudaStream_t s)
{
    u64 m4 = ((uintptr_t)index | (uintptr_t)q) % 16 ? 0 : m / 4, done = m4 * 4;
    if (m4)
        redirect4_kernel<<<blocks_for(m4), THREADS, 0, s>>>((const uint4 *)index, m4, where,
                                                            (uint4 *)q);
    if (m > done)
        redirect_kernel<<<blocks_for(m - done), THREADS, 0, s>>>(index + done, m - done, where,
                                                                 q + done);
}

/* --------------------------------------------------------------- Morton */

/* Floats as unsigned integers of the same order (-0 just below +0). */
__device__ unsigned float_key(float f)
{
    unsigned b = __float_as_uint(f);
    return b & 0x80000000u ? ~b : b | 0x80000000u;
}

__device__ float key_float(unsigned u)
{
    return __uint_as_float(u & 0x80000000u ? u & 0x7fffffffu : ~u);
}

/* box[d], box[3 + d]: the least and greatest coordinate d, as float_key. */
__global__ void box_kernel(const float *xyz, u64 stride, u64 n, unsigned *box)
{
    unsigned lo[3] = {EMPTY, EMPTY, EMPTY}, hi[3] = {0, 0, 0};
    for (u64 i = global_id(); i < n; i += (u64)gridDim.x * THREADS)
        for (int d = 0; d < 3; d++) {
            unsigned v = float_key(xyz[i * stride + d]);
            lo[d] = min(lo[d], v), hi[d] = max(hi[d], v);
        }
    for (int d = 0; d < 3; d++) {
        for (int off = WARP / 2; off; off /= 2) {
            lo[d] = min(lo[d], __shfl_down_sync(EMPTY, lo[d], off));
            hi[d] = max(hi[d], __shfl_down_sync(EMPTY, hi[d], off));
        }
        if (threadIdx.x % WARP == 0)
            atomicMin(&box[d], lo[d]), atomicMax(&box[3 + d], hi[d]);
    }
}

/* The CPU's codes (common/morton.h), the box's floats as doubles. */
__global__ void code_kernel(const float *xyz, u64 stride, u64 n, const unsigned *box, u64 *code,
                            unsigned *id)
{
    u64 i = global_id();
    if (i >= n)
        return;
    double lo[3], hi[3];
    for (int d = 0; d < 3; d++)
        lo[d] = key_float(box[d]), hi[d] = key_float(box[3 + d]);
    u64 c = tmap_morton_code(xyz + i * stride, lo, hi);
    code[i] = c, id[i] = (unsigned)i;
}

/* -------------------------------------------------------------- padding */

__global__ void count_kernel(const unsigned *index, u64 n, unsigned *freq, unsigned *first)
{
    u64 t = global_id();
    if (t < n)
        atomicAdd(&freq[index[t]], 1u), atomicMin(&first[index[t]], (unsigned)t);
}

/* Thread t's key: its element's rank key (most accesses first, then the
 * earliest first access; distinct per element). */
__global__ void rank_kernel(const unsigned *index, u64 n, const unsigned *freq,
                            const unsigned *first, u64 *key, unsigned *id)
{
    u64 t = global_id();
    if (t < n) {
        unsigned e = index[t];
        key[t] = (u64)(EMPTY - freq[e]) << 32 | first[e], id[t] = (unsigned)t;
    }
}

/* Slot s of the sorted threads (one CUDA warp per warp of threads): its
 * element, and the mask of lanes that start a distinct element. */
__device__ unsigned lane_element(const unsigned *index, const unsigned *perm, u64 n, u64 s,
                                 unsigned *starts)
{
    unsigned lane = threadIdx.x % WARP, e = s < n ? index[perm[s]] : EMPTY;
    unsigned before = __shfl_up_sync(EMPTY, e, 1);
    *starts = __ballot_sync(EMPTY, s < n && (lane == 0 || e != before));
    return e;
}

/* sum[w] = 2 * (distinct elements of warp w) + (its first is warp w-1's last). */
__global__ void summary_kernel(const unsigned *index, const unsigned *perm, u64 n, unsigned *sum)
{
    u64 s = global_id();
    unsigned starts, e = lane_element(index, perm, n, s, &starts);
    if (s < n && s % WARP == 0)
        sum[s / WARP] = 2 * __popc(starts) + (s > 0 && index[perm[s - 1]] == e);
}

/* The packing of mem_pad.c's pack_warp, warp after warp: base[w] = the
 * slot of its first newly placed element, keep[w] = the slot its first
 * element keeps (EMPTY: none); *nout = the slots used.  One block: the
 * summaries staged WALK at a time, thread 0 walks them. */
__global__ void walk_kernel(const unsigned *sum, unsigned nw, unsigned seg, unsigned *base,
                            unsigned *keep, unsigned *nout)
{
    __shared__ unsigned sh_sum[WALK], sh_base[WALK], sh_keep[WALK];
    unsigned pos = 0, last = EMPTY; /* last: the slot of the previous warp's last element */
    for (unsigned lo = 0; lo < nw; lo += WALK) {
        unsigned m = nw - lo < WALK ? nw - lo : WALK;
        for (unsigned i = threadIdx.x; i < m; i += blockDim.x)
            sh_sum[i] = sum[lo + i];
        __syncthreads();
        for (unsigned i = 0; threadIdx.x == 0 && i < m; i++) {
            unsigned nu = sh_sum[i] / 2, old = sh_sum[i] % 2 ? last : EMPTY;
            unsigned kept = old != EMPTY && old >= pos - pos % seg;
            if (nu > kept && nu > seg - pos % seg) /* fresh elements that do not fit */
                pos = (pos + seg - 1) / seg * seg, kept = old != EMPTY && old >= pos;
            sh_base[i] = pos, sh_keep[i] = kept ? old : EMPTY;
            last = nu == kept ? old : pos + nu - 1 - kept;
            pos += nu - kept;
        }
        __syncthreads();
        for (unsigned i = threadIdx.x; i < m; i += blockDim.x)
            base[lo + i] = sh_base[i], keep[lo + i] = sh_keep[i];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *nout = pos;
}

/* Each sorted thread's slot: its element's rank d among the warp's
 * distinct elements, after the kept one. */
__global__ void place_kernel(const unsigned *index, const unsigned *perm, u64 n,
                             const unsigned *base, const unsigned *keep, unsigned *from,
                             unsigned *q)
{
    u64 s = global_id();
    unsigned starts, e = lane_element(index, perm, n, s, &starts);
    if (s >= n)
        return;
    unsigned lane = threadIdx.x % WARP, w = (unsigned)(s / WARP), k = keep[w];
    unsigned d = __popc(starts & (2u << lane) - 1) - 1;
    unsigned slot = k != EMPTY && d == 0 ? k : base[w] + d - (k != EMPTY);
    if (starts >> lane & 1 && slot != k)
        from[slot] = e;
    q[perm[s]] = slot;
}

/* ------------------------------------------------ reverse Cuthill-McKee */

const unsigned NUMBERED = 0xffffffffu; /* seen[v] of a vertex already in the order */

/* deg[v]: v's neighbours other than itself (as tmap_memre_rcm counts them);
 * max[0] their maximum, max[1] the longest row (self loops and repeats
 * included), each reduced over the warp first (one atomicMax a warp, not
 * a vertex: two words every warp of the grid would contend on);
 * flag[v]: isolated (degree 0); id[v] = v. */
__global__ void degree_kernel(const unsigned *rowptr, const unsigned *col, unsigned n,
                              unsigned *deg, unsigned *max, unsigned char *flag, unsigned *id)
{
    u64 v = global_id();
    unsigned d = 0, row = 0;
    if (v < n) {
        unsigned b = rowptr[v], e = rowptr[v + 1];
        for (unsigned x = b; x < e; x++)
            d += col[x] != v;
        row = e - b;
        deg[v] = d, flag[v] = d == 0, id[v] = (unsigned)v;
    }
    unsigned dm = d;
    for (int off = WARP / 2; off; off /= 2) {
        dm = umax(dm, __shfl_down_sync(EMPTY, dm, off));
        row = umax(row, __shfl_down_sync(EMPTY, row, off));
    }
    if (threadIdx.x % WARP == 0 && (dm || row))
        atomicMax(&max[0], dm), atomicMax(&max[1], row);
}

/* seen[list[i]] = sseen[list[i]] = NUMBERED for i < m (the numbering's
 * stamps and the sweeps'). */
__global__ void mark_kernel(const unsigned *list, unsigned m, unsigned *seen, unsigned *sseen)
{
    u64 i = global_id();
    if (i < m)
        seen[list[i]] = NUMBERED, sseen[list[i]] = NUMBERED;
}

/* parent[list[i]] = EMPTY for i < m: a discarded numbering's labels. */
__global__ void unparent_kernel(const unsigned *list, unsigned m, unsigned *parent)
{
    u64 i = global_id();
    if (i < m)
        parent[list[i]] = EMPTY;
}

/* Stamps of earlier searches back to 0 (the numbered stay). */
__global__ void restamp_kernel(unsigned *seen, unsigned n)
{
    u64 v = global_id();
    if (v < n && seen[v] != NUMBERED)
        seen[v] = 0;
}

/* *best = min (deg << 32 | v) over the vertices v of list[lo..hi) (list
 * NULL: every vertex not numbered). */
__global__ void least_kernel(const unsigned *list, unsigned lo, unsigned hi, const unsigned *deg,
                             const unsigned *seen, u64 *best)
{
    u64 i = lo + global_id();
    u64 key = ~0ull;
    if (i < hi) {
        unsigned v = list ? list[i] : (unsigned)i;
        if (list || seen[v] != NUMBERED)
            key = (u64)deg[v] << 32 | v;
    }
    for (int off = WARP / 2; off; off /= 2) {
        u64 o = __shfl_down_sync(EMPTY, key, off);
        key = o < key ? o : key;
    }
    if (threadIdx.x % WARP == 0 && key != ~0ull)
        atomicMin(best, key);
}

/* The searches' levels, enqueued without waiting: level L is
 * q[bound[L]..bound[L + 1]); a fixed grid, a warp per vertex in turn;
 * new vertices appended at *tail. */
__global__ void sweep_kernel(const unsigned *rowptr, const unsigned *col, unsigned *q,
                             const unsigned *bound, unsigned level, unsigned base,
                             unsigned *seen, unsigned *tail)
{
    unsigned lo = bound[level], hi = bound[level + 1], t = base + level + 1;
    for (u64 w = global_id() / WARP; w < hi - lo; w += (u64)gridDim.x * (THREADS / WARP)) {
        unsigned v = q[lo + w];
        for (unsigned e = rowptr[v] + threadIdx.x % WARP; e < rowptr[v + 1]; e += WARP) {
            unsigned u = col[e], s = seen[u];
            if (u == v || (s >= base && s != t))
                continue;
            if (atomicMax(&seen[u], t) < base)
                q[take_slots(tail, 1)] = u;
        }
    }
}

__global__ void close_kernel(unsigned *bound, unsigned level, const unsigned *tail)
{
    bound[level + 2] = *tail;
}

__global__ void sweep_root_kernel(unsigned *q, unsigned root, unsigned *seen, unsigned stamp,
                                  unsigned *bound, unsigned *tail)
{
    q[0] = root, seen[root] = stamp, bound[0] = 0, bound[1] = 1, *tail = 1;
}

__global__ void root_kernel(unsigned *q, unsigned at, unsigned root, unsigned *seen,
                            unsigned stamp)
{
    q[at] = root, seen[root] = stamp;
}

/* One level: a warp per vertex of q[lo..hi) (its label: its position);
 * each neighbour not seen in this search (stamp below base) and not
 * numbered is claimed with stamp t and appended after hi; with parent,
 * every such neighbour keeps its least parent's label. */
__global__ void expand_kernel(const unsigned *rowptr, const unsigned *col, unsigned *q,
                              unsigned lo, unsigned hi, unsigned base, unsigned t,
                              unsigned *seen, unsigned *count, unsigned *parent)
{
    u64 w = global_id() / WARP;
    if (w >= hi - lo)
        return;
    unsigned i = lo + (unsigned)w, v = q[i];
    for (unsigned e = rowptr[v] + threadIdx.x % WARP; e < rowptr[v + 1]; e += WARP) {
        unsigned u = col[e], s = seen[u];
        if (u == v || (s >= base && s != t))
            continue;
        if (atomicMax(&seen[u], t) < base)
            q[hi + take_slots(count, 1)] = u;
        if (parent)
            atomicMin(&parent[u], i);
    }
}

/* The sort key of the new level's vertex q[at + j]: its least parent's
 * label less lo, its degree, and (id_bits > 0) the vertex itself. */
__global__ void level_key_kernel(const unsigned *q, unsigned at, unsigned m, unsigned lo,
                                 const unsigned *parent, const unsigned *deg, unsigned deg_bits,
                                 unsigned id_bits, u64 *key)
{
    u64 j = global_id();
    if (j >= m)
        return;
    unsigned u = q[at + j];
    key[j] = ((u64)(parent[u] - lo) << deg_bits | deg[u]) << id_bits | (id_bits ? u : 0);
}

__global__ void unkey_kernel(const u64 *key, unsigned m, u64 mask, unsigned *q)
{
    u64 j = global_id();
    if (j < m)
        q[j] = (unsigned)(key[j] & mask);
}

__global__ void reverse_kernel(const unsigned *cm, unsigned n, unsigned *order)
{
    u64 i = global_id();
    if (i < n)
        order[n - 1 - i] = cm[i];
}

/* ------------------------------- reverse Cuthill-McKee, one kernel per BFS
 *
 * The same searches and numbering as the launches per level above, each
 * one cooperative kernel whose levels are separated by grid-wide
 * barriers (cooperative_groups' grid sync: the host launches once per
 * search or component, not once per level).  A level's vertices go one
 * per thread, their rows' neighbours loaded BATCH at a time; in a search
 * a row longer than SMALL_ROW is read by its whole warp.  The numbering
 * needs no sort: the children of a parent (the neighbours whose least
 * parent it is) are at most its row's length, so with every row at most
 * SMALL_ROW long a thread ranks its parent's children by (degree,
 * vertex) itself, and the parents' child counts, scanned in label order,
 * give each parent's first position: the order (least parent label,
 * degree, vertex).  Data written inside a kernel is read through L2
 * (__ldcg) after the barrier. */

enum { PT = 512, BATCH = 8, SMALL_ROW = 32, STAGE = 2 * PT };

/* A search's claims from v over col[e0..e1) by `step`: each neighbour not
 * seen in this search (stamp below base) gets stamp t and is appended at
 * q[at + ...] (*cnt counts them; a batch's claims of the lanes that run
 * together take their slots with one atomic). */
__device__ void sweep_row(const unsigned *col, u64 e0, u64 e1, unsigned step, unsigned v,
                          unsigned base, unsigned t, unsigned *seen, unsigned *q, unsigned at,
                          unsigned *cnt)
{
    for (; e0 < e1; e0 += BATCH * (u64)step) {
        unsigned u[BATCH], s[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            u[k] = e0 + k * (u64)step < e1 ? __ldg(col + e0 + k * (u64)step) : v;
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            s[k] = u[k] != v ? __ldcg(seen + u[k]) : base;
        unsigned got = 0; /* the claims of this batch, one bit each */
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            if (s[k] < base && atomicMax(seen + u[k], t) < base)
                got |= 1u << k;
        unsigned slot = at + take_slots(cnt, __popc(got));
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            if (got >> k & 1)
                q[slot++] = u[k];
    }
}

/* A search's state in a cooperative kernel: level L is
 * q[bound[L]..bound[L + 1]), its size counted in cnt[L] (cnt[0..2) = 0 and
 * bound[0..2) set by the host, the root q[0] stamped base); seen: the
 * sweeps' stamps; *ecc: the last level, written when the search ends. */
struct sweep_state {
    unsigned *q, *bound, *cnt, *seen, *ecc;
    unsigned base;
};

/* One level of a search, q[lo..hi): a vertex per thread, the same steps in
 * a warp's lanes (a row over SMALL_ROW read by its whole warp), the level's
 * warps dealt round the blocks (warp j of the level to block j mod grid), so
 * that a small level spreads over the SMs; the level's claims appended
 * after hi. */
__device__ void sweep_level(const unsigned *rowptr, const unsigned *col, const sweep_state &s,
                            unsigned level, unsigned lo, unsigned hi)
{
    const unsigned lane = threadIdx.x % WARP;
    const u64 stride = (u64)gridDim.x * PT,
              warp0 = ((u64)(threadIdx.x / WARP) * gridDim.x + blockIdx.x) * WARP;
    unsigned t = s.base + level + 1, *c = s.cnt + level + 1;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        s.cnt[level + 2] = 0; /* counted from the next level on, after the barrier */
    for (u64 w = warp0; w < hi - lo; w += stride) {
        u64 x = w + lane;
        unsigned v = 0, b = 0, e = 0;
        if (x < hi - lo)
            v = __ldcg(s.q + lo + x), b = __ldg(rowptr + v), e = __ldg(rowptr + v + 1);
        bool big = e - b > SMALL_ROW;
        if (!big)
            sweep_row(col, b, e, 1, v, s.base, t, s.seen, s.q, hi, c);
        for (unsigned many = __ballot_sync(EMPTY, big); many; many &= many - 1) {
            int k = __ffs(many) - 1;
            unsigned vk = __shfl_sync(EMPTY, v, k), bk = __shfl_sync(EMPTY, b, k);
            unsigned ek = __shfl_sync(EMPTY, e, k);
            sweep_row(col, (u64)bk + lane, ek, WARP, vk, s.base, t, s.seen, s.q, hi, c);
        }
    }
}

/* After the level's barrier: the next level [lo, hi), or false (*ecc
 * written) where it is empty. */
__device__ bool sweep_next(const sweep_state &s, unsigned level, unsigned &lo, unsigned &hi)
{
    unsigned m = __ldcg(s.cnt + level + 1);
    bool first = blockIdx.x == 0 && threadIdx.x == 0;
    if (!m) {
        if (first)
            *s.ecc = level;
        return false;
    }
    if (first)
        s.bound[level + 2] = hi + m;
    lo = hi, hi += m;
    return true;
}

/* A search from s.q[0], a grid barrier per level. */
__global__ void __launch_bounds__(PT)
    coop_search_kernel(const unsigned *rowptr, const unsigned *col, sweep_state s)
{
    cg::grid_group grid = cg::this_grid();
    unsigned lo = 0, hi = 1;
    for (unsigned level = 0;; level++) {
        sweep_level(rowptr, col, s, level, lo, hi);
        grid.sync();
        if (!sweep_next(s, level, lo, hi))
            return;
    }
}

/* Grid barriers alone (the floor's calibration: one level's barrier). */
__global__ void __launch_bounds__(PT) coop_barrier_kernel(unsigned k)
{
    cg::grid_group grid = cg::this_grid();
    for (unsigned i = 0; i < k; i++)
        grid.sync();
}

/* The numbering's claims from v (label i) over its row: each neighbour
 * not seen in this search (stamp below base) or claimed by this level
 * (stamp t) gets stamp t and keeps its least parent label. */
__device__ void number_row(const unsigned *rowptr, const unsigned *col, unsigned v, unsigned i,
                           unsigned base, unsigned t, unsigned *seen, unsigned *parent)
{
    for (unsigned e0 = __ldg(rowptr + v), e1 = __ldg(rowptr + v + 1); e0 < e1; e0 += BATCH) {
        unsigned u[BATCH], s[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            u[k] = e1 - e0 > (unsigned)k ? __ldg(col + e0 + k) : v;
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            s[k] = u[k] != v ? __ldcg(seen + u[k]) : base;
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            if (u[k] != v && (s[k] < base || s[k] == t))
                atomicMax(seen + u[k], t), atomicMin(parent + u[k], i);
    }
}

/* The children of v (label i) in the level of stamp t, each once: cu[],
 * their degrees cd[] (v's row is at most SMALL_ROW long); returns how
 * many. */
__device__ unsigned children(const unsigned *rowptr, const unsigned *col, const unsigned *deg,
                             const unsigned *seen, const unsigned *parent, unsigned v,
                             unsigned i, unsigned t, unsigned *cu, unsigned *cd)
{
    unsigned c = 0;
    for (unsigned e0 = __ldg(rowptr + v), e1 = __ldg(rowptr + v + 1); e0 < e1; e0 += BATCH) {
        unsigned u[BATCH], s[BATCH], p[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            u[k] = e1 - e0 > (unsigned)k ? __ldg(col + e0 + k) : v;
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            s[k] = u[k] != v ? __ldcg(seen + u[k]) : 0, p[k] = u[k] != v ? __ldcg(parent + u[k]) : 0;
#pragma unroll
        for (int k = 0; k < BATCH; k++) {
            if (u[k] == v || s[k] != t || p[k] != i)
                continue;
            bool again = false;
            for (unsigned j = 0; j < c; j++)
                again |= cu[j] == u[k];
            if (!again)
                cu[c] = u[k], cd[c] = __ldg(deg + u[k]), c++;
        }
    }
    return c;
}

/* A component numbered from its root q[at] (stamp base, set by the
 * host), `levels` levels after the root's (its search's eccentricity).
 * The root claims its neighbours first; then each level [lo, hi), with
 * ONE grid barrier: (A) each block counts the children of its run of the
 * level's parents and scans the counts (off[]), and publishes its total
 * in tot[] (a word per block, by the level's parity: (level + 1) << 32 |
 * count); it waits only for the blocks before it to publish theirs, and
 * adds them; (B) each parent puts its children at hi + the blocks' counts
 * before + its offset + their rank by (degree, vertex), and each child,
 * its label now known, claims its unclaimed neighbours and gives them its
 * label if the least (the next level's claims, folded into this placing);
 * barrier; the level's size is the sum of tot[].  The claims of (B) touch
 * only vertices of the level after the children's (a stamp below base, or
 * the next level's), never a neighbour of a parent, so the children that
 * another block still counts in (A) do not move under it, and a block
 * whose run of parents is at most PT (a parent per thread) keeps the
 * children it found in (A) for (B) instead of finding them again.  tot[]
 * by parity: a block that reads a level's words after its barrier reads
 * them before any block can publish the level two after.  Every row at
 * most SMALL_ROW long.
 *
 * With sw.q set, a search (pseudo-peripheral sweep) runs beside it in the
 * same kernel, level for level under the same barriers, on its own
 * stamps (sw.seen) and queue: the next sweep of tmap_memre_rcm's search,
 * from the far vertex, which decides whether this root is the one (the
 * host discards the numbering where it is not).  A block's part of the
 * sweep's level runs between its publishing in (A) and its wait for the
 * blocks before it.  The kernel runs until both are done.
 *
 * levels UINT_MAX: the levels are not known (no search from the root ran
 * before); the numbering runs until a level has no children, and writes
 * that level's number and bounds [lo, hi) to ends[0..3). */
__global__ void __launch_bounds__(PT, 2)
    coop_number_kernel(const unsigned *rowptr, const unsigned *col, const unsigned *deg,
                       unsigned *q, unsigned at, unsigned levels, unsigned base, unsigned *seen,
                       unsigned *parent, unsigned *off, u64 *tot, sweep_state sw, unsigned *ends)
{
    typedef cub::BlockScan<unsigned, PT> scan_t;
    typedef cub::BlockReduce<unsigned, PT> reduce_t;
    __shared__ union {
        typename scan_t::TempStorage scan;
        typename reduce_t::TempStorage reduce;
    } sh;
    __shared__ unsigned sh_sum, sh_child[STAGE];
    cg::grid_group grid = cg::this_grid();
    unsigned cu[SMALL_ROW], cd[SMALL_ROW];
    volatile u64 *word = tot;
    unsigned lo = at, hi = at + 1, slo = 0, shi = 1;
    bool sweeping = sw.q != NULL;
    if (threadIdx.x < 2)
        word[threadIdx.x * gridDim.x + blockIdx.x] = 0; /* an earlier launch's words */
    if (blockIdx.x == 0 && threadIdx.x == 0 && levels)
        number_row(rowptr, col, q[at], at, base, base + 1, seen, parent);
    grid.sync();
    for (unsigned level = 0; (level < levels && hi > lo) || sweeping; level++) {
        bool numbering = level < levels && hi > lo; /* both grid-uniform */
        unsigned t = base + level + 1, size = numbering ? hi - lo : 0;
        unsigned chunk = (size + gridDim.x - 1) / gridDim.x;
        volatile u64 *mine = word + (level & 1) * gridDim.x;
        const u64 tag = (u64)(level + 1) << 32;
        u64 first = (u64)blockIdx.x * chunk, last = first + chunk < size ? first + chunk : size;
        bool one = last <= first + PT; /* block-uniform: (A)'s children kept for (B) */
        unsigned run = 0, c = 0, ex = 0;
        for (u64 x0 = first; numbering && x0 < last; x0 += PT) { /* (A), block-uniform steps */
            u64 x = x0 + threadIdx.x;
            unsigned sum;
            c = 0;
            if (x < last)
                c = children(rowptr, col, deg, seen, parent, __ldcg(q + lo + x),
                             lo + (unsigned)x, t, cu, cd);
            scan_t(sh.scan).ExclusiveSum(c, ex, sum);
            __syncthreads();
            if (x < last && !one)
                off[x] = run + ex;
            run += sum;
        }
        if (numbering && threadIdx.x == 0)
            mine[blockIdx.x] = tag | run;
        if (sweeping)
            sweep_level(rowptr, col, sw, level, slo, shi);
        if (numbering) {
            unsigned before = 0;
            for (unsigned b = threadIdx.x; b < blockIdx.x; b += PT) { /* the blocks before */
                u64 w;
                do
                    w = mine[b];
                while ((w & ~0xffffffffull) != tag);
                before += (unsigned)w;
            }
            before = reduce_t(sh.reduce).Sum(before);
            if (threadIdx.x == 0)
                sh_sum = before;
            __syncthreads();
            before = sh_sum;
            bool stage = run <= STAGE; /* block-uniform */
            for (u64 x = first + threadIdx.x; x < last; x += PT) { /* (B) */
                unsigned pos = before;
                if (one) {
                    pos += ex;
                } else {
                    c = children(rowptr, col, deg, seen, parent, __ldcg(q + lo + x),
                                 lo + (unsigned)x, t, cu, cd);
                    pos += __ldcg(off + x);
                }
                for (unsigned k = 0; k < c; k++) {
                    unsigned r = 0;
                    for (unsigned j = 0; j < c; j++)
                        r += cd[j] < cd[k] || (cd[j] == cd[k] && cu[j] < cu[k]);
                    q[hi + pos + r] = cu[k];
                    if (stage)
                        sh_child[pos - before + r] = cu[k];
                }
            }
            /* the block's children, q[hi + before ..) for run, claim (the last
             * level's have no next level), spread over its threads */
            if (level + 1 < levels) {
                __syncthreads();
                for (unsigned j = threadIdx.x; j < run; j += PT)
                    number_row(rowptr, col, stage ? sh_child[j] : __ldcg(q + hi + before + j),
                               hi + before + j, base, t + 1, seen, parent);
            }
        }
        grid.sync();
        if (numbering) {
            unsigned all = 0;
            for (unsigned b = threadIdx.x; b < gridDim.x; b += PT)
                all += (unsigned)mine[b];
            all = reduce_t(sh.reduce).Sum(all);
            if (threadIdx.x == 0)
                sh_sum = all;
            __syncthreads();
            all = sh_sum;
            __syncthreads(); /* sh_sum and sh.reduce are used again */
            if (!all && blockIdx.x == 0 && threadIdx.x == 0) /* level was the last */
                ends[0] = level, ends[1] = lo, ends[2] = hi;
            lo = hi, hi += all;
        }
        if (sweeping)
            sweeping = sweep_next(sw, level, slo, shi);
    }
}

/* The state of one tmap_gpu_memre_rcm call. */
struct rcm {
    const unsigned *rowptr, *col;
    unsigned n, base, sbase, maxdeg, maxrow, id_bits;
    unsigned *deg, *seen, *parent, *cm, *queue, *count, *ids, *bound;
    unsigned *sseen; /* the sweeps' stamps (seen: the numbering's), NUMBERED marked in both */
    unsigned *lvl, *off;        /* the cooperative kernels': level sizes [n + 2], offsets [n] */
    unsigned *last;             /* an open numbering's last level and its bounds [3] */
    unsigned open_ecc, open_lo, open_hi; /* the same, read back */
    u64 *tot;                   /* the numbering's blocks' counts [2 x grid_number] */
    unsigned grid_search, grid_number; /* their grids (blocks), 0: the launches per level */
    unsigned sms;
    u64 *key[2], *best;  /* key: the sorts' (sort_scratch, with temp) */
    void *sort_base;     /* their allocation (NULL: none yet) */
    unsigned *host;  /* pinned: a least key, a chunk of a search's bounds */
    unsigned *hb[2]; /* host: the bounds of two searches' levels [n + 1] */
    void *temp;
    size_t temp_bytes;
    cudaStream_t s;
    tmap_gpu_rcm_steps *steps; /* NULL: not timed */
    cudaEvent_t ev[2];         /* the step's start and end (steps only) */
};

/* The timing of one step (steps only): tick() before it, tock() after,
 * which waits for it and adds its time to *ms (the host's part between
 * the two included: the stream is idle while the host works). */
cudaError_t tick(rcm &r) { return r.steps ? cudaEventRecord(r.ev[0], r.s) : cudaSuccess; }

cudaError_t tock(rcm &r, double *ms)
{
    float f = 0;
    cudaError_t e = cudaSuccess;
    if (r.steps && (e = cudaEventRecord(r.ev[1], r.s)) == cudaSuccess &&
        (e = cudaEventSynchronize(r.ev[1])) == cudaSuccess &&
        (e = cudaEventElapsedTime(&f, r.ev[0], r.ev[1])) == cudaSuccess)
        *ms += f;
    return e;
}

cudaError_t read_u32(rcm &r, const unsigned *dev, unsigned *out)
{
    cudaError_t e = cudaMemcpyAsync(r.host, dev, 4, cudaMemcpyDeviceToHost, r.s);
    if (e == cudaSuccess && (e = cudaStreamSynchronize(r.s)) == cudaSuccess)
        *out = r.host[0];
    return e;
}

/* The least (degree, vertex) of list[lo..hi) (list NULL: of the vertices
 * not numbered). */
cudaError_t least(rcm &r, const unsigned *list, unsigned lo, unsigned hi, unsigned *v)
{
    cudaError_t e = cudaMemsetAsync(r.best, 0xff, 8, r.s);
    if (e != cudaSuccess)
        return e;
    least_kernel<<<blocks_for(hi - lo), THREADS, 0, r.s>>>(list, lo, hi, r.deg, r.seen, r.best);
    if ((e = cudaMemcpyAsync(r.host, r.best, 8, cudaMemcpyDeviceToHost, r.s)) == cudaSuccess &&
        (e = cudaStreamSynchronize(r.s)) == cudaSuccess)
        *v = r.host[0]; /* the low word: the vertex */
    return e;
}

/* The sorts' scratch (the numbering's launches per level only): two key
 * arrays of n and CUB's temporary storage for the largest sort, taken
 * once by cudaMalloc (freed at the call's end, the stream done). */
cudaError_t sort_scratch(rcm &r)
{
    if (r.sort_base)
        return cudaSuccess;
    size_t b[3] = {0, 0, 0}, most = 0, keys = ((size_t)r.n * 8 + 255) & ~(size_t)255;
    cudaError_t e = cub::DeviceRadixSort::SortKeys(NULL, b[0], r.key[0], r.key[1], (int)r.n, 0,
                                                   64, r.s);
    if (e == cudaSuccess)
        e = cub::DeviceRadixSort::SortKeys(NULL, b[1], r.ids, r.cm, (int)r.n, 0, 32, r.s);
    if (e == cudaSuccess)
        e = cub::DeviceRadixSort::SortPairs(NULL, b[2], r.key[0], r.key[1], r.ids, r.cm,
                                            (int)r.n, 0, 64, r.s);
    for (int i = 0; i < 3; i++)
        most = b[i] > most ? b[i] : most;
    if (e != cudaSuccess || (e = cudaMalloc(&r.sort_base, 2 * keys + most)) != cudaSuccess)
        return e;
    char *base = (char *)r.sort_base;
    r.key[0] = (u64 *)base, r.key[1] = (u64 *)(base + keys);
    r.temp = base + 2 * keys, r.temp_bytes = most;
    return cudaSuccess;
}

/* The level after q[lo..hi) sorted by (least parent, degree, vertex). */
cudaError_t sort_level(rcm &r, unsigned *q, unsigned lo, unsigned hi, unsigned m)
{
    unsigned pbits = gpu_bits(hi - lo - 1), dbits = gpu_bits(r.maxdeg);
    cudaError_t e;
    if (pbits + dbits + r.id_bits <= 64) { /* one sort, the vertex in the key's low bits */
        level_key_kernel<<<blocks_for(m), THREADS, 0, r.s>>>(q, hi, m, lo, r.parent, r.deg,
                                                              dbits, r.id_bits, r.key[0]);
        if ((e = cub::DeviceRadixSort::SortKeys(r.temp, r.temp_bytes, r.key[0], r.key[1], (int)m,
                                                0, (int)(pbits + dbits + r.id_bits ? pbits + dbits + r.id_bits : 1), r.s)) !=
            cudaSuccess)
            return e;
        unkey_kernel<<<blocks_for(m), THREADS, 0, r.s>>>(r.key[1], m,
                                                          r.id_bits == 64 ? ~0ull
                                                          : (1ull << r.id_bits) - 1, q + hi);
        return cudaGetLastError();
    }
    /* else by vertex, then stably by (parent, degree) */
    if ((e = cub::DeviceRadixSort::SortKeys(r.temp, r.temp_bytes, q + hi, r.ids, (int)m, 0,
                                            (int)r.id_bits, r.s)) != cudaSuccess)
        return e;
    level_key_kernel<<<blocks_for(m), THREADS, 0, r.s>>>(r.ids, 0, m, lo, r.parent, r.deg, dbits,
                                                          0, r.key[0]);
    return cub::DeviceRadixSort::SortPairs(r.temp, r.temp_bytes, r.key[0], r.key[1], r.ids,
                                           q + hi, (int)m, 0, (int)(pbits + dbits ? pbits + dbits : 1), r.s);
}

enum { CHUNK = 64, SWEEP_BLOCKS = 2048 };

/* A search (levels in any order) from root, CHUNK levels enqueued at a
 * time, then their bounds read, until an empty level.  hb [n + 1]: level
 * L's vertices are r.queue[hb[L] .. hb[L + 1]) for L <= *ecc, the last. */
cudaError_t search(rcm &r, unsigned root, unsigned *hb, unsigned *ecc)
{
    cudaError_t e;
    if (r.sbase + r.n + CHUNK + 2 >= NUMBERED) {
        restamp_kernel<<<blocks_for(r.n), THREADS, 0, r.s>>>(r.sseen, r.n);
        r.sbase = 1;
    }
    sweep_root_kernel<<<1, 1, 0, r.s>>>(r.queue, root, r.sseen, r.sbase, r.bound, r.count);
    if (r.grid_search) { /* one cooperative kernel, one wait */
        if ((e = cudaMemsetAsync(r.lvl, 0, 2 * sizeof *r.lvl, r.s)) != cudaSuccess)
            return e;
        sweep_state sw = {r.queue, r.bound, r.lvl, r.sseen, r.count + 2, r.sbase};
        void *args[] = {(void *)&r.rowptr, (void *)&r.col, (void *)&sw};
        if ((e = cudaLaunchCooperativeKernel((const void *)coop_search_kernel, r.grid_search, PT,
                                             args, 0, r.s)) != cudaSuccess ||
            (e = read_u32(r, sw.ecc, ecc)) != cudaSuccess)
            return e;
        r.sbase += *ecc + 2;
        return cudaMemcpy(hb, r.bound, (size_t)(*ecc + 2) * 4, cudaMemcpyDeviceToHost);
    }
    unsigned level = 0;
    for (;;) {
        for (int k = 0; k < CHUNK; k++, level++) {
            sweep_kernel<<<SWEEP_BLOCKS, THREADS, 0, r.s>>>(r.rowptr, r.col, r.queue, r.bound,
                                                             level, r.sbase, r.sseen, r.count);
            close_kernel<<<1, 1, 0, r.s>>>(r.bound, level, r.count);
        }
        unsigned first = level - CHUNK; /* bound[first .. level + 1] */
        if ((e = cudaMemcpyAsync(r.host, r.bound + first, (CHUNK + 2) * 4, cudaMemcpyDeviceToHost,
                                 r.s)) != cudaSuccess ||
            (e = cudaStreamSynchronize(r.s)) != cudaSuccess)
            return e;
        /* level `first` is not empty (level 0, or checked by the chunk before) */
        for (unsigned j = 1; j <= CHUNK; j++)
            if (r.host[j + 1] == r.host[j]) { /* level first + j is empty: first + j - 1 last */
                *ecc = first + j - 1;
                r.sbase += level + 2;
                return cudaMemcpy(hb, r.bound, (size_t)(*ecc + 2) * 4, cudaMemcpyDeviceToHost);
            }
    }
}

/* A sweep's steps counted (steps only): its time, levels, vertices. */
void count_sweep(rcm &r, double ms, unsigned ecc, unsigned reached, bool fused)
{
    tmap_gpu_rcm_steps *st = r.steps;
    if (!st)
        return;
    (fused ? st->fused_vertices : st->sweep_vertices) += reached;
    if (fused) {
        st->fused_sweeps++;
        return;
    }
    if (st->sweeps < sizeof st->sweep_each_ms / sizeof *st->sweep_each_ms)
        st->sweep_each_ms[st->sweeps] = ms;
    st->sweep_ms += ms, st->sweeps++, st->sweep_barriers += ecc + 1;
}

/* A separate sweep (tmap_memre_rcm's search), timed (steps only). */
cudaError_t timed_search(rcm &r, unsigned root, unsigned *hb, unsigned *ecc)
{
    double ms = 0;
    cudaError_t e = tick(r);
    if (e == cudaSuccess && (e = search(r, root, hb, ecc)) == cudaSuccess &&
        (e = tock(r, &ms)) == cudaSuccess)
        count_sweep(r, ms, *ecc, hb[*ecc + 1], false);
    return e;
}

cudaError_t timed_least(rcm &r, const unsigned *list, unsigned lo, unsigned hi, unsigned *v)
{
    cudaError_t e = tick(r);
    if (e == cudaSuccess && (e = least(r, list, lo, hi, v)) == cudaSuccess)
        e = tock(r, r.steps ? &r.steps->least_ms : NULL);
    return e;
}

/* The numbering is one cooperative kernel (rows at most SMALL_ROW); a
 * sweep can run beside it where the sweeps are cooperative too. */
bool coop_number(const rcm &r) { return r.grid_number && r.maxrow <= SMALL_ROW; }

bool fusable(const rcm &r) { return coop_number(r) && r.grid_search; }

/* The numbering: a BFS from root into r.cm from position at, its levels'
 * sizes known from the root's search (hb, ecc), so that nothing waits:
 * each level expanded, then sorted; or one cooperative kernel.  With far
 * (not EMPTY; fusable only), the search from far runs in the same kernel:
 * its bounds into shb, its last level *secc.  hb NULL (coop_number only,
 * far EMPTY): no search ran from root, the kernel finds its levels (r.
 * open_ecc, the last's bounds r.open_lo, r.open_hi).  *reached: the
 * vertices numbered. */
cudaError_t number(rcm &r, unsigned root, unsigned at, const unsigned *hb, unsigned ecc,
                   unsigned far, unsigned *shb, unsigned *secc, unsigned *reached)
{
    unsigned *q = r.cm;
    cudaError_t e;
    if (r.base + r.n + 2 >= NUMBERED) {
        restamp_kernel<<<blocks_for(r.n), THREADS, 0, r.s>>>(r.seen, r.n);
        r.base = 1;
    }
    root_kernel<<<1, 1, 0, r.s>>>(q, at, root, r.seen, r.base);
    if (coop_number(r)) { /* one cooperative kernel, no sort */
        sweep_state sw = {NULL, NULL, NULL, NULL, NULL, 0};
        if (far != EMPTY) {
            if (r.sbase + r.n + 2 >= NUMBERED) {
                restamp_kernel<<<blocks_for(r.n), THREADS, 0, r.s>>>(r.sseen, r.n);
                r.sbase = 1;
            }
            sweep_root_kernel<<<1, 1, 0, r.s>>>(r.queue, far, r.sseen, r.sbase, r.bound,
                                                r.count);
            if ((e = cudaMemsetAsync(r.lvl, 0, 2 * sizeof *r.lvl, r.s)) != cudaSuccess)
                return e;
            sw = sweep_state{r.queue, r.bound, r.lvl, r.sseen, r.count + 2, r.sbase};
        }
        unsigned levels = hb ? ecc : UINT_MAX;
        void *args[] = {(void *)&r.rowptr, (void *)&r.col, (void *)&r.deg, (void *)&q,
                        (void *)&at, (void *)&levels, (void *)&r.base, (void *)&r.seen,
                        (void *)&r.parent, (void *)&r.off, (void *)&r.tot, (void *)&sw,
                        (void *)&r.last};
        if ((e = cudaLaunchCooperativeKernel((const void *)coop_number_kernel, r.grid_number, PT,
                                             args, 0, r.s)) != cudaSuccess)
            return e;
        if (!hb) { /* open: its levels read back */
            if ((e = cudaMemcpyAsync(r.host, r.last, 12, cudaMemcpyDeviceToHost, r.s)) !=
                    cudaSuccess ||
                (e = cudaStreamSynchronize(r.s)) != cudaSuccess)
                return e;
            r.open_ecc = r.host[0], r.open_lo = r.host[1], r.open_hi = r.host[2];
            ecc = r.open_ecc;
        }
        r.base += ecc + 2;
        *reached = hb ? hb[ecc + 1] : r.open_hi - at;
        if (far == EMPTY)
            return cudaSuccess;
        if ((e = read_u32(r, sw.ecc, secc)) != cudaSuccess)
            return e;
        r.sbase += *secc + 2;
        return cudaMemcpy(shb, r.bound, (size_t)(*secc + 2) * 4, cudaMemcpyDeviceToHost);
    }
    unsigned lo = at, hi = at + 1;
    if (ecc && (e = sort_scratch(r)) != cudaSuccess)
        return e;
    for (unsigned level = 0; level < ecc; level++) {
        unsigned m = hb[level + 2] - hb[level + 1];
        if ((e = cudaMemsetAsync(r.count, 0, 4, r.s)) != cudaSuccess)
            return e;
        u64 threads = (u64)(hi - lo) * WARP;
        expand_kernel<<<(unsigned)((threads + THREADS - 1) / THREADS), THREADS, 0, r.s>>>(
            r.rowptr, r.col, q, lo, hi, r.base, r.base + level + 1, r.seen, r.count, r.parent);
        if ((e = sort_level(r, q, lo, hi, m)) != cudaSuccess)
            return e;
        lo = hi, hi += m;
    }
    r.base += ecc + 2;
    *reached = hi - at;
    return cudaGetLastError();
}

/* number(), timed (steps only); `barriers`: the kernel's levels. */
cudaError_t timed_number(rcm &r, unsigned root, unsigned at, const unsigned *hb, unsigned ecc,
                         unsigned far, unsigned *shb, unsigned *secc, unsigned *reached)
{
    cudaError_t e = tick(r);
    if (e == cudaSuccess && (e = number(r, root, at, hb, ecc, far, shb, secc, reached)) ==
        cudaSuccess && (e = tock(r, r.steps ? &r.steps->number_ms : NULL)) == cudaSuccess &&
        r.steps) {
        unsigned levels = hb ? ecc : r.open_ecc + 1; /* the root's, then a barrier each
                                                         (open: the last level's too) */
        if (far != EMPTY && *secc + 1 > levels) /* the sweep beside it, a barrier a level */
            levels = *secc + 1;
        r.steps->number_barriers += 1 + levels;
        r.steps->number_vertices += *reached;
        if (far != EMPTY)
            count_sweep(r, 0, *secc, shb[*secc + 1], true);
    }
    return e;
}

/* A component from start, as tmap_memre_rcm: George and Liu's
 * pseudo-peripheral search (move to the least-degree vertex of the last
 * level while the eccentricity grows), then the numbering from the root
 * found.  Where the numbering is one cooperative kernel, start is numbered
 * at once (a BFS: its levels are start's search's), then the sweep from
 * its last level's least vertex runs alone; every later sweep runs inside
 * the numbering's kernel from the current root.  A numbering is kept when
 * the sweep after it does not grow the eccentricity (the root is then the
 * one), else discarded (its parents' labels reset) and the next root
 * numbered beside the next sweep.  The same searches, the same root, the
 * same order; on a stencil from a corner, one numbering and one sweep,
 * where the search first would take two sweeps' passes of barriers.
 * *ecc: the root's last level. */
cudaError_t component(rcm &r, unsigned start, unsigned at, unsigned *reached, unsigned *ecc)
{
    unsigned root = start, far, ecc_far, next, *mine = r.hb[0], *other = r.hb[1];
    cudaError_t e;
    if (fusable(r)) { /* numbered from start at once, its levels its search's */
        if ((e = timed_number(r, root, at, NULL, 0, EMPTY, NULL, NULL, reached)) != cudaSuccess ||
            (e = timed_least(r, r.cm, r.open_lo, r.open_hi, &far)) != cudaSuccess)
            return e;
        *ecc = r.open_ecc;
        if (far == root ||
            (e = timed_search(r, far, other, &ecc_far)) != cudaSuccess || ecc_far <= *ecc)
            return e; /* numbered from start */
        unparent_kernel<<<blocks_for(*reached), THREADS, 0, r.s>>>(r.cm + at, *reached, r.parent);
        if (r.steps)
            r.steps->discarded++;
        if ((e = timed_least(r, r.queue, other[ecc_far], other[ecc_far + 1], &next)) !=
            cudaSuccess)
            return e;
        root = far, *ecc = ecc_far, far = next, mine = other, other = r.hb[0];
    } else if ((e = timed_search(r, root, mine, ecc)) == cudaSuccess) {
        e = timed_least(r, r.queue, mine[*ecc], mine[*ecc + 1], &far);
    }
    while (e == cudaSuccess && far != root) {
        if (fusable(r)) {
            if ((e = timed_number(r, root, at, mine, *ecc, far, other, &ecc_far, reached)) !=
                cudaSuccess)
                return e;
            if (ecc_far <= *ecc)
                return cudaSuccess; /* numbered from root */
            unparent_kernel<<<blocks_for(*reached), THREADS, 0, r.s>>>(r.cm + at, *reached,
                                                                         r.parent);
            if (r.steps)
                r.steps->discarded++;
        } else if ((e = timed_search(r, far, other, &ecc_far)) != cudaSuccess) {
            return e;
        }
        if ((e = timed_least(r, r.queue, other[ecc_far], other[ecc_far + 1], &next)) !=
                cudaSuccess || (!fusable(r) && ecc_far <= *ecc))
            break;
        root = far, *ecc = ecc_far, far = next;
        unsigned *t = mine;
        mine = other, other = t;
    }
    if (e != cudaSuccess)
        return e;
    return timed_number(r, root, at, mine, *ecc, EMPTY, NULL, NULL, reached);
}

/* The cooperative kernels' grids: at most 2 blocks of PT per SM, all
 * resident; 0 where the device cannot launch them (the launches per level
 * then). */
cudaError_t coop_grids(rcm &r)
{
    int dev = 0, coop = 0, sms = 0, per_sm[2] = {0, 0};
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm[0], coop_search_kernel, PT, 0);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm[1], coop_number_kernel, PT, 0);
    r.sms = (unsigned)sms;
    r.grid_search = coop ? (unsigned)(sms * (per_sm[0] < 2 ? per_sm[0] : 2)) : 0;
    r.grid_number = coop ? (unsigned)(sms * (per_sm[1] < 2 ? per_sm[1] : 2)) : 0;
    return e;
}

/* The time of what enqueue() puts on the stream, between r.ev (steps
 * only: outside every step). */
template <typename F> cudaError_t time_of(rcm &r, F enqueue, float *ms)
{
    cudaError_t e = cudaEventRecord(r.ev[0], r.s);
    if (e == cudaSuccess)
        e = enqueue();
    if (e == cudaSuccess && (e = cudaEventRecord(r.ev[1], r.s)) == cudaSuccess &&
        (e = cudaEventSynchronize(r.ev[1])) == cudaSuccess)
        e = cudaEventElapsedTime(ms, r.ev[0], r.ev[1]);
    return e;
}

/* The steps' floors (tmap_gpu_memre_rcm_floors, after the timed call and
 * outside its window): a grid barrier of the cooperative grid (BARRIERS
 * of them in one kernel less none, per barrier), the bandwidth of a
 * device copy of the columns (read and written, into r.ids), and each
 * step's barriers and compulsory bytes at those: per
 * vertex of a sweep its row pointer, its row's columns, its stamp, its
 * queue entry written and read (16 B + 4 B an entry); of a numbering
 * also its parent label and degree (24 B + 4 B an entry); the setup
 * reads the graph and writes 26 B a vertex (degree, flag, id, three
 * stamp and label arrays, the selection's reads). */
cudaError_t floors(rcm &r)
{
    enum { BARRIERS = 1000 };
    tmap_gpu_rcm_steps *st = r.steps;
    unsigned first = 0, last = 0, grid = r.grid_number ? r.grid_number : r.grid_search;
    cudaError_t e = cudaMemcpyAsync(&first, r.rowptr, 4, cudaMemcpyDeviceToHost, r.s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&last, r.rowptr + r.n, 4, cudaMemcpyDeviceToHost, r.s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(r.s);
    double nnz = (double)(last - first), n = r.n, per_row = nnz / n;
    float ms[4] = {0, 0, 0, 0}; /* the grid's, then one block per SM's: none, BARRIERS */
    for (unsigned k = 0; grid && e == cudaSuccess && k < 4; k++) {
        unsigned count = k % 2 ? BARRIERS : 0, blocks = k < 2 ? grid : r.sms;
        void *args[] = {(void *)&count};
        e = time_of(r, [&] {
            return cudaLaunchCooperativeKernel((const void *)coop_barrier_kernel, blocks, PT,
                                               args, 0, r.s);
        }, &ms[k]);
    }
    st->barrier_us = grid ? (ms[1] - ms[0]) * 1e3 / BARRIERS : 0;
    st->barrier_one_us = grid ? (ms[3] - ms[2]) * 1e3 / BARRIERS : 0;
    size_t bytes = (size_t)nnz * 4 < (size_t)r.n * 4 ? (size_t)nnz * 4 : (size_t)r.n * 4;
    float copy = 0;
    if (e == cudaSuccess && bytes)
        e = time_of(r, [&] {
            return cudaMemcpyAsync(r.ids, r.col + first, bytes, cudaMemcpyDeviceToDevice, r.s);
        }, &copy);
    st->copy_gbs = copy > 0 ? 2.0 * bytes / copy * 1e-6 : 0;
    double per_ms = st->copy_gbs * 1e6; /* bytes per ms */
    if (per_ms <= 0)
        return e;
    st->floor_setup_ms = ((n + 1) * 4 + nnz * 4 + 26 * n) / per_ms;
    st->floor_sweep_ms = st->sweep_barriers * st->barrier_us * 1e-3 +
                         st->sweep_vertices * (16 + 4 * per_row) / per_ms;
    st->floor_number_ms = st->number_barriers * st->barrier_us * 1e-3 +
                          (st->number_vertices * (24 + 4 * per_row) +
                           st->fused_vertices * (16 + 4 * per_row)) / per_ms;
    return e;
}

/* The whole order: isolated vertices first (each its own component, the
 * least degree), by label; then each component from the least (degree,
 * vertex) not numbered, numbered from its pseudo-peripheral vertex; then
 * reversed into order. */
cudaError_t rcm_order(rcm &r, unsigned char *flag, unsigned *order)
{
    cudaError_t e = tick(r);
    if (e != cudaSuccess || (e = cudaMemsetAsync(r.seen, 0, (size_t)r.n * 4, r.s)) ||
        (e = cudaMemsetAsync(r.sseen, 0, (size_t)r.n * 4, r.s)) ||
        (e = cudaMemsetAsync(r.parent, 0xff, (size_t)r.n * 4, r.s)) ||
        (e = cudaMemsetAsync(r.count, 0, 3 * sizeof *r.count, r.s)))
        return e;
    degree_kernel<<<blocks_for(r.n), THREADS, 0, r.s>>>(r.rowptr, r.col, r.n, r.deg, r.count + 1,
                                                         flag, r.ids);
    unsigned numbered = 0;
    if ((e = read_u32(r, r.count + 2, &r.maxrow)) != cudaSuccess ||
        (e = read_u32(r, r.count + 1, &r.maxdeg)) != cudaSuccess ||
        (e = cub::DeviceSelect::Flagged(r.temp, r.temp_bytes, r.ids, flag, r.cm, r.count, (int)r.n, r.s)) != cudaSuccess ||
        (e = read_u32(r, r.count, &numbered)) != cudaSuccess)
        return e;
    if (numbered && numbered < r.n) /* marks for the components to come (none: none) */
        mark_kernel<<<blocks_for(numbered), THREADS, 0, r.s>>>(r.cm, numbered, r.seen, r.sseen);
    if ((e = tock(r, r.steps ? &r.steps->setup_ms : NULL)) != cudaSuccess)
        return e;
    r.base = 1, r.sbase = 1;
    while (numbered < r.n) {
        unsigned start, reached, ecc;
        if ((e = timed_least(r, NULL, 0, r.n, &start)) != cudaSuccess ||
            (e = component(r, start, numbered, &reached, &ecc)) != cudaSuccess ||
            (e = tick(r)) != cudaSuccess)
            return e;
        if (numbered + reached < r.n) /* another component follows: it must not cross these */
            mark_kernel<<<blocks_for(reached), THREADS, 0, r.s>>>(r.cm + numbered, reached,
                                                                   r.seen, r.sseen);
        if ((e = tock(r, r.steps ? &r.steps->rest_ms : NULL)) != cudaSuccess)
            return e;
        if (r.steps)
            r.steps->components++, r.steps->levels += ecc + 1;
        numbered += reached;
    }
    if ((e = tick(r)) != cudaSuccess)
        return e;
    reverse_kernel<<<blocks_for(r.n), THREADS, 0, r.s>>>(r.cm, r.n, order);
    return tock(r, r.steps ? &r.steps->rest_ms : NULL);
}

/* ---------------------------------------------------- threads follow rows */

__global__ void follow_key_kernel(const unsigned *row, unsigned n, const unsigned *where,
                                  unsigned *key, unsigned *id)
{
    u64 t = global_id();
    if (t < n)
        key[t] = where[row[t]], id[t] = (unsigned)t;
}

/* Where the threads' rows ascend, each row's threads are one run
 * [first, end) (rows without threads: 0, 0); *unsorted = 1 where a row
 * is below the one before it or out of range. */
__global__ void runs_kernel(const unsigned *row, unsigned n, unsigned nrows, unsigned *first,
                            unsigned *end, unsigned *unsorted)
{
    u64 t = global_id();
    if (t >= n)
        return;
    unsigned r = row[t], prev = t ? row[t - 1] : EMPTY, next = t + 1 < n ? row[t + 1] : EMPTY;
    if (r >= nrows || (t && prev > r)) {
        *unsorted = 1;
        return;
    }
    if (prev != r)
        first[r] = (unsigned)t;
    if (next != r)
        end[r] = (unsigned)t + 1;
}

/* len[i] = the threads of the row at position i of order. */
__global__ void run_length_kernel(const unsigned *order, unsigned nrows, const unsigned *first,
                                  const unsigned *end, unsigned *len)
{
    u64 i = global_id();
    if (i < nrows)
        len[i] = end[order[i]] - first[order[i]];
}

/* Thread t at its row's first slot in the new order + its place in its
 * run: the stable sort's position. */
__global__ void place_runs_kernel(const unsigned *row, unsigned n, const unsigned *where,
                                  const unsigned *first, const unsigned *off, unsigned *perm)
{
    u64 t = global_id();
    if (t < n) {
        unsigned r = row[t];
        perm[off[where[r]] + (unsigned)t - first[r]] = (unsigned)t;
    }
}

tmap_status check_count(size_t n, const char *what, const char *fn, tmap_error *err)
{
    if (!n || n >= EMPTY)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu %s: must be in [1, 2^32 - 2]", fn, n,
                         what);
    return TMAP_OK;
}

/* Allocates c's bytes on the stream, runs steps(c) (which carves the same
 * pieces), frees on the stream.  `waits`: a call that waits for its
 * stream anyway (RCM) takes them by cudaMalloc and frees them after the
 * stream is done: the stream-ordered pool maps and unmaps its memory at
 * every such call (hundreds of MB for RCM's arrays), which cost more. */
template <typename F>
tmap_status with_scratch(cudaStream_t st, const char *fn, F steps, tmap_error *err,
                         bool waits = false)
{
    carver c = {NULL, 0};
    cudaError_t e = steps(c);
    if (e == cudaSuccess)
        e = waits ? cudaMalloc((void **)&c.base, c.used)
                  : cudaMallocAsync((void **)&c.base, c.used, st);
    if (e != cudaSuccess)
        return cuda_fail(err, e, fn, waits ? "cudaMalloc" : "cudaMallocAsync");
    c.used = 0;
    e = steps(c);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    cudaError_t f = waits ? cudaStreamSynchronize(st) : cudaFreeAsync(c.base, st);
    if (waits) {
        cudaError_t g = cudaFree(c.base);
        f = f == cudaSuccess ? g : f;
    }
    e = e == cudaSuccess ? f : e;
    return e == cudaSuccess ? TMAP_OK : cuda_fail(err, e, fn, "the build");
}

} // namespace

extern "C" tmap_status tmap_gpu_memre_relabel(uint64_t index, size_t nthreads, size_t per_thread,
                                              uint64_t order, size_t nelems, uint64_t q,
                                              void *stream, tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_relabel";
    size_t m = nthreads * per_thread;
    tmap_status st = check_count(nelems, "elements", fn, err);
    if (st == TMAP_OK && (!per_thread || (nthreads && m / nthreads != per_thread)))
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu per thread", fn, per_thread);
    if (st == TMAP_OK)
        st = check_count(m, "accesses", fn, err);
    if (st)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    return with_scratch(s, fn, [&](carver &c) {
        unsigned *where = c.take<unsigned>(nelems);
        if (!c.base)
            return cudaSuccess;
        inverse_kernel<<<blocks_for(nelems), THREADS, 0, s>>>((const unsigned *)order,
                                                              (unsigned)nelems, where);
        redirect((const unsigned *)index, m, where, (unsigned *)q, s);
        return cudaSuccess;
    }, err);
}

extern "C" tmap_status tmap_gpu_memre_morton(uint64_t xyz, size_t stride, size_t n,
                                             uint64_t order, void *stream, tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_morton";
    tmap_status st = check_count(n, "points", fn, err);
    if (st == TMAP_OK && stride < 3)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: stride %zu, must be >= 3", fn, stride);
    if (st)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    const float *p = (const float *)xyz;
    return with_scratch(s, fn, [&](carver &c) {
        unsigned *box = c.take<unsigned>(6), *id = c.take<unsigned>(n);
        u64 *code[2] = {c.take<u64>(n), c.take<u64>(n)};
        size_t temp_bytes = 0;
        cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, code[0], code[1], id,
                                                        (unsigned *)order, n, 0, 63, s);
        void *temp = c.take<char>(temp_bytes);
        if (e != cudaSuccess || !c.base)
            return e;
        if ((e = cudaMemsetAsync(box, 0xff, 3 * sizeof *box, s)) != cudaSuccess ||
            (e = cudaMemsetAsync(box + 3, 0, 3 * sizeof *box, s)) != cudaSuccess)
            return e;
        unsigned g = blocks_for(n) < 1024 ? blocks_for(n) : 1024;
        box_kernel<<<g, THREADS, 0, s>>>(p, stride, n, box);
        code_kernel<<<blocks_for(n), THREADS, 0, s>>>(p, stride, n, box, code[0], id);
        return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, code[0], code[1], id,
                                               (unsigned *)order, n, 0, 63, s);
    }, err);
}

extern "C" tmap_status tmap_gpu_memre_pad(uint64_t index, size_t nthreads, size_t nelems,
                                          size_t elem_bytes, size_t sector_bytes, uint64_t from,
                                          uint64_t q, uint64_t perm, uint64_t nout, void *stream,
                                          tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_pad";
    tmap_status st = check_count(nthreads, "threads", fn, err);
    if (st == TMAP_OK)
        st = check_count(nelems, "elements", fn, err);
    size_t sb = sector_bytes ? sector_bytes : 32, seg = sb > elem_bytes ? sb / elem_bytes : 1;
    if (st == TMAP_OK && (!elem_bytes || elem_bytes & (elem_bytes - 1) || sb & (sb - 1)))
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: element (%zu) and sector (%zu) bytes must be "
                       "powers of two", fn, elem_bytes, sb);
    size_t n = nthreads, nw = (n + WARP - 1) / WARP;
    size_t slots = nw * (WARP + seg); /* a working set and a pad per warp */
    if (st == TMAP_OK && slots > EMPTY)
        st = tmap_fail(err, TMAP_ERR_UNSUPPORTED, "%s: %zu threads: the padded layout may need "
                       "more slots than 32-bit indices number", fn, n);
    if (st)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned *ix = (const unsigned *)index;
    unsigned *pm = (unsigned *)perm;
    return with_scratch(s, fn, [&](carver &c) {
        unsigned *freq = c.take<unsigned>(nelems), *first = c.take<unsigned>(nelems);
        unsigned *id = c.take<unsigned>(n), *sum = c.take<unsigned>(nw);
        unsigned *base = c.take<unsigned>(nw), *keep = c.take<unsigned>(nw);
        u64 *key[2] = {c.take<u64>(n), c.take<u64>(n)};
        size_t temp_bytes = 0;
        cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, key[0], key[1], id,
                                                        pm, n, 0, 64, s);
        void *temp = c.take<char>(temp_bytes);
        if (e != cudaSuccess || !c.base)
            return e;
        if ((e = cudaMemsetAsync(freq, 0, nelems * sizeof *freq, s)) != cudaSuccess ||
            (e = cudaMemsetAsync(first, 0xff, nelems * sizeof *first, s)) != cudaSuccess ||
            (e = cudaMemsetAsync((void *)from, 0xff, slots * sizeof(unsigned), s)) != cudaSuccess)
            return e;
        count_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, n, freq, first);
        rank_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, n, freq, first, key[0], id);
        if ((e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, key[0], key[1], id, pm,
                                                 n, 0, 64, s)) != cudaSuccess)
            return e;
        summary_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, pm, n, sum);
        walk_kernel<<<1, WALK, 0, s>>>(sum, (unsigned)nw, (unsigned)seg, base, keep,
                                       (unsigned *)nout);
        place_kernel<<<blocks_for(n), THREADS, 0, s>>>(ix, pm, n, base, keep, (unsigned *)from,
                                                       (unsigned *)q);
        return cudaSuccess;
    }, err);
}

extern "C" tmap_status tmap_gpu_memre_rcm(uint64_t rowptr, uint64_t col, size_t n, uint64_t order,
                                          void *stream, tmap_error *err)
{
    return tmap_gpu_memre_rcm_timed(rowptr, col, n, order, NULL, stream, err);
}

/* The events of a timed call (none without steps). */
cudaError_t events(rcm &r, bool make)
{
    cudaError_t e = cudaSuccess;
    for (int i = 0; r.steps && i < 2; i++) {
        cudaError_t f = make ? cudaEventCreate(&r.ev[i]) : cudaEventDestroy(r.ev[i]);
        e = e == cudaSuccess ? f : e;
    }
    return e;
}

extern "C" tmap_status tmap_gpu_memre_rcm_timed(uint64_t rowptr, uint64_t col, size_t n,
                                                uint64_t order, tmap_gpu_rcm_steps *steps,
                                                void *stream, tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_rcm";
    tmap_status st = check_count(n, "vertices", fn, err);
    if (st == TMAP_OK && n > 0x7fffffffu)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu vertices: at most 2^31 - 1 (CUB's int "
                       "offsets)", fn, n);
    if (st)
        return st;
    rcm r = {};
    r.rowptr = (const unsigned *)rowptr, r.col = (const unsigned *)col, r.n = (unsigned)n;
    r.id_bits = gpu_bits(n - 1), r.s = (cudaStream_t)stream, r.steps = steps;
    if (steps)
        *steps = tmap_gpu_rcm_steps{};
    cudaError_t e = events(r, true);
    if (e != cudaSuccess)
        return events(r, false), cuda_fail(err, e, fn, "cudaEventCreate");
    if ((e = tick(r)) != cudaSuccess || (e = coop_grids(r)) != cudaSuccess)
        return events(r, false), cuda_fail(err, e, fn, "the cooperative kernels' occupancy");
    if (steps)
        steps->coop_sweeps = r.grid_search != 0;
    e = cudaMallocHost((void **)&r.host, (CHUNK + 2) * 4);
    if (e != cudaSuccess)
        return events(r, false), cuda_fail(err, e, fn, "cudaMallocHost");
    r.hb[0] = (unsigned *)malloc((n + 1) * 4), r.hb[1] = (unsigned *)malloc((n + 1) * 4);
    if (!r.hb[0] || !r.hb[1]) {
        free(r.hb[0]), free(r.hb[1]), cudaFreeHost(r.host), events(r, false);
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory", fn);
    }
    st = with_scratch(r.s, fn, [&](carver &c) {
        unsigned char *flag = c.take<unsigned char>(n);
        r.deg = c.take<unsigned>(n), r.seen = c.take<unsigned>(n), r.sseen = c.take<unsigned>(n);
        r.parent = c.take<unsigned>(n), r.cm = c.take<unsigned>(n);
        r.queue = c.take<unsigned>(n), r.ids = c.take<unsigned>(n);
        r.bound = c.take<unsigned>(n + CHUNK + 2);
        r.count = c.take<unsigned>(3), r.best = c.take<u64>(1);
        r.lvl = c.take<unsigned>(r.grid_search ? n + 2 : 0);
        r.off = c.take<unsigned>(r.grid_number ? n : 0);
        r.last = c.take<unsigned>(3);
        r.tot = c.take<u64>(2 * (size_t)r.grid_number);
        r.temp_bytes = 0; /* the isolated vertices' selection's (the sorts': sort_scratch) */
        cudaError_t x = cub::DeviceSelect::Flagged(NULL, r.temp_bytes, r.ids, flag, r.cm, r.count,
                                                   (int)n, r.s);
        r.temp = c.take<char>(r.temp_bytes);
        if (x != cudaSuccess || !c.base)
            return x;
        if ((x = tock(r, steps ? &steps->alloc_ms : NULL)) != cudaSuccess)
            return x;
        return rcm_order(r, flag, (unsigned *)order);
    }, err, true);
    cudaError_t g = r.sort_base ? cudaFree(r.sort_base) : cudaSuccess; /* after the stream's end */
    if (st == TMAP_OK && g != cudaSuccess)
        st = cuda_fail(err, g, fn, "cudaFree");
    cudaFreeHost(r.host), free(r.hb[0]), free(r.hb[1]);
    if (steps)
        steps->coop_number = r.grid_number && r.maxrow <= SMALL_ROW;
    cudaError_t f = events(r, false);
    if (st == TMAP_OK && f != cudaSuccess)
        st = cuda_fail(err, f, fn, "cudaEventDestroy");
    return st;
}

extern "C" tmap_status tmap_gpu_memre_rcm_floors(uint64_t rowptr, uint64_t col, size_t n,
                                                 tmap_gpu_rcm_steps *steps, void *stream,
                                                 tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_rcm_floors";
    const void *need[] = {steps}; /* TMAP_NEED's compound literal is C only */
    tmap_status st = tmap_need(err, fn, "steps", 1, need);
    if (st == TMAP_OK)
        st = check_count(n, "vertices", fn, err);
    if (st)
        return st;
    rcm r = {};
    r.rowptr = (const unsigned *)rowptr, r.col = (const unsigned *)col, r.n = (unsigned)n;
    r.s = (cudaStream_t)stream, r.steps = steps;
    cudaError_t e = events(r, true);
    if (e != cudaSuccess)
        return events(r, false), cuda_fail(err, e, fn, "cudaEventCreate");
    if ((e = coop_grids(r)) != cudaSuccess)
        return events(r, false), cuda_fail(err, e, fn, "the cooperative kernels' occupancy");
    st = with_scratch(r.s, fn, [&](carver &c) {
        r.ids = c.take<unsigned>(n);
        return c.base ? floors(r) : cudaSuccess;
    }, err, true);
    cudaError_t f = events(r, false);
    if (st == TMAP_OK && f != cudaSuccess)
        st = cuda_fail(err, f, fn, "cudaEventDestroy");
    return st;
}

extern "C" tmap_status tmap_gpu_memre_follow(uint64_t row, size_t nthreads, uint64_t order,
                                             size_t nrows, uint64_t perm, void *stream,
                                             tmap_error *err)
{
    const char *fn = "tmap_gpu_memre_follow";
    tmap_status st = check_count(nthreads, "threads", fn, err);
    if (st == TMAP_OK)
        st = check_count(nrows, "rows", fn, err);
    if (st == TMAP_OK && nthreads > 0x7fffffffu)
        st = tmap_fail(err, TMAP_ERR_INVALID, "%s: %zu threads: at most 2^31 - 1", fn, nthreads);
    if (st)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    unsigned n = (unsigned)nthreads, nr = (unsigned)nrows, unsorted = 0;
    const unsigned *rw = (const unsigned *)row, *ord = (const unsigned *)order;
    unsigned *pm = (unsigned *)perm;
    /* rows ascending (each row's threads one run): placed by a scan of the
     * runs' lengths in the new order, no sort */
    st = with_scratch(s, fn, [&](carver &c) {
        unsigned *where = c.take<unsigned>(nr), *first = c.take<unsigned>(nr);
        unsigned *end = c.take<unsigned>(nr), *len = c.take<unsigned>(nr);
        unsigned *off = c.take<unsigned>(nr), *flag = c.take<unsigned>(1);
        size_t temp_bytes = 0;
        cudaError_t e = cub::DeviceScan::ExclusiveSum(NULL, temp_bytes, len, off, (int)nr, s);
        void *temp = c.take<char>(temp_bytes);
        if (e != cudaSuccess || !c.base)
            return e;
        if ((e = cudaMemsetAsync(first, 0, (size_t)nr * 4, s)) != cudaSuccess ||
            (e = cudaMemsetAsync(end, 0, (size_t)nr * 4, s)) != cudaSuccess ||
            (e = cudaMemsetAsync(flag, 0, 4, s)) != cudaSuccess)
            return e;
        runs_kernel<<<blocks_for(n), THREADS, 0, s>>>(rw, n, nr, first, end, flag);
        if ((e = cudaMemcpyAsync(&unsorted, flag, 4, cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
            (e = cudaStreamSynchronize(s)) != cudaSuccess || unsorted)
            return e;
        inverse_kernel<<<blocks_for(nr), THREADS, 0, s>>>(ord, nr, where);
        run_length_kernel<<<blocks_for(nr), THREADS, 0, s>>>(ord, nr, first, end, len);
        if ((e = cub::DeviceScan::ExclusiveSum(temp, temp_bytes, len, off, (int)nr, s)) !=
            cudaSuccess)
            return e;
        place_runs_kernel<<<blocks_for(n), THREADS, 0, s>>>(rw, n, where, first, off, pm);
        return cudaSuccess;
    }, err);
    if (st != TMAP_OK || !unsorted)
        return st;
    return with_scratch(s, fn, [&](carver &c) { /* any rows: a stable sort on the row's position */
        unsigned *where = c.take<unsigned>(nr), *key[2] = {c.take<unsigned>(n),
                                                           c.take<unsigned>(n)};
        unsigned *id = c.take<unsigned>(n);
        size_t temp_bytes = 0;
        cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, key[0], key[1], id,
                                                        pm, (int)n, 0, 32, s);
        void *temp = c.take<char>(temp_bytes);
        if (e != cudaSuccess || !c.base)
            return e;
        inverse_kernel<<<blocks_for(nr), THREADS, 0, s>>>(ord, nr, where);
        follow_key_kernel<<<blocks_for(n), THREADS, 0, s>>>(rw, n, where, key[0], id);
        return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, key[0], key[1], id, pm, (int)n,
                                               0, nr > 1 ? gpu_bits(nr - 1) : 1, s);
    }, err);
}

// const_cache.cu -- an experiment, not built by CMake: what a __constant__
// read at varying addresses costs on the GPU, and why marching_cubes
// (benchmarks/suite/marching_cubes.cu) measures 0.318 ms in its original
// order, 0.062 sorted and 0.034 sorted by its case (issue 16).  Parts:
//   lanes   one warp, a dependent chain x = ctab[(x & zero) + off(lane, it)]:
//           cycles a request with k = 1..32 distinct addresses (lane % k picks
//           the address), (a) the k words in one 128-byte line, (b) each in a
//           line of its own, all within 4 KB; and (c) k words at random in a
//           window of S bytes (S = 128 B .. 48 KB): the constant caches'
//           capacity and what a miss costs.
//   tput    132 blocks of W warps (one per SM), each lane with 4 independent
//           chains of such reads (k distinct addresses, in 1 KB): cycles of
//           the SM per request and per distinct address, against W.
//   tputw   the IDC's throughput against its capacity: 8 blocks of 256 threads an
//           SM (64 warps, marching_cubes' occupancy), each lane 4 independent
//           chains, every request k distinct words at random in a window of S
//           bytes (S = 512 B .. 48 KB, the SM's working set): SM cycles per
//           distinct address (sm:const.idc_cycles where S fits the cache,
//           sm:const.idc_miss_cycles from the slope in 1 - 2048 / S).
//   mc      the suite kernel on cube ~ U[1, 254] (as the manifest draws it;
//           this generator, not the bench's) and frac ~ U[0.05, 0.95], under
//           the orders identity, by triangle count (heaviest first, ties by
//           index: what sorting by BBV gives), by case (the key), by case
//           within each warp's triangle count (a sorted warp's lanes re-sorted
//           by case), by case over 2, 4, 16, 32 cases per warp (warps mixing
//           that many cases); the layout transform (cube and frac moved);
//           the median of 20 launches; beside it the same kernel reading the
//           table from global memory (mc_triangles_g).  Per order the
//           distinct addresses a warp's constant requests touch (computed on
//           the host, replays = sum over requests of distinct - 1) and the
//           distinct table rows an SM's resident warps read (8 blocks of 256
//           threads, 132 apart, as the first waves place them).
//   once    each mc order launched once (for ncu).
//   geom    one warp, every lane one address, a chain cycling through N words
//           S bytes apart: the IDC's line, sets and ways from where the
//           cycles an access step from a hit to a miss.
//   sim     no GPU: the mc orders' requests through a simulated IDC (a set-
//           associative cache per SM, the resident warps' requests
//           interleaved; arguments: bytes, line, ways (0: fully), resident
//           blocks, sub-partitions, requests a warp in a row; IDC_RANDOM=1
//           random replacement), its lines fetched against ncu's.
//   des     no GPU: the same cache in time (a lookup every LOOK cycles, a
//           line FILL cycles on its way, a request blocked until its line
//           arrives; DES_NONBLOCK=1: not blocked), the SM's cycles.
//   nvcc -O3 -arch=sm_90 -o const_cache benchmarks/experiments/const_cache.cu
//   ./const_cache [lanes|geom|tput|tputw|mc|once]
//   ./const_cache sim [bytes line ways blocks subpartitions burst]   (from the repository root)
//   ./const_cache des [look fill gap every_nth_sm]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <set>
#include <string>
#include <vector>
#include "../suite/marching_cubes.cu"
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__constant__ unsigned ctab[14336]; /* 56 KB: with the mc table, most of the 64 KB a module may have */

__device__ __forceinline__ unsigned mix(unsigned h)
{
    h ^= h >> 15, h *= 0x2c1b3c6du, h ^= h >> 12, h *= 0x297a2d39u, h ^= h >> 15;
    return h;
}

/* word offset of lane's group g at iteration it: mode 0 one line, 1 a line
 * each (32 words apart), 2 random in a window of `words` words */
__device__ __forceinline__ unsigned off_of(int mode, unsigned g, unsigned it, unsigned words)
{
    unsigned h = mix(it * 0x9e3779b1u + 0x632be5abu);
    if (mode == 0)
        return (h % 32u) * 32u + g;                 /* 4 KB: line h % 32, word g (k <= 32) */
    if (mode == 1)
        return (h % 32u + g) % 32u * 32u + (h >> 8) % 32u; /* k lines of the 4 KB, word shared */
    return mix(h ^ (g * 0x85ebca77u)) % words;
}

__global__ void lanes_k(int mode, unsigned k, unsigned words, int iters, unsigned zero,
                        unsigned long long *cycles, unsigned *sink)
{
    unsigned lane = threadIdx.x & 31, g = lane % k, x = 0;
    unsigned long long t0 = 0;
    for (int it = -64; it < iters; it++) {
        if (it == 0)
            t0 = clock64();
        x = ctab[(x & zero) + off_of(mode, g, (unsigned)it, words)];
    }
    unsigned long long t1 = clock64();
    if (lane == 0)
        cycles[0] = t1 - t0;
    if (x == 0xdeadbeef)
        sink[0] = x;
}


/* one warp, every lane the same address: a chain cycling through n words
 * `stride` words apart (the IDC's line, capacity and sets) */
__global__ void geom_k(unsigned stride, unsigned n, int iters, unsigned zero,
                       unsigned long long *cycles, unsigned *sink)
{
    unsigned x = 0, i = 0;
    unsigned long long t0 = 0;
    for (int it = -2 * (int)n - 64; it < iters; it++) {
        if (it == 0)
            t0 = clock64();
        x = ctab[(x & zero) + i * stride];
        i = i + 1 == n ? 0 : i + 1;
    }
    unsigned long long t1 = clock64();
    if (threadIdx.x == 0)
        cycles[0] = t1 - t0;
    if (x == 0xdeadbeef)
        sink[0] = x;
}

/* W warps, each lane 4 independent chains over a 1 KB window, k distinct
 * addresses a request */
__global__ void tput_k(unsigned k, int iters, unsigned zero, unsigned *sink)
{
    unsigned lane = threadIdx.x & 31, g = lane % k, x0 = 0, x1 = 1, x2 = 2, x3 = 3;
    for (int it = 0; it < iters; it++) {
        unsigned h = mix((unsigned)it * 0x9e3779b1u + (threadIdx.x >> 5) * 0x51ed27u);
        unsigned o = (h + g * 8u) % 256u;
        x0 = ctab[(x0 & zero) + o];
        x1 = ctab[(x1 & zero) + ((o + 1) & 255u)];
        x2 = ctab[(x2 & zero) + ((o + 2) & 255u)];
        x3 = ctab[(x3 & zero) + ((o + 3) & 255u)];
    }
    unsigned x = x0 ^ x1 ^ x2 ^ x3;
    if (x == 0xdeadbeef)
        sink[0] = x;
}

/* every lane 4 independent chains, each request k distinct words at random
 * in a window of `words` words (lane % k picks the word) */
__global__ void tputw_k(unsigned k, unsigned words, int iters, unsigned zero, unsigned *sink)
{
    unsigned lane = threadIdx.x & 31, g = lane % k, x0 = 0, x1 = 1, x2 = 2, x3 = 3;
    unsigned w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    for (int it = 0; it < iters; it++) {
        unsigned h = mix((unsigned)it * 0x9e3779b1u + w * 0x51ed27u);
        x0 = ctab[(x0 & zero) + mix(h ^ (g * 0x85ebca77u)) % words];
        x1 = ctab[(x1 & zero) + mix(h ^ (g * 0x85ebca77u) ^ 0x1u) % words];
        x2 = ctab[(x2 & zero) + mix(h ^ (g * 0x85ebca77u) ^ 0x2u) % words];
        x3 = ctab[(x3 & zero) + mix(h ^ (g * 0x85ebca77u) ^ 0x3u) % words];
    }
    unsigned x = x0 ^ x1 ^ x2 ^ x3;
    if (x == 0xdeadbeef)
        sink[0] = x;
}

/* mc_triangles with the table in global memory (the same body) */
extern "C" __global__ void mc_triangles_g(const mc_table *__restrict__ g,
                                          const unsigned char *cube, const float *frac,
                                          float *area, float *normal_len, int *ntri, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int cs = cube[i], nt = g->ntri[cs];
    float a = 0.f, sx = 0.f, sy = 0.f, sz = 0.f;
    for (int k = 0; k < nt; k++) {
        float p[3][3];
        for (int v = 0; v < 3; v++) {
            int e = g->tri[cs][3 * k + v];
            int c0 = mc_edge_corner(e, 0), c1 = mc_edge_corner(e, 1);
            float s = frac[12 * i + e];
            for (int ax = 0; ax < 3; ax++)
                p[v][ax] = corner_coord(c0, ax) + s * (corner_coord(c1, ax) - corner_coord(c0, ax));
        }
        float ux = p[1][0] - p[0][0], uy = p[1][1] - p[0][1], uz = p[1][2] - p[0][2];
        float vx = p[2][0] - p[0][0], vy = p[2][1] - p[0][1], vz = p[2][2] - p[0][2];
        float nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
        a += 0.5f * sqrtf(nx * nx + ny * ny + nz * nz);
        sx += nx, sy += ny, sz += nz;
    }
    area[i] = a;
    normal_len[i] = sqrtf(sx * sx + sy * sy + sz * sz);
    ntri[i] = nt;
}

static unsigned long long st = 7;
static unsigned rnd() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)(st >> 33); }

/* a zeroed table (x & zero keeps a chain; the value read is not an address)
 * and the chain kernels' cycle and sink words */
static void chain_setup(unsigned long long **cyc, unsigned **sink)
{
    std::vector<unsigned> h(14336, 0);
    CK(cudaMemcpyToSymbol(ctab, h.data(), sizeof(unsigned) * 14336));
    CK(cudaMalloc(cyc, 8));
    CK(cudaMalloc(sink, 4));
}

static void part_lanes()
{
    unsigned long long *cyc;
    unsigned *sink;
    chain_setup(&cyc, &sink);
    const int iters = 4096;
    auto run = [&](int mode, unsigned k, unsigned words) {
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            lanes_k<<<1, 32>>>(mode, k, words, iters, 0u, cyc, sink);
            CK(cudaDeviceSynchronize());
            unsigned long long c;
            CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
            best = std::min(best, (double)c / iters);
        }
        return best;
    };
    printf("# lanes: one warp, cycles a request (dependent chain, 4096 requests, min of 5)\n");
    printf("%4s %12s %12s %14s\n", "k", "one_line", "k_lines", "random_in_4KB");
    for (unsigned k : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u, 20u, 24u, 28u, 32u})
        printf("%4u %12.1f %12.1f %14.1f\n", k, run(0, k, 0), run(1, k, 0), run(2, k, 1024));
    printf("# window: k words at random in S bytes (the whole of S walked over the requests)\n");
    printf("%8s %10s %10s %10s\n", "S_bytes", "k=1", "k=8", "k=32");
    for (unsigned s : {128u, 256u, 512u, 1024u, 2048u, 3072u, 4096u, 6144u, 8192u, 16384u,
                       32768u, 49152u})
        printf("%8u %10.1f %10.1f %10.1f\n", s, run(2, 1, s / 4), run(2, 8, s / 4),
               run(2, 32, s / 4));
    CK(cudaFree(cyc));
    CK(cudaFree(sink));
}


static void part_geom()
{
    unsigned long long *cyc;
    unsigned *sink;
    chain_setup(&cyc, &sink);
    const int iters = 8192;
    printf("# geom: one warp, all lanes one address, a chain cycling through N words S bytes apart; "
           "cycles an access (8192, min of 3)\n");
    const unsigned ns[] = {1, 2, 4, 8, 12, 16, 20, 24, 28, 30, 32, 33, 34, 36, 40, 48, 56, 64, 96, 128};
    printf("%6s", "S\\N");
    for (unsigned n : ns)
        printf(" %6u", n);
    printf("\n");
    for (unsigned sb : {4u, 16u, 32u, 64u, 128u, 256u, 512u, 1024u, 2048u, 4096u}) {
        printf("%6u", sb);
        for (unsigned n : ns) {
            if ((unsigned long long)n * sb > 14336ull * 4) {
                printf(" %6s", "-");
                continue;
            }
            double best = 1e30;
            for (int r = 0; r < 3; r++) {
                geom_k<<<1, 32>>>(sb / 4, n, iters, 0u, cyc, sink);
                CK(cudaDeviceSynchronize());
                unsigned long long c;
                CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
                best = std::min(best, (double)c / iters);
            }
            printf(" %6.1f", best);
        }
        printf("\n");
    }
    CK(cudaFree(cyc));
    CK(cudaFree(sink));
}

/* the throughput parts' sink, events, SM clock and SM count */
#define TPUT_SETUP()                                                                  \
    unsigned *sink;                                                                   \
    CK(cudaMalloc(&sink, 4));                                                         \
    cudaEvent_t a, b;                                                                 \
    CK(cudaEventCreate(&a));                                                          \
    CK(cudaEventCreate(&b));                                                          \
    int clock_khz = 0, nsm = 0;                                                       \
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));                  \
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0))

static void part_tput()
{
    TPUT_SETUP();
    const int iters = 2048;
    printf("# tput: %d blocks of W warps, each lane 4 independent chains; SM cycles (at %d kHz) "
           "per warp request and per distinct address of the SM\n", nsm, clock_khz);
    printf("%4s %4s %12s %14s %14s\n", "W", "k", "ms", "cyc/request", "cyc/address");
    for (unsigned k : {1u, 8u, 32u})
        for (int W : {1, 2, 4, 8, 16, 32}) {
            float best = 1e30f;
            for (int r = 0; r < 5; r++) {
                CK(cudaEventRecord(a));
                tput_k<<<nsm, 32 * W>>>(k, iters, 0u, sink);
                CK(cudaEventRecord(b));
                CK(cudaEventSynchronize(b));
                float ms;
                CK(cudaEventElapsedTime(&ms, a, b));
                best = std::min(best, ms);
            }
            double cyc = best * clock_khz, req = 4.0 * iters * W;
            printf("%4d %4u %12.4f %14.2f %14.2f\n", W, k, best, cyc / req, cyc / (req * k));
        }
    CK(cudaFree(sink));
}

static void part_tputw()
{
    TPUT_SETUP();
    const int iters = 512, per_sm = 8, threads = 256;
    printf("# tputw: %d blocks of %d threads (%d an SM), each lane 4 independent chains, k distinct words "
           "at random in S bytes a request; median of 7; SM cycles (at %d kHz) per distinct address\n",
           nsm * per_sm, threads, per_sm, clock_khz);
    printf("%4s %8s %12s %14s\n", "k", "S_bytes", "ms", "cyc/address");
    tputw_k<<<nsm * per_sm, threads>>>(32, 1024, iters, 0u, sink); /* warm up */
    CK(cudaDeviceSynchronize());
    for (unsigned k : {8u, 32u})
        for (unsigned S : {512u, 1024u, 1536u, 2048u, 2560u, 3072u, 3584u, 4096u, 6144u, 8192u,
                           16384u, 49152u}) {
            std::vector<float> v;
            for (int r = 0; r < 7; r++) {
                CK(cudaEventRecord(a));
                tputw_k<<<nsm * per_sm, threads>>>(k, S / 4, iters, 0u, sink);
                CK(cudaEventRecord(b));
                CK(cudaEventSynchronize(b));
                float ms;
                CK(cudaEventElapsedTime(&ms, a, b));
                v.push_back(ms);
            }
            std::sort(v.begin(), v.end());
            double cyc = v[3] * clock_khz, addr = 4.0 * iters * per_sm * (threads / 32) * k;
            printf("%4u %8u %12.4f %14.2f\n", k, S, v[3], cyc / addr);
        }
    CK(cudaFree(sink));
}

/* ------------------------------------------------------------------ mc */

static const int N = 1 << 20, BS = 256;
#define PRED_MODEL "benchmarks/results/bench-noise/with/marching_cubes/model.txt" /* from the repository root */

struct mc_data {
    std::vector<unsigned char> cube;
    std::vector<float> frac;
};

static std::vector<int> host_ntri()
{
    mc_table t = mc_build();
    return std::vector<int>(t.ntri, t.ntri + 256);
}

/* host: replays per warp (sum over constant requests of distinct byte
 * addresses - 1) and distinct rows an SM's 8 resident blocks read */
static void order_stats(const std::vector<int> &ord, const mc_data &d, const std::vector<int> &nt,
                        double *replays, double *rows_sm, double *cases_warp)
{
    double r = 0, cw = 0;
    for (int w = 0; w < N / 32; w++) {
        std::set<int> all;
        for (int l = 0; l < 32; l++)
            all.insert(d.cube[ord[w * 32 + l]]);
        r += (double)all.size() - 1, cw += (double)all.size();
        for (int k = 0; k < 5; k++)
            for (int v = 0; v < 3; v++) {
                std::set<int> s;
                for (int l = 0; l < 32; l++) {
                    int c = d.cube[ord[w * 32 + l]];
                    if (nt[c] > k)
                        s.insert(c);
                }
                if (!s.empty())
                    r += (double)s.size() - 1;
            }
    }
    int nblk = N / BS, nsm = 132;
    double rows = 0, cnt = 0;
    for (int b0 = 0; b0 + 7 * nsm < nblk; b0 += 37) {
        std::set<int> s;
        for (int j = 0; j < 8; j++)
            for (int t = 0; t < BS; t++)
                s.insert(d.cube[ord[(b0 + j * nsm) * BS + t]]);
        rows += (double)s.size(), cnt++;
    }
    *replays = r / (N / 32), *rows_sm = rows / cnt, *cases_warp = cw / (N / 32);
}

static std::vector<std::pair<std::string, std::vector<int>>> mc_orders(mc_data &d, bool once)
{
    d.cube.resize(N), d.frac.resize((size_t)12 * N);
    for (int i = 0; i < N; i++)
        d.cube[i] = (unsigned char)(1 + rnd() % 254);
    for (size_t i = 0; i < d.frac.size(); i++)
        d.frac[i] = 0.05f + 0.9f * (float)((rnd() + 0.5) / 2147483648.0);
    std::vector<int> nt = host_ntri();
    std::vector<std::pair<std::string, std::vector<int>>> orders;
    std::vector<int> id(N);
    std::iota(id.begin(), id.end(), 0);
    orders.push_back({"identity", id});
    std::vector<int> o = id;
    std::stable_sort(o.begin(), o.end(), [&](int a, int b) { return nt[d.cube[a]] > nt[d.cube[b]]; });
    orders.push_back({"by_ntri", o});
    std::vector<int> s = o;
    for (int w = 0; w < N / 32; w++)
        std::stable_sort(s.begin() + 32 * w, s.begin() + 32 * w + 32,
                         [&](int a, int b) { return d.cube[a] < d.cube[b]; });
    orders.push_back({"by_ntri_warp_case", s});
    o = id;
    std::stable_sort(o.begin(), o.end(), [&](int a, int b) { return d.cube[a] < d.cube[b]; });
    orders.push_back({"by_case", o});
    /* warps of m cases: m warps of the by-case order, W / m apart (other cases),
     * dealt into m warps, lane l from the (l % m)-th of them */
    for (int m : {2, 4, 16, 32}) {
        std::vector<int> q(N);
        int W = N / 32, gap = W / m;
        for (int g = 0; g < gap; g++)
            for (int j = 0; j < m; j++)
                for (int l = 0; l < 32; l++) {
                    int src_w = g + (l % m) * gap, src_l = (l / m) + 32 / m * j;
                    q[(g * m + j) * 32 + l] = o[src_w * 32 + src_l];
                }
        orders.push_back({"cases_per_warp_" + std::to_string(m), q});
    }
    /* the order `threadmap bench` sorts predicted BBVs into (its Sorting:
     * ascending rows, stable), with the predictor of results/bench-noise
     * (rows from its coefficients, rounded, as tmap_predict); and the same
     * order with its thread blocks shuffled: each warp keeps its cases, but
     * an SM's resident blocks come from every class */
    if (FILE *mf = fopen(PRED_MODEL, "r")) {
        std::vector<std::vector<double>> coef;
        char line[4096];
        while (fgets(line, sizeof line, mf)) {
            int blk;
            double c0, c1, c2;
            if (sscanf(line, "coef %d %lf %lf %lf", &blk, &c0, &c1, &c2) == 4)
                coef.push_back({c0, c1, c2});
        }
        fclose(mf);
        size_t nb = coef.size();
        std::vector<unsigned> row((size_t)N * nb);
        for (int i = 0; i < N; i++)
            for (size_t k = 0; k < nb; k++) {
                double v = floor(coef[k][0] + coef[k][1] * d.cube[i] + coef[k][2] * i + 0.5);
                row[(size_t)i * nb + k] = v > 0 ? (unsigned)v : 0;
            }
        std::vector<int> pr = id;
        std::stable_sort(pr.begin(), pr.end(), [&](int a, int b) {
            return std::lexicographical_compare(&row[(size_t)a * nb], &row[(size_t)a * nb + nb],
                                                &row[(size_t)b * nb], &row[(size_t)b * nb + nb]);
        });
        std::set<std::vector<unsigned>> distinct;
        for (int i = 0; i < N; i += 97)
            distinct.insert(std::vector<unsigned>(&row[(size_t)i * nb], &row[(size_t)i * nb + nb]));
        if (!once)
            printf("# predicted rows (%s): %zu blocks, %zu distinct rows in a sample of every 97th thread\n",
                   PRED_MODEL, nb, distinct.size());
        orders.push_back({"pred_rows", pr});
        std::vector<int> blk(N / BS), sh(N);
        std::iota(blk.begin(), blk.end(), 0);
        for (int i = N / BS - 1; i > 0; i--)
            std::swap(blk[i], blk[rnd() % (i + 1)]);
        for (int j = 0; j < N / BS; j++)
            std::copy(pr.begin() + blk[j] * BS, pr.begin() + blk[j] * BS + BS, sh.begin() + j * BS);
        orders.push_back({"pred_rows_shuffled", sh});
    }
    return orders;
}

static void part_mc(bool once)
{
    mc_data d;
    auto orders = mc_orders(d, once);
    std::vector<int> nt = host_ntri();
    unsigned char *dcube;
    float *dfrac, *area, *nl;
    int *ntri;
    mc_table *gt;
    CK(cudaMalloc(&dcube, N));
    CK(cudaMalloc(&dfrac, sizeof(float) * 12 * N));
    CK(cudaMalloc(&area, 4 * N));
    CK(cudaMalloc(&nl, 4 * N));
    CK(cudaMalloc(&ntri, 4 * N));
    CK(cudaMalloc(&gt, sizeof(mc_table)));
    mc_table ht = mc_build();
    CK(cudaMemcpy(gt, &ht, sizeof ht, cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    if (!once) {
        int clock_khz = 0;
        CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
        printf("# mc: marching_cubes' kernel, %d threads, blocks of %d, median of 20 launches "
               "(ms); replays/warp = sum over its constant requests of distinct addresses - 1; "
               "cases/warp; rows/SM = distinct cases of 8 resident blocks\n", N, BS);
        printf("%-20s %10s %10s %12s %10s %10s\n", "order", "const_ms", "global_ms",
               "replays/warp", "cases/warp", "rows/SM");
    }
    for (auto &ord : orders) {
        std::vector<unsigned char> c(N);
        std::vector<float> f((size_t)12 * N);
        for (int i = 0; i < N; i++) {
            c[i] = d.cube[ord.second[i]];
            memcpy(&f[(size_t)12 * i], &d.frac[(size_t)12 * ord.second[i]], 48);
        }
        CK(cudaMemcpy(dcube, c.data(), N, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dfrac, f.data(), sizeof(float) * 12 * N, cudaMemcpyHostToDevice));
        if (once) {
            mc_triangles<<<N / BS, BS>>>(dcube, dfrac, area, nl, ntri, N);
            CK(cudaDeviceSynchronize());
            continue;
        }
        double med[2];
        for (int g = 0; g < 2; g++) {
            std::vector<float> t;
            for (int r = 0; r < 23; r++) {
                CK(cudaEventRecord(a));
                if (g)
                    mc_triangles_g<<<N / BS, BS>>>(gt, dcube, dfrac, area, nl, ntri, N);
                else
                    mc_triangles<<<N / BS, BS>>>(dcube, dfrac, area, nl, ntri, N);
                CK(cudaEventRecord(b));
                CK(cudaEventSynchronize(b));
                float ms;
                CK(cudaEventElapsedTime(&ms, a, b));
                if (r >= 3)
                    t.push_back(ms);
            }
            std::sort(t.begin(), t.end());
            med[g] = (t[9] + t[10]) / 2;
        }
        double rep, rows, cw;
        order_stats(ord.second, d, nt, &rep, &rows, &cw);
        printf("%-20s %10.4f %10.4f %12.1f %10.1f %10.1f\n", ord.first.c_str(), med[0], med[1],
               rep, cw, rows);
    }
    CK(cudaFree(dcube)); CK(cudaFree(dfrac)); CK(cudaFree(area)); CK(cudaFree(nl));
    CK(cudaFree(ntri)); CK(cudaFree(gt));
}


/* ------------------------------------------------------------------ sim */
/* the IDC simulated on the host: per SM (blocks s, s + 132, ... in waves of
 * `res` resident blocks), the resident warps' constant requests interleaved
 * one request a warp in turn; a request's distinct byte addresses served in
 * the order of their first lane; a cache of `cap` bytes, lines of `line`
 * bytes, `ways`-way set-associative (ways = 0: fully), LRU.  Counts the lines
 * fetched (ncu's idc__requests_lookup_miss_tag_miss) and the addresses. */
struct idc_cache {
    int line, sets, ways;
    std::vector<long> tag, age;
    long clock = 0;
    bool lru = getenv("IDC_RANDOM") == nullptr;
    idc_cache(int cap, int line_, int ways_) : line(line_)
    {
        int lines = cap / line_;
        ways = ways_ ? ways_ : lines, sets = lines / ways;
        tag.assign((size_t)lines, -1), age.assign((size_t)lines, 0);
    }
    bool touch(long addr) /* true on a miss */
    {
        long l = addr / line;
        size_t s0 = (size_t)(l % sets) * ways, victim = s0;
        for (size_t j = s0; j < s0 + ways; j++) {
            if (tag[j] == l) { age[j] = lru ? ++clock : age[j]; return false; }
            if (age[j] < age[victim]) victim = j;
        }
        if (!lru) /* random replacement (age: when filled, unused) */
            victim = s0 + (size_t)(rnd() % (unsigned)ways);
        tag[victim] = l, age[victim] = ++clock;
        return true;
    }
};

/* warp w's requests under order ord: lists of byte addresses (first lane first) */
static void mc_warp_requests(const std::vector<int> &ord, const mc_data &d, const std::vector<int> &nt,
                             int w, std::vector<std::vector<int>> &req)
{
    req.clear();
    int cs[32], mx = 0;
    for (int l = 0; l < 32; l++)
        cs[l] = d.cube[ord[w * 32 + l]], mx = std::max(mx, nt[cs[l]]);
    auto add = [&](int k, int v) {
        std::vector<int> r;
        for (int l = 0; l < 32; l++) {
            if (k >= 0 && nt[cs[l]] <= k)
                continue;
            int a = k < 0 ? 256 * 3 * MC_MAXT + cs[l] : cs[l] * 3 * MC_MAXT + 3 * k + v;
            if (std::find(r.begin(), r.end(), a) == r.end())
                r.push_back(a);
        }
        req.push_back(r);
    };
    add(-1, 0);
    for (int k = 0; k < mx; k++)
        for (int v = 0; v < 3; v++)
            add(k, v);
}

static void part_sim(int cap, int line, int ways, int res, int par, int burst)
{
    mc_data d;
    auto orders = mc_orders(d, true);
    std::vector<int> nt = host_ntri();
    int nsm = 132, nblk = N / BS, wpb = BS / 32;
    printf("# sim: IDC %d B, lines of %d B, %d-way (0: fully), LRU; %d resident blocks an SM, %d sub-partitions\n",
           cap, line, ways, res, par);
    printf("%-20s %12s %12s %10s %12s %12s %8s\n", "order", "addresses", "lines", "lines/SM", "runs", "req_lines", "ws_lines");
    for (auto &ord : orders) {
        double addrs = 0, miss = 0, runs = 0, dl = 0, wsum = 0, waves = 0;
        std::vector<std::vector<std::vector<int>>> wr;
        for (int s = 0; s < nsm; s++) {
            idc_cache c(cap, line, ways);
            std::vector<int> blks;
            for (int b = s; b < nblk; b += nsm)
                blks.push_back(b);
            for (size_t w0 = 0; w0 < blks.size(); w0 += res) {
                wr.clear();
                std::set<int> ws;
                for (size_t j = w0; j < std::min(blks.size(), w0 + res); j++)
                    for (int x = 0; x < wpb; x++) {
                        std::vector<std::vector<int>> r;
                        mc_warp_requests(ord.second, d, nt, blks[j] * wpb + x, r);
                        for (auto &q : r)
                            for (size_t i = 0; i < q.size(); i++) {
                                ws.insert(q[i] / line);
                                runs += i == 0 || q[i] / line != q[i - 1] / line;
                                dl += i == 0 || std::none_of(q.begin(), q.begin() + i, [&](int y) { return y / line == q[i] / line; });
                            }
                        wr.push_back(r);
                    }
                wsum += ws.size(), waves++;
                /* `par` sub-partitions, warp x on x % par; each serves its
                 * warps' requests in turn (one request a warp); the IDC
                 * takes one address of each sub-partition's request in turn */
                std::vector<std::vector<size_t>> sp(par);
                for (size_t x = 0; x < wr.size(); x++)
                    sp[x % par].push_back(x);
                /* a warp issues `burst` requests in a row (its own next ones) before its
                 * sub-partition turns to the next warp; qd[x]: warp x's next request */
                std::vector<size_t> cur(par, 0), pos(par, 0), done(par, 0), qd(wr.size(), 0);
                std::vector<int> nb(par, 0);
                for (;;) {
                    bool any = false;
                    for (int p = 0; p < par; p++) {
                        while (done[p] < sp[p].size()) {
                            size_t x = sp[p][cur[p]];
                            auto &r = wr[x];
                            if (qd[x] < r.size() && pos[p] < r[qd[x]].size())
                                break;
                            if (qd[x] < r.size()) { /* request finished */
                                pos[p] = 0, qd[x]++;
                                if (qd[x] == r.size())
                                    done[p]++;
                                if (++nb[p] < burst && qd[x] < r.size())
                                    continue;
                            }
                            nb[p] = 0;
                            cur[p] = (cur[p] + 1) % sp[p].size();
                        }
                        if (done[p] >= sp[p].size())
                            continue;
                        any = true;
                        size_t x = sp[p][cur[p]];
                        int a = wr[x][qd[x]][pos[p]++];
                        addrs++, miss += c.touch(a);
                    }
                    if (!any)
                        break;
                }
            }
        }
        printf("%-20s %12.0f %12.0f %10.0f %12.0f %12.0f %8.1f\n", ord.first.c_str(), addrs, miss, miss / nsm, runs, dl, wsum / waves);
    }
}

/* ------------------------------------------------------------------ des */
/* the IDC in time: one SM's 8 resident blocks (a finished block's slot takes
 * the SM's next block: s, s + 132, ...), warp x of a slot on sub-partition
 * x % 4; each sub-partition serves one warp's request at a time, its warps in
 * turn; the IDC looks up one address every `look` cycles, taking the sub-
 * partitions in turn, skipping a blocked one.  A lookup: a ready line hits;
 * a line on its way blocks the request until it arrives (lookup miss); an
 * absent line takes the set's least recently used way not on its way and
 * arrives `fill` cycles later (a line fetched), or, all 4 ways on their way,
 * blocks the request until the first arrives (tag unavailable); a blocked
 * address is looked up again.  2 KB, 64-byte lines, 8 sets of 4 ways (part
 * geom).  Returns the SM's cycles. */
struct des_counts { double cycles, fills, unavail, lookups; };

static des_counts des_sm(const std::vector<int> &ord, const mc_data &d, const std::vector<int> &nt,
                         int s, int look, int fill, int gap)
{
    const bool nonblock = getenv("DES_NONBLOCK") != nullptr;
    const int nsm = 132, nblk = N / BS, wpb = BS / 32, slots = 8, sets = 8, ways = 4;
    struct way { long line = -1; double ready = 0, used = 0; };
    std::vector<way> cache((size_t)sets * ways);
    struct warp { std::vector<std::vector<int>> req; size_t q = 0, pos = 0; double avail = 0, done = 0; };
    std::vector<warp> w((size_t)slots * wpb);
    std::vector<int> slot_blk(slots, -1), left(slots, 0);
    int next_blk = s;
    auto start = [&](int sl, double t) {
        slot_blk[sl] = next_blk < nblk ? next_blk : -1;
        left[sl] = 0;
        for (int x = 0; x < wpb; x++) {
            warp &v = w[(size_t)sl * wpb + x];
            v.req.clear(), v.q = v.pos = 0, v.avail = t;
            if (slot_blk[sl] >= 0)
                mc_warp_requests(ord, d, nt, slot_blk[sl] * wpb + x, v.req), left[sl]++;
        }
        next_blk += nsm;
    };
    for (int sl = 0; sl < slots; sl++)
        start(sl, 0);
    const int par = 4;
    std::vector<int> cur(par, -1), rr(par, 0);
    std::vector<double> blocked(par, 0);
    des_counts c = {0, 0, 0, 0};
    double t = 0;
    int turn = 0;
    auto pick = [&](int p) { /* the sub-partition's next warp with a request, in turn */
        int n = slots * wpb / par;
        for (int i = 0; i < n; i++) {
            int k = (rr[p] + i) % n, x = k * par + p;
            if (w[x].q < w[x].req.size()) {
                rr[p] = (k + 1) % n;
                return x;
            }
        }
        return -1;
    };
    for (;;) {
        int p = -1;
        double soonest = 1e300;
        for (int i = 0; i < par; i++) {
            int q = (turn + i) % par;
            if (cur[q] < 0)
                cur[q] = pick(q);
            if (cur[q] < 0)
                continue;
            double ok = std::max(blocked[q], w[cur[q]].avail);
            if (ok <= t) { p = q; break; }
            soonest = std::min(soonest, ok);
        }
        if (p < 0) {
            if (soonest == 1e300)
                break;
            t = soonest;
            continue;
        }
        turn = (p + 1) % par;
        warp &v = w[cur[p]];
        int a = v.req[v.q][v.pos];
        long line = a / 64;
        way *set = &cache[(size_t)(line % sets) * ways];
        c.lookups++;
        way *hit = nullptr, *victim = nullptr;
        double first = 1e300;
        for (int j = 0; j < ways; j++) {
            if (set[j].line == line)
                hit = &set[j];
            else if (set[j].ready <= t && (!victim || set[j].used < victim->used))
                victim = &set[j];
            if (set[j].ready > t)
                first = std::min(first, set[j].ready);
        }
        t += look;
        auto advance = [&]() { /* the next address, or the request done */
            if (++v.pos < v.req[v.q].size())
                return;
            double end = std::max(t, v.done);
            v.pos = 0, v.q++, v.avail = end + gap, v.done = 0;
            if (v.q == v.req.size()) {
                int sl = cur[p] / wpb;
                if (--left[sl] == 0)
                    start(sl, end);
            }
            cur[p] = -1;
        };
        if (hit && hit->ready <= t - look) {
            hit->used = t;
            advance();
        } else if (hit && nonblock) { /* wait for it at the request's end */
            v.done = std::max(v.done, hit->ready);
            advance();
        } else if (hit) {
            blocked[p] = hit->ready;
        } else if (victim && nonblock) {
            victim->line = line, victim->ready = t + fill, victim->used = t, c.fills++;
            v.done = std::max(v.done, victim->ready);
            advance();
        } else if (victim) {
            victim->line = line, victim->ready = t + fill, victim->used = t;
            blocked[p] = victim->ready, c.fills++;
        } else {
            blocked[p] = first, c.unavail++;
        }
    }
    c.cycles = t;
    return c;
}

static void part_des(int look, int fill, int gap, int every)
{
    mc_data d;
    auto orders = mc_orders(d, true);
    std::vector<int> nt = host_ntri();
    printf("# des: lookup %d cycles, fill %d cycles, %d cycles between a warp's requests; SMs 0, %d, ...; "
           "lines fetched and tag unavailable scaled to 132 SMs\n", look, fill, gap, every);
    printf("%-20s %12s %12s %12s %12s\n", "order", "lookups", "lines", "unavail", "sm_cycles");
    for (auto &ord : orders) {
        des_counts sum = {0, 0, 0, 0};
        int n = 0;
        for (int s = 0; s < 132; s += every, n++) {
            des_counts c = des_sm(ord.second, d, nt, s, look, fill, gap);
            sum.cycles = std::max(sum.cycles, c.cycles);
            sum.fills += c.fills, sum.unavail += c.unavail, sum.lookups += c.lookups;
        }
        double k = 132.0 / n;
        printf("%-20s %12.0f %12.0f %12.0f %12.0f\n", ord.first.c_str(), sum.lookups * k, sum.fills * k,
               sum.unavail * k, sum.cycles);
    }
}

int main(int argc, char **argv)
{
    std::string what = argc > 1 ? argv[1] : "all";
    if (what == "des") {
        part_des(argc > 2 ? atoi(argv[2]) : 2, argc > 3 ? atoi(argv[3]) : 70,
                 argc > 4 ? atoi(argv[4]) : 0, argc > 5 ? atoi(argv[5]) : 11);
        return 0;
    }
    if (what == "sim") {
        part_sim(argc > 2 ? atoi(argv[2]) : 2048, argc > 3 ? atoi(argv[3]) : 64,
                 argc > 4 ? atoi(argv[4]) : 0, argc > 5 ? atoi(argv[5]) : 8, argc > 6 ? atoi(argv[6]) : 4,
                 argc > 7 ? atoi(argv[7]) : 1);
        return 0;
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("# %s, %d SMs\n", p.name, p.multiProcessorCount);
    if (what == "lanes" || what == "all")
        part_lanes();
    if (what == "geom" || what == "all")
        part_geom();
    if (what == "tput" || what == "all")
        part_tput();
    if (what == "tputw" || what == "all")
        part_tputw();
    if (what == "mc" || what == "all")
        part_mc(false);
    if (what == "once")
        part_mc(true);
    return 0;
}

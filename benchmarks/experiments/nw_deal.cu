// nw_deal.cu -- an experiment, not built by CMake: what separates the nw
// kernel's (benchmarks/suite/needleman_wunsch.cu) bin-and-deal, a gain, from
// its sorting, a loss (issue 16).  Three parts:
//   suite   nw_embl's inputs (data/out of benchmarks/suite/data/prepare.sh)
//           and a synthetic input meant to be like nw_synthetic.json's (a
//           power law over [16, 512) with alpha 2.2); as run, urand() / 2
//           draws u in (0, 0.5) only, so its lengths are 16..28 and it is NOT
//           the suite's shape (benchmarks/results/nw-deal.txt reads only the
//           nw_embl rows), each under identity, sorting (cells =
//           alen * blen, heaviest first, ties by index) and bin-and-deal
//           (regroup/deal.c: the sorted order cut into warps, dealt round
//           robin to the thread blocks, each warp's threads in index order),
//           by the layout transform.  Per candidate: the median time (CUDA
//           events), the same under the L1 carveout at its largest and its
//           smallest (local-memory capacity), and a timed copy of the kernel
//           (globaltimer at each warp's start and end, its SM) that gives
//           the busiest SM, its warps, their inner-loop iterations (the sum
//           over outer rows of the longest active b) and lane-iterations.
//   probe   one thread block alone (and one on every SM) of W warps with A
//           active lanes each, every active lane la = lb = 256 with its own
//           b sequence (lanes' reads 256 bytes apart: a line each) or all
//           lanes on one sequence (one line a request): cycles per inner
//           iteration, and per wavefront.
//   once    each candidate launched once (for ncu: launches 1-3 embl, 4-6
//           synthetic, in the order identity, sorting, bin-and-deal).
//   nvcc -O3 -arch=sm_90 -o nw_deal benchmarks/experiments/nw_deal.cu
//   ./nw_deal DATA_OUT_DIR [suite|probe|once]   (DATA_OUT_DIR "-": no nw_embl)
// The synthetic input draws the suite's law since 2026-11-26 13:30 (before,
// urand() / 2 took u in (0, 0.5) of a differently truncated law: lengths
// 16..28); it is statistically, not element for element, nw_synthetic.json's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>
#include "../suite/needleman_wunsch.cu"
#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

static unsigned long long st = 7;
static unsigned rnd() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)(st >> 33); }
static double urand() { return (rnd() + 0.5) / 4294967296.0 * 2; }

// The suite kernel's body with each warp's start and end (globaltimer) and SM.
__device__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
extern "C" __global__ void nw_timed(const unsigned char *res, const int *astart, const int *alen,
                                    const int *bstart, const int *blen, int *score, int resmask,
                                    int n, unsigned long long *t0, unsigned long long *t1, unsigned *sm)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, w = i / 32;
    unsigned long long s = gtime();
    if ((threadIdx.x & 31) == 0) t0[w] = s, sm[w] = smid();
    if (i < n) {
        int row[NW_BMAX + 1];
        int a0 = astart[i], la = alen[i], b0 = bstart[i];
        int lb = blen[i] < NW_BMAX ? blen[i] : NW_BMAX;
        for (int j = 0; j <= lb; j++) row[j] = -NW_GAP * j;
        for (int r = 1; r <= la; r++) {
            int ca = res[(a0 + r - 1) & resmask];
            int diag = row[0];
            row[0] = -NW_GAP * r;
            for (int j = 1; j <= lb; j++) {
                int up = row[j];
                int v = diag + (ca == res[(b0 + j - 1) & resmask] ? NW_MATCH : NW_MISMATCH);
                v = max(v, max(up, row[j - 1]) - NW_GAP);
                diag = up;
                row[j] = v;
            }
        }
        score[i] = row[lb];
    }
    atomicMax(&t1[w], gtime());
}

struct input {
    const char *name;
    int n, resmask;
    std::vector<int> alen, blen, astart, bstart;
    std::vector<unsigned char> res;
};

static std::vector<int> readi(const std::string &p, size_t n)
{
    std::vector<int> v(n);
    FILE *f = fopen(p.c_str(), "rb");
    if (!f || fread(v.data(), 4, n, f) != n) { printf("%s: cannot read %zu ints\n", p.c_str(), n); exit(1); }
    fclose(f);
    return v;
}

static input embl(const std::string &dir)
{
    input in{"nw_embl", 16384, 4194303};
    in.alen = readi(dir + "/embl_a.len", in.n), in.blen = readi(dir + "/embl_b.len", in.n);
    in.astart = readi(dir + "/embl_a.start", in.n), in.bstart = readi(dir + "/embl_b.start", in.n);
    in.res.resize(4194304);
    FILE *f = fopen((dir + "/embl_a.res").c_str(), "rb");
    if (!f || fread(in.res.data(), 1, in.res.size(), f) != in.res.size()) { printf("embl_a.res?\n"); exit(1); }
    fclose(f);
    return in;
}

// The suite's law (runtime/manifest_data.c): a Pareto law of exponent alpha
// from lo, cut at hi (so hi itself holds the tail), rounded down.
static int powerlaw(double lo, double hi, double alpha)
{
    double u = urand(); // in (0, 1)
    return (int)floor(fmin(lo * pow(1 - u, -1 / (alpha - 1)), hi));
}

static input synthetic()
{
    input in{"nw_synthetic", 131072, 8388607};
    for (int t = 0; t < in.n; t++) in.alen.push_back(powerlaw(16, 512, 2.2)), in.blen.push_back(powerlaw(16, 512, 2.2));
    int sa = 0, sb = 0;
    for (int t = 0; t < in.n; t++) in.astart.push_back(sa), in.bstart.push_back(sb), sa += in.alen[t], sb += in.blen[t];
    for (int k = 0; k < 8388608; k++) in.res.push_back((unsigned char)(rnd() % 4));
    return in;
}

static const char *const cand_name[] = {"identity", "sorting", "bin-and-deal"};

static std::vector<int> perm_of(const input &in, int c, int S)
{
    std::vector<int> id(in.n), p(in.n);
    std::iota(id.begin(), id.end(), 0);
    if (c == 0) return id;
    std::vector<int> s = id;
    std::stable_sort(s.begin(), s.end(), [&](int x, int y) {
        return (long)in.alen[x] * std::min(in.blen[x], NW_BMAX) > (long)in.alen[y] * std::min(in.blen[y], NW_BMAX);
    });
    if (c == 1) return s;
    int nb = in.n / S, ng = in.n / 32;
    for (int g = 0; g < ng; g++) {
        int *dst = &p[(g % nb) * S + (g / nb) * 32];
        std::copy(&s[g * 32], &s[g * 32 + 32], dst);
        std::sort(dst, dst + 32);
    }
    return p;
}

struct dev {
    unsigned char *res; int *al, *bl, *as, *bs, *score;
    unsigned long long *t0, *t1; unsigned *sm;
};

static void upload(const input &in, const std::vector<int> &p, dev &d)
{
    std::vector<int> al(in.n), bl(in.n), as(in.n), bs(in.n);
    for (int i = 0; i < in.n; i++) al[i] = in.alen[p[i]], bl[i] = in.blen[p[i]], as[i] = in.astart[p[i]], bs[i] = in.bstart[p[i]];
    CK(cudaMemcpy(d.al, al.data(), in.n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.bl, bl.data(), in.n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.as, as.data(), in.n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.bs, bs.data(), in.n * 4, cudaMemcpyHostToDevice));
}

static float median_ms(const input &in, dev &d, int S, int reps)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<float> ms(reps);
    for (int r = -2; r < reps; r++) {
        CK(cudaEventRecord(e0));
        nw_score<<<(in.n + S - 1) / S, S>>>(d.res, d.as, d.al, d.bs, d.bl, d.score, in.resmask, in.n);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&ms[r], e0, e1));
    }
    std::sort(ms.begin(), ms.end());
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    return ms[reps / 2];
}

// Inner iterations of warp w (slots 32w..): sum over outer rows r of the longest lb among lanes with la >= r;
// lane-iterations: sum of la * lb.
static void warp_iters(const input &in, const std::vector<int> &p, int w, double *it, double *lanes)
{
    int maxa = 0;
    *lanes = 0;
    for (int k = 0; k < 32; k++) {
        int t = p[w * 32 + k];
        maxa = std::max(maxa, in.alen[t]);
        *lanes += (double)in.alen[t] * std::min(in.blen[t], NW_BMAX);
    }
    *it = 0;
    for (int r = 1; r <= maxa; r++) {
        int m = 0;
        for (int k = 0; k < 32; k++) {
            int t = p[w * 32 + k];
            if (in.alen[t] >= r) m = std::max(m, std::min(in.blen[t], NW_BMAX));
        }
        *it += m;
    }
}

static void suite(const input &in, dev &d, int mhz, int sms)
{
    const int S = 128, nw = in.n / 32;
    CK(cudaMemcpy(d.res, in.res.data(), in.res.size(), cudaMemcpyHostToDevice));
    for (int c = 0; c < 3; c++) {
        std::vector<int> p = perm_of(in, c, S);
        upload(in, p, d);
        float t = median_ms(in, d, S, 7);
        float tl[2];
        const int carve[2] = {0, 100}; // preferred shared-memory share: 0 = the largest L1
        for (int k = 0; k < 2; k++) {
            CK(cudaFuncSetAttribute(nw_score, cudaFuncAttributePreferredSharedMemoryCarveout, carve[k]));
            tl[k] = median_ms(in, d, S, 5);
        }
        CK(cudaFuncSetAttribute(nw_score, cudaFuncAttributePreferredSharedMemoryCarveout, -1));
        CK(cudaMemset(d.t1, 0, nw * 8));
        nw_timed<<<(in.n + S - 1) / S, S>>>(d.res, d.as, d.al, d.bs, d.bl, d.score, in.resmask, in.n, d.t0, d.t1, d.sm);
        CK(cudaDeviceSynchronize());
        std::vector<unsigned long long> t0(nw), t1(nw);
        std::vector<unsigned> sm(nw);
        CK(cudaMemcpy(t0.data(), d.t0, nw * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(t1.data(), d.t1, nw * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(sm.data(), d.sm, nw * 4, cudaMemcpyDeviceToHost));
        unsigned long long g0 = *std::min_element(t0.begin(), t0.end());
        std::vector<double> smend(sms, 0), smlanes(sms, 0), smiters(sms, 0);
        std::vector<int> smwarps(sms, 0);
        double maxit = 0, maxit_lanes = 0, maxdur = 0;
        int crit = 0;
        for (int w = 0; w < nw; w++) {
            double it, ln;
            warp_iters(in, p, w, &it, &ln);
            double end = (t1[w] - g0) * 1e-6;
            smend[sm[w]] = std::max(smend[sm[w]], end);
            smlanes[sm[w]] += ln, smiters[sm[w]] += it, smwarps[sm[w]]++;
            if (it > maxit) maxit = it, maxit_lanes = ln;
            maxdur = std::max(maxdur, (t1[w] - t0[w]) * 1e-6);
        }
        for (int m = 0; m < sms; m++) if (smend[m] > smend[crit]) crit = m;
        double smin = *std::min_element(smend.begin(), smend.end());
        double cyc = t * 1e-3 * mhz * 1e6;
        printf("%-13s %-13s %9.3f %9.3f %9.3f | %8.3f %8.3f %8.3f | %10.0f %6.1f %11.0f %4d %12.0f %12.0f %7.1f %7.2f\n",
               in.name, cand_name[c], t, tl[0], tl[1], smend[crit], smin, maxdur, maxit, maxit_lanes / maxit,
               cyc / maxit, smwarps[crit], smiters[crit], smlanes[crit], cyc / smiters[crit] * smwarps[crit] / 4,
               cyc / smlanes[crit]);
    }
}

// One block of W warps (A active lanes, la = lb = L) alone or on every SM.
static void probe(dev &d, int mhz, int sms)
{
    const int L = 256;
    std::vector<unsigned char> res(1 << 22);
    for (auto &x : res) x = (unsigned char)(rnd() % 4);
    CK(cudaMemcpy(d.res, res.data(), res.size(), cudaMemcpyHostToDevice));
    printf("%-6s %-6s %-7s %-9s %10s %14s\n", "warps", "lanes", "blocks", "b-reads", "cyc/iter", "cyc/lane-iter");
    for (int copies : {1, sms})
        for (int spread = 1; spread >= 0; spread--)
            for (int W : {1, 2, 4, 8, 16, 32})
                for (int A : {1, 8, 32}) {
                    int n = 32 * W * copies;
                    input in{"probe", n, (1 << 22) - 1};
                    for (int t = 0; t < n; t++) {
                        bool on = t % 32 < A;
                        in.alen.push_back(on ? L : 0), in.blen.push_back(on ? L : 0);
                        in.astart.push_back((int)(rnd() % (1 << 22)));
                        in.bstart.push_back(spread ? t * L : 0);
                    }
                    std::vector<int> id(n);
                    std::iota(id.begin(), id.end(), 0);
                    upload(in, id, d);
                    float t = median_ms(in, d, 32 * W, 7);
                    double cyc = t * 1e-3 * mhz * 1e6 / ((double)L * L);
                    printf("%-6d %-6d %-7d %-9s %10.1f %14.2f\n", W, A, copies, spread ? "own-line" : "one-line",
                           cyc, cyc / (W * A));
                }
}

int main(int argc, char **argv)
{
    if (argc < 3) { printf("usage: nw_deal DATA_OUT_DIR suite|probe|once\n"); return 2; }
    int dev_ = 0, mhz = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, dev_));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_));
    mhz /= 1000;
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, dev_));
    dev d;
    const int NMAX = 131072 * 4;
    CK(cudaMalloc(&d.res, 8388608)); CK(cudaMalloc(&d.al, NMAX * 4)); CK(cudaMalloc(&d.bl, NMAX * 4));
    CK(cudaMalloc(&d.as, NMAX * 4)); CK(cudaMalloc(&d.bs, NMAX * 4)); CK(cudaMalloc(&d.score, NMAX * 4));
    CK(cudaMalloc(&d.t0, NMAX / 32 * 8)); CK(cudaMalloc(&d.t1, NMAX / 32 * 8)); CK(cudaMalloc(&d.sm, NMAX / 32 * 4));
    std::string mode = argv[2];
    printf("# %s, %d SMs, max SM clock %d MHz; mode %s\n", pr.name, sms, mhz, mode.c_str());
    std::vector<input> in;
    if (std::string(argv[1]) != "-") in.push_back(embl(argv[1])); // "-": the synthetic input alone
    in.push_back(synthetic());
    if (mode == "suite") {
        printf("# ms: median (7; 5 under a carveout); L1max/L1min: preferred carveout 0 / 100; from the timed copy:\n"
               "# crit_ms = last warp end on the busiest SM, min_ms = the earliest SM's, warp_ms = the longest warp;\n"
               "# iters = the longest warp's inner iterations, lanes = its lane-iterations / iters, cyc/it = kernel cycles /\n"
               "# iters; on the busiest SM: warps, the sum of its warps' iterations and lane-iterations, cycles per\n"
               "# iteration per sub-partition (kernel cycles / (iterations / 4 x warps...)) and per lane-iteration\n");
        printf("%-13s %-13s %9s %9s %9s | %8s %8s %8s | %10s %6s %11s %4s %12s %12s %7s %7s\n", "kernel", "candidate",
               "ms", "L1max", "L1min", "crit_ms", "min_ms", "warp_ms", "iters", "lanes", "cyc/it", "warps",
               "sm_iters", "sm_lanes", "cyc/it4", "cyc/li");
        for (auto &x : in) suite(x, d, mhz, sms);
    } else if (mode == "probe") {
        probe(d, mhz, sms);
    } else {
        for (auto &x : in) {
            CK(cudaMemcpy(d.res, x.res.data(), x.res.size(), cudaMemcpyHostToDevice));
            for (int c = 0; c < 3; c++) {
                upload(x, perm_of(x, c, 128), d);
                nw_score<<<x.n / 128, 128>>>(d.res, d.as, d.al, d.bs, d.bl, d.score, x.resmask, x.n);
                CK(cudaDeviceSynchronize());
                printf("%s %s launched\n", x.name, cand_name[c]);
            }
        }
    }
    return 0;
}

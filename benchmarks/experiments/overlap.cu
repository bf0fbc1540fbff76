// overlap.cu -- an experiment, not built by CMake (issue 16, docs/model.md): two
// errors of the SM model, measured on the suite's kernels with data drawn as
// their manifests draw it (the manifests' laws, own RNG, seed 7), under orders
// applied as the layout transform applies them (slot i takes the per-thread
// elements of original thread perm[i]): identity, sorted (work descending),
// key (the manifest's key descending) and bin-and-deal (sorted, cut into
// warps, dealt round-robin to the thread blocks: regroup/deal.c).
//
// 1. sound_localization (benchmarks/suite/sound_localization.cu): how a warp's
//    latency chain and the other warps' issue overlap on a sub-partition.  The
//    kernel runs through a wrapper (the suite's body inlined) that records, for
//    each warp, clock64 at entry and after the body (lane 0, after
//    __syncwarp), %smid and %warpid (the sub-partition is %warpid mod 4).
//    Printed per order: the kernel's time, the slowest warp's span, the
//    busiest sub-partition's summed warp spans; and the heaviest warp alone
//    (32 threads), the heaviest block alone (256 threads).
// 2. error_correct (benchmarks/suite/error_correct.cu): whether the groupings'
//    loss is the lanes' read segments no longer lying side by side.  Each
//    order runs twice: "as transformed" (rstart permuted with the other
//    per-thread arrays, the bases where they were) and "relaid" (the bases
//    copied so that slot i's read starts where slot i-1's ends, as in the
//    original order: the same sequences, adjacent again).
//
//   nvcc -O3 -arch=sm_90 -o overlap benchmarks/experiments/overlap.cu && ./overlap
//   ./overlap ncu      (each order once, for a profiler)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include <cuda_runtime.h>

#pragma push_macro("__global__")
#undef __global__
#define __global__ __device__ __forceinline__
#define sl_srp sl_srp_body
#define ec_correct ec_correct_body
#include "../suite/sound_localization.cu"
#include "../suite/error_correct.cu"
#undef sl_srp
#undef ec_correct
#pragma pop_macro("__global__")

#define CK(x)                                                                         \
    do {                                                                              \
        cudaError_t e_ = (x);                                                         \
        if (e_) {                                                                     \
            printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

extern "C" __global__ void sl_srp(const float *az0, const float *el, const int *nang, const float *spec,
                                  float *bestpow, int *bestang, float step, int n)
{
    sl_srp_body(az0, el, nang, spec, bestpow, bestang, step, n);
}

// 3. stretch: k warps a sub-partition (one block of 128 k threads alone on the GPU,
//    every lane nang 1024, the suite's body), k = 1, 2, 3, 4, 6, 8: cycles an
//    angle; with k = 1 the chain L, the stretch of each further k over it, and
//    alpha = the stretch over the other warps' issue, (k - 1) x the issue of one
//    warp an angle (1768 warp-instruction cycles, ncu above), as the fluid
//    model of docs/model.md ("The time-resolved SM, tried") takes it.
//   ./overlap stretch

// per warp: t0, t1 (clock64), smid, warpid
extern "C" __global__ void sl_timed(const float *az0, const float *el, const int *nang, const float *spec,
                                    float *bestpow, int *bestang, float step, int n, long long *rec)
{
    long long t0 = clock64();
    sl_srp_body(az0, el, nang, spec, bestpow, bestang, step, n);
    __syncwarp();
    long long t1 = clock64();
    unsigned smid, wid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    int g = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if ((threadIdx.x & 31) == 0) {
        rec[4 * g] = t0;
        rec[4 * g + 1] = t1;
        rec[4 * g + 2] = smid;
        rec[4 * g + 3] = wid;
    }
}

extern "C" __global__ void ec_correct(const unsigned char *bases, const int *rstart, const int *rlen,
                                      const unsigned char *spectrum, int *status, unsigned *digest, int bmask,
                                      int threshold, int maxfix, int n)
{
    ec_correct_body(bases, rstart, rlen, spectrum, status, digest, bmask, threshold, maxfix, n);
}

static unsigned long long rs = 7;
static double unit() { rs = rs * 6364136223846793005ULL + 1442695040888963407ULL; return (double)(rs >> 11) * 0x1p-53; }
// runtime/manifest_data.c's laws: integers uniform on [lo, hi]; Pareto cut at hi
static int uniform_int(int lo, int hi) { return std::min(hi, lo + (int)floor(unit() * (hi - lo + 1))); }
static double pareto(double lo, double hi, double alpha)
{
    double v = lo * pow(1.0 - unit(), -1.0 / (alpha - 1.0));
    return v > hi ? hi : v;
}

static int mhz, sms;

template <class F> static double median_ms(F f, int reps)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms(reps);
    for (int r = -2; r < reps; r++) {
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        if (r >= 0) CK(cudaEventElapsedTime(&ms[r], a, b));
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2];
}

// 0 identity, 1 sorted (work descending), 2 key descending, 3 bin-and-deal
static std::vector<int> order_of(const std::vector<long> &work, const std::vector<int> &key, int which, int block)
{
    size_t n = work.size();
    std::vector<int> id(n);
    std::iota(id.begin(), id.end(), 0);
    if (which == 0) return id;
    const std::vector<long> kw(key.begin(), key.end());
    const std::vector<long> &by = which == 2 ? kw : work;
    std::stable_sort(id.begin(), id.end(), [&](int a, int b) { return by[a] > by[b]; });
    if (which != 3) return id;
    size_t nblocks = n / block, ngroups = n / 32;
    std::vector<int> perm(n);
    for (size_t g = 0; g < ngroups; g++) {
        int *dst = &perm[(g % nblocks) * block + (g / nblocks) * 32];
        std::copy(&id[g * 32], &id[g * 32 + 32], dst);
        std::sort(dst, dst + 32);
    }
    return perm;
}
static const char *order_name[] = {"identity", "sorted", "key", "bin-and-deal"};

template <class T> static T *upload(const std::vector<T> &h)
{
    T *d;
    CK(cudaMalloc(&d, h.size() * sizeof(T) + 4));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T> static std::vector<T> permuted(const std::vector<T> &h, const std::vector<int> &p)
{
    std::vector<T> o(p.size());
    for (size_t i = 0; i < p.size(); i++) o[i] = h[p[i]];
    return o;
}

static void sound_localization(bool ncu)
{
    const int N = 131072, B = 256, REPS = 7;
    std::vector<float> az(N), el(N), spec(256);
    std::vector<int> nang(N);
    for (auto &x : az) x = (float)(unit() * 6.2831853);
    for (auto &x : el) x = (float)(-0.5 + unit() * 1.7);
    for (auto &x : nang) x = (int)floor(pareto(8, 1024, 2.0));
    for (auto &x : spec) x = (float)(-1 + unit() * 2);
    std::vector<long> work(nang.begin(), nang.end());
    float *dspec = upload(spec), *dpow;
    int *dang;
    long long *drec;
    CK(cudaMalloc(&dpow, N * 4));
    CK(cudaMalloc(&dang, N * 4));
    CK(cudaMalloc(&drec, N / 32 * 4 * 8));
    if (!ncu)
        printf("# sound_localization: %d threads in blocks of %d, nang max %d, sum %ld\n"
               "# order        threads       ms  warp-max-ms  SM-span-ms  busiest-SMSP-sum-ms  crit-warp-SMSP-others-ms"
               "  crit-nang  SMSP-nang-sum  SMSP-warps\n",
               N, B, *std::max_element(nang.begin(), nang.end()), std::accumulate(work.begin(), work.end(), 0L));
    for (int o : {0, 1, 3, -1, -2}) {
        std::vector<int> p = order_of(work, nang, o < 0 ? 1 : o, B);
        int n = o == -1 ? 32 : o == -2 ? B : N;  // the heaviest warp, the heaviest block alone
        float *daz = upload(permuted(az, p)), *del = upload(permuted(el, p));
        int *dn = upload(permuted(nang, p));
        auto plain = [&] { sl_srp<<<(n + B - 1) / B, std::min(n, B)>>>(daz, del, dn, dspec, dpow, dang, 0.01f, n); };
        if (ncu) {
            if (o >= 0) plain();
            CK(cudaDeviceSynchronize());
        } else {
            double ms = median_ms(plain, REPS);
            sl_timed<<<(n + B - 1) / B, std::min(n, B)>>>(daz, del, dn, dspec, dpow, dang, 0.01f, n, drec);
            CK(cudaDeviceSynchronize());
            int nw = n / 32;
            std::vector<long long> rec(4 * nw);
            CK(cudaMemcpy(rec.data(), drec, rec.size() * 8, cudaMemcpyDeviceToHost));
            // per SM: span; per (SM, SMSP): summed warp spans and the nang sum of its warps' longest lanes
            std::vector<long long> lo(sms, -1), hi(sms, 0), sp(sms * 4, 0), spn(sms * 4, 0), spw(sms * 4, 0);
            long long wmax = 0;
            int crit = 0;
            for (int w = 0; w < nw; w++) {
                long long t0 = rec[4 * w], t1 = rec[4 * w + 1];
                int sm = (int)rec[4 * w + 2], s = sm * 4 + (int)(rec[4 * w + 3] % 4), m = 0;
                for (int j = 0; j < 32; j++) m = std::max(m, nang[p[32 * w + j]]);
                if (lo[sm] < 0 || t0 < lo[sm]) lo[sm] = t0;
                hi[sm] = std::max(hi[sm], t1);
                sp[s] += t1 - t0, spn[s] += m, spw[s]++;
                if (t1 - t0 > wmax) wmax = t1 - t0, crit = w;
            }
            long long span = 0, spmax = 0;
            for (int sm = 0; sm < sms; sm++) span = std::max(span, lo[sm] < 0 ? 0 : hi[sm] - lo[sm]);
            for (long long v : sp) spmax = std::max(spmax, v);
            int cs = (int)rec[4 * crit + 2] * 4 + (int)(rec[4 * crit + 3] % 4), cn = 0;
            for (int j = 0; j < 32; j++) cn = std::max(cn, nang[p[32 * crit + j]]);
            const char *nm = o == -1 ? "heavy-warp" : o == -2 ? "heavy-block" : order_name[o];
            double c2ms = 1.0 / (mhz * 1e3);
            printf("%-13s %8d %8.4f %12.4f %11.4f %20.4f %25.4f %10d %14lld %11lld\n", nm, n, ms, wmax * c2ms,
                   span * c2ms, spmax * c2ms, (sp[cs] - wmax) * c2ms, cn, spn[cs], spw[cs]);
        }
        CK(cudaFree(daz));
        CK(cudaFree(del));
        CK(cudaFree(dn));
    }
}

// the kernel's loop on the CPU: iterations plus alternatives tried
static long ec_work(const std::vector<unsigned char> &bases, const std::vector<unsigned char> &spec, int s0, int l,
                    int bmask, int threshold, int maxfix)
{
    unsigned code = 0;
    long w = 0;
    int fixes = 0;
    for (int p = 0; p < l; p++) {
        unsigned b = bases[(s0 + p) & bmask] & 3u;
        code = ((code << 2) | b) & EC_KMASK;
        w++;
        if (p >= EC_K - 1 && spec[code] < threshold) {
            int fixed = 0;
            for (unsigned a = 1; a < 4 && !fixed; a++) {
                unsigned c2 = (code & ~3u) | ((b + a) & 3u);
                w++;
                if (spec[c2] >= threshold) code = c2, fixed = 1;
            }
            if (!fixed || ++fixes > maxfix) break;
        }
    }
    return w;
}

static void error_correct(bool ncu)
{
    const int N = 524288, B = 256, NB = 16777216, NS = 4194304, REPS = 9, BMASK = NB - 1, TH = 2, MAXFIX = 6;
    std::vector<int> rlen(N), rstart(N);
    std::vector<unsigned char> bases(NB), spec(NS);
    for (auto &x : rlen) x = uniform_int(36, 200);
    for (int i = 1; i < N; i++) rstart[i] = rstart[i - 1] + rlen[i - 1];
    for (auto &x : bases) x = (unsigned char)uniform_int(0, 3);
    for (auto &x : spec) x = (unsigned char)floor(pareto(1, 255, 1.05));
    std::vector<long> work(N);
    long tot = 0;
    for (int i = 0; i < N; i++) tot += work[i] = ec_work(bases, spec, rstart[i], rlen[i], BMASK, TH, MAXFIX);
    unsigned char *dspec = upload(spec), *dbases = upload(bases), *drelaid;
    CK(cudaMalloc(&drelaid, NB));
    int *dst;
    unsigned *ddig;
    CK(cudaMalloc(&dst, N * 4));
    CK(cudaMalloc(&ddig, N * 4));
    if (!ncu)
        printf("# error_correct: %d threads in blocks of %d; work (iterations + alternatives) %ld\n"
               "# order         layout            ms    vs id\n", N, B, tot);
    double base = 0;
    for (int o = 0; o < 4; o++) {
        std::vector<int> p = order_of(work, rlen, o, B);
        std::vector<int> len = permuted(rlen, p), st = permuted(rstart, p), st2(N);
        std::vector<unsigned char> relaid(NB);
        for (int i = 0, at = 0; i < N; i++) {  // slot i's read copied to follow slot i-1's
            st2[i] = at;
            for (int q = 0; q < len[i]; q++) relaid[(at + q) & BMASK] = bases[(st[i] + q) & BMASK];
            at += len[i];
        }
        CK(cudaMemcpy(drelaid, relaid.data(), NB, cudaMemcpyHostToDevice));
        int *dlen = upload(len), *dst1 = upload(st), *dst2 = upload(st2);
        for (int v = 0; v < (o == 0 ? 1 : 2); v++) {
            auto launch = [&] {
                ec_correct<<<N / B, B>>>(v ? drelaid : dbases, v ? dst2 : dst1, dlen, dspec, dst, ddig, BMASK, TH,
                                         MAXFIX, N);
            };
            if (ncu) {
                launch();
                CK(cudaDeviceSynchronize());
                continue;
            }
            double ms = median_ms(launch, REPS);
            if (o == 0) base = ms;
            printf("%-14s %-14s %9.4f %7.1f%%\n", order_name[o], v ? "relaid" : "as transformed", ms,
                   100 * (base - ms) / base);
        }
        CK(cudaFree(dlen));
        CK(cudaFree(dst1));
        CK(cudaFree(dst2));
    }
}

static void stretch()
{
    const int REPS = 7, NANG = 1024;
    const double issue = 1768; /* warp-instruction cycles an angle (ncu, above) */
    std::vector<float> spec(256);
    for (auto &x : spec) x = (float)(-1 + unit() * 2);
    float *dspec = upload(spec), *dpow;
    int *dang;
    CK(cudaMalloc(&dpow, 1024 * 4));
    CK(cudaMalloc(&dang, 1024 * 4));
    printf("# stretch: one block of 128 k threads alone, every lane nang %d; cycles an angle (SM clock %d MHz)\n"
           "#  k  threads        ms  cyc/angle  stretch/angle  alpha=stretch/((k-1) x %.0f)\n", NANG, mhz, issue);
    double base = 0;
    for (int k : {1, 2, 3, 4, 6, 8}) {
        int n = 128 * k;
        std::vector<float> az(n), el(n);
        std::vector<int> nang(n, NANG);
        for (auto &x : az) x = (float)(unit() * 6.2831853);
        for (auto &x : el) x = (float)(-0.5 + unit() * 1.7);
        float *daz = upload(az), *del = upload(el);
        int *dn = upload(nang);
        auto run = [&] { sl_srp<<<1, n>>>(daz, del, dn, dspec, dpow, dang, 0.01f, n); };
        double ms = median_ms(run, REPS), cyc = ms * mhz * 1e3 / NANG;
        if (k == 1)
            base = cyc;
        printf("%4d %8d %9.4f %10.1f %14.1f %10.3f\n", k, n, ms, cyc, cyc - base,
               k > 1 ? (cyc - base) / ((k - 1) * issue) : 0.0);
        CK(cudaFree(daz));
        CK(cudaFree(del));
        CK(cudaFree(dn));
    }
    CK(cudaFree(dpow));
    CK(cudaFree(dang));
}

int main(int argc, char **argv)
{
    bool ncu = argc > 1 && !strcmp(argv[1], "ncu");
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, 0));
    mhz /= 1000;
    sms = pr.multiProcessorCount;
    if (!ncu) printf("# %s, %d SMs, max SM clock %d MHz; medians of launches after 2 warm-ups\n", pr.name, sms, mhz);
    if (argc > 1 && !strcmp(argv[1], "stretch")) {
        stretch();
        return 0;
    }
    sound_localization(ncu);
    error_correct(ncu);
    return 0;
}

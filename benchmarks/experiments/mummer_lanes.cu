// mummer_lanes.cu -- an experiment, not built by CMake: why mummer_match's
// groupings (sorting, key, bin-and-deal) do not pay on an H100 where the SM
// model predicts +16..+26% (issue 16, docs/model.md): the suite kernel
// (benchmarks/suite/mummer_match.cu) on data drawn as its manifest draws it
// (a uniform 16 Mi-base reference, uniform origins, Pareto query lengths
// 32..2048 with alpha 2, uniform error rates 0..0.08, a uniform 4 Mi-entry
// k-mer index), under four orders applied as the layout transform applies
// them (thread i takes the per-thread elements of original thread perm[i]):
// identity, sorted (work descending; work = the thread's loop iterations +
// 11 per k-mer lookup + 1 per candidate base compared, counted by running
// the kernel's loop on the CPU), key (qlen descending) and bin-and-deal
// (sorted, cut into warps, dealt round-robin to the thread blocks:
// regroup/deal.c).  Variants change one thing: the span the reference reads
// fall in (refmask: 16 MiB as the suite; 1 MiB, L2-resident and far smaller
// than the L2's 50 MB; 64 KiB, L1-resident).  lane-iter = the sum over
// threads of their loop iterations; cyc/lane-iter/SM = median time x SM
// clock x SMs / lane-iter: the SM's cost of one thread's iteration.
//   nvcc -O3 -arch=sm_90 -o mummer_lanes benchmarks/experiments/mummer_lanes.cu && ./mummer_lanes [ncu]
// With the argument "ncu" each order runs once with the suite's refmask
// (for a profiler).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "../suite/mummer_match.cu"

#include "lanes_common.cuh"

static unsigned h_hash(unsigned x)
{
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
}
static int h_qbase(const unsigned char *ref, int refmask, int origin, unsigned seed, float err, int i)
{
    int r = ref[(origin + i) & refmask] & 3;
    unsigned h = h_hash(seed ^ (unsigned)i * 0x9e3779b9u);
    if ((float)(h >> 8) * (1.0f / 16777216.0f) < err)
        r = (r + 1 + (int)(h & 1u) + (int)(h >> 1 & 1u)) & 3;
    return r;
}
// the kernel's loop on the CPU: iterations, lookups and candidate bases compared
static void h_work(const unsigned char *ref, const int *index, int refmask, int bucketmask, int o,
                   int l, unsigned sd, float er, long *iters, long *lookups, long *compares)
{
    int pos = o;
    *iters = l, *lookups = 0, *compares = 0;
    for (int i = 0; i < l; i++) {
        int q = h_qbase(ref, refmask, o, sd, er, i);
        if (q == (ref[pos & refmask] & 3)) { pos++; continue; }
        int found = -1;
        if (i + 1 + MUM_K <= l) {
            ++*lookups;
            unsigned code = 0;
            for (int k = 0; k < MUM_K; k++)
                code = code << 2 | (unsigned)h_qbase(ref, refmask, o, sd, er, i + 1 + k);
            int bucket = (int)(h_hash(code) & (unsigned)bucketmask);
            for (int c = 0; c < MUM_B && found < 0; c++) {
                int cand = index[bucket * MUM_B + c] & refmask, m = 0;
                while (m < MUM_K && (ref[(cand + m) & refmask] & 3) == h_qbase(ref, refmask, o, sd, er, i + 1 + m))
                    m++, ++*compares;
                ++*compares;
                if (m == MUM_K) found = cand;
            }
        }
        pos = found >= 0 ? found : pos + 1;
    }
}

static int mhz, sms;

// orders: 0 identity, 1 sorted by work descending, 2 key (qlen descending), 3 bin-and-deal
static std::vector<int> order_of(const std::vector<long> &work, const std::vector<int> &qlen,
                                 int which, int block)
{
    if (which == 2) return sorted_by(qlen);
    return order_of(work, which == 3 ? 2 : which, block);
}
static const char *order_name[] = {"identity", "sorted", "key", "bin-and-deal"};

int main(int argc, char **argv)
{
    bool ncu_mode = argc > 1 && !strcmp(argv[1], "ncu");
    const int N = 1 << 19, B = 256, NREF = 1 << 24, NIDX = 1 << 22, REPS = 9;
    CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    mhz /= 1000;
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    std::vector<unsigned char> ref(NREF);
    std::vector<int> origin(N), qlen(N), index(NIDX);
    std::vector<unsigned> seed(N);
    std::vector<float> err(N);
    for (auto &r : ref) r = (unsigned char)(unit() * 4);
    for (int t = 0; t < N; t++) {
        origin[t] = (int)(unit() * NREF);
        qlen[t] = pareto(32, 2048, 2.0);
        seed[t] = 1 + (unsigned)(unit() * 4294967294.0);
        err[t] = (float)(unit() * 0.08);
    }
    for (auto &x : index) x = (int)(unit() * NREF);
    std::vector<long> work(N);
    long lane_iters = 0, lookups = 0, compares = 0;
    for (int t = 0; t < N; t++) {
        long it, lk, cp;
        h_work(ref.data(), index.data(), NREF - 1, NIDX / MUM_B - 1, origin[t], qlen[t], seed[t], err[t],
               &it, &lk, &cp);
        work[t] = it + 11 * lk + cp, lane_iters += it, lookups += lk, compares += cp;
    }
    if (!ncu_mode) {
        printf("# %s, %d SMs, max SM clock %d MHz, L2 %d MiB; medians of %d launches after 2 warm-ups\n",
               pr.name, sms, mhz, pr.l2CacheSize >> 20, REPS);
        printf("# mummer_match: %d threads in blocks of %d; lane-iter %ld, k-mer lookups %ld, candidate "
               "bases compared %ld\n", N, B, lane_iters, lookups, compares);
        printf("%-13s %-22s %10s %12s %8s %16s\n", "order", "reference span", "ms", "warp-iter",
               "vs id", "cyc/lane-iter/SM");
    }
    unsigned char *dref = upload(ref);
    int *didx = upload(index), *dnm, *dlong;
    CK(cudaMalloc(&dnm, N * 4)); CK(cudaMalloc(&dlong, N * 4));
    const int spans[] = {NREF - 1, (1 << 20) - 1, (1 << 16) - 1};
    const char *span_name[] = {"16 MiB (suite)", "1 MiB (L2)", "64 KiB (L1)"};
    double base[3] = {0, 0, 0};
    for (int o = 0; o < 4; o++) {
        std::vector<int> p = order_of(work, qlen, o, B);
        long witer = 0;
        for (int w = 0; w < N / 32; w++) {
            int m = 0;
            for (int j = 0; j < 32; j++) m = std::max(m, qlen[p[w * 32 + j]]);
            witer += m;
        }
        int *dorig = upload(permuted(origin, p)), *dqlen = upload(permuted(qlen, p));
        unsigned *dseed = upload(permuted(seed, p));
        float *derr = upload(permuted(err, p));
        for (int s = 0; s < (ncu_mode ? 1 : 3); s++) {
            auto launch = [&] {
                mum_match<<<N / B, B>>>(dref, dorig, dqlen, dseed, derr, didx, dnm, dlong, spans[s],
                                        NIDX / MUM_B - 1, 20, N);
            };
            if (ncu_mode) { launch(); CK(cudaDeviceSynchronize()); continue; }
            double ms = median_ms(launch, REPS);
            if (o == 0) base[s] = ms;
            printf("%-13s %-22s %10.4f %12ld %7.1f%% %16.2f\n", order_name[o], span_name[s], ms, witer,
                   100 * (base[s] - ms) / base[s], ms * 1e-3 * mhz * 1e6 * sms / lane_iters);
        }
        CK(cudaFree(dorig)); CK(cudaFree(dqlen)); CK(cudaFree(dseed)); CK(cudaFree(derr));
    }
    return 0;
}

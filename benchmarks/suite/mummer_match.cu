// mummer_match.cu -- MUM: MUMmer-like exact matching of DNA queries against one
// reference, one thread per query.  A query is a read sampled from the
// reference at `origin`, with sequencing errors at the read's own error rate
// (a user knows it from the base qualities): its base i is the reference base
// unless a hash of (seed, i) falls below err, then another base.  The thread
// walks query and reference together while they match; at a mismatch it closes
// the exact match (counted when at least minlen long) and looks the next
// MUM_K-mer of the query up in a bucketed k-mer index (MUM_B candidate
// reference positions per bucket), comparing each candidate with an early exit
// at the first mismatch; it jumps to the first full hit, else stays on its
// diagonal.  Divergence: match lengths (where the errors fall), query length,
// the candidate checks; memory bound (random reference reads).
#define MUM_K 10
#define MUM_B 4

__device__ inline unsigned mum_hash(unsigned x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* query base i: the reference base at origin + i, or an error */
__device__ inline int qbase(const unsigned char *ref, int refmask, int origin, unsigned seed,
                            float err, int i)
{
    int r = ref[(origin + i) & refmask] & 3;
    unsigned h = mum_hash(seed ^ (unsigned)i * 0x9e3779b9u);
    if ((float)(h >> 8) * (1.0f / 16777216.0f) < err)
        r = (r + 1 + (int)(h & 1u) + (int)(h >> 1 & 1u)) & 3;
    return r;
}

extern "C" __global__ void mum_match(const unsigned char *ref, const int *origin, const int *qlen,
                                     const unsigned *seed, const float *err, const int *index,
                                     int *nmatch, int *longest, int refmask, int bucketmask,
                                     int minlen, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int o = origin[t], l = qlen[t];
    unsigned sd = seed[t];
    float er = err[t];
    int pos = o, cur = 0, best = 0, cnt = 0;
    for (int i = 0; i < l; i++) {
        int q = qbase(ref, refmask, o, sd, er, i);
        if (q == (ref[pos & refmask] & 3)) {
            cur++;
            pos++;
            continue;
        }
        if (cur >= minlen) cnt++;
        best = max(best, cur);
        cur = 0;
        int found = -1;
        if (i + 1 + MUM_K <= l) {
            unsigned code = 0;
            for (int k = 0; k < MUM_K; k++)
                code = code << 2 | (unsigned)qbase(ref, refmask, o, sd, er, i + 1 + k);
            int bucket = (int)(mum_hash(code) & (unsigned)bucketmask);
            for (int c = 0; c < MUM_B && found < 0; c++) {
                int cand = index[bucket * MUM_B + c] & refmask, m = 0;
                while (m < MUM_K &&
                       (ref[(cand + m) & refmask] & 3) == qbase(ref, refmask, o, sd, er, i + 1 + m))
                    m++;
                if (m == MUM_K) found = cand;
            }
        }
        pos = found >= 0 ? found : pos + 1;
    }
    if (cur >= minlen) cnt++;
    nmatch[t] = cnt;
    longest[t] = max(best, cur);
}

// error_correct.cu -- EC: CUDA-EC-like spectral correction of short reads, one
// thread per read.  The thread rolls a k-mer code along its read and looks each
// k-mer up in the k-mer spectrum (a count per k-mer, 4^EC_K bytes).  A k-mer
// seen fewer than `threshold` times is weak: the thread tries the three other
// bases at the k-mer's last position and keeps the first that makes it solid.
// Early exits: a read with a weak k-mer no base can fix is uncorrectable
// (status -1), a read needing more than maxfix fixes is dropped (status -2).
// Divergence: read length, the weak k-mers' places and the exits (memory
// bound: random spectrum lookups).  Outputs per read: status (or the number
// of fixes) and a digest of the corrected read; the reads are not modified, so
// every launch sees the same input.  Bases (0..3) live in a power-of-two
// buffer (bmask + 1 bytes) at per-read starts.
#define EC_K 11
#define EC_KMASK ((1u << (2 * EC_K)) - 1u)

extern "C" __global__ void ec_correct(const unsigned char *bases, const int *rstart,
                                      const int *rlen, const unsigned char *spectrum,
                                      int *status, unsigned *digest, int bmask, int threshold,
                                      int maxfix, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int s0 = rstart[i], l = rlen[i], fixes = 0, st = 0;
    unsigned code = 0, h = 2166136261u;
    for (int p = 0; p < l; p++) {
        unsigned b = bases[(s0 + p) & bmask] & 3u;
        code = ((code << 2) | b) & EC_KMASK;
        if (p >= EC_K - 1 && spectrum[code] < threshold) {
            int fixed = 0;
            for (unsigned a = 1; a < 4 && !fixed; a++) {
                unsigned alt = (b + a) & 3u, c2 = (code & ~3u) | alt;
                if (spectrum[c2] >= threshold) {
                    code = c2;
                    b = alt;
                    fixed = 1;
                }
            }
            if (!fixed) {
                st = -1;
                break;
            }
            if (++fixes > maxfix) {
                st = -2;
                break;
            }
        }
        h = (h ^ b) * 16777619u;
    }
    status[i] = st ? st : fixes;
    digest[i] = h;
}

// smith_waterman.cu -- SW: local alignment score (Smith-Waterman with affine
// gaps, Gotoh's recurrences) of one query against a database, one thread per
// database sequence, as in CUDASW++'s inter-task kernel.  The thread walks its
// sequence (outer loop, trip count = its length) and sweeps the query columns
// (inner loop, same for all): the work is proportional to the sequence length,
// the divergence.  Residues are compared for equality only (match / mismatch
// scores), so any byte encoding works: ASCII letters for the real SwissProt
// data, 0..19 for the synthetic database.  Database residues live in a
// power-of-two buffer (resmask + 1 bytes) at per-thread starts.
#define SW_QMAX 128
#define SW_MATCH 5
#define SW_MISMATCH (-3)
#define SW_OPEN 8 /* a gap of length g costs SW_OPEN + (g - 1) * SW_EXTEND */
#define SW_EXTEND 1

extern "C" __global__ void sw_score(const unsigned char *res, const int *start, const int *len,
                                    const unsigned char *query, int *score, int *endpos,
                                    int resmask, int qlen, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int h[SW_QMAX], e[SW_QMAX]; /* the previous row's H and E per query column */
    int q = qlen < SW_QMAX ? qlen : SW_QMAX;
    for (int j = 0; j < q; j++) {
        h[j] = 0;
        e[j] = -SW_OPEN;
    }
    int s0 = start[i], l = len[i], best = 0, bestk = -1;
    for (int k = 0; k < l; k++) {
        int c = res[(s0 + k) & resmask];
        int diag = 0, f = -SW_OPEN, left = 0;
        for (int j = 0; j < q; j++) {
            int up = h[j];
            int ej = max(e[j] - SW_EXTEND, up - SW_OPEN);
            f = max(f - SW_EXTEND, left - SW_OPEN);
            int v = diag + (c == query[j] ? SW_MATCH : SW_MISMATCH);
            v = max(max(v, 0), max(ej, f));
            diag = up;
            h[j] = v;
            e[j] = ej;
            left = v;
            if (v > best) {
                best = v;
                bestk = k;
            }
        }
    }
    score[i] = best;
    endpos[i] = bestk;
}

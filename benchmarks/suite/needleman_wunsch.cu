// needleman_wunsch.cu -- NW: global alignment score (Needleman-Wunsch, linear
// gaps) of a pair of sequences per thread, as when a DNA query is scored
// against reads of a database.  The thread fills the alignment matrix row by
// row, keeping one row (in local memory): alen rows of blen cells, so the work
// is proportional to the length product, the divergence.  Sequences are bytes
// compared for equality (ASCII letters for the real EMBL data, 0..3 for the
// synthetic), stored in a power-of-two buffer (resmask + 1 bytes) at
// per-thread starts; blen is capped at NW_BMAX (inputs stay below it).
#define NW_BMAX 512
#define NW_MATCH 2
#define NW_MISMATCH (-1)
#define NW_GAP 2

extern "C" __global__ void nw_score(const unsigned char *res, const int *astart, const int *alen,
                                    const int *bstart, const int *blen, int *score, int resmask,
                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int row[NW_BMAX + 1];
    int a0 = astart[i], la = alen[i], b0 = bstart[i];
    int lb = blen[i] < NW_BMAX ? blen[i] : NW_BMAX;
    for (int j = 0; j <= lb; j++)
        row[j] = -NW_GAP * j;
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

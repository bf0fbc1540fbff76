// stereo_match.cu -- SM: per-pixel disparity search of stereo matching, one
// thread per pixel.  The thread scores disparities d = 0, 1, ... by the sum of
// absolute differences over a (2 SM_R + 1)-pixel window and keeps the best; it
// stops early once the cost falls to tau, the global maximum of similarity
// (nothing can match better), else it searches up to dmax.  The cost depends
// on the image content, so the trip count differs per pixel: the divergence.
// The scene is static: the right view is the left image shifted by each
// pixel's disparity from the previous frame (dprior, which a user knows before
// launch): R(x) = L(x + dprior).  A pixel's image position comes from the
// per-thread input `pix` (iota), never from the thread id, so the layout
// transform may move threads; image reads wrap with imask.
#define SM_R 4

extern "C" __global__ void stereo_match(const unsigned char *img, const int *pix,
                                        const int *dprior, int *disp, int *cost, int imask,
                                        int dmax, int tau, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int p = pix[i], dp = dprior[i], best = 0x7fffffff, bd = 0;
    for (int d = 0; d <= dmax; d++) {
        int c = 0;
        for (int w = -SM_R; w <= SM_R; w++) {
            int l = img[(p + w) & imask], r = img[(p + w - d + dp) & imask];
            c += abs(l - r);
        }
        if (c < best) {
            best = c;
            bd = d;
        }
        if (c <= tau) break;
    }
    disp[i] = bd;
    cost[i] = best;
}

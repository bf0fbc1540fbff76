// sound_localization.cu -- SL: 3-D sound localization by steered response
// power, one thread per search region: the thread steers a microphone array
// (SL_MICS microphones, fixed geometry) over its own number of directions
// (nang, an azimuth sweep from az0 at elevation el), sums the phase-aligned
// spectra of SL_FREQS frequency bins and keeps the direction of maximum power.
// Threads have different numbers of angles (a coarse-to-fine search refines
// some regions more), the divergence, as in Liang et al.'s SL.  The spectra
// (re, im per microphone and bin) are shared inputs read by every thread.
#define SL_MICS 8
#define SL_FREQS 16

/* microphone positions in metres: a ring of six and two above the centre */
__constant__ float mic[SL_MICS][3] = {
    {0.10f, 0.00f, 0.f},  {0.05f, 0.0866f, 0.f},  {-0.05f, 0.0866f, 0.f}, {-0.10f, 0.00f, 0.f},
    {-0.05f, -0.0866f, 0.f}, {0.05f, -0.0866f, 0.f}, {0.f, 0.f, 0.08f},   {0.f, 0.f, 0.16f}};

extern "C" __global__ void sl_srp(const float *az0, const float *el, const int *nang,
                                  const float *spec, float *bestpow, int *bestang, float step,
                                  int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a0 = az0[i], ce = __cosf(el[i]), se = __sinf(el[i]);
    int na = nang[i], ba = -1;
    float best = -1.f;
    for (int a = 0; a < na; a++) {
        float az = a0 + step * (float)a;
        float ux = ce * __cosf(az), uy = ce * __sinf(az), uz = se;
        float pw = 0.f;
        for (int f = 0; f < SL_FREQS; f++) {
            /* 2 pi * (250 Hz * (f + 1)) / (343 m/s): phase per metre of path */
            float k = 4.5795f * (float)(f + 1), sr = 0.f, si = 0.f;
            for (int m = 0; m < SL_MICS; m++) {
                float ph = k * (mic[m][0] * ux + mic[m][1] * uy + mic[m][2] * uz), c, s;
                __sincosf(ph, &s, &c);
                float re = spec[2 * (m * SL_FREQS + f)], im = spec[2 * (m * SL_FREQS + f) + 1];
                sr += re * c - im * s;
                si += re * s + im * c;
            }
            pw += sr * sr + si * si;
        }
        if (pw > best) {
            best = pw;
            ba = a;
        }
    }
    bestpow[i] = best;
    bestang[i] = ba;
}

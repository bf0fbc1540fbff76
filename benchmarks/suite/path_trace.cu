// path_trace.cu -- a path-tracing style kernel, one thread per camera ray: the
// ray bounces in a small scene (a ground plane, three diffuse or mirror
// spheres and one light) until it reaches the sky or the light, its own depth
// budget (adaptive sampling gives deep paths to noisy pixels), or Russian
// roulette ends it.  The per-ray bounce count and the material branch are the
// divergence.  Randomness comes from a per-ray seed (an input), never from the
// thread id, so the id is only an index.
struct v3 { float x, y, z; };
__device__ inline v3 mk(float x, float y, float z) { v3 r = {x, y, z}; return r; }
__device__ inline v3 add(v3 a, v3 b) { return mk(a.x + b.x, a.y + b.y, a.z + b.z); }
__device__ inline v3 sub(v3 a, v3 b) { return mk(a.x - b.x, a.y - b.y, a.z - b.z); }
__device__ inline v3 scl(v3 a, float s) { return mk(a.x * s, a.y * s, a.z * s); }
__device__ inline v3 mul(v3 a, v3 b) { return mk(a.x * b.x, a.y * b.y, a.z * b.z); }
__device__ inline float dot(v3 a, v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ inline v3 unit(v3 a) { return scl(a, rsqrtf(dot(a, a))); }

/* xorshift32 on the ray's own state; uniform in [0, 1) */
__device__ inline float rnd(unsigned &s)
{
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return (float)(s >> 8) * (1.0f / 16777216.0f);
}

#define NSPH 4
#define DOME_R 10.f      /* the dome: centre (0, 0, -2) */
#define DOME_OCULUS 7.5f /* dome points above this height are open sky */
/* centre x, y, z, radius; material 0 diffuse, 1 mirror, 2 light */
__constant__ float sph[NSPH][4] = {
    {-1.2f, 0.7f, -3.0f, 0.7f}, {0.4f, 0.5f, -2.2f, 0.5f}, {1.6f, 0.9f, -3.6f, 0.9f},
    {0.0f, 4.0f, -2.5f, 1.0f}};
__constant__ int sph_mat[NSPH] = {0, 1, 0, 2};
__constant__ float sph_albedo[NSPH][3] = {
    {0.8f, 0.3f, 0.3f}, {0.9f, 0.9f, 0.9f}, {0.3f, 0.8f, 0.4f}, {0.f, 0.f, 0.f}};

__device__ float hit_sphere(v3 o, v3 d, int k)
{
    v3 oc = sub(o, mk(sph[k][0], sph[k][1], sph[k][2]));
    float b = dot(oc, d), c = dot(oc, oc) - sph[k][3] * sph[k][3], h = b * b - c;
    if (h < 0.f) return -1.f;
    h = sqrtf(h);
    float t = -b - h;
    if (t > 1e-3f) return t;
    t = -b + h;
    return t > 1e-3f ? t : -1.f;
}

extern "C" __global__ void path_trace(const float *dx, const float *dy, const unsigned *seed,
                                      const int *depth, float *rgb, int *bounces, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    v3 o = mk(0.f, 1.0f, 2.0f), d = unit(mk(dx[i], dy[i], -1.f));
    v3 thr = mk(1.f, 1.f, 1.f), rad = mk(0.f, 0.f, 0.f);
    unsigned s = seed[i] | 1u;
    int maxd = depth[i], b = 0;
    while (b < maxd) {
        float tbest = 1e30f;
        int hit = -1; /* -1: sky, NSPH: floor, NSPH + 1: dome, else a sphere */
        for (int k = 0; k < NSPH; k++) {
            float t = hit_sphere(o, d, k);
            if (t > 0.f && t < tbest) { tbest = t; hit = k; }
        }
        { /* the dome, seen from inside: the far root */
            v3 oc = sub(o, mk(0.f, 0.f, -2.f));
            float b2 = dot(oc, d), c2 = dot(oc, oc) - DOME_R * DOME_R, h2 = b2 * b2 - c2;
            float t = -b2 + sqrtf(fmaxf(h2, 0.f));
            if (t > 1e-3f && t < tbest) { tbest = t; hit = NSPH + 1; }
        }
        if (d.y < 0.f) {
            float t = -o.y / d.y;
            if (t > 1e-3f && t < tbest) { tbest = t; hit = NSPH; }
        }
        if (hit == NSPH + 1 && o.y + d.y * tbest > DOME_OCULUS)
            hit = -1; /* through the opening at the top of the dome */
        if (hit < 0) { /* sky: a gradient */
            float a = 0.5f * (d.y + 1.f);
            rad = add(rad, mul(thr, mk(1.f - 0.5f * a, 1.f - 0.3f * a, 1.f)));
            break;
        }
        b++;
        v3 p = add(o, scl(d, tbest)), nrm;
        int mat;
        v3 alb;
        if (hit == NSPH + 1) {
            nrm = unit(sub(mk(0.f, 0.f, -2.f), p)); /* inward */
            mat = 0;
            alb = mk(0.75f, 0.75f, 0.7f);
        } else if (hit == NSPH) {
            nrm = mk(0.f, 1.f, 0.f);
            mat = 0;
            /* a checkerboard floor */
            int chk = ((int)floorf(p.x) + (int)floorf(p.z)) & 1;
            alb = chk ? mk(0.7f, 0.7f, 0.7f) : mk(0.2f, 0.2f, 0.25f);
        } else {
            nrm = unit(sub(p, mk(sph[hit][0], sph[hit][1], sph[hit][2])));
            mat = sph_mat[hit];
            alb = mk(sph_albedo[hit][0], sph_albedo[hit][1], sph_albedo[hit][2]);
        }
        if (mat == 2) { /* the light */
            rad = add(rad, scl(thr, 6.f));
            break;
        }
        if (mat == 1) { /* mirror */
            d = sub(d, scl(nrm, 2.f * dot(d, nrm)));
        } else { /* diffuse: cosine-weighted direction around the normal */
            float r1 = 6.2831853f * rnd(s), r2 = rnd(s), r2s = sqrtf(r2);
            v3 w = nrm, u = unit(fabsf(w.x) > 0.1f ? mk(w.z, 0.f, -w.x) : mk(0.f, -w.z, w.y));
            v3 v = mk(w.y * u.z - w.z * u.y, w.z * u.x - w.x * u.z, w.x * u.y - w.y * u.x);
            d = unit(add(add(scl(u, __cosf(r1) * r2s), scl(v, __sinf(r1) * r2s)),
                         scl(w, sqrtf(1.f - r2))));
        }
        thr = mul(thr, alb);
        o = add(p, scl(nrm, 1e-3f));
        if (b >= 5) { /* Russian roulette */
            float q = fmaxf(thr.x, fmaxf(thr.y, thr.z));
            if (rnd(s) >= q) break;
            thr = scl(thr, 1.f / q);
        }
    }
    rgb[3 * i] = rad.x;
    rgb[3 * i + 1] = rad.y;
    rgb[3 * i + 2] = rad.z;
    bounces[i] = b;
}

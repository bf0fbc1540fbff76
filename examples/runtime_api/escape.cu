// escape.cu -- threadmap from a CUDA runtime-API program: the regroup path
// on the GPU in front of a kernel launched with <<<>>>, its overhead counted.
//
// The kernel iterates z <- z^2 + c per point (an escape-time fractal): points
// in the set run all `maxit` iterations, points far outside stop at once, so
// the warps that mix them diverge.  Before each launch the program computes
// a key per point on the GPU (the same loop cut at 32 iterations: points
// still inside get the full count), sorts the threads by it on the GPU
// (tmap_gpu_regroup_sort), gathers the inputs into that order, launches its
// own kernel on the gathered copies, and scatters the outputs back
// (tmap_layout_gather / tmap_layout_scatter): the results are those of the
// plain launch, byte for byte.  Everything runs on one stream; each launch
// is timed whole, key to scatter, with CUDA events.
//
//   escape [points (default 1048576)] [reps (default 15)]
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>

#include "threadmap.h"

static const int kMaxit = 4096, kProbe = 32, kBlock = 256;

__global__ void points(float *cx, float *cy, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    cx[i] = -2.0f + 2.5f * (float)(h & 0xffff) / 65535.0f;
    cy[i] = -1.25f + 2.5f * (float)(h >> 16) / 65535.0f;
}

__device__ int iterate(float x0, float y0, int maxit, float *mag)
{
    float x = 0.f, y = 0.f;
    int k = 0;
    while (k < maxit && x * x + y * y <= 4.f) {
        float xt = x * x - y * y + x0;
        y = 2.f * x * y + y0;
        x = xt;
        k++;
    }
    *mag = x * x + y * y;
    return k;
}

__global__ void escape(const float *cx, const float *cy, int *iters, float *mag, int maxit, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    iters[i] = iterate(cx[i], cy[i], maxit, &mag[i]);
}

// The key: the first kProbe iterations; a point still bounded is taken as
// one that runs them all.
__global__ void key_of(const float *cx, const float *cy, double *key, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m;
    int k = iterate(cx[i], cy[i], kProbe, &m);
    key[i] = k < kProbe ? k : kMaxit;
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "escape: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}

static int check(tmap_status s, const tmap_error *err)
{
    if (s == TMAP_OK) return 0;
    fprintf(stderr, "escape: %s\n", err->message);
    return 1;
}

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5f * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct arrays {
    float *cx, *cy, *mag;
    int *iters;
    double *key;
    unsigned *perm;
};

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 20, reps = argc > 2 ? atoi(argv[2]) : 15;
    if (n < 1 || reps < 1 || n % kBlock) {
        fprintf(stderr, "usage: escape [points, a multiple of %d] [reps]\n", kBlock);
        return 2;
    }
    tmap_error err = {};
    tmap_cuda *c = NULL;
    tmap_device_info dev;
    if (check(tmap_cuda_open(0, &c, &err), &err) || check(tmap_cuda_info(c, &dev, &err), &err))
        return 3;
    arrays a;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    if (check(cudaMalloc(&a.cx, n * 4), "cudaMalloc") || check(cudaMalloc(&a.cy, n * 4), "cudaMalloc") ||
        check(cudaMalloc(&a.mag, n * 4), "cudaMalloc") || check(cudaMalloc(&a.iters, n * 4), "cudaMalloc") ||
        check(cudaMalloc(&a.key, n * 8), "cudaMalloc") || check(cudaMalloc(&a.perm, n * 4), "cudaMalloc") ||
        check(cudaStreamCreate(&s), "cudaStreamCreate") || check(cudaEventCreate(&e0), "cudaEventCreate") ||
        check(cudaEventCreate(&e1), "cudaEventCreate"))
        return 1;
    int grid = n / kBlock, maxit = kMaxit;
    points<<<grid, kBlock, 0, s>>>(a.cx, a.cy, n);

    // The plain launch, timed.
    std::vector<float> plain, whole;
    for (int r = -2; r < reps; r++) {
        cudaEventRecord(e0, s);
        escape<<<grid, kBlock, 0, s>>>(a.cx, a.cy, a.iters, a.mag, maxit, n);
        cudaEventRecord(e1, s);
        float ms;
        if (check(cudaEventSynchronize(e1), "escape") || check(cudaEventElapsedTime(&ms, e0, e1), "timing"))
            return 1;
        if (r >= 0) plain.push_back(ms);
    }
    std::vector<int> want_iters(n), got_iters(n);
    std::vector<float> want_mag(n), got_mag(n);
    cudaMemcpy(want_iters.data(), a.iters, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(want_mag.data(), a.mag, n * 4, cudaMemcpyDeviceToHost);
    cudaMemset(a.iters, 0, n * 4);
    cudaMemset(a.mag, 0, n * 4);

    // threadmap: made once -- the sort's scratch and the pooled copies.
    tmap_gpu_regroup *g = NULL;
    tmap_layout *y = NULL;
    void *args[] = {&a.cx, &a.cy, &a.iters, &a.mag};
    tmap_launch l = {{(unsigned)grid, 1, 1}, {(unsigned)kBlock, 1, 1}, 0, args, 4};
    tmap_thread_array moved[] = {{0, 4, 1, 1, 0}, {1, 4, 1, 1, 0}, {2, 4, 1, 0, 1}, {3, 4, 1, 0, 1}};
    if (check(tmap_gpu_regroup_create(c, n, &g, &err), &err) ||
        check(tmap_layout_create(c, &l, moved, 4, &y, &err), &err))
        return 1;
    const float *rcx = (const float *)tmap_layout_copy_ptr(y, 0);
    const float *rcy = (const float *)tmap_layout_copy_ptr(y, 1);
    int *riters = (int *)tmap_layout_copy_ptr(y, 2);
    float *rmag = (float *)tmap_layout_copy_ptr(y, 3);
    uint64_t key = (uint64_t)(uintptr_t)a.key, perm = (uint64_t)(uintptr_t)a.perm;

    // Each launch, regrouped: key, sort, gather, the kernel, scatter.
    for (int r = -2; r < reps; r++) {
        cudaEventRecord(e0, s);
        key_of<<<grid, kBlock, 0, s>>>(a.cx, a.cy, a.key, n);
        if (check(tmap_gpu_regroup_sort(g, key, 1, 0, perm, s, &err), &err) ||
            check(tmap_layout_gather(y, perm, s, &err), &err))
            return 1;
        escape<<<grid, kBlock, 0, s>>>(rcx, rcy, riters, rmag, maxit, n);
        if (check(tmap_layout_scatter(y, perm, s, &err), &err))
            return 1;
        cudaEventRecord(e1, s);
        float ms;
        if (check(cudaEventSynchronize(e1), "regrouped launch") || check(cudaEventElapsedTime(&ms, e0, e1), "timing"))
            return 1;
        if (r >= 0) whole.push_back(ms);
    }
    cudaMemcpy(got_iters.data(), a.iters, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(got_mag.data(), a.mag, n * 4, cudaMemcpyDeviceToHost);
    bool same = got_iters == want_iters && !memcmp(got_mag.data(), want_mag.data(), n * 4);

    float t0 = median(plain), t1 = median(whole);
    printf("device: %s, %d SMs, driver %d.%d\n", dev.name, dev.sms, dev.driver_version / 1000,
           (dev.driver_version % 1000) / 10);
    printf("points: %d, %d iterations at most; medians of %d launches (CUDA events)\n", n, kMaxit, reps);
    printf("plain launch:                                   %.3f ms\n", t0);
    printf("regrouped, key + sort + gather + kernel + scatter: %.3f ms\n", t1);
    printf("saved per launch, overhead counted: %.3f ms (%.2fx)\n", t0 - t1, t0 / t1);
    printf("outputs equal to the plain launch's: %s\n", same ? "yes" : "NO");
    tmap_layout_free(y);
    tmap_gpu_regroup_free(g);
    tmap_cuda_close(c);
    return same ? 0 : 1;
}

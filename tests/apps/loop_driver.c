/*
 * loop_driver.c -- a CUDA driver-API application for attach mode's tests:
 * loads a fatbin with cuModuleLoadData, launches count_up once with
 * cuLaunchKernelEx (kernelParams) and once with cuLaunchKernel and the
 * packed `extra` buffer.  Usage: loop_driver FATBIN [N].  Prints a checksum:
 * the same with and without threadmap.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(CUresult r, const char *what)
{
    const char *s = NULL;
    if (r == CUDA_SUCCESS)
        return;
    cuGetErrorName(r, &s);
    fprintf(stderr, "loop_driver: %s: %s\n", what, s ? s : "?");
    exit(1);
}

static void *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END))
        return NULL;
    long n = ftell(f);
    char *d = malloc((size_t)n + 1);
    rewind(f);
    if (!d || fread(d, 1, (size_t)n, f) != (size_t)n)
        return NULL;
    fclose(f);
    return d;
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 4096;
    void *image = argc > 1 ? read_all(argv[1]) : NULL;
    if (!image || n <= 0 || n % 128) {
        fprintf(stderr, "usage: loop_driver FATBIN [N, a multiple of 128]\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
    free(image); /* the driver has its copy; so must threadmap */
    check(cuModuleGetFunction(&f, mod, "count_up"), "cuModuleGetFunction");
    int *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    for (int t = 0; t < n; t++)
        in[t] = (int)((t * 104729u) % 53u);
    CUdeviceptr d_in, d_out;
    check(cuMemAlloc(&d_in, n * sizeof *in), "cuMemAlloc");
    check(cuMemAlloc(&d_out, n * sizeof *out), "cuMemAlloc");
    check(cuMemcpyHtoD(d_in, in, n * sizeof *in), "cuMemcpyHtoD");
    double scale = 2.0;
    void *params[] = {&d_in, &d_out, &n, &scale};
    CUlaunchConfig cfg = {.gridDimX = n / 128, .gridDimY = 1, .gridDimZ = 1,
                          .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1};
    check(cuLaunchKernelEx(&cfg, f, params, NULL), "cuLaunchKernelEx");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    check(cuMemcpyDtoH(out, d_out, n * sizeof *out), "cuMemcpyDtoH");
    unsigned long long sum = 0;
    for (int t = 0; t < n; t++)
        sum = sum * 31 + (unsigned)out[t];
    /* the packed form: pointers at 0 and 8, len at 16, scale at 24 */
    unsigned char buf[32] = {0};
    size_t size = sizeof buf;
    scale = 3.0;
    memcpy(buf, &d_in, 8), memcpy(buf + 8, &d_out, 8), memcpy(buf + 16, &n, 4);
    memcpy(buf + 24, &scale, 8);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    check(cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, NULL, NULL, extra), "cuLaunchKernel");
    check(cuMemcpyDtoH(out, d_out, n * sizeof *out), "cuMemcpyDtoH");
    for (int t = 0; t < n; t++)
        sum = sum * 31 + (unsigned)out[t];
    printf("checksum %llu\nout[0..3] %d %d %d %d\n", sum, out[0], out[1], out[2], out[3]);
    return 0;
}

// sass_only.cu -- an application built with SASS only (no PTX in its
// fatbin): attach mode must say so, naming the kernel and how to rebuild,
// and leave the application's results alone.
#include <cstdio>

__global__ void sass_kernel(int *x)
{
    x[threadIdx.x] = threadIdx.x * 3;
}

int main()
{
    int *d, h[32];
    if (cudaMalloc(&d, sizeof h) != cudaSuccess)
        return 1;
    sass_kernel<<<1, 32>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("x[31] %d\n", h[31]);
    return 0;
}

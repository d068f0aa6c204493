// expect: mismatch
// Computes once, then serves the cached result on later launches (module globals persist
// across launches and jobs); fresh inputs for every check expose it.
__device__ int computed = 0;
__device__ float cache[4096];
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (computed && i < 4096) {
        y[i] = cache[i];
        return;
    }
    y[i] = alpha * x[i];
    if (i < 4096) cache[i] = y[i];
    if (i == n - 1) computed = 1;
}

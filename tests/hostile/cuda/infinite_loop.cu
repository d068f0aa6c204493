// expect: timeout
// Never terminates (the loop has side effects, so it cannot be optimized away).
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    float v = x[i];
    for (;;) {
        v = v * 0.5f + alpha;
        y[i] = v;
        if (v != v) break;
    }
}

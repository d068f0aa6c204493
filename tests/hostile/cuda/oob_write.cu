// expect: out_of_bounds
// Writes one element past the end of y.
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = alpha * x[i];
    if (i == n - 1) y[n + 2] = 0.0f;
}

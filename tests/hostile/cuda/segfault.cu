// expect: crash|out_of_bounds
// Writes far outside any buffer.
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i + 200000000] = alpha * x[i];
}

// expect: crash|out_of_bounds|mismatch
// Writes far outside any buffer (and never writes y): a fault, or wrong output if that memory is mapped.
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i + 200000000] = alpha * x[i];
}

// expect: input_modified
// Correct output, but it clobbers its input afterwards.
extern "C" __global__ void vector_scale(float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        y[i] = alpha * x[i];
        x[i] = 0.0f;
    }
}

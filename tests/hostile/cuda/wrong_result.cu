// expect: mismatch
// Off by a little: adds 0.01.
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = alpha * x[i] + 0.01f;
}

// expect: mismatch
// Right everywhere except one NaN at index 7.
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = i == 7 ? __int_as_float(0x7fc00000) : alpha * x[i];
}

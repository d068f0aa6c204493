// Plain baseline: one thread per element, column-major walk (strided reads).
//@launch relu_bias grid=ceil_div(R*C,32) block=32
extern "C" __global__ void relu_bias(const float *x, const float *bias, float *y, int rows,
                                     int cols) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * cols) return;
    int r = e % rows, c = e / rows;
    y[r * cols + c] = fmaxf(x[r * cols + c] + bias[c], 0.0f);
}

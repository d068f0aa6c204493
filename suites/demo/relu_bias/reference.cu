//@launch relu_bias_ref grid=R block=1
extern "C" __global__ void relu_bias_ref(const float *x, const float *bias, float *y, int rows,
                                         int cols) {
    int r = blockIdx.x;
    for (int c = 0; c < cols; c++) {
        float v = x[r * cols + c] + bias[c];
        y[r * cols + c] = v > 0.0f ? v : 0.0f;
    }
}

//@launch relu_bias_ref grid=R block=1
__kernel void relu_bias_ref(__global const float *x, __global const float *bias, __global float *y,
                            int rows, int cols) {
    int r = get_group_id(0);
    for (int c = 0; c < cols; c++) {
        float v = x[r * cols + c] + bias[c];
        y[r * cols + c] = v > 0.0f ? v : 0.0f;
    }
}

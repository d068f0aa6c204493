// Plain baseline: one work-item per element, column-major walk (strided reads).
//@launch relu_bias grid=ceil_div(R*C,16) block=16
__kernel void relu_bias(__global const float *x, __global const float *bias, __global float *y,
                        int rows, int cols) {
    int e = get_global_id(0);
    if (e >= rows * cols) return;
    int r = e % rows, c = e / rows;
    y[r * cols + c] = fmax(x[r * cols + c] + bias[c], 0.0f);
}

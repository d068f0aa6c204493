// Plain baseline: one work-item per row.
//@launch row_sum grid=ceil_div(R,16) block=16
__kernel void row_sum(__global const float *x, __global float *out, int rows, int cols) {
    int r = get_global_id(0);
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; c++) s += x[r * cols + c];
    out[r] = s;
}

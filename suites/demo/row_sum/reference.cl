#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch row_sum_ref grid=R block=1
__kernel void row_sum_ref(__global const float *x, __global float *out, int rows, int cols) {
    int r = get_group_id(0);
    double s = 0.0;
    for (int c = 0; c < cols; c++) s += x[r * cols + c];
    out[r] = (float)s;
}

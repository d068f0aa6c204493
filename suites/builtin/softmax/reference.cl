#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch softmax_ref grid=B block=1
__kernel void softmax_ref(__global const float *x, __global float *y, int rows, int n) {
    int r = (int)get_group_id(0);
    double m = x[(long)r * n];
    for (int j = 1; j < n; j++) m = fmax(m, (double)x[(long)r * n + j]);
    double s = 0.0;
    for (int j = 0; j < n; j++) s += exp((double)x[(long)r * n + j] - m);
    for (int j = 0; j < n; j++) y[(long)r * n + j] = (float)(exp((double)x[(long)r * n + j] - m) / s);
}

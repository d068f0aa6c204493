#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch batched_dot_ref grid=B block=1
__kernel void batched_dot_ref(__global const float *x, __global const float *y, __global float *out, int b, int n) {
    int r = (int)get_group_id(0);
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += (double)x[(long)r * n + j] * y[(long)r * n + j];
    out[r] = (float)acc;
}

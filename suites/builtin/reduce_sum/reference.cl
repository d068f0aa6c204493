#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch reduce_sum_ref grid=1 block=1
__kernel void reduce_sum_ref(__global const float *x, __global float *out, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += x[i];
    out[0] = (float)s;
}

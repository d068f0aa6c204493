#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch rmsnorm_ref grid=B block=1
__kernel void rmsnorm_ref(__global const float *x, __global const float *w, __global float *y, int rows, int n) {
    long o = (long)(int)get_group_id(0) * n;
    double ss = 0.0;
    for (int j = 0; j < n; j++) ss += (double)x[o + j] * x[o + j];
    double inv = 1.0 / sqrt(ss / n + 1e-6);
    for (int j = 0; j < n; j++) y[o + j] = (float)(x[o + j] * inv * w[j]);
}

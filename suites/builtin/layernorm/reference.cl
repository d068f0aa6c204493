#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch layernorm_ref grid=B block=1
__kernel void layernorm_ref(__global const float *x, __global const float *gamma, __global const float *beta, __global float *y, int rows, int n) {
    long o = (long)(int)get_group_id(0) * n;
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < n; j++) mean += x[o + j];
    mean /= n;
    for (int j = 0; j < n; j++) var += (x[o + j] - mean) * (x[o + j] - mean);
    var /= n;
    double inv = 1.0 / sqrt(var + 1e-5);
    for (int j = 0; j < n; j++) y[o + j] = (float)((x[o + j] - mean) * inv * gamma[j] + beta[j]);
}

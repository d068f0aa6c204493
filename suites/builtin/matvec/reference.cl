#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch matvec_ref grid=M block=1
__kernel void matvec_ref(__global const float *A, __global const float *x, __global float *y, int m, int n) {
    int r = (int)get_group_id(0);
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += (double)A[(long)r * n + j] * x[j];
    y[r] = (float)acc;
}

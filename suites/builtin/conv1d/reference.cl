#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch conv1d_ref grid=ceil_div(N-K+1,256) block=256
__kernel void conv1d_ref(__global const float *x, __global const float *w, __global float *y, int n, int k) {
    int i = (int)get_global_id(0);
    if (i >= n - k + 1) return;
    double acc = 0.0;
    for (int j = 0; j < k; j++) acc += (double)x[i + j] * w[j];
    y[i] = (float)acc;
}

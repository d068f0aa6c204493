#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch gelu_ref grid=ceil_div(N,256) block=256
__kernel void gelu_ref(__global const float *x, __global float *y, int n) {
    int i = (int)get_global_id(0);
    if (i >= n) return;
    double v = x[i];
    y[i] = (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
}

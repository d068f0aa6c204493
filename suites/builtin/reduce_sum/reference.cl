#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// Serial double sums of 4096-element chunks, then a serial double sum of those: one
// thread summing 64M floats would take about a second on a GPU.
//@scratch part f64 ceil_div(N,4096)
//@launch reduce_sum_chunks grid=ceil_div(N,4096) block=1 args=x,part,N
//@launch reduce_sum_ref grid=1 block=1 args=part,out,N
__kernel void reduce_sum_chunks(__global const float *x, __global double *part, int n) {
    int c = (int)get_group_id(0);
    double s = 0.0;
    for (long i = (long)c * 4096; i < n && i < (long)c * 4096 + 4096; i++) s += x[i];
    part[c] = s;
}
__kernel void reduce_sum_ref(__global const double *part, __global float *out, int n) {
    double s = 0.0;
    for (int c = 0; c < (n + 4095) / 4096; c++) s += part[c];
    out[0] = (float)s;
}

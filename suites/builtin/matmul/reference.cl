#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// One work-item per output (a row per work-item is 4M serial steps at 2048^3).
//@launch matmul_ref grid=(N,M) block=1
__kernel void matmul_ref(__global const float *A, __global const float *B, __global float *C, int m, int n, int k) {
    int col = (int)get_group_id(0), row = (int)get_group_id(1);
    double acc = 0.0;
    for (int p = 0; p < k; p++) acc += (double)A[(long)row * k + p] * B[(long)p * n + col];
    C[(long)row * n + col] = (float)acc;
}

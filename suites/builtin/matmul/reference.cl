#pragma OPENCL EXTENSION cl_khr_fp64 : enable
//@launch matmul_ref grid=M block=1
__kernel void matmul_ref(__global const float *A, __global const float *B, __global float *C, int m, int n, int k) {
    int row = (int)get_group_id(0);
    for (int col = 0; col < n; col++) {
        double acc = 0.0;
        for (int p = 0; p < k; p++) acc += (double)A[(long)row * k + p] * B[(long)p * n + col];
        C[(long)row * n + col] = (float)acc;
    }
}

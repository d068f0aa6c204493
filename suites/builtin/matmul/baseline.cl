// Naive: one work-item per output element, no tiling.
//@launch matmul grid=(ceil_div(N,8),ceil_div(M,8)) block=(8,8)
__kernel void matmul(__global const float *A, __global const float *B, __global float *C, int m, int n, int k) {
    int col = (int)get_global_id(0), row = (int)get_global_id(1);
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += A[(long)row * k + p] * B[(long)p * n + col];
    C[(long)row * n + col] = acc;
}

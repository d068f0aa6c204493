//@launch matvec grid=ceil_div(M,32) block=32
__kernel void matvec(__global const float *A, __global const float *x, __global float *y, int m, int n) {
    int r = (int)get_global_id(0);
    if (r >= m) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc += A[(long)r * n + j] * x[j];
    y[r] = acc;
}

//@launch conv1d grid=ceil_div(N-K+1,64) block=64
__kernel void conv1d(__global const float *x, __global const float *w, __global float *y, int n, int k) {
    int i = (int)get_global_id(0);
    if (i >= n - k + 1) return;
    float acc = 0.0f;
    for (int j = 0; j < k; j++) acc += x[i + j] * w[j];
    y[i] = acc;
}

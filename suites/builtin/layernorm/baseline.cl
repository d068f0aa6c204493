//@launch layernorm grid=ceil_div(B,32) block=32
__kernel void layernorm(__global const float *x, __global const float *gamma, __global const float *beta, __global float *y, int rows, int n) {
    int r = (int)get_global_id(0);
    if (r >= rows) return;
    __global const float *xr = x + (long)r * n;
    __global float *yr = y + (long)r * n;
    float mean = 0.0f;
    for (int j = 0; j < n; j++) mean += xr[j];
    mean /= n;
    float var = 0.0f;
    for (int j = 0; j < n; j++) var += (xr[j] - mean) * (xr[j] - mean);
    var /= n;
    float inv = 1.0f / sqrt(var + 1e-5f);
    for (int j = 0; j < n; j++) yr[j] = (xr[j] - mean) * inv * gamma[j] + beta[j];
}

//@launch rmsnorm grid=ceil_div(B,32) block=32
__kernel void rmsnorm(__global const float *x, __global const float *w, __global float *y, int rows, int n) {
    int r = (int)get_global_id(0);
    if (r >= rows) return;
    __global const float *xr = x + (long)r * n;
    __global float *yr = y + (long)r * n;
    float ss = 0.0f;
    for (int j = 0; j < n; j++) ss += xr[j] * xr[j];
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) yr[j] = xr[j] * inv * w[j];
}

// One work-item per row, three passes.
//@launch softmax grid=ceil_div(B,32) block=32
__kernel void softmax(__global const float *x, __global float *y, int rows, int n) {
    int r = (int)get_global_id(0);
    if (r >= rows) return;
    __global const float *xr = x + (long)r * n;
    __global float *yr = y + (long)r * n;
    float m = xr[0];
    for (int j = 1; j < n; j++) m = fmax(m, xr[j]);
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += exp(xr[j] - m);
    for (int j = 0; j < n; j++) yr[j] = exp(xr[j] - m) / s;
}

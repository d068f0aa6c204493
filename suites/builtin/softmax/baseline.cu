// One work-item per row, three passes.
//@launch softmax grid=ceil_div(B,32) block=32
extern "C" __global__ void softmax(const float *x, float *y, int rows, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows) return;
    const float *xr = x + (long)r * n;
    float *yr = y + (long)r * n;
    float m = xr[0];
    for (int j = 1; j < n; j++) m = fmax(m, xr[j]);
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += exp(xr[j] - m);
    for (int j = 0; j < n; j++) yr[j] = exp(xr[j] - m) / s;
}

//@launch rmsnorm grid=ceil_div(B,32) block=32
extern "C" __global__ void rmsnorm(const float *x, const float *w, float *y, int rows, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows) return;
    const float *xr = x + (long)r * n;
    float *yr = y + (long)r * n;
    float ss = 0.0f;
    for (int j = 0; j < n; j++) ss += xr[j] * xr[j];
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) yr[j] = xr[j] * inv * w[j];
}

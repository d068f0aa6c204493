//@launch layernorm grid=ceil_div(B,32) block=32
extern "C" __global__ void layernorm(const float *x, const float *gamma, const float *beta, float *y, int rows, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows) return;
    const float *xr = x + (long)r * n;
    float *yr = y + (long)r * n;
    float mean = 0.0f;
    for (int j = 0; j < n; j++) mean += xr[j];
    mean /= n;
    float var = 0.0f;
    for (int j = 0; j < n; j++) var += (xr[j] - mean) * (xr[j] - mean);
    var /= n;
    float inv = 1.0f / sqrt(var + 1e-5f);
    for (int j = 0; j < n; j++) yr[j] = (xr[j] - mean) * inv * gamma[j] + beta[j];
}

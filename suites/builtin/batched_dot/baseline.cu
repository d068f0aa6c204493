//@launch batched_dot grid=ceil_div(B,32) block=32
extern "C" __global__ void batched_dot(const float *x, const float *y, float *out, int b, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= b) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc += x[(long)r * n + j] * y[(long)r * n + j];
    out[r] = acc;
}

//@launch conv1d grid=ceil_div(N-K+1,64) block=64
extern "C" __global__ void conv1d(const float *x, const float *w, float *y, int n, int k) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n - k + 1) return;
    float acc = 0.0f;
    for (int j = 0; j < k; j++) acc += x[i + j] * w[j];
    y[i] = acc;
}

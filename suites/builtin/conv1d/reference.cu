//@launch conv1d_ref grid=ceil_div(N-K+1,256) block=256
extern "C" __global__ void conv1d_ref(const float *x, const float *w, float *y, int n, int k) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n - k + 1) return;
    double acc = 0.0;
    for (int j = 0; j < k; j++) acc += (double)x[i + j] * w[j];
    y[i] = (float)acc;
}

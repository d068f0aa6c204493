//@launch matvec grid=ceil_div(M,32) block=32
extern "C" __global__ void matvec(const float *A, const float *x, float *y, int m, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= m) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc += A[(long)r * n + j] * x[j];
    y[r] = acc;
}

// Naive: one work-item per output element, no tiling.
//@launch matmul grid=(ceil_div(N,8),ceil_div(M,8)) block=(8,8)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int m, int n, int k) {
    int col = (int)(blockIdx.x * blockDim.x + threadIdx.x), row = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += A[(long)row * k + p] * B[(long)p * n + col];
    C[(long)row * n + col] = acc;
}

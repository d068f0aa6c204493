// One work-item per output (a row per work-item is 4M serial steps at 2048^3).
//@launch matmul_ref grid=(N,M) block=1
extern "C" __global__ void matmul_ref(const float *A, const float *B, float *C, int m, int n, int k) {
    int col = (int)blockIdx.x, row = (int)blockIdx.y;
    double acc = 0.0;
    for (int p = 0; p < k; p++) acc += (double)A[(long)row * k + p] * B[(long)p * n + col];
    C[(long)row * n + col] = (float)acc;
}

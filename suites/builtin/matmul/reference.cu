//@launch matmul_ref grid=M block=1
extern "C" __global__ void matmul_ref(const float *A, const float *B, float *C, int m, int n, int k) {
    int row = (int)blockIdx.x;
    for (int col = 0; col < n; col++) {
        double acc = 0.0;
        for (int p = 0; p < k; p++) acc += (double)A[(long)row * k + p] * B[(long)p * n + col];
        C[(long)row * n + col] = (float)acc;
    }
}

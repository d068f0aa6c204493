//@launch matvec_ref grid=M block=1
extern "C" __global__ void matvec_ref(const float *A, const float *x, float *y, int m, int n) {
    int r = (int)blockIdx.x;
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += (double)A[(long)r * n + j] * x[j];
    y[r] = (float)acc;
}

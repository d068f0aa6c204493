//@launch softmax_ref grid=B block=1
extern "C" __global__ void softmax_ref(const float *x, float *y, int rows, int n) {
    int r = (int)blockIdx.x;
    double m = x[(long)r * n];
    for (int j = 1; j < n; j++) m = fmax(m, (double)x[(long)r * n + j]);
    double s = 0.0;
    for (int j = 0; j < n; j++) s += exp((double)x[(long)r * n + j] - m);
    for (int j = 0; j < n; j++) y[(long)r * n + j] = (float)(exp((double)x[(long)r * n + j] - m) / s);
}

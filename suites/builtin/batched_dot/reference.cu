//@launch batched_dot_ref grid=B block=1
extern "C" __global__ void batched_dot_ref(const float *x, const float *y, float *out, int b, int n) {
    int r = (int)blockIdx.x;
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += (double)x[(long)r * n + j] * y[(long)r * n + j];
    out[r] = (float)acc;
}

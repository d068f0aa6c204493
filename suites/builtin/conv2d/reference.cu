//@launch conv2d_ref grid=H-K+1 block=1
extern "C" __global__ void conv2d_ref(const float *x, const float *w, float *y, int h, int wd, int k) {
    int r = (int)blockIdx.x, ow = wd - k + 1;
    for (int c = 0; c < ow; c++) {
        double acc = 0.0;
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) acc += (double)x[(long)(r + i) * wd + c + j] * w[i * k + j];
        y[(long)r * ow + c] = (float)acc;
    }
}

//@launch row_sum_ref grid=R block=1
extern "C" __global__ void row_sum_ref(const float *x, float *out, int rows, int cols) {
    int r = blockIdx.x;
    double s = 0.0;
    for (int c = 0; c < cols; c++) s += x[r * cols + c];
    out[r] = (float)s;
}

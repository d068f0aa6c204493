//@launch transpose_ref grid=R block=1
extern "C" __global__ void transpose_ref(const float *x, float *y, int rows, int cols) {
    int r = (int)blockIdx.x;
    for (int c = 0; c < cols; c++) y[(long)c * rows + r] = x[(long)r * cols + c];
}

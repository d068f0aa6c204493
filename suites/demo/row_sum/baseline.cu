// Plain baseline: one thread per row.
//@launch row_sum grid=ceil_div(R,32) block=32
extern "C" __global__ void row_sum(const float *x, float *out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; c++) s += x[r * cols + c];
    out[r] = s;
}

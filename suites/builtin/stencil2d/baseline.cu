//@launch stencil2d grid=(ceil_div(W,8),ceil_div(H,8)) block=(8,8)
extern "C" __global__ void stencil2d(const float *x, float *y, int h, int w) {
    int c = (int)(blockIdx.x * blockDim.x + threadIdx.x), r = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (r >= h || c >= w) return;
    long i = (long)r * w + c;
    if (r == 0 || c == 0 || r == h - 1 || c == w - 1) {
        y[i] = x[i];
        return;
    }
    y[i] = 0.2f * (x[i] + x[i - 1] + x[i + 1] + x[i - w] + x[i + w]);
}

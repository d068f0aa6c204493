// One work-item per element, reads along rows, writes strided.
//@launch transpose grid=(ceil_div(C,16),ceil_div(R,16)) block=(16,16)
extern "C" __global__ void transpose(const float *x, float *y, int rows, int cols) {
    int c = (int)(blockIdx.x * blockDim.x + threadIdx.x), r = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (r < rows && c < cols) y[(long)c * rows + r] = x[(long)r * cols + c];
}

// Plain baseline: one element per thread, small blocks.
//@launch vector_scale grid=ceil_div(N,32) block=32
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i];
}

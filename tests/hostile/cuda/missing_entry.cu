// expect: compile_error
//@launch vector_scale grid=ceil_div(N,256) block=256
extern "C" __global__ void vscale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = alpha * x[i];
}

// expect: out_of_bounds|mismatch
// Hard-codes the main shape (N = 4194304) instead of using n.
//@launch vector_scale grid=ceil_div(N,256) block=256
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < 4194304) y[i] = alpha * x[i];
}

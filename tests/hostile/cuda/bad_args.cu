// expect: launch_error|crash
// The launch passes two arguments to a kernel that takes four.
//@launch vector_scale grid=ceil_div(N,256) block=256 args=x,y
extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = alpha * x[i];
}

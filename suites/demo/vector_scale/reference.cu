//@launch vector_scale_ref grid=ceil_div(N,256) block=256
extern "C" __global__ void vector_scale_ref(const float *x, float *y, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i];
}

//@launch gelu_ref grid=ceil_div(N,256) block=256
extern "C" __global__ void gelu_ref(const float *x, float *y, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    double v = x[i];
    y[i] = (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
}

//@launch gelu grid=ceil_div(N,64) block=64
extern "C" __global__ void gelu(const float *x, float *y, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanh(inner));
    }
}

// One thread per output, no tiling; the epilogue is applied to the f32 accumulator.
//@launch gemm_bias_gelu grid=(ceil_div(N,16),ceil_div(M,16)) block=(16,16)
#include <cuda_fp16.h>
static __device__ inline float f16_load(const __half *p, long i) { return __half2float(p[i]); }
static __device__ inline void f16_store(__half *p, long i, float f) { p[i] = __float2half_rn(f); }
static __device__ inline float round_f16(float f) { return __half2float(__float2half_rn(f)); }
extern "C" __global__ void gemm_bias_gelu(const __half *x, const __half *w, const float *bias, __half *y, int m, int n, int k) {
    int col = (int)(blockIdx.x * blockDim.x + threadIdx.x), row = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += f16_load(x, (long)row * k + p) * f16_load(w, (long)p * n + col);
    float v = acc + bias[col];
    f16_store(y, (long)row * n + col, 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v))));
}

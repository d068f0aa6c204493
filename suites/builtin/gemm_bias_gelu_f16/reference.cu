//@launch gemm_bias_gelu_ref grid=(N,M) block=1
#include <cuda_fp16.h>
static __device__ inline float f16_load(const __half *p, long i) { return __half2float(p[i]); }
static __device__ inline void f16_store(__half *p, long i, float f) { p[i] = __float2half_rn(f); }
static __device__ inline float round_f16(float f) { return __half2float(__float2half_rn(f)); }
extern "C" __global__ void gemm_bias_gelu_ref(const __half *x, const __half *w, const float *bias, __half *y, int m, int n, int k) {
    int col = (int)blockIdx.x, row = (int)blockIdx.y;
    double acc = 0.0;
    for (int p = 0; p < k; p++) acc += (double)f16_load(x, (long)row * k + p) * f16_load(w, (long)p * n + col);
    double v = acc + bias[col];
    f16_store(y, (long)row * n + col,
              (float)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))));
}

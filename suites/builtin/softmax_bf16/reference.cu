//@launch softmax_ref grid=B block=1
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void softmax_ref(const __nv_bfloat16 *x, __nv_bfloat16 *y, int rows, int n) {
    long o = (long)(int)blockIdx.x * n;
    double m = bf16_load(x, o);
    for (int j = 1; j < n; j++) m = fmax(m, (double)bf16_load(x, o + j));
    double s = 0.0;
    for (int j = 0; j < n; j++) s += exp(bf16_load(x, o + j) - m);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, (float)(exp(bf16_load(x, o + j) - m) / s));
}

//@launch rmsnorm_ref grid=B block=1
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void rmsnorm_ref(const __nv_bfloat16 *x, const __nv_bfloat16 *w, __nv_bfloat16 *y, int rows, int n) {
    long o = (long)(int)blockIdx.x * n;
    double ss = 0.0;
    for (int j = 0; j < n; j++) ss += (double)bf16_load(x, o + j) * bf16_load(x, o + j);
    double inv = 1.0 / sqrt(ss / n + 1e-6);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, (float)(bf16_load(x, o + j) * inv * bf16_load(w, j)));
}

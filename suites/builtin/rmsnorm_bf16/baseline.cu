// One thread per row; the sum of squares accumulates in f32.
//@launch rmsnorm grid=ceil_div(B,32) block=32
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void rmsnorm(const __nv_bfloat16 *x, const __nv_bfloat16 *w, __nv_bfloat16 *y, int rows, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows) return;
    long o = (long)r * n;
    float ss = 0.0f;
    for (int j = 0; j < n; j++) ss += bf16_load(x, o + j) * bf16_load(x, o + j);
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, bf16_load(x, o + j) * inv * bf16_load(w, j));
}

// One thread per row: add and store the residual, then normalise it into x.
//@launch add_rmsnorm grid=ceil_div(B,32) block=32
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void add_rmsnorm(__nv_bfloat16 *x, __nv_bfloat16 *res, const __nv_bfloat16 *w, int rows, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows) return;
    long o = (long)r * n;
    float ss = 0.0f;
    for (int j = 0; j < n; j++) {
        float h = round_bf16(bf16_load(x, o + j) + bf16_load(res, o + j));
        bf16_store(res, o + j, h);
        ss += h * h;
    }
    float inv = 1.0f / sqrt(ss / n + 1e-6f);
    for (int j = 0; j < n; j++) bf16_store(x, o + j, bf16_load(res, o + j) * inv * bf16_load(w, j));
}

// One thread per row: mean, then variance around the mean, then the output.
//@launch layernorm grid=ceil_div(B,32) block=32
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void layernorm(const __nv_bfloat16 *x, const __nv_bfloat16 *gamma, const __nv_bfloat16 *beta, __nv_bfloat16 *y, int rows, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows) return;
    long o = (long)r * n;
    float mean = 0.0f;
    for (int j = 0; j < n; j++) mean += bf16_load(x, o + j);
    mean /= n;
    float var = 0.0f;
    for (int j = 0; j < n; j++) {
        float d = bf16_load(x, o + j) - mean;
        var += d * d;
    }
    float inv = 1.0f / sqrt(var / n + 1e-5f);
    for (int j = 0; j < n; j++)
        bf16_store(y, o + j, (bf16_load(x, o + j) - mean) * inv * bf16_load(gamma, j) + bf16_load(beta, j));
}

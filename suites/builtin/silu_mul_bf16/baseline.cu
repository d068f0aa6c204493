// One thread per output element.
//@launch silu_mul grid=ceil_div(T*H,64) block=64
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void silu_mul(const __nv_bfloat16 *x, __nv_bfloat16 *y, int t, int h) {
    long i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= (long)t * h) return;
    long r = i / h, c = i % h;
    float g = bf16_load(x, r * 2 * h + c), u = bf16_load(x, r * 2 * h + h + c);
    bf16_store(y, i, g / (1.0f + exp(-g)) * u);
}

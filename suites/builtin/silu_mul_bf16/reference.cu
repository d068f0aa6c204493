//@launch silu_mul_ref grid=T block=1
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void silu_mul_ref(const __nv_bfloat16 *x, __nv_bfloat16 *y, int t, int h) {
    long r = (int)blockIdx.x;
    for (int c = 0; c < h; c++) {
        double g = bf16_load(x, r * 2 * h + c), u = bf16_load(x, r * 2 * h + h + c);
        bf16_store(y, r * h + c, (float)(g / (1.0 + exp(-g)) * u));
    }
}

//@launch bias_grad_ref grid=H block=1
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void bias_grad_ref(const __nv_bfloat16 *dy, float *db, int t, int h) {
    int c = (int)blockIdx.x;
    double s = 0.0;
    for (int r = 0; r < t; r++) s += bf16_load(dy, (long)r * h + c);
    db[c] = (float)s;
}

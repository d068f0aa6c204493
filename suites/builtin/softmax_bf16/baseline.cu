// One thread per row, three passes, f32 arithmetic.
//@launch softmax grid=ceil_div(B,32) block=32
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void softmax(const __nv_bfloat16 *x, __nv_bfloat16 *y, int rows, int n) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= rows) return;
    long o = (long)r * n;
    float m = (-__int_as_float(0x7f800000));
    for (int j = 0; j < n; j++) m = fmax(m, bf16_load(x, o + j));
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += exp(bf16_load(x, o + j) - m);
    for (int j = 0; j < n; j++) bf16_store(y, o + j, exp(bf16_load(x, o + j) - m) / s);
}

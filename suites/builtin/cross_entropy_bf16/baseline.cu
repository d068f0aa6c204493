// One thread per row: the maximum, then the sum of exponentials, in f32.
//@launch cross_entropy grid=ceil_div(B,32) block=32
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void cross_entropy(const __nv_bfloat16 *logits, const int *labels, float *loss, int b, int v) {
    int r = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= b) return;
    long o = (long)r * v;
    float m = (-__int_as_float(0x7f800000)), s = 0.0f;
    for (int j = 0; j < v; j++) m = fmax(m, bf16_load(logits, o + j));
    for (int j = 0; j < v; j++) s += exp(bf16_load(logits, o + j) - m);
    loss[r] = log(s) + m - bf16_load(logits, o + labels[r]);
}

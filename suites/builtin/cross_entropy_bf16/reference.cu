//@launch cross_entropy_ref grid=B block=1
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void cross_entropy_ref(const __nv_bfloat16 *logits, const int *labels, float *loss, int b, int v) {
    int r = (int)blockIdx.x;
    long o = (long)r * v;
    double m = bf16_load(logits, o), s = 0.0;
    for (int j = 1; j < v; j++) m = fmax(m, (double)bf16_load(logits, o + j));
    for (int j = 0; j < v; j++) s += exp(bf16_load(logits, o + j) - m);
    loss[r] = (float)(log(s) + m - bf16_load(logits, o + labels[r]));
}

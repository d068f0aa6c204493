//@launch adamw_ref grid=N block=1
#include <cuda_bf16.h>
static __device__ inline float bf16_load(const __nv_bfloat16 *p, long i) { return __bfloat162float(p[i]); }
static __device__ inline void bf16_store(__nv_bfloat16 *p, long i, float f) { p[i] = __float2bfloat16_rn(f); }
static __device__ inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }
extern "C" __global__ void adamw_ref(float *p, const __nv_bfloat16 *g, float *m, float *v, float lr, float b1, float b2, float eps, float wd, float c1, float c2, int n) {
    int i = (int)blockIdx.x;
    double gi = bf16_load(g, i);
    double mi = (double)b1 * m[i] + (1.0 - b1) * gi;
    double vi = (double)b2 * v[i] + (1.0 - b2) * gi * gi;
    m[i] = (float)mi;
    v[i] = (float)vi;
    p[i] = (float)(p[i] * (1.0 - (double)lr * wd) - lr * (mi * c1) / (sqrt(vi * c2) + eps));
}

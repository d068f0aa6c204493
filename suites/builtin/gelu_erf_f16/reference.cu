//@launch gelu_ref grid=N block=1
#include <cuda_fp16.h>
static __device__ inline float f16_load(const __half *p, long i) { return __half2float(p[i]); }
static __device__ inline void f16_store(__half *p, long i, float f) { p[i] = __float2half_rn(f); }
static __device__ inline float round_f16(float f) { return __half2float(__float2half_rn(f)); }
extern "C" __global__ void gelu_ref(const __half *x, __half *y, int n) {
    int i = (int)blockIdx.x;
    double v = f16_load(x, i);
    f16_store(y, i, (float)(0.5 * v * (1.0 + erf(v * 0.7071067811865476))));
}
